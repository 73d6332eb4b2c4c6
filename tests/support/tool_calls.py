"""Valid arguments for every tool, as an agent would send them: the suites that walk tools/list use these."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

OTHER = "beta"  # the project the scoped keys may not touch; it exists in one workspace only

# Valid arguments for each tool, given the id of a note of OTHER (with two versions and the tag 'ops').
ARGUMENTS: dict[str, Callable[[str], dict[str, Any]]] = {
    "get_context": lambda note: {"project": OTHER, "query": "deploy"},
    "get_changes_since": lambda note: {"project": OTHER},
    "remember": lambda note: {"project": OTHER, "content": "Deploys happen on Tuesdays.", "idempotencyKey": "r-1"},
    "checkpoint": lambda note: {"project": OTHER, "summary": "Session over.", "idempotencyKey": "cp-1"},
    "create_note": lambda note: {"project": OTHER, "title": "New", "body": "A new note.", "idempotencyKey": "c-1"},
    "get_note": lambda note: {"id": note},
    "get_notes": lambda note: {"ids": [note]},
    "update_note": lambda note: {"id": note, "title": "Changed", "expectedVersion": 2},
    "patch_note": lambda note: {"id": note, "mode": "append", "text": " More."},
    "delete_note": lambda note: {"id": note},
    "restore_note": lambda note: {"id": note},
    "list_note_revisions": lambda note: {"id": note},
    "get_note_revision": lambda note: {"id": note, "version": 1},
    "search_notes": lambda note: {"project": OTHER, "query": "deploy"},
    "list_projects": lambda note: {},
    "update_project": lambda note: {"project": OTHER, "summary": "Taken over."},
    "rename_project": lambda note: {"project": OTHER, "newName": "captured"},
    "rename_tag": lambda note: {"project": OTHER, "from": "ops", "to": "infra"},
    "get_usage": lambda note: {},
    "export_project": lambda note: {"project": OTHER},
}
