"""Export and import over every store: the Notewell export round trip, memory.jsonl, and files that are refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from notewell.adapters.jsonl import JsonlCodec
from notewell.adapters.sqlite import SqliteStore
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import ForbiddenError, InvalidArgumentError, NotFoundError
from notewell.domain.model import Link, NoteStatus, NoteType, Plan, Principal
from notewell.ports import Store
from notewell.services.notes import NoteChanges
from notewell.services.portability import LAMBDA_RESPONSE_BYTES, MEMORY_FORMAT, reassigned_id, response_bytes
from tests.support.races import SaveRacingStore


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


@pytest.fixture
def other_store(store: Store, tmp_path: Path) -> Iterator[Store]:
    """A second, empty store of the same technology: another SQLite file, or another DynamoDB table."""
    if isinstance(store, SqliteStore):
        other = SqliteStore(tmp_path / "other.db")
        try:
            yield other
        finally:
            other.close()
        return
    from notewell.adapters.dynamodb import DynamoDBStore
    from tests.support.dynamo import table_spec

    client = store.client  # type: ignore[attr-defined]
    client.create_table(TableName="notewell-other", **table_spec())
    yield DynamoDBStore(client, "notewell-other", sleep=lambda seconds: None)


@pytest.fixture
def other(other_store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path / "other"), store=other_store, clock=clock)


def principal_of(services: Services, *, read_only: bool = False) -> Principal:
    workspace = services.auth.create_workspace("acme")
    found = services.auth.authenticate(services.auth.create_key(workspace.id, read_only=read_only).secret)
    assert found is not None
    return found


@pytest.fixture
def principal(services: Services) -> Principal:
    return principal_of(services)


def build_project(services: Services, principal: Principal, clock: FixedClock) -> dict[str, str]:
    """A project with every kind of state an export must carry; returns note ids by role."""
    notes = services.notes
    services.projects.update(
        principal, "p", summary="Payments service.", instructions="Read ADRs first.", default_max_tokens=4000
    )
    first = notes.create(
        principal, "p", title="Queue choice", body="We use SQS.", type=NoteType.DECISION, tags=["infra"]
    ).note
    clock.advance(seconds=1)
    notes.update(principal, first.id, NoteChanges(body="We use SQS FIFO.", importance=4), expected_version=1)
    clock.advance(seconds=1)
    fact = notes.create(
        principal,
        "p",
        title="Unicode — ünïcødé",
        body='Line one\nline two with \u2028 a separator, emoji 🎉 and "quotes" \\ backslash',
        type=NoteType.FACT,
        tags=["i18n", "api:v2"],
        links=[Link(first.id, "depends-on")],
        canonical=True,
        importance=5,
    ).note
    clock.advance(seconds=1)
    replacement = notes.create(
        principal, "p", title="Queue choice v2", body="We use Kafka now.", supersedes=[first.id]
    ).note
    clock.advance(seconds=1)
    gone = notes.create(principal, "p", title="Scratch", body="temporary", status=NoteStatus.PENDING).note
    clock.advance(seconds=1)
    notes.delete(principal, gone.id)
    clock.advance(seconds=1)
    notes.create(principal, "elsewhere", title="Other project", body="not exported")
    return {"first": first.id, "fact": fact.id, "replacement": replacement.id, "gone": gone.id}


def without_exported_at(lines: list[str]) -> list[str]:
    header = json.loads(lines[0])
    assert header["format"] == "notewell-export" and header["version"] == 1 and header["exportedAt"]
    del header["exportedAt"]
    return [json.dumps(header, sort_keys=True), *lines[1:]]


def project_note_count(services: Services, principal: Principal, project: str) -> int:
    found = services.deps.store.get_project(principal.workspace_id, project)
    if found is None:
        return 0
    return len(services.deps.store.project_notes(principal.workspace_id, found.id, limit=1000))


# ----- export ---------------------------------------------------------------------------------------------------


def test_export_lists_the_project_then_notes_oldest_first_each_with_its_revisions(
    services: Services, principal: Principal, clock: FixedClock
) -> None:
    ids = build_project(services, principal, clock)
    lines = list(services.portability.export_lines(principal, "p"))
    records = [json.loads(line) for line in lines]
    assert records[0] == {"format": "notewell-export", "version": 1, "exportedAt": "2026-01-05T09:00:06.000Z"}
    assert records[1] == {
        "kind": "project",
        "slug": "p",
        "summary": "Payments service.",
        "instructions": "Read ADRs first.",
        "defaultMaxTokens": 4000,
        "createdAt": "2026-01-05T09:00:00.000Z",
        "updatedAt": "2026-01-05T09:00:00.000Z",
    }
    kinds = [(r["kind"], r.get("id") or r.get("noteId"), r["version"]) for r in records[2:]]
    assert kinds == [
        ("note", ids["fact"], 1),
        ("note", ids["first"], 3),  # superseded at t+3: after the fact (t+2)
        ("revision", ids["first"], 1),
        ("revision", ids["first"], 2),
        ("note", ids["replacement"], 1),
        ("note", ids["gone"], 2),
        ("revision", ids["gone"], 1),
    ]
    notes = {r["id"]: r for r in records[2:] if r["kind"] == "note"}
    assert notes[ids["first"]]["status"] == "superseded"
    assert notes[ids["first"]]["supersededBy"] == [ids["replacement"]]
    assert notes[ids["replacement"]]["supersedes"] == [ids["first"]]
    assert notes[ids["gone"]]["deletedAt"] == "2026-01-05T09:00:05.000Z"
    assert notes[ids["fact"]]["links"] == [{"target": ids["first"], "relation": "depends-on"}]
    assert set(notes[ids["fact"]]) == {
        "kind", "id", "title", "body", "type", "status", "tags", "links", "importance", "canonical", "supersedes",
        "supersededBy", "version", "createdAt", "updatedAt", "deletedAt", "author", "writeId",
    }  # fmt: skip
    for line in lines:  # compact, sorted, one physical line each, non-ASCII kept
        assert line == json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False).replace(
            "\u2028", "\\u2028"
        )
        assert len(line.splitlines()) == 1
    assert "🎉" in lines[2] and "\\u2028" in lines[2]


def test_export_counts_and_pages_cover_the_same_lines(
    services: Services, principal: Principal, clock: FixedClock
) -> None:
    build_project(services, principal, clock)
    portability = services.portability
    lines = list(portability.export_lines(principal, "p"))
    counts = portability.export_counts(principal, "p")
    assert (counts.notes, counts.deleted, counts.revisions) == (4, 1, 3)
    pages = [portability.export_page(principal, "p", page, page_size=3) for page in (1, 2, 3)]
    assert pages[0][:2] == lines[:2] and pages[2] == []
    assert sum(1 for line in pages[0] if '"kind":"note"' in line) == 3
    assert pages[0] + pages[1] == lines
    with pytest.raises(InvalidArgumentError):
        portability.export_page(principal, "p", 0)


def every_page(services: Services, principal: Principal, project: str, **size: int) -> list[list[str]]:
    """export_page's pages from 1 up to the first empty one."""
    pages: list[list[str]] = []
    while page := services.portability.export_page(principal, project, len(pages) + 1, **size):
        pages.append(page)
    return pages


