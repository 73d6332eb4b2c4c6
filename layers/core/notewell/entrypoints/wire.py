"""Wire shapes of tool results: pydantic models with camelCase aliases, sent as structuredContent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.types import ResourceLink
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

from notewell.domain import rules
from notewell.domain.lines import change_line, flags, minute, search_line, status_flag
from notewell.domain.refs import names

if TYPE_CHECKING:
    from notewell.domain.admission import Evidence
    from notewell.domain.model import Anchor, ApiKey, Link, Note, Project, SearchHit
    from notewell.services.changes import ChangesPage
    from notewell.services.context import ContextResult
    from notewell.services.memory import CheckpointOutcome, RememberOutcome, Review
    from notewell.services.metering import UsageReport
    from notewell.services.notes import NoteView
    from notewell.services.search import SearchOutcome


class Wire(BaseModel):
    # defer_build: a model's validator and serializer are built when it is first used, not at import; a cold
    # Lambda start builds the one or two its first call returns instead of all thirty.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, defer_build=True)
    _text: str | None = PrivateAttr(default=None)

    def as_text(self) -> str | None:
        """What the model reads, when it is not this result's compact JSON."""
        return self._text

    def resource_links(self) -> list[ResourceLink]:
        """Resources the result points at, sent as MCP resource_link content next to the text."""
        return []


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


class LinkOut(Wire):
    target: str = Field(description="Id of the linked note.")
    relation: str = Field(description="How this note relates to the target, e.g. 'depends_on'.")

    @classmethod
    def of(cls, link: Link) -> LinkOut:
        return cls(target=link.target, relation=link.relation)


class LinesOut(Wire):
    start: int
    end: int


class AnchorOut(Wire):
    """Code the note is about, as it was when anchored: where, and hashes of its text (never the text)."""

    repo: str
    path: str = Field(description="From the repository's top directory.")
    symbol: str | None = Field(default=None, description="The anchored definition, e.g. 'Config.load'.")
    lines: LinesOut | None = Field(default=None, description="The anchored lines, from 1; absent: the whole file.")
    commit: str = Field(description="HEAD when anchored: `git diff <commit> -- <path>` shows what changed since.")
    content_hash: str = Field(description="SHA-256 of the anchored text (lines joined with LF).")
    file_hash: str = Field(description="SHA-256 of the whole file then.")

    @classmethod
    def of(cls, anchor: Anchor) -> AnchorOut:
        lines = anchor.lines
        return cls(
            repo=anchor.repo, path=anchor.path, symbol=anchor.symbol,
            lines=LinesOut(start=lines.start, end=lines.end) if lines is not None else None, commit=anchor.commit,
            content_hash=anchor.content_hash, file_hash=anchor.file_hash,
        )  # fmt: skip

    @classmethod
    def all_of(cls, note: Note) -> list[AnchorOut] | None:
        """A note's anchors; None (left out of the answer) when it has none."""
        return [cls.of(anchor) for anchor in note.anchors] or None

    def label(self) -> str:
        """`path#symbol (lines 10-24)`, `path:10-24` or `path`: what was anchored, as `notewell anchor` names it."""
        lines = f"{self.lines.start}-{self.lines.end}" if self.lines else None
        if self.symbol:
            return f"{self.path}#{self.symbol}" + (f" (lines {lines})" if lines else "")
        return f"{self.path}:{lines}" if lines else self.path


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
    anchors: list[AnchorOut] | None = Field(default=None, description="Code the note is about; absent: none.")

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
            anchors=AnchorOut.all_of(note),
        )

    @classmethod
    def of_view(cls, view: NoteView) -> NoteFull:
        return cls.of(view.note, view.project)

    def as_text(self) -> str:
        """A header line of what is not default, then the whole body: what get_note was asked for."""
        facts = [f"v{self.version}", f"project {self.project}", f"updated {minute(self.updated_at)} by {self.author}"]
        if self.tags:
            facts.append("tags " + ", ".join(self.tags))
        facts += [f"{link.relation} {link.target}" for link in self.links]
        facts += [f"supersedes {', '.join(self.supersedes)}"] if self.supersedes else []
        facts += [f"superseded by {', '.join(self.superseded_by)}"] if self.superseded_by else []
        facts += [f"anchored to {a.label()} at {a.commit[:12]}" for a in self.anchors or ()]
        marks = flags(self.type, status_flag(self.status),
                       "canonical" if self.canonical else None,
                       f"importance {self.importance}" if self.importance != 3 else None,
                       f"deleted {minute(self.deleted_at)}" if self.deleted_at else None)  # fmt: skip
        return f"# {self.id}{marks} {self.title}\n{' · '.join(facts)}\n\n{self.body}"


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

    def as_text(self) -> str:
        parts = [note.as_text() for note in self.notes]
        if self.missing:
            parts.append("Missing (unknown, deleted or not visible): " + " ".join(self.missing))
        return "\n\n".join(parts) if parts else "No notes."


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
    anchors: list[AnchorOut] | None = Field(default=None, description="Only with includeBody: true.")

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
            anchors=AnchorOut.all_of(note) if include_body else None,
        )


