"""The MCP surface: each tool parses its arguments, makes one service call and shapes the result.

Tool parameters carry the contract's wire names (camelCase, `id`), because the SDK derives the input schema
from the signature.
"""

from __future__ import annotations

import difflib
import functools
import json
import logging
import threading
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, Any, Literal, ParamSpec

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as ListedTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema

from notewell.domain.branches import hidden_line
from notewell.domain.errors import InvalidArgumentError, NotewellError, UnauthenticatedError
from notewell.domain.model import Anchor, Link, NoteStatus, NoteType, Principal, SearchFilters
from notewell.domain.packing import Detail
from notewell.domain.rules import anchors_of_json, estimate_tokens, parse_decimal, quote_short
from notewell.entrypoints.schemas import lean_input_schema, one_line
from notewell.entrypoints.wire import (
    ChangesOut,
    CheckpointResult,
    ContextOut,
    ExportOut,
    NoteCreated,
    NoteFull,
    NotesBatch,
    NoteWritten,
    ProjectList,
    ProjectOut,
    RememberResult,
    RevisionItem,
    RevisionList,
    SearchResult,
    TagRenameOut,
    UsageOut,
    Wire,
)
from notewell.services.memory import RememberRequest
from notewell.services.metering import Meter
from notewell.services.notes import NoteChanges, PatchMode

if TYPE_CHECKING:
    from collections.abc import Callable

    from notewell.bootstrap import Services
    from notewell.ports import CallMetrics

logger = logging.getLogger("notewell.tools")

# Set per HTTP request by the auth middleware (entrypoints/http.py); tools never see a token.
CURRENT_PRINCIPAL: ContextVar[Principal | None] = ContextVar("notewell_principal", default=None)
CURRENT_REQUEST_ID: ContextVar[str] = ContextVar("notewell_request_id", default="-")

# Notes per export resource page at most (a page also stops short of Lambda's 6 MB answer: services/portability.py):
# bounded resource reads, never one unbounded tool result.
EXPORT_PAGE_NOTES = 500
SERVER_INSTRUCTIONS = (
    "Notewell is this project's durable memory: decisions, constraints, failed approaches, status and handoffs "
    "that outlive your session. START every task with get_context(project, query=<the task>) and follow its "
    "constraints and instructions. While working, remember decisions, constraints and failed approaches as they "
    "happen. END every session with checkpoint (summary, decisions, open items, next actions). Reads are lean: "
    "fetch full bodies with get_notes by id."
)


# Hints say only what differs from the spec's defaults (readOnly false, destructive true, idempotent false,
# openWorld true); destructive and idempotent mean nothing for a read-only tool.
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
CREATE = ToolAnnotations(destructive_hint=False, open_world_hint=False)
EDIT = ToolAnnotations(open_world_hint=False)
IDEMPOTENT_EDIT = ToolAnnotations(idempotent_hint=True, open_world_hint=False)
RESTORE = ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)

P = ParamSpec("P")

# ----- shared argument types ---------------------------------------------------------------------------------

ProjectArg = Annotated[str, Field(description="Project slug.")]
FirstProjectArg = Annotated[str, Field(description="Project slug, e.g. 'billing-api'.")]  # where an agent starts
NoteIdArg = Annotated[str, Field(description="Note id or ref.")]
ExpectedVersionArg = Annotated[
    int | None,
    Field(description="Version you read (409 if changed).", ge=1),
]
_TYPE_HELP = "Kind of memory; 'note' if none fits."
_STATUS_HELP = "'superseded' comes only from supersedes."
_TAGS_HELP = "Topic words, e.g. ['auth']."
_LINKS_HELP = "Links to other notes."
TypeArg = Annotated[NoteType, Field(description=_TYPE_HELP)]
OptionalTypeArg = Annotated[NoteType | None, Field(description=_TYPE_HELP)]
StatusArg = Annotated[NoteStatus, Field(description=_STATUS_HELP)]
OptionalStatusArg = Annotated[NoteStatus | None, Field(description=_STATUS_HELP)]
TagsArg = Annotated[list[str] | None, Field(description=_TAGS_HELP, max_length=20)]


