"""What one line of an import file holds, once decoded: pure data, shared by the codec and the import service.

Two formats are read (README "Export format"): Notewell's own export (a header, the project, then notes each
followed by its revisions) and the MCP reference memory server's `memory.jsonl` (entities and relations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from notewell.domain.model import Note

EXPORT_FORMAT = "notewell-export"
EXPORT_VERSION = 1
# Far beyond any stored updatedAt: an export reads the whole feed, the newest changes included.
EXPORT_HORIZON = "9999-12-31T23:59:59.999Z"


@dataclass(frozen=True, slots=True)
class ExportHeader:
    version: int
    exported_at: str


@dataclass(frozen=True, slots=True)
class ProjectRecord:
    slug: str
    summary: str
    instructions: str
    default_max_tokens: int | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """A note's current state. `workspace_id` and `project_id` are empty: the importer sets the target's."""

    note: Note


@dataclass(frozen=True, slots=True)
class RevisionRecord:
    """An earlier state of the note before it (`revision.id` is that note's id); workspace and project empty."""

    revision: Note


@dataclass(frozen=True, slots=True)
class EntityRecord:
    """memory.jsonl: `{"type":"entity","name":…,"entityType":…,"observations":[…]}`."""

    name: str
    entity_type: str
    observations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RelationRecord:
    """memory.jsonl: `{"type":"relation","from":…,"to":…,"relationType":…}`."""

    source: str
    target: str
    relation_type: str


ImportRecord = ExportHeader | ProjectRecord | NoteRecord | RevisionRecord | EntityRecord | RelationRecord