class SearchResult(Wire):
    project: str
    search_mode: str = Field(
        description="Which engine answered: hybrid, vector, ranked_scan, fulltext, substring, or anchors (files only)."
    )
    results: list[SearchItem]
    notice: str | None = Field(default=None, description="Why the result is empty, when it is.")
    other_branches: int | None = None  # matches of other unmerged branches left out; allBranches shows them
    _by_ref: bool = PrivateAttr(default=False)  # the text names hits by ref (SearchOutcome.by_ref), else by id

    @classmethod
    def of(cls, outcome: SearchOutcome, *, project: str, include_body: bool, notice: str | None) -> SearchResult:
        out = cls(
            project=project,
            search_mode=outcome.mode.value,
            results=[SearchItem.of(h, include_body) for h in outcome.hits],
            notice=notice,
            other_branches=outcome.other_branches or None,
        )
        out._by_ref = outcome.by_ref
        return out

    def as_text(self) -> str:
        """One line a hit, best first: `- ref [type] title: snippet` (a body, when asked for, whole below it); a
        hit is named by its whole id where two hits share a ref, or where the project's refs do not resolve yet."""
        lines = [f"{_count(len(self.results), 'note')} in {self.project} ({self.search_mode})"]
        if self.notice:
            lines.append(self.notice)
        named = names((hit.id for hit in self.results), by_ref=self._by_ref)
        for hit in self.results:
            lines.append(search_line(named[hit.id], hit.type, hit.status, hit.title, hit.snippet))
            if hit.body is not None:
                lines.append(hit.body)
        return "\n".join(lines)


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


class Neighbour(Wire):
    id: str
    title: str
    excerpt: str

    @classmethod
    def of(cls, note: Note) -> Neighbour:
        return cls(id=note.id, title=note.title, excerpt=rules.excerpt(note.body, 120))


class NoteCreated(NoteWritten):
    """create_note's answer: the lean note, and for a decision, constraint or architecture note the same-type
    neighbours to compare it with."""

    neighbours: list[Neighbour] = Field(default_factory=list, description="Same-type notes to compare with.")
    review_required: bool = Field(default=False, description="True: read the neighbours for contradictions.")

    @classmethod
    def of_review(cls, view: NoteView, review: Review) -> NoteCreated:
        written = NoteWritten.of_view(view)
        return cls(
            **written.model_dump(), neighbours=[Neighbour.of(n) for n in review.neighbours],
            review_required=review.required,
        )  # fmt: skip


class ResolvingCallOut(Wire):
    tool: str = Field(description="Tool to call.")
    arguments: dict[str, object] = Field(description="Exact arguments to send.")
    when: str = Field(description="When this call is the right resolution.")


