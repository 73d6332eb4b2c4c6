"""`notewell check` records what it judged in the store it ran against (both stores), so the console lists the notes
whose code changed or went; a check that finds the same again writes nothing, and `--no-record` only prints."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

import pytest

from notewell.bootstrap import Services, bootstrap
from notewell.config import Settings
from notewell.domain.errors import UnavailableError
from notewell.domain.freshness import Freshness
from notewell.domain.model import Principal
from notewell.entrypoints import anchors_cli
from tests.integration.test_anchors_cli import RETRY, commit_all
from tests.integration.test_anchors_cli import repo as repo  # noqa: PLC0414  (a fixture)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from notewell.ports import Store


@pytest.fixture
def me(services: Services) -> Principal:
    workspace, _ = services.auth.default_workspace()
    return Principal(workspace_id=workspace.id, actor="cli")


@pytest.fixture
def notewell(
    services: Services, me: Principal, repo: Path, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str]]:
    parser = argparse.ArgumentParser(prog="notewell")
    anchors_cli.register(parser.add_subparsers(dest="verb", required=True))

    def run(*argv: str) -> tuple[int, str]:
        status = anchors_cli.run(parser.parse_args([*argv, "--repo-dir", str(repo)]), lambda: (services, me))
        return status, capsys.readouterr().out

    return run


def checked(notewell: Callable[..., tuple[int, str]], *flags: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(notewell("check", "--json", *flags)[1])
    return report


def test_check_records_its_verdicts_for_the_console_and_no_record_only_prints(
    services: Services, me: Principal, notewell: Callable[..., tuple[int, str]], repo: Path
) -> None:
    backoff = services.notes.create(me, "billing", title="Backoff cap", body="Webhook backoff caps at 30 s.").note
    queue = services.notes.create(me, "billing", title="Orders queue", body="Orders go to the 'orders' queue.").note
    assert notewell("anchor", backoff.id, "src/retry.py#backoff")[0] == 0
    assert notewell("anchor", queue.id, "src/queue.py")[0] == 0
    assert services.console.freshness(me, "billing").unchecked == 2

    assert checked(notewell)["recorded"] == 2
    summary = services.console.freshness(me, "billing")
    assert (summary.counts[Freshness.FRESH], summary.unchecked, summary.stale) == (2, 0, ())

    (repo / "src" / "retry.py").write_text(RETRY.replace("30.0", "60.0"))
    commit_all(repo, "raise the backoff cap")
    status, text = notewell("check")
    assert status == 1 and "Verdicts recorded for the console (1 changed since the last check)." in text
    (stale,) = services.console.freshness(me, "billing").stale
    assert (stale.note.id, stale.verdict.freshness, stale.verdict.stale_paths) == (
        backoff.id, Freshness.CHANGED, ("src/retry.py",),
    )  # fmt: skip
    assert "Verdicts recorded for the console (none changed)." in notewell("check")[1]

    (repo / "src" / "queue.py").unlink()
    commit_all(repo, "drop the queue module")
    report = checked(notewell, "--no-record")
    assert (
        report["recorded"] is None and {n["title"]: n["freshness"] for n in report["notes"]}["Orders queue"] == "gone"
    )
    assert [s.note.id for s in services.console.freshness(me, "billing").stale] == [backoff.id]  # as recorded before
    assert checked(notewell)["recorded"] == 1
    assert [s.note.id for s in services.console.freshness(me, "billing").stale] == [queue.id, backoff.id]


class BusyVerdicts:
    """Delegates to a real store whose verdict writes are refused as busy."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def save_verdicts(self, workspace_id: str, writes: Any) -> int:
        raise UnavailableError("The note store is busy right now; retry in a few seconds.")


def test_a_check_whose_verdicts_cannot_be_recorded_still_prints_them_and_says_so(
    store: Store, me: Principal, notewell: Callable[..., tuple[int, str]], repo: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    services = bootstrap(Settings(data_dir=tmp_path), store=store)
    note = services.notes.create(me, "billing", title="Orders queue", body="Orders go to the 'orders' queue.").note
    assert notewell("anchor", note.id, "src/queue.py")[0] == 0
    (repo / "src" / "queue.py").unlink()
    busy = bootstrap(Settings(data_dir=tmp_path), store=BusyVerdicts(store))
    parser = argparse.ArgumentParser(prog="notewell")
    anchors_cli.register(parser.add_subparsers(dest="verb", required=True))
    status = anchors_cli.run(parser.parse_args(["check", "--repo-dir", str(repo)]), lambda: (busy, me))
    printed = capsys.readouterr()
    assert status == 1 and f"gone     {note.id}" in printed.out and "recorded for the console" not in printed.out
    assert "notewell: verdicts not recorded: The note store is busy" in printed.err
    assert "Run notewell check again to record them." in printed.err
    assert services.console.freshness(me, "billing").unchecked == 1