def lambda_answer(page: list[str]) -> int:
    """The bytes of the Lambda response that carries a page: the JSON-RPC result of resources/read as a JSON string
    in the response (both written ASCII-only, as Python's json does by default: the larger way)."""
    result = {"contents": [{"uri": "notewell://exports/p/1", "mimeType": "application/x-ndjson", "text": ""}]}
    result["contents"][0]["text"] = "".join(line + "\n" for line in page)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result})
    return len(json.dumps({"statusCode": 200, "headers": {"content-type": "application/json"}, "body": body}))


def test_an_export_page_fits_a_lambda_answer_however_much_its_text_grows_when_escaped(
    services: Services, principal: Principal
) -> None:
    """Ten notes of 100,000 quotes and emoji: 2 MB stored, but each quote takes 8 bytes once the page is a JSON
    string in a JSON-RPC result in a Lambda response. 500 notes to a page would answer 8 MB; Lambda refuses past 6."""
    services.workspaces.set_plan(principal.workspace_id, Plan.ENTERPRISE)
    for n in range(10):
        services.notes.create(principal, "big", title=f"Quoted {n}", body=('"' * 99 + "🎉") * 1_000)
    pages = every_page(services, principal, "big")
    assert len(pages) > 1
    assert all(lambda_answer(page) <= LAMBDA_RESPONSE_BYTES for page in pages)
    assert [line for page in pages for line in page] == list(services.portability.export_lines(principal, "big"))
    counts = services.portability.export_counts(principal, "big")
    assert counts is not None and counts.pages == len(pages)