class EvidenceOut(Wire):
    """What a verdict rests on: the detector that fired, the slot it saw change, and the old and new value."""

    detector: str = Field(
        description="repeat, reworded, contained, changed value, status, negation, opposite, reversal or elaboration."
    )
    slot: str = Field(description="What changed, in the old note's words (e.g. 'retries capped').")
    old: str = Field(description="The old value (or sentence).")
    new: str = Field(description="The new value (or sentence); for elaboration, the detail added.")

    @classmethod
    def of(cls, evidence: Evidence | None) -> EvidenceOut | None:
        if evidence is None:
            return None
        return cls(detector=evidence.detector, slot=evidence.slot, old=evidence.old, new=evidence.new)


class RememberResult(Wire):
    status: str = Field(description="created, updated (restated an existing note), duplicate or conflict.")
    note: NoteWritten | None = Field(default=None, description="The note written or already holding this memory.")
    existing: NoteLean | None = Field(default=None, description="The existing note that matched.")
    evidence: EvidenceOut | None = Field(default=None, description="Why: the slot changed, or the detail added.")
    related: list[Neighbour] = Field(
        default_factory=list, description="Close notes the new one was stored beside: read them (reviewRequired)."
    )
    neighbours: list[Neighbour] = Field(default_factory=list, description="Same-type notes to compare with.")
    review_required: bool = Field(default=False, description="True: read related and neighbours for contradictions.")
    resolve: list[ResolvingCallOut] = Field(
        default_factory=list, description="Exact calls that settle a conflict or a review."
    )
    message: str

    @classmethod
    def of(cls, outcome: RememberOutcome) -> RememberResult:
        return cls(
            status=outcome.status.value,
            note=NoteWritten.of_view(outcome.note) if outcome.note else None,
            existing=NoteLean.of(outcome.existing) if outcome.existing else None,
            evidence=EvidenceOut.of(outcome.evidence),
            related=[Neighbour.of(n) for n in outcome.related],
            neighbours=[Neighbour.of(n) for n in outcome.neighbours],
            review_required=outcome.review_required,
            resolve=[ResolvingCallOut(tool=r.tool, arguments=r.arguments, when=r.when) for r in outcome.resolutions],
            message=outcome.message,
        )


class CheckpointItemOut(Wire):
    kind: str = Field(description="decision, open_item or failed_approach.")
    status: str = Field(description="created, updated, duplicate or conflict.")
    id: str | None = Field(default=None, description="The note that now holds this item.")
    existing_id: str | None = Field(default=None, description="The existing note it matched.")
    excerpt: str
    evidence: EvidenceOut | None = Field(default=None, description="Why: the slot changed, or the detail added.")
    related_ids: list[str] = Field(default_factory=list, description="Close notes to review beside it.")
    resolve: list[ResolvingCallOut] = Field(default_factory=list)


class CheckpointResult(Wire):
    handoff: NoteWritten
    items: list[CheckpointItemOut]
    conflicts: int = Field(description="Items not stored because they contradict a note; see their resolve calls.")

    @classmethod
    def of(cls, outcome: CheckpointOutcome) -> CheckpointResult:
        items = [
            CheckpointItemOut(
                kind=item.kind,
                status=item.outcome.status.value,
                id=item.outcome.note.note.id if item.outcome.note else None,
                existing_id=item.outcome.existing.id if item.outcome.existing else None,
                excerpt=rules.excerpt(item.content, 100),
                evidence=EvidenceOut.of(item.outcome.evidence),
                related_ids=[n.id for n in item.outcome.related],
                resolve=[
                    ResolvingCallOut(tool=r.tool, arguments=r.arguments, when=r.when) for r in item.outcome.resolutions
                ],
            )
            for item in outcome.items
        ]
        return cls(
            handoff=NoteWritten.of_view(outcome.handoff),
            items=items,
            conflicts=sum(1 for i in items if i.status == "conflict"),
        )


_FRESHNESS_HELP = (
    "Judged against checkFreshness: fresh, moved, changed or gone (changed and gone: re-check the note against the "
    "code before trusting it). Absent: not judged."
)


