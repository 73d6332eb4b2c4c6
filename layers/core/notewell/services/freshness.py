"""Freshness verdicts kept for the console: reads that judge anchored notes (get_context's checkFreshness) and
`notewell check` record the last verdict on each note, derived data beside it (ports.VerdictRecords), so a person
sees which notes to re-check without the code ever leaving the machine that judged it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from notewell.domain import freshness, rules
from notewell.domain.errors import NotewellError
from notewell.ports import VerdictWrite

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.domain.freshness import NoteVerdict
    from notewell.domain.model import Note, Principal
    from notewell.services.access import Deps

logger = logging.getLogger("notewell.freshness")


class FreshnessService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def record(self, principal: Principal, judged: Sequence[tuple[Note, NoteVerdict]]) -> int:
        """Keep each verdict, judged on the note at its version, as the note's last (freshness.record_verdict):
        one read of the records per project, and a write of those that change only. Returns how many were written.

        Raises:
            UnavailableError: the store is busy (some records may be written).
        """
        store, workspace = self._deps.store, principal.workspace_id
        now = rules.format_ts(self._deps.clock.now())
        by_project: dict[str, dict[str, tuple[Note, NoteVerdict]]] = {}
        for note, verdict in judged:
            by_project.setdefault(note.project_id, {})[note.id] = (note, verdict)
        written = 0
        for project_id, notes in by_project.items():
            before = store.recorded_verdicts(workspace, project_id, list(notes))
            writes = [
                VerdictWrite(record, before.get(note.id))
                for note, verdict in notes.values()
                if (record := freshness.record_verdict(note, verdict, before.get(note.id), now)) is not None
            ]
            if writes:
                written += store.save_verdicts(workspace, writes)
        return written

    def record_in_passing(self, principal: Principal, judged: Sequence[tuple[Note, NoteVerdict]]) -> None:
        """`record` for a read that judged notes on its way (get_context): the read answers whatever happens here.
        A read-only key's verdicts are not kept (it changes nothing other people see, and the console shows these
        to them); a store failure is logged, not raised."""
        if principal.read_only or not judged:
            return
        try:
            self.record(principal, judged)
        except NotewellError:
            logger.warning("freshness verdicts of a read were not recorded", exc_info=True)