def test_pages_stop_before_their_byte_budget_and_read_in_order_are_the_export(
    services: Services, principal: Principal, clock: FixedClock
) -> None:
    build_project(services, principal, clock)
    for n in range(6):
        services.notes.create(principal, "p", title=f"Runbook {n}", body=f"Step {n}: " + "restart the worker. " * 40)
    budget = 3_000
    pages = every_page(services, principal, "p", max_bytes=budget)
    lines = list(services.portability.export_lines(principal, "p"))
    assert [line for page in pages for line in page] == lines
    assert all(sum(response_bytes(line) for line in page) <= budget for page in pages)
    for page, following in zip(pages, pages[1:], strict=False):  # each page full: the next line would not fit
        assert sum(response_bytes(line) for line in page) + response_bytes(following[0]) > budget
    counts = services.portability.export_counts(principal, "p", max_bytes=budget)
    assert counts is not None and counts.pages == len(pages) > 2
    assert services.portability.export_page(principal, "p", len(pages) + 1, max_bytes=budget) == []


def test_a_note_with_more_history_than_a_page_holds_goes_on_over_the_next_pages(
    services: Services, principal: Principal, clock: FixedClock, other: Services
) -> None:
    services.workspaces.set_plan(principal.workspace_id, Plan.ENTERPRISE)
    note = services.notes.create(principal, "p", title="Long history", body="v1 " + "detail " * 300).note
    for version in range(1, 8):
        clock.advance(seconds=1)
        changes = NoteChanges(body=f"v{version + 1} " + "detail " * 300)
        services.notes.update(principal, note.id, changes, expected_version=version)
    budget = 5_000  # a few of its revisions to a page
    pages = every_page(services, principal, "p", max_bytes=budget)
    assert len(pages) >= 3 and sum('"kind":"note"' in line for page in pages for line in page) == 1
    # read in order, the pages are one export again: the note, then its revisions, whichever page they are on
    target = principal_of(other)
    other.workspaces.set_plan(target.workspace_id, Plan.ENTERPRISE)
    report = other.portability.import_file(target, "p", [line for page in pages for line in page])
    assert (report.notes_written, report.revisions_written) == (1, 7)
    assert [r.version for r in other.notes.revisions(target, note.id).revisions] == list(range(7, 0, -1))


def test_a_page_holds_at_most_its_page_size_of_notes(services: Services, principal: Principal) -> None:
    for n in range(5):
        services.notes.create(principal, "p", title=f"Note {n}", body="short")
    pages = every_page(services, principal, "p", page_size=2)
    assert [sum('"kind":"note"' in line for line in page) for page in pages] == [2, 2, 1]


def test_export_of_an_unknown_or_hidden_project_is_not_found(services: Services, principal: Principal) -> None:
    with pytest.raises(NotFoundError):
        services.portability.export_lines(principal, "nope")
    services.notes.create(principal, "a", title="A", body="a")
    services.notes.create(principal, "b", title="B", body="b")
    key = services.auth.create_key(principal.workspace_id, project="a")
    scoped = services.auth.authenticate(key.secret)
    assert scoped is not None
    with pytest.raises(NotFoundError):
        services.portability.export_lines(scoped, "b")


# ----- Notewell export round trip ---------------------------------------------------------------------------------