class ContextEntry(Wire):
    """A note in a context section; only id and title when degraded to a pointer."""

    id: str
    title: str
    type: str | None = None
    status: str | None = None
    updated_at: str | None = None
    excerpt: str | None = None
    body_size: int | None = None
    importance: int | None = None
    canonical: bool | None = None
    freshness: str | None = Field(default=None, description=_FRESHNESS_HELP)


class ContextSection(Wire):
    name: str = Field(description="constraints, decisions, failed_approaches, status, relevant, open_items, "
                      "recent_changes (always in this order; empty sections are left out).")  # fmt: skip
    entries: list[ContextEntry]


class ContextConflict(Wire):
    id: str
    kind: str = Field(description="disputed or unfinished_supersession.")
    title: str | None = None
    message: str | None = Field(default=None, description="What is wrong and the call that settles it.")
    freshness: str | None = Field(default=None, description=_FRESHNESS_HELP)


class OmittedRef(Wire):
    id: str
    section: str


class ContextMeta(Wire):
    budget: int = Field(description="Token budget this answer was packed into.")
    spent: int = Field(description="Estimated tokens of the text answer (never more than budget).")
    detail: str
    selected: int
    omitted: int = Field(description="Candidates left out for the budget: len(omittedIds) + unlisted.")
    omitted_ids: list[OmittedRef] = Field(description="Notes left out for lack of budget: fetch them with get_notes.")
    unlisted: int = Field(default=0, description="Omitted candidates whose ids did not fit in omittedIds either.")
    more_in: list[str] = Field(
        default_factory=list, description="Sections holding more notes than were weighed: reach them by query."
    )
    truncated: bool = Field(default=False, description="True: unlisted > 0.")
    anchored_paths: list[str] | None = Field(
        default=None,
        description="With checkFreshness: every path the notes shown are anchored to; send those paths' fileHash "
        "(or null) to have all of them judged.",
    )


class ContextOut(Wire):
    project: str
    summary: str | None = None
    instructions: str | None = None
    conflicts: list[ContextConflict]
    sections: list[ContextSection]
    notice: str | None = None
    other_branches: int | None = None  # notes of other unmerged branches left out; allBranches shows them
    meta: ContextMeta

    @classmethod
    def of(cls, result: ContextResult) -> ContextOut:
        packed = result.packed
        out = cls(
            project=result.project,
            summary=packed.header.get("summary"),
            instructions=packed.header.get("instructions"),
            conflicts=[ContextConflict.model_validate(c) for c in packed.conflicts],
            sections=[
                ContextSection(name=section.value, entries=[ContextEntry.model_validate(e) for e in entries])
                for section, entries in packed.sections
            ],
            notice=result.notice,
            other_branches=result.other_branches or None,
            meta=ContextMeta(
                budget=packed.budget, spent=packed.spent, detail=packed.detail.value, selected=packed.selected,
                omitted=packed.omitted, omitted_ids=[OmittedRef(id=i, section=s) for i, s in packed.omitted_ids],
                unlisted=packed.unlisted, more_in=[section.value for section in packed.beyond],
                truncated=packed.truncated,
                anchored_paths=list(result.anchored_paths) if result.anchored_paths is not None else None,
            ),
        )  # fmt: skip
        out._text = packed.text
        return out


class ChangeOut(Wire):
    id: str
    change: str = Field(description="created, updated or deleted.")
    title: str
    type: str
    status: str
    version: int
    updated_at: str
    excerpt: str
    body_size: int


