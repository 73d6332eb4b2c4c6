"""Memory that follows the code, on every store: `files` brings the notes anchored to the files in hand (or under a
directory) to the front of get_context and search_notes, wherever they sit in the project; `checkFreshness` judges
each anchored note get_context shows against the caller's file hashes and marks the stale ones; search_notes on a
branch leaves other unmerged branches' notes out and counts them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import CONTEXT_INDEX_LAYOUT, Anchor, LineRange, Note, NoteType, Principal
from notewell.domain.packing import Detail, Section
from notewell.domain.refs import name_of
from notewell.entrypoints.cli import main
from notewell.ports import Store
from notewell.services.context import ContextResult
from notewell.services.notes import NoteChanges
from tests.support.dynamo import count_operations, dynamodb_store

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
REPO = "github.com/acme/api"


def digest(n: int) -> str:
    return f"{n:064x}"


def anchor(path: str, file_hash: int = 1, symbol: str | None = None) -> Anchor:
    lines = LineRange(1, 3) if symbol else None
    return Anchor(REPO, path, COMMIT, digest(file_hash + 1000), digest(file_hash), symbol, lines)


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


def decision(services: Services, me: Principal, clock: FixedClock, title: str, **kw: Any) -> Note:
    clock.advance(seconds=1)
    return services.notes.create(
        me, "api", title=title, body=f"{title}, because of what we measured.", type=NoteType.DECISION, **kw
    ).note


def section_ids(result: ContextResult, section: Section) -> list[str]:
    return [str(e["id"]) for s, entries in result.packed.sections if s is section for e in entries]


def shown(result: ContextResult) -> dict[str, dict[str, object]]:
    return {str(e["id"]): e for _, entries in result.packed.sections for e in entries}


def line_of(result: ContextResult, note_id: str) -> str:
    (line,) = [line for line in result.packed.text.splitlines() if line.startswith(f"- {name_of(note_id)} ")]
    return line


# ----- files: anchored notes first ---------------------------------------------------------------------------------


def test_notes_anchored_to_the_files_in_hand_lead_get_context_from_anywhere_in_the_project(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """Old anchored decisions, far behind the 25 newest a section weighs, come first when their files are in hand:
    a named file before a directory's files; notes anchored elsewhere stay where they were."""
    retry = decision(services, me, clock, "Retries back off exponentially", anchors=[anchor("src/retry.py")])
    worker = decision(services, me, clock, "Workers ack after the write", anchors=[anchor("src/queue/worker.py")])
    docs = decision(services, me, clock, "Docs are built nightly", anchors=[anchor("docs/build.md")])
    for n in range(30):
        decision(services, me, clock, f"Newer decision number {n}")

    plain = services.context.get_context(me, "api", detail=Detail.LEAN)
    assert not {retry.id, worker.id} & set(shown(plain))

    result = services.context.get_context(me, "api", detail=Detail.LEAN, files=["src/queue/", "./src/retry.py"])
    assert section_ids(result, Section.RELEVANT) == [retry.id, worker.id]
    assert "excerpt" in shown(result)[retry.id] and "excerpt" in shown(result)[worker.id]  # paid for first, in full
    assert docs.id not in shown(result)
    text = result.packed.text
    assert text.index("## Relevant") < text.index(f"- {name_of(retry.id)} ") < text.index(f"- {name_of(worker.id)} ")
    assert result.packed.spent <= result.packed.budget


