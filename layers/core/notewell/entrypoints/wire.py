"""Wire shapes of tool results: pydantic models with camelCase aliases, advertised as output schemas."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from notewell.domain import rules

if TYPE_CHECKING:
    from notewell.domain.model import ApiKey, Link, Note, Project, SearchHit
    from notewell.services.notes import NoteView


class Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class LinkOut(Wire):
    target: str = Field(description="Id of the linked note.")
    relation: str = Field(description="How this note relates to the target, e.g. 'depends_on'.")

    @classmethod
    def of(cls, link: Link) -> LinkOut:
        return cls(target=link.target, relation=link.relation)


class NoteLean(Wire):
    """A note without its body: enough to decide whether to fetch it."""

    id: str
    title: str
    type: str
    status: str
    version: int
    updated_at: str
    excerpt: str = Field(description="The start of the body, cut at a word.")
    body_size: int = Field(description="Body length in characters.")
    deleted_at: str | None = Field(default=None, description="Set when the note is soft-deleted.")

    @classmethod
    def of(cls, note: Note) -> NoteLean:
        return cls(
            id=note.id,
            title=note.title,
            type=note.type.value,
            status=note.status.value,
            version=note.version,
            updated_at=note.updated_at,
            excerpt=rules.excerpt(note.body),
            body_size=note.body_size,
            deleted_at=note.deleted_at,
        )


class NoteFull(Wire):
    id: str
    project: str
    title: str
    body: str
    type: str
    status: str
    tags: list[str]
    links: list[LinkOut]
    importance: int
    canonical: bool
    supersedes: list[str]
    superseded_by: list[str]
    version: int
    created_at: str
    updated_at: str
    deleted_at: str | None = None
    author: str
    body_size: int

    @classmethod
    def of(cls, note: Note, project: str) -> NoteFull:
        return cls(
            id=note.id,
            project=project,
            title=note.title,
            body=note.body,
            type=note.type.value,
            status=note.status.value,
            tags=list(note.tags),
            links=[LinkOut.of(x) for x in note.links],
            importance=note.importance,
            canonical=note.canonical,
            supersedes=list(note.supersedes),
            superseded_by=list(note.superseded_by),
            version=note.version,
            created_at=note.created_at,
            updated_at=note.updated_at,
            deleted_at=note.deleted_at,
            author=note.author,
            body_size=note.body_size,
        )

    @classmethod
    def of_view(cls, view: NoteView) -> NoteFull:
        return cls.of(view.note, view.project)


class NoteWritten(NoteLean):
    """What a write returns: the note's lean form, never an echo of the body."""

    project: str

    @classmethod
    def of_view(cls, view: NoteView) -> NoteWritten:
        lean = NoteLean.of(view.note)
        return cls(project=view.project, **lean.model_dump())


class NotesBatch(Wire):
    notes: list[NoteFull]
    missing: list[str] = Field(description="Requested ids that do not exist, are deleted or are not visible.")


class SearchItem(Wire):
    id: str
    title: str
    type: str
    status: str
    version: int
    updated_at: str
    snippet: str
    body_size: int
    score: float
    body: str | None = Field(default=None, description="Only with includeBody: true.")

    @classmethod
    def of(cls, hit: SearchHit, include_body: bool) -> SearchItem:
        note = hit.note
        return cls(
            id=note.id,
            title=note.title,
            type=note.type.value,
            status=note.status.value,
            version=note.version,
            updated_at=note.updated_at,
            snippet=hit.snippet,
            body_size=note.body_size,
            score=hit.score,
            body=note.body if include_body else None,
        )


class SearchResult(Wire):
    project: str
    search_mode: str = Field(description="Which engine answered: vector, ranked_scan, fulltext or substring.")
    results: list[SearchItem]
    notice: str | None = Field(default=None, description="Why the result is empty, when it is.")


class RevisionItem(Wire):
    version: int
    title: str
    type: str
    status: str
    updated_at: str
    author: str
    excerpt: str
    body_size: int
    deleted_at: str | None = None
    body: str | None = Field(default=None, description="Only with includeBody: true.")

    @classmethod
    def of(cls, note: Note, include_body: bool) -> RevisionItem:
        return cls(
            version=note.version,
            title=note.title,
            type=note.type.value,
            status=note.status.value,
            updated_at=note.updated_at,
            author=note.author,
            excerpt=rules.excerpt(note.body),
            body_size=note.body_size,
            deleted_at=note.deleted_at,
            body=note.body if include_body else None,
        )


class RevisionList(Wire):
    id: str
    current_version: int
    revisions: list[RevisionItem] = Field(description="Earlier versions, newest first.")
    next_cursor: str | None = Field(default=None, description="Pass as cursor for older revisions.")


class ProjectOut(Wire):
    project: str
    summary: str
    instructions: str
    default_max_tokens: int | None = None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, project: Project) -> ProjectOut:
        return cls(
            project=project.slug,
            summary=project.summary,
            instructions=project.instructions,
            default_max_tokens=project.default_max_tokens,
            created_at=project.created_at,
            updated_at=project.updated_at,
        )


class ProjectList(Wire):
    projects: list[ProjectOut]
    notice: str | None = None


class KeyOut(Wire):
    """An API key as listed: never the secret."""

    id: str
    name: str
    workspace: str
    project: str | None
    read_only: bool
    created_at: str
    revoked_at: str | None
    hint: str

    @classmethod
    def of(cls, key: ApiKey, project: str | None) -> KeyOut:
        return cls(
            id=key.id,
            name=key.name,
            workspace=key.workspace_id,
            project=project,
            read_only=key.read_only,
            created_at=key.created_at,
            revoked_at=key.revoked_at,
            hint=f"…{key.hint}",
        )