def test_an_imported_export_exports_identically_into_a_fresh_store(
    services: Services, principal: Principal, clock: FixedClock, other: Services
) -> None:
    ids = build_project(services, principal, clock)
    exported = list(services.portability.export_lines(principal, "p"))
    target = principal_of(other)
    clock.advance(minutes=5)
    seen: list[tuple[int, int]] = []
    report = other.portability.import_file(
        target, "p", exported, progress=lambda done, total: seen.append((done, total))
    )
    assert (report.notes_written, report.notes_skipped, report.revisions_written, report.links) == (4, 0, 3, 1)
    assert report.ids_reassigned == 0 and seen[0] == (0, 4) and seen[-1] == (4, 4)

    again = list(other.portability.export_lines(target, "p"))
    assert json.loads(again[0])["exportedAt"] != json.loads(exported[0])["exportedAt"]
    assert without_exported_at(again) == without_exported_at(exported)

    # Lifecycle and history are the imported store's own, readable through the usual services.
    superseded = other.notes.revisions(target, ids["first"])
    assert superseded.note.status is NoteStatus.SUPERSEDED and superseded.note.superseded_by == (ids["replacement"],)
    assert [r.body for r in superseded.revisions] == ["We use SQS FIFO.", "We use SQS."]
    with pytest.raises(NotFoundError, match="deleted"):
        other.notes.get(target, ids["gone"])
    assert other.deps.store.get_note(target.workspace_id, ids["gone"]) is not None
    assert other.notes.get(target, ids["fact"]).note.canonical is True
    project = other.deps.store.get_project(target.workspace_id, "p")
    assert project is not None and project.summary == "Payments service." and project.default_max_tokens == 4000

    # Importing it again writes nothing: every note is already there.
    rerun = other.portability.import_file(target, "p", exported)
    assert (rerun.notes_written, rerun.notes_skipped, rerun.revisions_written) == (0, 4, 0)
    assert without_exported_at(list(other.portability.export_lines(target, "p"))) == without_exported_at(exported)


def test_an_export_imported_into_a_sibling_project_gets_new_ids_and_keeps_its_references(
    services: Services, principal: Principal, clock: FixedClock
) -> None:
    ids = build_project(services, principal, clock)
    exported = list(services.portability.export_lines(principal, "p"))
    report = services.portability.import_file(principal, "copy", exported)
    assert (report.notes_written, report.ids_reassigned, report.revisions_written) == (4, 4, 3)
    copy = services.deps.store.get_project(principal.workspace_id, "copy")
    assert copy is not None
    new = {role: reassigned_id(copy.id, note_id) for role, note_id in ids.items()}
    fact = services.notes.get(principal, new["fact"]).note
    assert fact.project_id == copy.id and fact.links == (Link(new["first"], "depends-on"),)
    first = services.notes.revisions(principal, new["first"])
    assert first.note.superseded_by == (new["replacement"],)
    assert [r.id for r in first.revisions] == [new["first"], new["first"]]
    assert new["first"][:12] == ids["first"][:12]  # same creation-time prefix
    # The originals are untouched, and a second import into the copy finds every note already there.
    assert services.notes.get(principal, ids["fact"]).note.links == (Link(ids["first"], "depends-on"),)
    rerun = services.portability.import_file(principal, "copy", exported)
    assert (rerun.notes_written, rerun.notes_skipped) == (0, 4)


def test_import_into_an_existing_project_keeps_its_fields_unless_the_file_sets_them(
    services: Services, principal: Principal, other: Services, clock: FixedClock
) -> None:
    services.notes.create(principal, "p", title="T", body="b")
    exported = list(services.portability.export_lines(principal, "p"))  # empty summary and instructions
    target = principal_of(other)
    other.projects.update(target, "p", summary="Kept.", default_max_tokens=2000)
    other.portability.import_file(target, "p", exported)
    project = other.deps.store.get_project(target.workspace_id, "p")
    assert project is not None and project.summary == "Kept." and project.default_max_tokens == 2000