class LinkIn(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt key must not vanish silently

    target: str = Field(description="Note id.")
    relation: str = Field(default="related", description="e.g. 'depends_on'.")


LinksArg = Annotated[list[LinkIn] | None, Field(description=_LINKS_HELP, max_length=50)]
# Objects without a schema of their own: anchors come from `notewell anchor --print` or the hooks, not from the
# model's pen, and their seven fields would cost every session's tool list; rules.anchor_of_json checks each.
AnchorsArg = Annotated[
    list[Annotated[dict[str, Any], WithJsonSchema({"type": "object"})]] | None,
    Field(description="Code anchors: notewell anchor --print."),
]


# Filled by the hooks and the CLI from git; agents without them leave it out and see every note (domain/branches.py).
BranchArg = Annotated[str | None, Field(description="Git branch.")]
AllBranchesArg = Annotated[bool, Field(description="Also unmerged branches.")]
# Paths from the repository's top; freshness.check_files checks them (at most MAX_FILES), so no maxItems to list.
FilesArg = Annotated[list[str] | None, Field(description="Files or dirs you work on: their notes first.")]


def caller() -> Principal:
    principal = CURRENT_PRINCIPAL.get()
    if principal is None:
        raise UnauthenticatedError("No credentials on this request; send an API key as a Bearer token.")
    return principal


def _compact_text(payload: object) -> str:
    """A result without a text rendering of its own, as compact JSON: nothing is cut, since what a tool returns
    is what it was asked for, and many clients hand the model only this block."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def error_result(status: int, code: str, message: str, **details: object) -> CallToolResult:
    error = {"status": status, "code": code, "message": message, **details}
    return CallToolResult(
        is_error=True,
        content=[TextContent(type="text", text=message)],
        structured_content={"error": error},
    )


def tool_result(
    fn: Callable[P, BaseModel], meter: Meter | None = None, metrics: CallMetrics | None = None
) -> Callable[P, CallToolResult]:
    """Wire model → compact text + structuredContent; NotewellError → isError result; quota check, metering, one
    log line and the call's metrics per call."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        started = time.perf_counter()
        principal = CURRENT_PRINCIPAL.get()
        outcome = "ok"
        result: CallToolResult | None = None
        if "from" in kwargs:  # a Python keyword: the parameter is `from_`, advertised as "from"
            kwargs["from_"] = kwargs.pop("from")
        try:
            _admit(meter, principal)
            model = fn(*args, **kwargs)
            structured = model.model_dump(mode="json", by_alias=True, exclude_none=True)
            text = model.as_text() if isinstance(model, Wire) else None
            links = model.resource_links() if isinstance(model, Wire) else []
            result = CallToolResult(
                content=[
                    TextContent(type="text", text=text if text is not None else _compact_text(structured)),
                    *links,
                ],
                structured_content=structured,
            )
            return result
        except NotewellError as exc:
            outcome = exc.code
            result = error_result(exc.status, exc.code, exc.message, **exc.details())
            return result
        except Exception:
            outcome = "internal"
            logger.exception("tool failed", extra={"tool": fn.__name__, "request_id": CURRENT_REQUEST_ID.get()})
            return error_result(
                500,
                "internal",
                "Notewell hit an internal error; retry once, then report the request id.",
                requestId=CURRENT_REQUEST_ID.get(),
            )
        finally:
            text = result.content[0].text if result is not None and result.content else ""  # type: ignore[union-attr]
            duration_ms = _account(meter, metrics, principal, fn.__name__, outcome, text, started)
            logger.info(
                "tool call",
                extra={
                    "tool": fn.__name__,
                    "workspace": principal.workspace_id if principal else None,
                    "actor": principal.actor if principal else None,
                    "outcome": outcome,
                    "duration_ms": round(duration_ms, 2),
                    "request_id": CURRENT_REQUEST_ID.get(),
                },
            )

    return wrapper


def _admit(meter: Meter | None, principal: Principal | None) -> None:
    """Raises when the caller's workspace may not make another call (suspended, or its month's calls used up)."""
    if meter is not None and principal is not None:
        meter.admit_call(principal.workspace_id)


def _account(
    meter: Meter | None,
    metrics: CallMetrics | None,
    principal: Principal | None,
    name: str,
    outcome: str,
    text: str,
    started: float,
) -> float:
    """Count a finished call (a tool's, or a resource read) for billing and in the metrics; returns its duration in
    ms. A call refused for the quota is not counted against it."""
    if meter is not None and principal is not None and outcome != "quota_exceeded":
        meter.record_call(principal.workspace_id, name, estimate_tokens(text), principal.project_id)
    duration_ms = (time.perf_counter() - started) * 1000
    if metrics is not None:
        metrics.record_call(name, outcome, duration_ms)
    return duration_ms


def _links(links: list[LinkIn] | None) -> list[Link] | None:
    return None if links is None else [Link(x.target, x.relation) for x in links]


def _anchors(anchors: list[dict[str, Any]] | None) -> tuple[Anchor, ...] | None:
    return None if anchors is None else anchors_of_json(anchors)


class _ToolsBuiltOnUse(ToolManager):
    """Tools are built (argument model and JSON schema, ~3 ms each) when first asked for, not when registered: a cold
    Lambda answering one tools/call builds one tool instead of twenty, and initialize builds none."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[str, Callable[[], Tool]] = {}
        self._order: list[str] = []  # registration order: tools/list does not depend on what was called first
        self._building = threading.Lock()  # a second caller of a tool being built waits for it, never misses it

    def defer(self, name: str, build: Callable[[], Tool]) -> None:
        self._pending[name] = build
        self._order.append(name)

    def add_tool(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Tool:
        tool = super().add_tool(fn, *args, **kwargs)
        if tool.name not in self._order:
            self._order.append(tool.name)
        return tool

    def get_tool(self, name: str) -> Tool | None:
        if name in self._pending:
            with self._building:
                build = self._pending.get(name)
                if build is not None:
                    self._tools[name] = build()
                    del self._pending[name]  # only once built: until then a caller waits here
        return super().get_tool(name)

    def list_tools(self) -> list[Tool]:
        return [tool for name in self._order if (tool := self.get_tool(name)) is not None]

    def remove_tool(self, name: str) -> None:
        self.get_tool(name)
        super().remove_tool(name)
        self._order.remove(name)


class _LeanToolList(MCPServer):
    """tools/list with lean schemas and one-line descriptions: every agent pays for the list at session start."""

    _listed: list[ListedTool] | None = None
    writing_tools: frozenset[str] = frozenset()  # tools not marked read-only: they need the notes:write scope

    async def list_tools(self) -> list[ListedTool]:
        if self._listed is None:  # the tools are fixed once the server is built
            self._listed = [
                tool.model_copy(
                    update={
                        "description": one_line(tool.description or ""),
                        "input_schema": lean_input_schema(tool.input_schema),
                        "output_schema": None,
                    }
                )
                for tool in await super().list_tools()
            ]
        return self._listed


def build_server(services: Services) -> MCPServer:
    strict = _StrictArguments()
    server = _LeanToolList(
        name="notewell",
        title="Notewell",
        instructions=SERVER_INSTRUCTIONS,
        version="0.1.0",
        log_level="WARNING",
        subscriptions=False,
        middleware=[strict],
    )
    tools = server._tool_manager = _ToolsBuiltOnUse()  # none registered yet: the SDK's manager is empty

    # No `title`: each would restate its tool's name ("Get note") in every agent's tool list.
    def tool(name: str, annotations: ToolAnnotations) -> Callable[[Callable[P, BaseModel]], None]:
        def register(fn: Callable[P, BaseModel]) -> None:
            strict.register(name, fn)
            if not annotations.read_only_hint:
                server.writing_tools = server.writing_tools | {name}
            # structured_output=False: the wrapper returns a CallToolResult made from the wire model itself, so an
            # output schema would only be generated (about a third of registering the tools, on a cold start) and
            # each result validated against the model it was just dumped from, for a schema tools/list drops.
            tools.defer(
                name,
                lambda: Tool.from_function(
                    tool_result(fn, services.meter, services.metrics), name=name, annotations=annotations,
                    structured_output=False,
                ),
            )  # fmt: skip

        return register

    notes = services.notes

    # ----- orientation --------------------------------------------------------------------------------------

    @tool("get_context", READ_ONLY)
    def get_context(
        project: FirstProjectArg,
        query: Annotated[str | None, Field(description="What you are about to work on.")] = None,
        detail: Annotated[
            Literal["lean", "balanced", "deep"],
            Field(description="deep: longer excerpts, bigger budget."),
        ] = "balanced",
        maxTokens: Annotated[
            int | None,
            Field(description="Token budget; overrides the project default.", ge=200, le=32000),
        ] = None,
        includeHistorical: Annotated[bool, Field(description="Also superseded and historical notes.")] = False,
        branch: BranchArg = None,
        allBranches: AllBranchesArg = False,
        files: FilesArg = None,
        # An object without a schema of its own: the hooks fill it, and freshness.check_file_hashes checks it.
        checkFreshness: Annotated[
            Annotated[dict[str, str | None], WithJsonSchema({"type": "object"})] | None,
            Field(description="{path: fileHash|null}: marks stale notes."),
        ] = None,
    ) -> ContextOut:
        """START HERE for project work: the project's current state within a token budget (conflicts first,
        constraints, decisions, failed approaches, status, notes on query or files, open items, recent changes).
        A note's ref works as its id; get_notes reads notes whole."""
        return ContextOut.of(
            services.context.get_context(
                caller(), project, query=query, detail=Detail(detail), max_tokens=maxTokens,
                include_historical=includeHistorical, branch=branch, all_branches=allBranches, files=files or (),
                check_freshness=checkFreshness,
            )
        )  # fmt: skip

    @tool("get_changes_since", READ_ONLY)
    def get_changes_since(
        project: ProjectArg,
        since: Annotated[
            str | None,
            Field(description="ISO-8601 time."),
        ] = None,
        cursor: Annotated[str | None, Field(description="Your last call's cursor, unchanged.")] = None,
        types: Annotated[list[NoteType] | None, Field(description="Only these types (fixed per cursor).")] = None,
        statuses: Annotated[
            list[NoteStatus] | None, Field(description="Only these statuses (fixed per cursor).")
        ] = None,
        limit: Annotated[int, Field(description="Changes per page.", ge=1, le=200)] = 50,
        maxTokens: Annotated[
            int,
            Field(description="Token budget of a page.", ge=100, le=32000),
        ] = 4000,
    ) -> ChangesOut:
        """RESUME AFTER ANOTHER AGENT OR HUMAN MAY HAVE CHANGED THE PROJECT: notes created, updated or deleted, oldest
        first. Pass since (or nothing); while hasMore, call again with cursor; keep the last cursor."""
        page = services.changes.since(
            caller(), project, since=since, cursor=cursor, types=types or (), statuses=statuses or (), limit=limit,
            max_tokens=maxTokens,
        )  # fmt: skip
        return ChangesOut.of(page)

    # ----- writing knowledge --------------------------------------------------------------------------------

    @tool("remember", CREATE)
    def remember(
        project: ProjectArg,
        content: Annotated[str, Field(description="The memory in plain words: one claim, with its why.")],
        type: TypeArg = NoteType.NOTE,
        title: Annotated[str | None, Field(description="Derived from content if omitted.")] = None,
        tags: TagsArg = None,
        importance: Annotated[int, Field(description="1 (minor) to 5 (critical).", ge=1, le=5)] = 3,
        supersedes: Annotated[
            list[str] | None,
            Field(description="Ids of notes this replaces.", max_length=20),
        ] = None,
        force: Annotated[bool, Field(description="Store despite a conflict: both claims hold.")] = False,
        idempotencyKey: Annotated[
            str | None,
            Field(description="Unique string; a retry returns the first result.", max_length=200),
        ] = None,
        anchors: AnchorsArg = None,
        branch: BranchArg = None,
    ) -> RememberResult:
        """Save what the next agent must know, with its type. status: created; updated (restated a note in place);
        duplicate or conflict (nothing written; a conflict's evidence says what changed: send its resolve call). With
        reviewRequired, read related and neighbours, and send the resolve call if the new note replaces one."""
        outcome = services.memory.remember(
            caller(),
            RememberRequest(
                project=project, content=content, type=type, title=title, tags=tags or (), importance=importance,
                supersedes=supersedes or (), force=force, idempotency_key=idempotencyKey,
                anchors=_anchors(anchors) or (), branch=branch,
            ),
        )  # fmt: skip
        return RememberResult.of(outcome)

    @tool("checkpoint", CREATE)
    def checkpoint(
        project: ProjectArg,
        summary: Annotated[str, Field(description="What this session did and where it stopped.")],
        decisions: Annotated[list[str] | None, Field(description="Decisions made, one claim each.")] = None,
        openItems: Annotated[list[str] | None, Field(description="Unfinished work, one item each.")] = None,
        nextActions: Annotated[list[str] | None, Field(description="What the next agent should do first.")] = None,
        failedApproaches: Annotated[list[str] | None, Field(description="What was tried and failed, and why.")] = None,
        idempotencyKey: Annotated[
            str | None, Field(description="Unique string; a retry writes nothing twice.", max_length=200)
        ] = None,
        branch: BranchArg = None,
    ) -> CheckpointResult:
        """END A WORK SESSION with this: stores a handoff and files each decision, open item and failed approach as
        remember does. Send the resolve calls of any conflict."""
        outcome = services.memory.checkpoint(
            caller(), project, summary=summary, decisions=decisions or (), open_items=openItems or (),
            next_actions=nextActions or (), failed_approaches=failedApproaches or (), idempotency_key=idempotencyKey,
            branch=branch,
        )  # fmt: skip
        return CheckpointResult.of(outcome)

    # ----- direct note access -------------------------------------------------------------------------------

    @tool("create_note", CREATE)
    def create_note(
        project: ProjectArg,
        title: Annotated[str, Field(description="Short and specific (under 200 characters).")],
        body: Annotated[str, Field(description="Markdown body: the why, not just the what.")],
        type: TypeArg = NoteType.NOTE,
        status: StatusArg = NoteStatus.CURRENT,
        tags: TagsArg = None,
        links: LinksArg = None,
        importance: Annotated[int, Field(description="1 (minor) to 5 (critical).", ge=1, le=5)] = 3,
        canonical: Annotated[bool, Field(description="The authoritative note on its topic.")] = False,
        supersedes: Annotated[list[str] | None, Field(description="Ids of notes this replaces.")] = None,
        idempotencyKey: Annotated[
            str | None,
            Field(description="Unique string; a retry returns the first result.", max_length=200),
        ] = None,
        anchors: AnchorsArg = None,
        branch: BranchArg = None,
    ) -> NoteCreated:
        """Store a note with an explicit title and body (prefer remember for free-form memories). With reviewRequired,
        supersede or dispute a disagreeing neighbour."""
        principal = caller()
        created = notes.create(
            principal,
            project,
            title=title,
            body=body,
            type=type,
            status=status,
            tags=tags or (),
            links=_links(links) or (),
            importance=importance,
            canonical=canonical,
            supersedes=supersedes or (),
            idempotency_key=idempotencyKey,
            anchors=_anchors(anchors) or (),
            branch=branch,
        )
        return NoteCreated.of_review(created, services.memory.review(principal, created))

    @tool("get_note", READ_ONLY)
    def get_note(id: NoteIdArg) -> NoteFull:
        """Fetch one note with its full body and metadata."""
        return NoteFull.of_view(notes.get(caller(), id))

    @tool("get_notes", READ_ONLY)
    def get_notes(
        ids: Annotated[list[str], Field(description="Note ids.", min_length=1, max_length=50)],
    ) -> NotesBatch:
        """Fetch up to 50 notes with full bodies; unknown ids come back under missing."""
        batch = notes.get_many(caller(), ids)
        return NotesBatch(notes=[NoteFull.of_view(v) for v in batch.found], missing=batch.missing)

    @tool("update_note", EDIT)
    def update_note(
        id: NoteIdArg,
        expectedVersion: ExpectedVersionArg = None,
        title: str | None = None,
        body: Annotated[str | None, Field(description="Replaces the whole body.")] = None,
        type: OptionalTypeArg = None,
        status: OptionalStatusArg = None,
        tags: TagsArg = None,
        links: LinksArg = None,
        importance: Annotated[int | None, Field(description="1 (minor) to 5 (critical).", ge=1, le=5)] = None,
        canonical: Annotated[bool | None, Field(description="Mark as the authoritative note.")] = None,
        supersedes: Annotated[
            list[str] | None,
            Field(description="Ids of notes this replaces.", max_length=20),
        ] = None,
        anchors: AnchorsArg = None,
    ) -> NoteWritten:
        """Change fields of a note; omitted fields stay. Pass expectedVersion so you never overwrite another edit; for
        small body edits use patch_note."""
        changes = NoteChanges(
            title=title,
            body=body,
            type=type,
            status=status,
            tags=tags,
            links=_links(links),
            importance=importance,
            canonical=canonical,
            supersedes=supersedes,
            anchors=_anchors(anchors),
        )
        return NoteWritten.of_view(notes.update(caller(), id, changes, expected_version=expectedVersion))

    @tool("patch_note", EDIT)
    def patch_note(
        id: NoteIdArg,
        mode: Annotated[
            Literal["append", "prepend", "replace"],
            Field(description="replace: the first exact occurrence of find."),
        ],
        text: Annotated[str, Field(description="Text to add, or find's replacement.")],
        find: Annotated[str | None, Field(description="For replace: the exact text.")] = None,
        expectedVersion: ExpectedVersionArg = None,
    ) -> NoteWritten:
        """Edit a note's body without resending it: append, prepend, or replace the exact text find (absent: 422,
        nothing written; re-read the note)."""
        return NoteWritten.of_view(
            notes.patch(caller(), id, mode=PatchMode(mode), text=text, find=find, expected_version=expectedVersion)
        )

    @tool("delete_note", IDEMPOTENT_EDIT)
    def delete_note(id: NoteIdArg, expectedVersion: ExpectedVersionArg = None) -> NoteWritten:
        """Soft-delete a note (restore_note undoes it). To retire an outdated note, supersede it instead."""
        return NoteWritten.of_view(notes.delete(caller(), id, expected_version=expectedVersion))

    @tool("restore_note", RESTORE)
    def restore_note(id: NoteIdArg) -> NoteWritten:
        """Undo delete_note (as a new version)."""
        return NoteWritten.of_view(notes.restore(caller(), id))

    # ----- history ------------------------------------------------------------------------------------------

    @tool("list_note_revisions", READ_ONLY)
    def list_note_revisions(
        id: NoteIdArg,
        limit: Annotated[int, Field(description="Revisions per page.", ge=1, le=100)] = 20,
        cursor: Annotated[str | None, Field(description="nextCursor from the previous page.")] = None,
        includeBody: Annotated[bool, Field(description="Include full bodies; costs tokens.")] = False,
    ) -> RevisionList:
        """Earlier versions of a note, newest first."""
        page = notes.revisions(caller(), id, limit=limit, cursor=cursor)
        return RevisionList(
            id=page.note.id,
            current_version=page.note.version,
            revisions=[RevisionItem.of(r, includeBody) for r in page.revisions],
            next_cursor=page.next_cursor,
        )

    @tool("get_note_revision", READ_ONLY)
    def get_note_revision(
        id: NoteIdArg, version: Annotated[int, Field(description="Version to fetch.", ge=1)]
    ) -> NoteFull:
        """One earlier version of a note, with its full body."""
        principal = caller()
        revision = notes.revision(principal, id, version)
        project = services.auth.project_slug(principal.workspace_id, revision.project_id) or ""
        return NoteFull.of(revision, project)

    # ----- search -------------------------------------------------------------------------------------------

    @tool("search_notes", READ_ONLY)
    def search_notes(
        project: ProjectArg,
        query: Annotated[str | None, Field(description="Words or a question.")] = None,
        semantic: Annotated[bool, Field(description="Match meaning too; falls back to keywords.")] = False,
        types: Annotated[list[NoteType] | None, Field(description="Only these note types.")] = None,
        statuses: Annotated[list[NoteStatus] | None, Field(description="Only these statuses.")] = None,
        tags: Annotated[list[str] | None, Field(description="Only notes with one of these tags.")] = None,
        limit: Annotated[int, Field(description="Maximum results.", ge=1, le=50)] = 10,
        includeBody: Annotated[bool, Field(description="Return full bodies; costs tokens.")] = False,
        files: FilesArg = None,
        branch: BranchArg = None,
        allBranches: AllBranchesArg = False,
    ) -> SearchResult:
        """Find notes by words (or meaning, with semantic) or by the files they are anchored to. Check here before
        re-deciding something; fetch whole notes with get_notes."""
        filters = SearchFilters(
            types=frozenset(types or ()),
            statuses=frozenset(statuses or ()),
            tags=frozenset(t.strip().lower() for t in tags or ()),
        )
        outcome = services.search.find(
            caller(), project, query, files=files or (), branch=branch, all_branches=allBranches, semantic=semantic,
            filters=filters, limit=limit,
        )  # fmt: skip
        notice = None
        if not outcome.project_exists:
            notice = f"Project {project!r} has no notes yet; create_note or remember starts it."
        elif outcome.fallback is not None:
            notice = f"Matched by keywords only: {outcome.fallback[0].lower()}{outcome.fallback[1:]}"
        if outcome.other_branches:
            hidden = hidden_line(outcome.other_branches)
            notice = f"{notice} {hidden}" if notice else hidden
        if outcome.scanned is not None:
            bounded = (
                f"Searched only the {outcome.scanned:,} most recently updated notes of this project (no search index "
                "answered); older notes were not searched."
            )
            notice = f"{notice} {bounded}" if notice else bounded
        elif notice is None and not outcome.hits:
            notice = "No note matches; try other words, fewer filters, or semantic: true."
        return SearchResult.of(outcome, project=project, include_body=includeBody, notice=notice)

    # ----- projects -----------------------------------------------------------------------------------------

    @tool("list_projects", READ_ONLY)
    def list_projects() -> ProjectList:
        """List the projects this key can see, with their summaries."""
        projects = services.projects.list(caller())
        notice = None if projects else "No projects yet; the first create_note or remember creates one."
        return ProjectList(projects=[ProjectOut.of(p) for p in projects], notice=notice)

    @tool("update_project", IDEMPOTENT_EDIT)
    def update_project(
        project: ProjectArg,
        summary: Annotated[str | None, Field(description="What the project is.")] = None,
        instructions: Annotated[str | None, Field(description="Instructions every agent here must follow.")] = None,
        defaultMaxTokens: Annotated[
            int | None,
            Field(
                description="Default get_context budget (from 256); 0 clears.",
                ge=0,
                le=32000,
            ),
        ] = None,
        defaultBranch: BranchArg = None,
        mergedBranches: Annotated[list[str] | None, Field(description="Now merged.", max_length=500)] = None,
    ) -> ProjectOut:
        """Set a project's summary, agent instructions or default context budget (creates it if new)."""
        return ProjectOut.of(
            services.projects.update(
                caller(), project, summary=summary, instructions=instructions, default_max_tokens=defaultMaxTokens,
                default_branch=defaultBranch, merged_branches=mergedBranches or (),
            )
        )  # fmt: skip

    @tool("rename_project", IDEMPOTENT_EDIT)
    def rename_project(
        project: ProjectArg,
        newName: Annotated[str, Field(description="New slug, e.g. 'billing-service'.", max_length=64)],
    ) -> ProjectOut:
        """Rename a project (its notes, history, keys and change feed follow); 409 if the name is taken."""
        return ProjectOut.of(services.projects.rename(caller(), project, newName))

    @tool("rename_tag", IDEMPOTENT_EDIT)
    def rename_tag(
        project: ProjectArg,
        from_: Annotated[str, Field(alias="from", description="The tag to replace.")],
        to: Annotated[str, Field(description="The tag to use instead.")],
    ) -> TagRenameOut:
        """Replace a tag on every note of a project (history kept). done false: call again with the same arguments."""
        outcome = services.tags.rename(caller(), project, from_, to)
        return TagRenameOut(project=outcome.project, renamed=outcome.renamed, done=outcome.done)

    @tool("get_usage", READ_ONLY)
    def get_usage() -> UsageOut:
        """Show the plan, its limits and this month's usage."""
        return UsageOut.of(services.workspaces.usage(caller()))

    @tool("export_project", READ_ONLY)
    def export_project(project: ProjectArg) -> ExportOut:
        """Export a project as JSON Lines: read the returned resource links in order."""
        counts = services.portability.export_counts(caller(), project, EXPORT_PAGE_NOTES)
        if counts is None:
            return ExportOut(
                project=project, notes=0, deleted=0, revisions=0, pages=0, page_size=EXPORT_PAGE_NOTES, resources=[],
                notice=f"Project {project!r} has no notes yet; there is nothing to export.",
            )  # fmt: skip
        pages = counts.pages  # cut by notes and by bytes, as export_page cuts them
        return ExportOut(
            project=project, notes=counts.notes, deleted=counts.deleted, revisions=counts.revisions, pages=pages,
            page_size=EXPORT_PAGE_NOTES, resources=[f"notewell://exports/{project}/{n}" for n in range(1, pages + 1)],
        )  # fmt: skip

    _register_prompts_and_resources(server, services)
    return server