def test_with_a_query_the_anchored_notes_come_before_its_matches(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    anchored = decision(services, me, clock, "Invoices round half up", anchors=[anchor("billing/round.py")])
    match = decision(services, me, clock, "Retries are capped at five")
    result = services.context.get_context(me, "api", query="retries cap", files=["billing"])
    assert section_ids(result, Section.RELEVANT)[:2] == [anchored.id, match.id]


def test_anchored_notes_follow_their_anchors_through_edits_deletes_restores_and_imports(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    note = decision(services, me, clock, "Backoff caps at 30 s", anchors=[anchor("src/a.py"), anchor("src/b.py")])

    def found(*files: str, project: str = "api") -> list[str]:
        result = services.context.get_context(me, project, files=list(files))
        return section_ids(result, Section.RELEVANT)

    assert found("src/a.py") == [note.id] == found("src/b.py") == found("src")
    services.notes.update(me, note.id, NoteChanges(anchors=[anchor("src/c.py")]))
    assert found("src/a.py") == [] and found("src/b.py") == [] and found("src/c.py") == [note.id]
    services.notes.delete(me, note.id)
    assert found("src/c.py") == []
    services.notes.restore(me, note.id)
    assert found("src/c.py") == [note.id]
    services.portability.import_file(me, "copy", list(services.portability.export_lines(me, "api")))
    assert len(found("src/c.py", project="copy")) == 1
    assert found("src/c.py.orig") == [] and found("sr") == []  # a file's look-alikes and a partial name: nothing


def test_a_superseded_anchored_note_stays_out_unless_history_is_asked_for(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    old = decision(services, me, clock, "Retries cap at 3", anchors=[anchor("src/retry.py")])
    new = decision(services, me, clock, "Retries cap at 5", anchors=[anchor("src/retry.py")], supersedes=[old.id])
    assert section_ids(services.context.get_context(me, "api", files=["src/retry.py"]), Section.RELEVANT) == [new.id]
    with_history = services.context.get_context(me, "api", files=["src/retry.py"], include_historical=True)
    assert set(section_ids(with_history, Section.RELEVANT)) == {old.id, new.id}


def test_anchored_notes_of_other_unmerged_branches_are_left_out_and_counted(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    mine = decision(services, me, clock, "Login uses PKCE", anchors=[anchor("src/login.py")], branch="feature/login")
    theirs = decision(services, me, clock, "Login rate limit", anchors=[anchor("src/login.py")], branch="feature/x")
    result = services.context.get_context(me, "api", files=["src/login.py"], branch="feature/login")
    assert section_ids(result, Section.RELEVANT) == [mine.id] and theirs.id not in shown(result)
    assert result.other_branches == 1


# ----- checkFreshness: stale notes marked ----------------------------------------------------------------------------


def test_check_freshness_marks_changed_and_gone_notes_and_judges_only_the_paths_it_is_given(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """Decisions are read lean where the store has a lean index (DynamoDB's GSI4, which does not project anchors):
    their anchors are read for the notes shown, and every store judges the same."""
    fresh = decision(services, me, clock, "Tokens are opaque", anchors=[anchor("src/tokens.py", 1)])
    changed = decision(services, me, clock, "Retries back off", anchors=[anchor("src/retry.py", 2, "backoff")])
    gone = decision(services, me, clock, "Old queue is drained", anchors=[anchor("src/old_queue.py", 3)])
    unjudged = decision(services, me, clock, "Docs are nightly", anchors=[anchor("docs/build.md", 4)])
    plain = decision(services, me, clock, "Logs are JSON")
    hashes = {"src/tokens.py": digest(1), "src/retry.py": digest(99), "src/old_queue.py": None}

    result = services.context.get_context(me, "api", check_freshness=hashes)
    entries = shown(result)
    assert {i: entries[i].get("freshness") for i in (fresh.id, changed.id, gone.id, unjudged.id, plain.id)} == {
        fresh.id: "fresh", changed.id: "changed", gone.id: "gone", unjudged.id: None, plain.id: None,
    }  # fmt: skip
    assert f"- {name_of(changed.id)} [changed: src/retry.py, re-check] " in line_of(result, changed.id)
    assert f"- {name_of(gone.id)} [gone: src/old_queue.py, re-check] " in line_of(result, gone.id)
    assert "re-check" not in line_of(result, fresh.id) + line_of(result, unjudged.id) + line_of(result, plain.id)
    assert result.anchored_paths == ("docs/build.md", "src/old_queue.py", "src/retry.py", "src/tokens.py")
    assert result.packed.spent <= result.packed.budget

    without = services.context.get_context(me, "api")
    assert "re-check" not in without.packed.text and without.anchored_paths is None
    assert all("freshness" not in e for e in shown(without).values())


def test_a_file_named_and_judged_at_once_leads_with_its_mark(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    """What the session-start hook sends: the files changed on the branch, and their hashes (null: deleted)."""
    note = decision(services, me, clock, "Webhooks retry three times", anchors=[anchor("src/hooks.py", 5)])
    for n in range(30):
        decision(services, me, clock, f"Unrelated decision {n}")
    result = services.context.get_context(
        me, "api", detail=Detail.LEAN, files=["src/hooks.py"], check_freshness={"src/hooks.py": None}
    )
    assert section_ids(result, Section.RELEVANT) == [note.id]
    assert shown(result)[note.id]["freshness"] == "gone"
    assert line_of(result, note.id).startswith(f"- {name_of(note.id)} [gone: src/hooks.py, re-check] ")


def test_bad_files_and_hashes_are_refused_with_what_to_send(services: Services, me: Principal) -> None:
    context = services.context
    with pytest.raises(InvalidArgumentError, match=r"files\[1\]: Anchor path '\.\./etc' uses '\.\.'"):
        context.get_context(me, "api", files=["src", "../etc"])
    with pytest.raises(InvalidArgumentError, match="files has 21 paths; send at most 20: name a directory"):
        context.get_context(me, "api", files=[f"f{n}.py" for n in range(21)])
    with pytest.raises(InvalidArgumentError, match=r"checkFreshness\['a\.py'\] is 'abc', not a fileHash"):
        context.get_context(me, "api", check_freshness={"a.py": "abc"})
    with pytest.raises(InvalidArgumentError, match="checkFreshness names 'a.py' twice"):
        context.get_context(me, "api", check_freshness={"a.py": None, "./a.py": None})
    with pytest.raises(InvalidArgumentError, match="checkFreshness has 2001 paths; send at most 2,000"):
        context.get_context(me, "api", check_freshness={f"f{n}.py": None for n in range(2001)})
    with pytest.raises(InvalidArgumentError, match="Give query .* or files"):
        services.search.find(me, "api", "  ")


# ----- search_notes ------------------------------------------------------------------------------------------------


def test_search_notes_lists_the_notes_anchored_to_files_and_ranks_them_first_with_a_query(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    retry = decision(services, me, clock, "Retry cap is five", anchors=[anchor("src/retry.py")])
    under = decision(services, me, clock, "Retry jitter is random", anchors=[anchor("src/net/jitter.py")])
    others = [decision(services, me, clock, f"Retry rule number {n} for retry storms retry") for n in range(4)]

    listed = services.search.find(me, "api", None, files=["src/retry.py", "src/net"])
    assert listed.mode.value == "anchors"
    assert [(h.note.id, h.score) for h in listed.hits] == [(retry.id, 1.0), (under.id, 0.5)]

    # The anchored notes lead even where the engine ranks them past `limit`: they are what the caller works on.
    ranked = services.search.find(me, "api", "retry", files=["src/retry.py"], limit=2)
    assert [h.note.id for h in ranked.hits][0] == retry.id and len(ranked.hits) == 2
    assert ranked.hits[1].note.id in {n.id for n in others}
    assert services.search.find(me, "api", "jitter", files=["docs"]).hits[0].note.id == under.id


def test_search_notes_on_a_branch_leaves_out_other_unmerged_branches_and_counts_them(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    main = decision(services, me, clock, "Refunds are queued")
    mine = decision(services, me, clock, "Refunds retry twice", branch="feature/refunds")
    theirs = decision(services, me, clock, "Refunds need approval", branch="feature/approval")
    outcome = services.search.find(me, "api", "refunds", branch="feature/refunds")
    assert {h.note.id for h in outcome.hits} == {main.id, mine.id} and outcome.other_branches == 1
    everything = services.search.find(me, "api", "refunds", branch="feature/refunds", all_branches=True)
    assert theirs.id in {h.note.id for h in everything.hits} and everything.other_branches == 0
    services.projects.update(me, "api", merged_branches=["feature/approval"])
    assert services.search.find(me, "api", "refunds", branch="main").other_branches == 1  # feature/refunds now


# ----- DynamoDB: bounded work --------------------------------------------------------------------------------------


def context_requests(notes: int, tmp_path: Path) -> Counter[str]:
    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=FixedClock())
        workspace = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        for n in range(notes):
            services.notes.create(
                me, "api", title=f"Decision {n}", body=f"Decision {n} holds.", type=NoteType.DECISION,
                anchors=[anchor(f"src/module_{n % 9}.py", n)] if n % 2 else [],
            )  # fmt: skip
        calls = count_operations(store.client)
        hashes = {f"src/module_{n}.py": digest(n) for n in range(9)}
        services.context.get_context(me, "api", files=["src/module_1.py", "src/module_3.py"], check_freshness=hashes)
        return Counter(calls)


def test_on_dynamodb_files_and_freshness_cost_the_same_requests_at_any_project_size(tmp_path: Path) -> None:
    small, large = context_requests(20, tmp_path / "small"), context_requests(100, tmp_path / "large")
    assert small == large, (small, large)
    assert "Scan" not in large
    # A lean Query per type of a section (8) and the rest, plus one Query per file and the anchors of the notes shown.
    assert large["Query"] <= 12 and large["BatchGetItem"] <= 3, large


def test_on_dynamodb_notes_anchored_before_the_pointers_are_found_once_the_stack_is_reindexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A project of the previous version (layout 2) has anchored notes but no pointers to them: `notewell reindex
    --stack` rewrites its notes, pointers included, and moves it to the current layout."""
    with dynamodb_store() as store:
        services = bootstrap(Settings(data_dir=tmp_path), store=store, clock=FixedClock())
        workspace = services.auth.create_workspace("acme")
        me = services.auth.authenticate(services.auth.create_key(workspace.id).secret)
        assert me is not None
        note = services.notes.create(
            me, "api", title="Backoff", body="Caps at 30 s.", anchors=[anchor("src/a.py")]
        ).note
        project = store.get_project(me.workspace_id, "api")
        assert project is not None and project.context_index == CONTEXT_INDEX_LAYOUT
        client, table = store.client, store.table_name
        partition = {":pk": {"S": f"WS#{me.workspace_id}#P#{project.id}#ANCHOR"}}
        for item in client.query(TableName=table, KeyConditionExpression="pk = :pk",
                                 ExpressionAttributeValues=partition)["Items"]:  # fmt: skip
            client.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})
        client.update_item(
            TableName=table, Key={"pk": {"S": f"WS#{me.workspace_id}"}, "sk": {"S": f"PROJ#{project.id}"}},
            UpdateExpression="SET contextIndex = :two", ExpressionAttributeValues={":two": {"N": "2"}},
        )  # fmt: skip

        def found() -> list[str]:
            return section_ids(services.context.get_context(me, "api", files=["src"]), Section.RELEVANT)

        assert found() == []
        monkeypatch.setenv("AWS_REGION", client.meta.region_name)
        assert main(["reindex", "--stack", "--table", table]) == 0
        assert "1 projects moved onto the lean context index (1 notes rewritten)" in capsys.readouterr().out
        assert found() == [note.id]
        upgraded = store.get_project(me.workspace_id, "api")
        assert upgraded is not None and upgraded.context_index == CONTEXT_INDEX_LAYOUT