def test_import_merges_project_fields_with_an_update_made_while_it_ran(
    services: Services, principal: Principal, other_store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    services.projects.update(principal, "p", summary="Payments service.")
    services.notes.create(principal, "p", title="T", body="b")
    exported = list(services.portability.export_lines(principal, "p"))  # sets the summary, no instructions
    racing = SaveRacingStore(other_store)
    other = bootstrap(Settings(data_dir=tmp_path / "racing"), store=racing, clock=clock)  # type: ignore[arg-type]
    target = principal_of(other)
    other.projects.update(target, "p", summary="Old summary.")
    racing.saves.clear()
    # Someone sets the instructions between the import's read of the project and its write.
    racing.before_save = lambda: other.projects.update(target, "p", instructions="Use pnpm.")

    other.portability.import_file(target, "p", exported)

    assert racing.saves == [True, False, True]  # the race happened: the import's first write was refused
    project = other.deps.store.get_project(target.workspace_id, "p")
    assert project is not None
    assert (project.summary, project.instructions) == ("Payments service.", "Use pnpm.")


def test_revisions_beyond_the_workspace_cap_are_dropped_oldest_first(
    services: Services, principal: Principal, other: Services
) -> None:
    note = services.notes.create(principal, "p", title="T", body="v1").note
    for n in range(2, 6):
        services.notes.update(principal, note.id, NoteChanges(body=f"v{n}"))
    exported = list(services.portability.export_lines(principal, "p"))
    target = principal_of(other)
    workspace = other.deps.store.get_workspace(target.workspace_id)
    assert workspace is not None
    other.deps.store.set_plan(target.workspace_id, workspace.plan, 2)
    report = other.portability.import_file(target, "p", exported)
    assert report.revisions_written == 2
    assert [r.version for r in other.notes.revisions(target, note.id).revisions] == [4, 3]


# ----- memory.jsonl -------------------------------------------------------------------------------------------


def memory_lines(*extra: dict[str, object]) -> list[str]:
    records: list[dict[str, object]] = [
        {"type": "entity", "name": "Alice", "entityType": "Person", "observations": ["Likes tea", "Works remotely"]},
        {"type": "entity", "name": "Acme Corp", "entityType": "Organization Unit", "observations": ["Makes anvils"]},
        {"type": "entity", "name": "Anvil", "entityType": "product", "observations": []},
        {"type": "relation", "from": "Alice", "to": "Acme Corp", "relationType": "works_at"},
        {"type": "relation", "from": "Acme Corp", "to": "Anvil", "relationType": "produces"},
        *extra,
    ]
    return [json.dumps(record) + "\n" for record in records]


def test_memory_jsonl_becomes_notes_and_links_and_a_second_import_adds_nothing(
    services: Services, principal: Principal
) -> None:
    report = services.portability.import_file(principal, "mem", memory_lines())
    assert report.format == MEMORY_FORMAT
    assert (report.notes_written, report.notes_skipped, report.links, report.notes_updated) == (3, 0, 2, 0)
    lines = list(services.portability.export_lines(principal, "mem"))
    notes = {r["title"]: r for r in map(json.loads, lines[2:])}
    assert set(notes) == {"Alice", "Acme Corp", "Anvil"}
    alice, acme, anvil = notes["Alice"], notes["Acme Corp"], notes["Anvil"]
    assert alice["body"] == "Likes tea\nWorks remotely" and alice["tags"] == ["person"] and alice["type"] == "note"
    assert acme["tags"] == ["organization-unit"] and anvil["body"] == ""
    assert alice["links"] == [{"target": acme["id"], "relation": "works_at"}]
    assert acme["links"] == [{"target": anvil["id"], "relation": "produces"}]
    assert alice["author"] == principal.actor and alice["version"] == 1

    second = services.portability.import_file(principal, "mem", memory_lines())
    assert (second.notes_written, second.notes_skipped, second.links, second.notes_updated) == (0, 3, 0, 0)
    assert project_note_count(services, principal, "mem") == 3
    assert list(services.portability.export_lines(principal, "mem"))[1:] == lines[1:]


def test_memory_jsonl_adds_new_observations_and_relations_to_the_existing_note(
    services: Services, principal: Principal
) -> None:
    services.portability.import_file(principal, "mem", memory_lines())
    grown = memory_lines(
        {"type": "entity", "name": "Alice", "entityType": "Person", "observations": ["Likes tea", "Speaks Dutch"]},
        {"type": "relation", "from": "Alice", "to": "Anvil", "relationType": "uses"},
    )
    report = services.portability.import_file(principal, "mem", grown)
    assert (report.notes_written, report.notes_updated, report.notes_skipped, report.links) == (0, 1, 2, 1)
    hits = services.deps.store.project_notes(principal.workspace_id, _project_id(services, principal, "mem"), limit=10)
    alice = next(n for n in hits if n.title == "Alice")
    assert alice.version == 2 and alice.body == "Likes tea\nWorks remotely\nSpeaks Dutch"
    assert [link.relation for link in alice.links] == ["works_at", "uses"]
    assert services.notes.revisions(principal, alice.id).revisions[0].body == "Likes tea\nWorks remotely"


def test_memory_relations_may_name_notes_the_project_already_has(services: Services, principal: Principal) -> None:
    bob = services.notes.create(principal, "mem", title="Bob", body="Existing note.").note
    lines = [
        json.dumps({"type": "entity", "name": "Alice", "entityType": "person", "observations": ["Hi"]}),
        json.dumps({"type": "relation", "from": "Alice", "to": "Bob", "relationType": "knows"}),
        json.dumps({"type": "relation", "from": "Bob", "to": "Alice", "relationType": "Knows"}),
    ]
    report = services.portability.import_file(principal, "mem", lines)
    assert (report.notes_written, report.notes_updated, report.links) == (1, 1, 2)
    alice_id = services.notes.get(principal, bob.id).note.links[0].target
    assert services.notes.get(principal, alice_id).note.links == (Link(bob.id, "knows"),)
    assert services.notes.get(principal, bob.id).note.links == (Link(alice_id, "knows"),)
    again = services.portability.import_file(principal, "mem", lines)
    assert (again.notes_written, again.notes_updated, again.notes_skipped) == (0, 0, 2)


def _project_id(services: Services, principal: Principal, slug: str) -> str:
    project = services.deps.store.get_project(principal.workspace_id, slug)
    assert project is not None
    return project.id


# ----- refused files ------------------------------------------------------------------------------------------

ENTITY = '{"type":"entity","name":"Alice","entityType":"person","observations":["x"]}'


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([ENTITY, ENTITY.replace("Alice", "Bob"), '{"type":"entity","name":'], ["line 3: not valid JSON"]),
        ([ENTITY, '{"type":"person","name":"Bob"}'], ["line 2: unknown type 'person'"]),
        (
            [ENTITY, '{"type":"entity","entityType":"person","observations":[]}'],
            ["line 2: the field 'name' is missing"],
        ),
        (
            [ENTITY, '{"type":"relation","from":"Alice","to":"Carol","relationType":"knows"}'],
            ["line 2: relation 'to' names 'Carol'"],
        ),
        (
            [ENTITY, json.dumps({"type": "entity", "name": "Big", "entityType": "x", "observations": ["y" * 100_001]})],
            ["line 2: entity 'Big': Note body has 100,001 characters"],
        ),
        ([ENTITY, '{"type":"entity","name":"B","entityType":"x","observations":["y",3]}'], ["line 2: 'observations'"]),
        (
            [ENTITY, "", "[1, 2]", '{"type":"relation","from":"Alice","to":"Alice","relationType":"is"}'],
            ["line 3: expected a JSON object", "line 4: relation from 'Alice' to itself"],
        ),
    ],
    ids=["bad-json", "unknown-type", "missing-name", "unknown-entity", "body-too-large", "bad-observation", "several"],
)
def test_a_bad_memory_file_names_its_lines_and_writes_nothing(
    services: Services, principal: Principal, lines: list[str], expected: list[str]
) -> None:
    services.notes.create(principal, "mem", title="Existing", body="kept")
    with pytest.raises(InvalidArgumentError) as raised:
        services.portability.import_file(principal, "mem", lines)
    message = raised.value.message
    assert message.startswith("Nothing was imported")
    for fragment in expected:
        assert fragment in message
    assert project_note_count(services, principal, "mem") == 1
    with pytest.raises(InvalidArgumentError):
        services.portability.import_file(principal, "fresh", lines)
    assert services.deps.store.get_project(principal.workspace_id, "fresh") is None