def _register_prompts_and_resources(server: MCPServer, services: Services) -> None:
    @server.prompt(name="start_task", title="Start a task", description="Load the project's memory before working.")
    def start_task(
        project: Annotated[str, Field(description="Project slug.")],
        task: Annotated[str, Field(description="What you are about to do.")],
    ) -> str:
        return (
            f"Before working on this task in project '{project}', call get_context(project='{project}', "
            f"query={task!r}). Follow its constraints and instructions, settle any conflicts it lists, and do not "
            "repeat its failed approaches. As you decide things, call remember with a type (decision, constraint, "
            f"failed_approach...). Task: {task}"
        )

    @server.prompt(name="end_session", title="End a session", description="Hand the work over to the next agent.")
    def end_session(project: Annotated[str, Field(description="Project slug.")]) -> str:
        return (
            f"Before you stop, call checkpoint(project='{project}', summary=..., decisions=[...], openItems=[...], "
            "nextActions=[...], failedApproaches=[...]) with what this session did, decided, left open and tried "
            "without success. Then send the resolve call of any item that came back as a conflict."
        )

    @server.resource(
        "notewell://exports/{project}/{page}", name="export", title="Project export page",
        mime_type="application/x-ndjson",
        description="One page of a project's Notewell JSON Lines export; export_project lists the pages.",
    )  # fmt: skip
    def export_resource(project: str, page: str) -> str:
        def read() -> str:
            number = parse_decimal(page)
            if number is None:
                raise InvalidArgumentError(f"Export page {page!r} is not a number; use the links of export_project.")
            lines = services.portability.export_page(caller(), project, number, EXPORT_PAGE_NOTES)
            return "".join(line + "\n" for line in lines)

        try:
            return _metered(services, "export", read)
        except NotewellError as exc:
            raise _resource_error(exc, f"notewell://exports/{project}/{page}") from exc

    @server.resource(
        "notewell://notes/{id}", name="note", title="Note", mime_type="text/markdown",
        description="A note's current text with its metadata, by id or ref.",
    )  # fmt: skip
    def note_resource(id: str) -> str:
        def read() -> str:
            view = services.notes.get(caller(), id)
            note = view.note
            header = f"# {note.title}\n\n"
            meta = (
                f"<!-- id: {note.id} · project: {view.project} · type: {note.type.value} · "
                f"status: {note.status.value} · version: {note.version} · updated: {note.updated_at} -->\n\n"
            )
            return header + meta + note.body

        try:
            return _metered(services, "note", read)
        except NotewellError as exc:
            raise _resource_error(exc, f"notewell://notes/{id}") from exc