class ChangesOut(Wire):
    project: str
    changes: list[ChangeOut] = Field(description="Oldest first, ordered by updatedAt then id.")
    has_more: bool = Field(description="True: call again now with cursor. False: keep cursor for next time.")
    cursor: str = Field(description="Opaque; pass it back unchanged to continue after these changes.")
    retry_after: int | None = Field(default=None, description="Seconds until the newest changes can be served.")
    notice: str | None = None
    _by_ref: bool = PrivateAttr(default=False)  # the text names notes by ref (ChangesPage.by_ref), else by id

    def as_text(self) -> str:
        """`- ref change vN time [type] title: excerpt`, oldest first, after what to do with the cursor; a note is
        named by its whole id where two changes share a ref, or where the project's refs do not resolve yet."""
        more = "hasMore: call again now with this cursor" if self.has_more else "hasMore false: keep this cursor"
        lines = [f"{_count(len(self.changes), 'change')} in {self.project}; {more}", f"cursor: {self.cursor}"]
        if self.retry_after is not None:
            lines.append(f"retryAfter: {self.retry_after} s")
        if self.notice:
            lines.append(self.notice)
        named = names((c.id for c in self.changes), by_ref=self._by_ref)
        lines += [
            change_line(named[c.id], c.change, c.version, c.updated_at, c.type, c.status, c.title, c.excerpt)
            for c in self.changes
        ]
        return "\n".join(lines)

    @classmethod
    def of(cls, page: ChangesPage) -> ChangesOut:
        out = cls(
            project=page.project,
            changes=[
                ChangeOut(
                    id=c.note.id, change=c.kind, title=c.note.title, type=c.note.type.value,
                    status=c.note.status.value, version=c.note.version, updated_at=c.note.updated_at,
                    excerpt=c.excerpt, body_size=c.note.body_size,
                )
                for c in page.changes
            ],
            has_more=page.has_more, cursor=page.cursor, retry_after=page.retry_after, notice=page.notice,
        )  # fmt: skip
        out._by_ref = page.by_ref
        return out


class TagRenameOut(Wire):
    project: str
    renamed: int = Field(description="Notes that got the new tag in this call (one new version each).")
    done: bool = Field(description="False: the per-call budget ran out; call again with the same arguments.")


class PlanLimitsOut(Wire):
    revisions_per_note: int
    notes_per_workspace: int | None = Field(default=None, description="Absent: unlimited.")
    calls_per_month: int | None = Field(default=None, description="Absent: unlimited.")
    note_chars: int


class UsageOut(Wire):
    plan: str
    limits: PlanLimitsOut
    period: str = Field(description="The billing month, YYYY-MM (UTC).")
    calls: int
    calls_by_tool: dict[str, int]
    tokens_returned: int = Field(description="Estimated tokens of all results returned this month.")
    notes: int
    revisions: int
    stored_bytes: int
    project: str | None = Field(
        default=None,
        description="Set for a project-scoped key: the counts are this project's alone (its notes, revisions and "
        "bytes, and the calls made with keys scoped to it); the plan and limits are the workspace's.",
    )

    @classmethod
    def of(cls, report: UsageReport) -> UsageOut:
        limits = report.limits
        return cls(
            plan=report.plan.value,
            limits=PlanLimitsOut(
                revisions_per_note=limits.revisions_per_note, notes_per_workspace=limits.notes_per_workspace,
                calls_per_month=limits.calls_per_month, note_chars=limits.note_chars,
            ),
            period=report.period, calls=report.calls, calls_by_tool=report.calls_by_tool,
            tokens_returned=report.tokens, notes=report.notes, revisions=report.revisions,
            stored_bytes=report.stored_bytes, project=report.project,
        )  # fmt: skip


class ExportOut(Wire):
    project: str
    notes: int = Field(description="Notes in the export, deleted ones included.")
    deleted: int
    revisions: int
    pages: int
    page_size: int
    resources: list[str] = Field(description="Read these with resources/read, in order: Notewell JSON Lines.")
    notice: str | None = None

    def resource_links(self) -> list[ResourceLink]:
        return [
            ResourceLink(
                type="resource_link", uri=uri, name=f"{self.project} export page {number}",
                mime_type="application/x-ndjson", description=f"Notewell JSON Lines, page {number} of {self.pages}",
            )
            for number, uri in enumerate(self.resources, start=1)
        ]  # fmt: skip
