"""rename_tag that finishes on big projects, update_project that loses no concurrent field, and a clearable
defaultMaxTokens, over every store."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from notewell.adapters.sqlite import SqliteStore
from notewell.adapters.system import FixedClock
from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import InvalidArgumentError
from notewell.domain.model import FeedPosition, Note, Principal, Project
from notewell.ports import Store, TagRenameProgress
from notewell.services import projects as projects_module
from notewell.services.projects import TagRename
from tests.support.races import SaveRacingStore

WS = "ws_housekeeping"


@pytest.fixture
def racing(store: Store) -> SaveRacingStore:
    return SaveRacingStore(store)


@pytest.fixture
def services(racing: SaveRacingStore, clock: FixedClock, tmp_path: Path) -> Services:
    return bootstrap(Settings(data_dir=tmp_path), store=racing, clock=clock)


# ----- rename_tag ---------------------------------------------------------------------------------------------


def test_rename_tag_resumes_where_it_stopped_and_finishes_a_big_project_with_one_version_per_note(
    services: Services, me: Principal, clock: FixedClock, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two of every three notes carry the tag: restarting at the oldest notes on every call would soon face a
    # budget's worth of untagged notes and answer `done: false, renamed: 0` forever. Six budgets' worth of notes
    # on both stores (fewer under moto, which copies the whole table on every transaction).
    size, budget = (300, 50) if isinstance(store, SqliteStore) else (60, 10)
    monkeypatch.setattr(projects_module, "TAG_RENAME_BUDGET", budget)
    project = services.projects.update(me, "p", summary="Big")
    notes = [
        Note(
            id=f"n_{n:026d}", workspace_id=me.workspace_id, project_id=project.id, title=f"Note {n}", body="b",
            version=1, created_at=f"2026-01-05T09:{n // 60:02d}:{n % 60:02d}.000Z",
            updated_at=f"2026-01-05T09:{n // 60:02d}:{n % 60:02d}.000Z", author="key_setup", write_id=f"w_{n}",
            tags=("auth", "api") if n % 3 != 2 else ("api",),
        )
        for n in range(size)
    ]  # fmt: skip
    assert store.import_notes(me.workspace_id, [(note, ()) for note in notes]) == size  # fast: one batch
    tagged = [note for note in notes if "auth" in note.tags]
    plain = [note for note in notes if "auth" not in note.tags]
    clock.set(datetime(2026, 1, 6, tzinfo=UTC))

    outcomes: list[TagRename] = []
    while not outcomes or not outcomes[-1].done:
        outcomes.append(services.tags.rename(me, "p", "auth", "identity"))
        assert len(outcomes) <= 7, [(o.renamed, o.done) for o in outcomes]
        clock.advance(seconds=1)

    assert all(o.renamed > 0 for o in outcomes[:-1])  # every call made progress
    assert sum(o.renamed for o in outcomes) == len(tagged) == size * 2 // 3
    by_id = store.get_notes(me.workspace_id, [n.id for n in tagged + plain])
    for note in tagged:
        assert by_id[note.id].tags == ("identity", "api") and by_id[note.id].version == 2
    for note in plain:
        assert by_id[note.id].version == 1


def test_rename_tag_after_it_finished_renames_notes_tagged_since(
    services: Services, me: Principal, clock: FixedClock
) -> None:
    services.notes.create(me, "p", title="First", body="b", tags=["auth"])
    clock.advance(seconds=1)
    assert services.tags.rename(me, "p", "auth", "identity").done
    clock.advance(seconds=1)
    late = services.notes.create(me, "p", title="Late", body="b", tags=["auth"]).note
    clock.advance(seconds=1)

    again = services.tags.rename(me, "p", "auth", "identity")

    assert (again.renamed, again.done) == (1, True)
    assert services.notes.get(me, late.id).note.tags == ("identity",)


def test_tag_rename_progress_is_kept_per_project_and_tag_pair_until_forgotten(store: Store) -> None:
    progress = TagRenameProgress("2026-01-06T00:00:00.000Z", FeedPosition("2026-01-05T09:00:01.000Z", "n_1"))
    store.save_tag_rename(WS, "prj_web", "a#b", "c", progress)

    assert store.get_tag_rename(WS, "prj_web", "a#b", "c") == progress
    assert store.get_tag_rename(WS, "prj_web", "a", "b#c") is None  # another pair, even with '#' in tags
    assert store.get_tag_rename(WS, "prj_api", "a#b", "c") is None
    store.save_tag_rename(WS, "prj_web", "a#b", "c", None)
    assert store.get_tag_rename(WS, "prj_web", "a#b", "c") is None


# ----- update_project -----------------------------------------------------------------------------------------


def test_concurrent_project_updates_of_different_fields_both_survive(
    services: Services, me: Principal, racing: SaveRacingStore
) -> None:
    services.projects.update(me, "web", summary="A shop")
    racing.saves.clear()
    # The instructions update lands between the summary update's read and its write.
    racing.before_save = lambda: services.projects.update(me, "web", instructions="Use pnpm")

    services.projects.update(me, "web", summary="A shop in Next.js", default_max_tokens=900)

    assert racing.saves == [True, False, True]  # the race happened: the first write was refused, then merged
    (project,) = services.projects.list(me)
    assert (project.summary, project.instructions, project.default_max_tokens) == ("A shop in Next.js", "Use pnpm", 900)


def test_saving_a_project_read_before_another_update_writes_nothing(store: Store) -> None:
    t0 = "2026-01-05T09:00:00.000Z"
    read = store.create_project(Project(id="prj_web", workspace_id=WS, slug="web", created_at=t0, updated_at=t0))
    other = replace(read, instructions="Use pnpm", updated_at="2026-01-05T09:00:01.000Z")
    assert store.save_project(other, expected=read)

    stale = replace(read, summary="A shop", updated_at="2026-01-05T09:00:02.000Z")

    assert store.save_project(stale, expected=read) is False
    assert store.get_project(WS, "web") == other
    assert store.save_project(replace(other, summary="A shop"), expected=other)


# ----- defaultMaxTokens ---------------------------------------------------------------------------------------


def test_default_max_tokens_is_cleared_with_zero(services: Services, me: Principal) -> None:
    services.projects.update(me, "web", summary="A shop", default_max_tokens=1200)

    cleared = services.projects.update(me, "web", default_max_tokens=0)

    assert cleared.default_max_tokens is None and cleared.summary == "A shop"
    assert services.projects.list(me)[0].default_max_tokens is None


def test_default_max_tokens_out_of_range_is_refused_and_names_the_way_to_clear_it(
    services: Services, me: Principal
) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        services.projects.update(me, "web", default_max_tokens=100)
    assert caught.value.status == 400 and "0 to clear" in str(caught.value)