def _metered(services: Services, name: str, read: Callable[[], str]) -> str:
    """A resource read, admitted against the plan's calls and counted like a tool call (as `resource:<name>`, with
    the tokens it returned), with its metrics: exports can be read page after page, so they are not free."""
    principal = CURRENT_PRINCIPAL.get()
    started = time.perf_counter()
    outcome, text = "ok", ""
    try:
        _admit(services.meter, principal)
        text = read()
        return text
    except NotewellError as exc:
        outcome = exc.code
        raise
    except Exception:
        outcome = "internal"
        raise
    finally:
        _account(services.meter, services.metrics, principal, f"resource:{name}", outcome, text, started)


def _resource_error(exc: NotewellError, uri: str) -> Exception:
    """Not found, bad ids and other tenants' data read as "no such resource" (-32602, the SDK's not-found since
    SEP-2164; -32002 is retired). A busy store is -32603 with our error and a retry hint, not a permanent 4xx."""
    if exc.status >= 500 or exc.status == 429:
        error = {"uri": uri, "status": exc.status, "code": exc.code, **exc.details()}
        return MCPError(code=INTERNAL_ERROR, message=exc.message, data=error)
    return ResourceNotFoundError(exc.message)


class _StrictArguments:
    """Every tools/call is checked against the tool's own argument model before the SDK runs it.

    An argument the tool does not take is refused, naming the nearest one it does take: the SDK would drop it
    silently, so a misspelt `expected_version` used to skip the version check and overwrite. A value the model
    rejects gets one sentence per argument saying what to send, not pydantic's dump with a URL. Errors the SDK
    still raises itself (an unknown tool) get the same {status, code, message} shape.
    """

    def __init__(self) -> None:
        self._functions: dict[str, Callable[..., Any]] = {}
        self._metadata: dict[str, FuncMetadata] = {}

    def register(self, name: str, fn: Callable[..., Any]) -> None:
        self._functions[name] = fn

    def _arguments_of(self, tool: str) -> FuncMetadata:
        if tool not in self._metadata:  # built on first use: no cold-start cost for tools never called
            self._metadata[tool] = func_metadata(self._functions[tool])
        return self._metadata[tool]

    def refusal(self, params: object) -> CallToolResult | None:
        """The error result for a call whose arguments the tool would not accept as sent, else None."""
        if not isinstance(params, dict) or params.get("name") not in self._functions:
            return None  # malformed params and unknown tools are the SDK's to answer
        tool: str = params["name"]
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            return None
        metadata = self._arguments_of(tool)
        known = [field.alias or name for name, field in metadata.arg_model.model_fields.items()]
        unknown = [key for key in arguments if key not in known]
        if unknown:
            return error_result(
                400, "bad_argument", _unknown_arguments_message(tool, unknown, known), arguments=unknown
            )
        surrogate = _lone_surrogate(arguments)
        if surrogate is not None:  # no store can keep one, and strict JSON validation cannot even read it
            path, text, index = surrogate
            message = (
                f"{path} contains a lone surrogate (U+{ord(text[index]):04X}) at character {index}; send valid "
                "Unicode (a \\uD800-\\uDFFF escape must be half of a pair). Nothing was written."
            )
            return error_result(400, "bad_argument", message, arguments=[path.split("[")[0]])
        try:
            # Strictly, as JSON: `true` is not the integer 1 (an expectedVersion of true was a check against v1)
            # and 4.5 is not 4. The SDK's leniency for JSON inside a string ('["a"]' for a list) is kept, and so
            # are an integer sent as ASCII digits ('5', by the page-number rule) and 'true'/'false' for a boolean.
            prepared = metadata.pre_parse_json(arguments)
            for name, field in metadata.arg_model.model_fields.items():
                key = field.alias or name
                value = prepared.get(key)
                if isinstance(value, str) and field.annotation in (int, int | None):
                    prepared[key] = value if (number := parse_decimal(value)) is None else number
                elif value in ("true", "false") and field.annotation in (bool, bool | None):
                    prepared[key] = value == "true"
            as_json = json.dumps(prepared, allow_nan=False)
            metadata.arg_model.model_validate_json(as_json, strict=True)
        except ValueError as exc:  # ValidationError is a ValueError; so is a NaN, which JSON cannot carry
            if not isinstance(exc, ValidationError):
                return error_result(400, "bad_argument", f"Arguments of {tool} must be plain JSON values (no NaN).")
            names = list(dict.fromkeys(_location(error["loc"]) for error in exc.errors()))
            return error_result(400, "bad_argument", _invalid_arguments_message(tool, exc), arguments=names)
        return None

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if getattr(ctx, "method", None) != "tools/call":
            return await call_next(ctx)
        refused = self.refusal(getattr(ctx, "params", None))
        if refused is not None:
            error = (refused.structured_content or {}).get("error", {})
            logger.info(
                "tool arguments refused",  # argument names only: the values are the caller's data
                extra={"tool": ctx.params.get("name"), "arguments": error.get("arguments"),
                       "outcome": "bad_argument", "request_id": CURRENT_REQUEST_ID.get()},
            )  # fmt: skip
            return refused.model_dump(by_alias=True, exclude_none=True, mode="json")
        result = await call_next(ctx)
        data = result.model_dump(by_alias=True, exclude_none=True) if isinstance(result, BaseModel) else result
        # Every failure raised inside a tool is shaped by `tool_result`, so an error result without
        # structuredContent can only come from the SDK itself (an unknown tool).
        if isinstance(data, dict) and data.get("isError") and not data.get("structuredContent"):
            params = getattr(ctx, "params", None)
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str) and name not in self._functions:
                near = difflib.get_close_matches(name, list(self._functions), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else "; call tools/list for the tool names."
                message = f"Unknown tool {quote_short(name)}{hint}"
            else:
                text = " ".join(c.get("text", "") for c in data.get("content", []) if isinstance(c, dict)).strip()
                message = (text or "Invalid arguments.") + " Check the tool's input schema and retry."
            shaped = error_result(400, "bad_argument", message)
            return shaped.model_dump(by_alias=True, exclude_none=True, mode="json") | {
                k: v for k, v in data.items() if k not in ("content", "structuredContent", "isError")
            }
        return result


def _lone_surrogate(value: object, path: str = "") -> tuple[str, str, int] | None:
    """(argument path, text, index) of the first lone surrogate in the arguments, if any."""
    if isinstance(value, str):
        index = next((i for i, character in enumerate(value) if "\ud800" <= character <= "\udfff"), None)
        return None if index is None else (path, value, index)
    items: list[tuple[str, object]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            found = _lone_surrogate(str(key), name)  # a key is text too
            if found is not None:
                return found
            items.append((name, item))
    elif isinstance(value, list):
        items = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    for name, item in items:
        found = _lone_surrogate(item, name)
        if found is not None:
            return found
    return None


def _squash(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _unknown_arguments_message(tool: str, unknown: list[str], known: list[str]) -> str:
    # Compared without case, '_' and '-': 'expected_version' is nearest to 'expectedVersion'.
    by_squashed = {_squash(name): name for name in known}
    named: list[tuple[str, str | None]] = []
    for key in unknown:
        matches = difflib.get_close_matches(_squash(key), list(by_squashed), n=1, cutoff=0.6)
        named.append((quote_short(key), by_squashed[matches[0]] if matches else None))
    takes = f"{tool} takes " + (", ".join(known) if known else "no arguments")
    if len(named) == 1:
        key, near = named[0]
        head = f"Unknown argument {key}; " + (f"did you mean {near!r}?" if near else f"{takes}.")
    else:
        listed = ", ".join(f"{key} (did you mean {near!r}?)" if near else key for key, near in named[:5])
        head = f"Unknown arguments {listed}; {takes}."
    return head + " Nothing was written."


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


_EXPECTED = {
    "string_type": "must be a string",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be an array",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "missing": "is required",
    "extra_forbidden": "is not a field here; remove it",
    "string_unicode": "must be valid Unicode text",
}


def _problem(error: Any) -> str:
    kind: str = error["type"]
    ctx: dict[str, Any] = error.get("ctx") or {}
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind in ("literal_error", "enum"):
        return f"must be one of {ctx.get('expected', 'the values the schema lists')}"
    if kind in ("greater_than_equal", "greater_than"):
        return f"must be at least {ctx.get('ge', ctx.get('gt'))}" + (" (exclusive)" if kind == "greater_than" else "")
    if kind in ("less_than_equal", "less_than"):
        return f"must be at most {ctx.get('le', ctx.get('lt'))}" + (" (exclusive)" if kind == "less_than" else "")
    if kind == "too_short":
        return f"must hold at least {ctx.get('min_length')} item(s)"
    if kind == "too_long":
        return f"must hold at most {ctx.get('max_length')} items"
    if kind == "string_too_short":
        return f"must be at least {ctx.get('min_length')} characters long"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters long"
    message: str = error.get("msg", "is not valid")
    return "is not valid: " + message[:1].lower() + message[1:]


def _invalid_arguments_message(tool: str, exc: ValidationError) -> str:
    problems = list(dict.fromkeys(f"{_location(e['loc']) or 'arguments'} {_problem(e)}" for e in exc.errors()))
    shown = problems[:5] + ([f"and {len(problems) - 5} more"] if len(problems) > 5 else [])
    return "; ".join(shown) + f": fix {'it' if len(problems) == 1 else 'them'} and call {tool} again."
