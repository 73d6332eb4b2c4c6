"""Anchors over every store: written by create_note, update_note and remember, kept in revisions, read back whole,
carried through export and import; and the live anchored notes a freshness check reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain import rules
from notewell.domain.errors import IdempotencyKeyReusedError, InvalidArgumentError
from notewell.domain.model import Anchor, LineRange, NoteStatus, NoteType, Principal
from notewell.ports import Store
from notewell.services.memory import RememberRequest, RememberStatus
from notewell.services.notes import NoteChanges

COMMIT = "8a39f054a62fdc5bce054ec2feddfea23c54105f"
LATER = "2a594271ff71cf7ad0f6b1eca9af74e0326f6d62"


def digest(n: int) -> str:
    return f"{n:064x}"


RETRY = Anchor("github.com/acme/api", "src/retry.py", COMMIT, digest(1), digest(2), "backoff", LineRange(6, 8))
QUEUE = Anchor("github.com/acme/api", "src/queue.py", COMMIT, digest(3), digest(3))


@pytest.fixture
def services(store: Store, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=store, clock=clock)


def test_a_note_keeps_its_anchors_through_every_read(services: Services, me: Principal) -> None:
    created = services.notes.create(me, "api", title="Backoff", body="Backoff caps at 30 s.", anchors=[RETRY, QUEUE])
    note_id = created.note.id
    assert created.note.anchors == (RETRY, QUEUE)
    assert services.notes.get(me, note_id).note.anchors == (RETRY, QUEUE)
    assert services.notes.get_many(me, [note_id]).found[0].note.anchors == (RETRY, QUEUE)
    hits = services.search.run(me, "api", "backoff").hits
    assert [hit.note.anchors for hit in hits] == [(RETRY, QUEUE)]


def test_update_replaces_the_anchors_the_old_ones_stay_in_the_revision_and_an_empty_list_removes_them(
    services: Services, me: Principal
) -> None:
    note = services.notes.create(me, "api", title="Backoff", body="Caps at 30 s.", anchors=[RETRY]).note
    moved = Anchor(RETRY.repo, RETRY.path, LATER, digest(1), digest(4), "backoff", LineRange(10, 12))
    updated = services.notes.update(me, note.id, NoteChanges(anchors=[moved]), expected_version=1).note
    assert updated.anchors == (moved,) and updated.version == 2
    assert services.notes.revision(me, note.id, 1).anchors == (RETRY,)
    untouched = services.notes.update(me, note.id, NoteChanges(body="Caps at 60 s.")).note
    assert untouched.anchors == (moved,)
    cleared = services.notes.update(me, note.id, NoteChanges(anchors=[])).note
    assert services.notes.get(me, cleared.id).note.anchors == ()


def test_anchoring_a_note_again_replaces_the_anchor_of_the_same_file_and_symbol_and_keeps_the_others(
    services: Services, me: Principal
) -> None:
    note = services.notes.create(me, "api", title="Backoff", body="Caps at 30 s.", anchors=[RETRY, QUEUE]).note
    again = Anchor(RETRY.repo, RETRY.path, LATER, digest(9), digest(9), "backoff", LineRange(12, 14))
    view = services.notes.anchor(me, note.id, [again])
    assert view.note.anchors == (again, QUEUE) and view.note.version == 2


def test_anchors_are_checked_before_anything_is_written(services: Services, me: Principal) -> None:
    bad = Anchor(RETRY.repo, "../secrets.env", COMMIT, digest(1), digest(1))
    with pytest.raises(InvalidArgumentError, match=r"anchors\[1\]: Anchor path .* uses '\.\.'"):
        services.notes.create(me, "api", title="T", body="b", anchors=[RETRY, bad])
    assert services.deps.store.get_project(me.workspace_id, "api") is None
    with pytest.raises(InvalidArgumentError, match="full commit id"):
        services.memory.remember(
            me,
            RememberRequest("api", "Backoff caps at 30 s.", anchors=[Anchor("r", "a.py", "abc", digest(1), digest(1))]),
        )


def test_remember_creates_with_its_anchors_and_a_restatement_adds_them_to_the_note_it_updates(
    services: Services, me: Principal
) -> None:
    first = services.memory.remember(
        me, RememberRequest("api", "Use opaque tokens for API sessions.", type=NoteType.DECISION, anchors=[QUEUE])
    )
    assert first.status is RememberStatus.CREATED and first.note is not None
    assert first.note.note.anchors == (QUEUE,)
    longer = "Use opaque tokens for API sessions, stored server-side in Redis so they can be revoked at once."
    restated = services.memory.remember(me, RememberRequest("api", longer, type=NoteType.DECISION, anchors=[RETRY]))
    assert restated.status is RememberStatus.UPDATED and restated.note is not None
    assert services.notes.get(me, first.note.note.id).note.anchors == (QUEUE, RETRY)


def test_a_conflict_s_resolving_calls_carry_the_anchors(services: Services, me: Principal) -> None:
    services.memory.remember(me, RememberRequest("api", "Use opaque tokens instead of JWTs.", type=NoteType.DECISION))
    outcome = services.memory.remember(
        me, RememberRequest("api", "Use JWTs instead of opaque tokens.", type=NoteType.DECISION, anchors=[RETRY])
    )
    assert outcome.status is RememberStatus.CONFLICT and len(outcome.resolutions) == 2
    assert all(r.arguments["anchors"] == [rules.anchor_json(RETRY)] for r in outcome.resolutions)


def test_an_idempotency_key_reused_with_other_anchors_is_refused(services: Services, me: Principal) -> None:
    services.notes.create(me, "api", title="T", body="b", anchors=[RETRY], idempotency_key="k1")
    assert services.notes.create(me, "api", title="T", body="b", anchors=[RETRY], idempotency_key="k1").note.anchors
    with pytest.raises(IdempotencyKeyReusedError):
        services.notes.create(me, "api", title="T", body="b", anchors=[QUEUE], idempotency_key="k1")


def test_anchored_lists_the_live_anchored_notes_of_a_project_only(services: Services, me: Principal) -> None:
    notes = services.notes
    kept = notes.create(me, "api", title="Kept", body="a", anchors=[RETRY]).note
    notes.create(me, "api", title="Plain", body="b")
    deleted = notes.create(me, "api", title="Deleted", body="c", anchors=[QUEUE]).note
    notes.delete(me, deleted.id)
    old = notes.create(me, "api", title="Old", body="d", anchors=[QUEUE]).note
    notes.create(me, "api", title="New", body="e", supersedes=[old.id])
    pending = notes.create(me, "api", title="Todo", body="f", status=NoteStatus.PENDING, anchors=[QUEUE]).note
    notes.create(me, "web", title="Other project", body="g", anchors=[QUEUE])
    assert [view.note.id for view in notes.anchored(me, "api")] == [kept.id, pending.id]
    assert notes.anchored(me, "unknown") == []


def test_export_and_import_carry_anchors_and_an_export_without_them_still_imports(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    note = services.notes.create(me, "api", title="Backoff", body="Caps at 30 s.", anchors=[RETRY]).note
    clock.advance(seconds=1)
    services.notes.update(me, note.id, NoteChanges(anchors=[QUEUE]))
    plain = services.notes.create(me, "api", title="Plain", body="No code here.").note
    lines = list(services.portability.export_lines(me, "api"))
    records = {(r["kind"], r.get("version")): r for r in map(json.loads, lines[2:]) if r.get("title") != "Plain"}
    assert records[("note", 2)]["anchors"] == [rules.anchor_json(QUEUE)]
    assert records[("revision", 1)]["anchors"] == [rules.anchor_json(RETRY)]
    assert "anchors" not in next(json.loads(line) for line in lines if plain.id in line)  # as older exports read

    report = services.portability.import_file(me, "copy", lines)
    assert report.notes_written == 2
    copied = services.notes.anchored(me, "copy")
    assert [view.note.anchors for view in copied] == [(QUEUE,)]
    assert services.notes.revision(me, copied[0].note.id, 1).anchors == (RETRY,)


def test_an_export_line_with_a_bad_anchor_is_refused_by_line_and_nothing_is_imported(
    services: Services, me: Principal
) -> None:
    services.notes.create(me, "api", title="Backoff", body="Caps at 30 s.", anchors=[RETRY])
    lines = list(services.portability.export_lines(me, "api"))
    record = json.loads(lines[2])
    record["anchors"][0]["path"] = "/etc/passwd"
    with pytest.raises(InvalidArgumentError, match=r"line 3: anchors\[0\]: Anchor path '/etc/passwd' is absolute"):
        services.portability.import_file(me, "copy", [*lines[:2], json.dumps(record)])
    assert services.deps.store.get_project(me.workspace_id, "copy") is None
