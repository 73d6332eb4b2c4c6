"""Schema-driven fuzzing of the MCP surface: every tool that tools/list advertises, called through the real MCP
client against the real app, with arguments generated from the tool's own inputSchema and then mutated.

What must hold for every call (see `check_tool_result` and `check_resource_read`):
  * it returns: no transport error, no JSON-RPC error (so no 5xx and no -32603), no hang (CALL_TIMEOUT_S);
  * a failure is an `isError` result whose structuredContent is `{"error": {status, code, message}}` with a
    4xx status and a one-line message (no validator dump);
  * a resources/read of a notewell:// URI returns contents or a not-found / invalid-params JSON-RPC error.

Used by tests/integration/test_mcp_fuzz.py (bounded, in `make test`) and tests/bench/fuzz.py (`make fuzz`).
"""

from __future__ import annotations

import contextlib
import string
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
from anyio.from_thread import start_blocking_portal
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from notewell.domain.model import Plan
from tests.support.mcp_harness import connect, make_app, make_keys, running

if TYPE_CHECKING:
    from collections.abc import Iterator

    from anyio.from_thread import BlockingPortal
    from mcp.client import Client
    from mcp.types import CallToolResult

    from notewell.bootstrap import Services

CALL_TIMEOUT_S = 30  # a hang guard only: calls take milliseconds
# A missing resource is -32602, the SDK's not-found since SEP-2164 (-32002 is retired); -32603 (internal error),
# which a busy store answers, never comes from these reads of a healthy store.
RESOURCE_NOT_FOUND_CODES = frozenset({-32602})

# Strings that broke parsers before: odd digits, whitespace, JSON look-alikes, controls, very long, RTL marks.
EDGE_STRINGS = [
    "", " ", "\n", "\t\r\n", "\x00", "²", "١٢", "1²", "-1", "0", "9" * 40, "1e309", "NaN", "null", "true", "[]", "{}",
    '{"a": 1}', '["a", "b"]', "n_" + "0" * 26, "N_01ARZ3NDEKTSV4RRFFQ69G5FAV", "n_01ARZ3NDEKTSV4RRFFQ69G5FA\n",
    "api\n", "API", "a" * 65, "../../etc", "%00", "\u202eevil", "🦀" * 3, "é" * 300, "x" * 5_000, "' OR 1=1 --",
    'say "hi"', "NEAR(a b)", "a AND b", "title:*", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00",
    "0999-01-01", "2026-02-30", "2026-03-01T12:00:00Z", "20260301T120000Z",
]  # fmt: skip
WRONG_TYPES: list[object] = [None, 0, -1, 1.5, True, "1", [], ["a"], {}, {"a": 1}, 2**63, -(2**63) - 1, 10**30]
BIG_INTS = [0, -1, -(2**31), 2**31, 2**63 - 1, 2**63, 2**64, 10**30, -(10**30), 10**40]  # DynamoDB: 38 digits


@dataclass
class Pool:
    """Values the app handed out during setup: real ids, slugs, tags and cursors to mutate from."""

    note_ids: list[str]
    projects: list[str]
    tags: list[str]
    cursors: list[str]


@dataclass
class Tally:
    calls: int = 0
    reads: int = 0
    by_tool: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)  # "ok", "400 bad_argument", ... , "read -32602"