def test_a_bad_export_names_every_broken_line_and_writes_nothing(
    services: Services, principal: Principal, clock: FixedClock, other: Services
) -> None:
    build_project(services, principal, clock)
    lines = list(services.portability.export_lines(principal, "p"))
    broken = list(lines)
    broken[2] = broken[2].replace('"type":"fact"', '"type":"factoid"')
    broken[3] = broken[3].replace('"importance":4', '"importance":9')  # its revisions (lines 5, 6) go unreported
    broken[8] = broken[8].replace('"version":1', '"version":2')  # the deleted note's revision, at its version
    broken.append(lines[6])  # a duplicate note
    broken.append('{"kind":"note"}')
    target = principal_of(other)
    with pytest.raises(InvalidArgumentError) as raised:
        other.portability.import_file(target, "p", broken)
    message = raised.value.message
    assert "the file has 5 problems" in message
    assert "line 3: 'type' is 'factoid', which is not one of: decision," in message
    assert "line 4: importance: Importance 9 is out of range" in message
    assert "line 5:" not in message and "line 6:" not in message
    assert "line 9: revision version 2 is not below its note's version 2" in message
    assert "line 10: note" in message and "is also on line 7; each note appears once" in message
    assert "line 11: the field 'author' is missing" in message
    assert other.deps.store.get_project(target.workspace_id, "p") is None

    header = json.dumps({"format": "notewell-export", "version": 2, "exportedAt": "x"})
    with pytest.raises(InvalidArgumentError, match="line 1: export format version 2 is not supported"):
        other.portability.import_file(target, "p", [header, *lines[1:]])
    with pytest.raises(InvalidArgumentError, match="line 1: a Notewell export starts with its header line"):
        other.portability.import_file(target, "p", lines[1:])
    with pytest.raises(InvalidArgumentError, match="The file is empty"):
        other.portability.import_file(target, "p", ["", "  \n"])
    assert other.deps.store.get_project(target.workspace_id, "p") is None


def test_the_error_list_is_capped(services: Services, principal: Principal) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        services.portability.import_file(principal, "mem", [ENTITY, *["{"] * 30])
    message = raised.value.message
    assert "30 problems" in message and "line 21:" in message and "line 22:" not in message
    assert "… and 10 more" in message


def test_read_only_keys_cannot_import(services: Services) -> None:
    reader = principal_of(services, read_only=True)
    with pytest.raises(ForbiddenError):
        services.portability.import_file(reader, "mem", memory_lines())


def test_the_codec_round_trips_every_note_field() -> None:
    from notewell.domain.model import Note
    from notewell.domain.portability import NoteRecord, RevisionRecord

    codec = JsonlCodec()
    note = Note(
        id="n_01JD0000000000000000000000",
        workspace_id="",
        project_id="",
        title="T",
        body="b\u2029\x85",
        version=3,
        created_at="2026-01-01T00:00:00.000Z",
        updated_at="2026-01-02T00:00:00.000Z",
        author="key:k",
        write_id="w_1",
        type=NoteType.INCIDENT,
        status=NoteStatus.DISPUTED,
        tags=("a", "b"),
        links=(Link("n_01JD0000000000000000000001", "blocks"),),
        importance=1,
        canonical=True,
        supersedes=("n_01JD0000000000000000000002",),
        superseded_by=("n_01JD0000000000000000000003",),
        deleted_at="2026-01-03T00:00:00.000Z",
    )
    line = codec.encode_note(note)
    assert len(line.splitlines()) == 1
    assert codec.decode(line) == NoteRecord(note)
    assert codec.decode(codec.encode_revision(note)) == RevisionRecord(note)
    with pytest.raises(InvalidArgumentError, match="'createdAt' is '2026-01-01T00:00:00Z'"):
        codec.decode(line.replace("2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00Z"))