# ----- schema → strategy -------------------------------------------------------------------------------------


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return {**defs[ref.removeprefix("#/$defs/")], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def text_for(name: str, pool: Pool, hostile: bool) -> st.SearchStrategy[str]:
    """Strings for an argument: what that argument takes (real ids, slugs, cursors), and junk when hostile."""
    junk = st.one_of(st.sampled_from(EDGE_STRINGS), st.text(max_size=40))
    lowered = name.lower()
    likely: st.SearchStrategy[str]
    if lowered in ("id", "ids", "target", "supersedes"):
        likely = st.sampled_from(pool.note_ids)
    elif lowered in ("project", "newname"):
        likely = st.sampled_from(pool.projects)
    elif lowered in ("tags", "from", "to"):
        likely = st.sampled_from(pool.tags)
    elif lowered == "cursor":
        likely = st.sampled_from(pool.cursors)
    elif lowered == "since":
        offsets = st.sampled_from(["", "Z", "+00:00", "+01:00", "-01:00", "+14:00", "-12:00"])
        moments = st.one_of(st.datetimes(), st.sampled_from([datetime.min, datetime.max, datetime(999, 1, 1)]))
        likely = st.tuples(moments, offsets).map(lambda pair: pair[0].isoformat() + pair[1])
    else:
        words = st.text(alphabet=string.ascii_letters + string.digits + " _-.", min_size=1, max_size=80)
        likely = st.one_of(words, st.text(min_size=1, max_size=80))  # any Unicode but lone surrogates
    return st.one_of(likely, junk) if hostile else likely


def value_for(
    schema: dict[str, Any], defs: dict[str, Any], name: str, pool: Pool, hostile: bool
) -> st.SearchStrategy[Any]:
    """A value for `schema`; when hostile, also values just past a bound, junk strings and other types."""
    schema = _resolve(schema, defs)
    wrong: st.SearchStrategy[Any] = st.sampled_from(WRONG_TYPES) if hostile else st.nothing()
    if "anyOf" in schema:
        return st.one_of(*(value_for(branch, defs, name, pool, hostile) for branch in schema["anyOf"]))
    if "enum" in schema:
        junk = text_for(name, pool, hostile) if hostile else st.nothing()
        return st.one_of(st.sampled_from(schema["enum"]), junk, wrong)
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.one_of(st.booleans(), wrong)
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        edges = [x for bound in (low, high) if bound is not None for x in (bound - 1, bound, bound + 1)]
        valid = st.integers(low, high)
        return st.one_of(valid, st.sampled_from(edges + BIG_INTS), wrong) if hostile else valid
    if kind == "number":
        return st.one_of(st.floats(allow_nan=False), wrong)
    if kind == "string":
        limit = schema.get("maxLength")
        over = [st.text(min_size=limit + 1, max_size=limit + 2)] if limit is not None and hostile else []
        return st.one_of(text_for(name, pool, hostile), *over, wrong)
    if kind == "array":
        item = value_for(schema.get("items", {}), defs, name, pool, hostile)
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        cap = min(high if high is not None else 5, 5)
        sized = [st.lists(item, min_size=low, max_size=max(low, cap))]
        if high is not None and hostile:
            sized.append(st.lists(item, min_size=high + 1, max_size=high + 1))
        return st.one_of(*sized, wrong)
    if kind == "object" or "properties" in schema:
        return st.one_of(object_for(schema, defs, pool, hostile), wrong)
    return wrong


def object_for(
    schema: dict[str, Any], defs: dict[str, Any], pool: Pool, hostile: bool
) -> st.SearchStrategy[dict[str, Any]]:
    """All required properties and any of the optional ones."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = [name for name in schema.get("required", []) if name in properties]
    fields = {name: value_for(properties[name], defs, name, pool, hostile) for name in properties}
    return st.fixed_dictionaries(
        {name: fields[name] for name in required},
        optional={name: fields[name] for name in properties if name not in required},
    )


@st.composite
def mutated(draw: st.DrawFn, arguments: dict[str, Any], schema: dict[str, Any], pool: Pool) -> dict[str, Any]:
    """Well-formed arguments as they are, with one value made hostile, or with their shape broken: a required
    argument dropped, an unknown or misspelt one added, or none at all. One fault at a time reaches deeper."""
    out = dict(arguments)
    properties: dict[str, Any] = schema.get("properties", {})
    move = draw(st.sampled_from(["keep", "keep", "value", "value", "drop", "extra", "misspelt", "empty"]))
    if move == "value" and properties:
        name = draw(st.sampled_from(sorted(properties)))
        out[name] = draw(value_for(properties[name], schema.get("$defs", {}), name, pool, hostile=True))
    elif move == "drop" and out:
        out.pop(draw(st.sampled_from(sorted(out))))
    elif move == "extra":
        out[draw(st.text(min_size=1, max_size=20))] = draw(st.sampled_from(WRONG_TYPES))
    elif move == "misspelt" and properties:
        known = draw(st.sampled_from(sorted(properties)))
        spelled = draw(st.sampled_from([known.lower(), known.upper(), known + "s", known[:-1] or "x", "_" + known]))
        if spelled not in properties:
            out[spelled] = out.pop(known, 1)
    elif move == "empty":
        out = {}
    return out


def arguments_for(schema: dict[str, Any], pool: Pool) -> st.SearchStrategy[dict[str, Any]]:
    defs = schema.get("$defs", {})
    return object_for(schema, defs, pool, hostile=False).flatmap(lambda arguments: mutated(arguments, schema, pool))


def resource_uris(pool: Pool) -> st.SearchStrategy[str]:
    junk = st.one_of(st.sampled_from(EDGE_STRINGS), st.text(max_size=30)).map(lambda text: quote(text, safe=""))
    note = st.one_of(st.sampled_from(pool.note_ids), junk)
    project = st.one_of(st.sampled_from(pool.projects), junk)
    page = st.one_of(st.integers(-2, 5).map(str), st.sampled_from(["²", "9" * 40, "01", "1.0"]).map(quote), junk)
    return st.one_of(
        note.map(lambda n: f"notewell://notes/{n}"),
        st.tuples(project, page).map(lambda pair: f"notewell://exports/{pair[0]}/{pair[1]}"),
        junk.map(lambda rest: f"notewell://{rest}"),
    )


# ----- the invariants ----------------------------------------------------------------------------------------


def _json_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    schema = _resolve(schema, defs)
    if "anyOf" in schema:
        return {kind for branch in schema["anyOf"] for kind in _json_types(branch, defs)}
    kind = schema.get("type")
    return {kind} if isinstance(kind, str) else {"any"}


def _mistyped(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Arguments whose JSON type the schema does not allow and no lenient reading explains: a boolean or a
    fraction where only integers are allowed (true was once read as version 1)."""
    properties, defs = schema.get("properties", {}), schema.get("$defs", {})
    found = []
    for name, value in arguments.items():
        if name not in properties:
            continue
        types = _json_types(properties[name], defs) - {"any"} or {"boolean", "number"}
        needed = "boolean" if isinstance(value, bool) else "number" if isinstance(value, float) else None
        if needed is not None and needed not in types:
            found.append(name)
    return found


def check_tool_result(tool: str, schema: dict[str, Any], arguments: dict[str, Any], result: CallToolResult) -> str:
    """The outcome label of a call that kept the contract; AssertionError naming the call otherwise."""
    where = f"{tool}({arguments!r:.300})"
    structured = result.structured_content
    unknown = [key for key in arguments if key not in schema.get("properties", {})]
    if not result.is_error:
        assert not unknown, f"{where}: the unknown argument {unknown[0]!r} was accepted (and ignored)"
        mistyped = _mistyped(schema, arguments)
        assert not mistyped, f"{where}: {mistyped[0]!r} of the wrong JSON type was accepted"
        assert isinstance(structured, dict), f"{where}: a success without structuredContent"
        return "ok"
    assert isinstance(structured, dict) and isinstance(structured.get("error"), dict), (
        f"{where}: an error without the {{error: {{status, code, message}}}} shape: {result.content!r:.300}"
    )
    error = structured["error"]
    status, code, message = error.get("status"), error.get("code"), error.get("message")
    assert isinstance(status, int) and 400 <= status < 500, f"{where}: status {status!r}: {message!r:.300}"
    assert isinstance(code, str) and code and code != "internal", f"{where}: code {code!r}"
    assert isinstance(message, str) and message.strip(), f"{where}: empty message"
    assert "errors.pydantic.dev" not in message and "validation error" not in message, f"{where}: {message!r:.300}"
    if unknown:
        assert status == 400 and f"Unknown argument {unknown[0]!r}"[:20] in message, f"{where}: {message!r:.300}"
    return f"{status} {code}"


def check_resource_read(uri: str, error: MCPError | None) -> str:
    if error is None:
        return "read ok"
    assert error.error.code in RESOURCE_NOT_FOUND_CODES, f"read {uri!r}: JSON-RPC {error.error.code} {error!r:.300}"
    return f"read {error.error.code}"


# ----- driving the app ---------------------------------------------------------------------------------------


class Session:
    """One app and one MCP client for a whole fuzz run, driven from synchronous code through a blocking portal."""

    def __init__(self, portal: BlockingPortal, client: Client, pool: Pool, tools: dict[str, dict[str, Any]]) -> None:
        self._portal = portal
        self._client = client
        self.pool = pool
        self.tools = tools
        self.tally = Tally()

    async def _call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        with anyio.fail_after(CALL_TIMEOUT_S):
            return await self._client.call_tool(tool, arguments)

    async def _read(self, uri: str) -> MCPError | None:
        with anyio.fail_after(CALL_TIMEOUT_S):
            try:
                await self._client.read_resource(uri)
            except MCPError as exc:
                return exc
            return None

    def call(self, tool: str, arguments: dict[str, Any]) -> None:
        try:
            result = self._portal.call(self._call, tool, arguments)
        except TimeoutError as exc:
            raise AssertionError(f"{tool}({arguments!r:.300}) hung for {CALL_TIMEOUT_S} s") from exc
        except Exception as exc:  # a JSON-RPC or transport error: never the answer to a tools/call
            raise AssertionError(f"{tool}({arguments!r:.300}) raised {exc!r:.300}") from exc
        outcome = check_tool_result(tool, self.tools[tool], arguments, result)
        self.tally.calls += 1
        self.tally.by_tool[tool] += 1
        self.tally.outcomes[outcome] += 1

    def read(self, uri: str) -> None:
        try:
            error = self._portal.call(self._read, uri)
        except TimeoutError as exc:
            raise AssertionError(f"read {uri!r} hung for {CALL_TIMEOUT_S} s") from exc
        self.tally.reads += 1
        self.tally.outcomes[check_resource_read(uri, error)] += 1

    def call_generated(self, tool: str, data: st.DataObject) -> None:
        self.call(tool, data.draw(arguments_for(self.tools[tool], self.pool), label="arguments"))

    def read_generated(self, data: st.DataObject) -> None:
        self.read(data.draw(resource_uris(self.pool), label="uri"))

    def step(self, data: st.DataObject) -> None:
        """One generated call: a tool with arguments from its schema, or now and then a resources/read."""
        if data.draw(st.integers(0, 9), label="read?") == 0:
            self.read_generated(data)
        else:
            self.call_generated(data.draw(st.sampled_from(sorted(self.tools)), label="tool"), data)


def _seed(services: Services, token_workspace: str) -> None:
    services.workspaces.set_plan(token_workspace, Plan.ENTERPRISE)  # quotas would turn long runs into 429s


async def _seed_pool(client: Client) -> Pool:
    ids = []
    for n, (title, tags) in enumerate([("Auth", ["auth"]), ("Deploys", ["ops", "ci"]), ("Cache", [])]):
        made = await client.call_tool(
            "create_note", {"project": "api", "title": title, "body": f"Body {n} alpha123 foo_bar", "tags": tags}
        )
        assert made.structured_content is not None and not made.is_error, made.content
        ids.append(made.structured_content["id"])
    await client.call_tool("update_note", {"id": ids[0], "body": "Body zero, edited"})
    await client.call_tool("delete_note", {"id": ids[2]})
    changes = await client.call_tool("get_changes_since", {"project": "api", "limit": 1})
    revisions = await client.call_tool("list_note_revisions", {"id": ids[0], "limit": 1})
    cursors = [
        str(changes.structured_content.get("cursor", "")) if changes.structured_content else "",
        str(revisions.structured_content.get("nextCursor", "1")) if revisions.structured_content else "1",
    ]
    return Pool(note_ids=ids, projects=["api", "alpha", "web"], tags=["auth", "ops", "ci"], cursors=cursors)


@contextlib.contextmanager
def session(services: Services) -> Iterator[Session]:
    """The real app on `services` with a workspace-wide key, seeded notes, and the tools it lists."""
    keys = make_keys(services)
    _seed(services, keys.workspace)
    with start_blocking_portal() as portal:
        app = make_app(services)
        with (
            portal.wrap_async_context_manager(running(app)) as live,
            portal.wrap_async_context_manager(connect(live, keys.full, "legacy")) as client,
        ):
            pool = portal.call(_seed_pool, client)
            listed = portal.call(client.list_tools)
            tools = {tool.name: dict(tool.input_schema) for tool in listed.tools}
            yield Session(portal, client, pool, tools)
