"""remember, checkpoint and conflicts: writes that keep a project's memory free of duplicates and honest."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from notewell.domain import admission, ranking, rules
from notewell.domain.admission import CALIBRATIONS, Evidence, Verdict
from notewell.domain.branches import note_branch
from notewell.domain.errors import IdempotencyKeyReusedError, InvalidArgumentError, VersionConflictError
from notewell.domain.hybrid import embedding_text
from notewell.domain.model import Anchor, Note, NoteStatus, NoteType, NoteWrite, Principal, Project, SearchFilters
from notewell.domain.titles import derive_title
from notewell.ports import EmbeddingUnavailableError, IdempotencyKeyTakenError, JudgeUnavailableError, TextLookup
from notewell.services.access import Deps, require_write, visible_note, visible_project, writable_project
from notewell.services.notes import NoteService, NoteView, anchors_hashed, request_hash
from notewell.services.search import related_pool

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from notewell.domain.model import IdempotencyRecord, SearchHit
    from notewell.ports import Judge, Vector
    from notewell.services.search import SearchService

logger = logging.getLogger(__name__)

REVIEWED_TYPES = frozenset({NoteType.DECISION, NoteType.CONSTRAINT, NoteType.ARCHITECTURE})
CANDIDATES = 8  # notes compared per remember: the search index's best matches, never the whole project
NEIGHBOURS = 5
REPEATS = 20  # notes starting like new content, checked for a repeat word for word
CANDIDATE_STATUSES = frozenset({NoteStatus.CURRENT, NoteStatus.PENDING, NoteStatus.DISPUTED})
MAX_CHECKPOINT_ITEMS = 30
CONFLICTS_SHOWN = 20
JUDGED = 2  # close notes the judge is asked about, at most, per remember
JUDGE_SECONDS = 2.0  # each question's deadline: past it the note goes to the agent's review


class RememberStatus(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"


@dataclass(frozen=True, slots=True)
class ResolvingCall:
    """An exact tool call that resolves a conflict; the agent can send it as is."""

    tool: str
    arguments: dict[str, object]
    when: str


@dataclass(frozen=True, slots=True)
class RememberRequest:
    project: str
    content: str
    type: NoteType = NoteType.NOTE
    title: str | None = None
    tags: Sequence[str] = ()
    importance: int = 3
    supersedes: Sequence[str] = ()
    force: bool = False
    status: NoteStatus = NoteStatus.CURRENT
    idempotency_key: str | None = None
    anchors: Sequence[Anchor] = ()  # the note's when created; added to the note it restates
    branch: str | None = None  # the git branch it is written on (a created note records it; domain/branches.py)

    def arguments(self) -> dict[str, object]:
        """The request as remember's wire arguments (for resolving calls)."""
        args: dict[str, object] = {"project": self.project, "content": self.content, "type": self.type.value}
        if self.title:
            args["title"] = self.title
        if self.tags:
            args["tags"] = list(self.tags)
        if self.importance != 3:
            args["importance"] = self.importance
        if self.supersedes:
            args["supersedes"] = list(self.supersedes)
        if self.anchors:
            args["anchors"] = [rules.anchor_json(anchor) for anchor in self.anchors]
        if self.branch is not None:
            args["branch"] = self.branch
        return args


@dataclass(frozen=True, slots=True)
class RememberOutcome:
    status: RememberStatus
    note: NoteView | None  # created/updated: the note written; duplicate: the note already holding it
    existing: Note | None = None  # the note matched (duplicate, updated, conflict)
    neighbours: list[Note] = field(default_factory=list)
    review_required: bool = False
    resolutions: list[ResolvingCall] = field(default_factory=list)
    message: str = ""
    evidence: Evidence | None = None  # what the verdict rests on: the slot changed, or the detail added
    related: list[Note] = field(default_factory=list)  # created beside these close notes: the agent reviews them


@dataclass(frozen=True, slots=True)
class Review:
    """What a new decision, constraint or architecture note is set beside: the same-type notes it may disagree
    with. Empty and not required for other types."""

    neighbours: list[Note] = field(default_factory=list)
    required: bool = False


@dataclass(frozen=True, slots=True)
class CheckpointItem:
    kind: str  # decision | open_item | failed_approach
    content: str
    outcome: RememberOutcome


@dataclass(frozen=True, slots=True)
class CheckpointOutcome:
    handoff: NoteView
    items: list[CheckpointItem]


class ConflictKind(StrEnum):
    DISPUTED = "disputed"
    UNFINISHED_SUPERSESSION = "unfinished_supersession"


@dataclass(frozen=True, slots=True)
class Conflict:
    kind: ConflictKind
    note: Note
    counterparts: tuple[str, ...]  # the superseding notes of an unfinished supersession
    message: str


class MemoryService:
    def __init__(self, deps: Deps, notes: NoteService, search: SearchService, judge: Judge | None = None) -> None:
        self._deps = deps
        self._notes = notes
        self._search = search
        self._judge_model = judge

    # ----- remember ----------------------------------------------------------------------------------------

    def remember(self, principal: Principal, request: RememberRequest) -> RememberOutcome:
        require_write(principal)
        content = request.content.strip()
        if not content:
            raise InvalidArgumentError("content is empty; say what should be remembered.")
        rules.check_body(content)
        title = rules.check_title(request.title) if request.title else derive_title(content)
        tags = rules.check_tags(request.tags)
        rules.check_importance(request.importance)
        if request.status is NoteStatus.SUPERSEDED:
            raise InvalidArgumentError("A note becomes 'superseded' only through supersedes on its replacement.")
        superseded = list(dict.fromkeys(self._notes.note_ids(principal, request.supersedes)))
        # Refs resolved once: what is stored, replayed and offered in `resolve` calls names whole ids.
        request = replace(request, supersedes=tuple(superseded), anchors=rules.check_anchors(request.anchors))
        if request.branch is not None:
            rules.check_branch(request.branch)

        hashed = None
        if request.idempotency_key is not None:
            hashed = request_hash(
                "remember",
                {"project": request.project, "content": content, "type": request.type, "title": title, "tags": tags,
                 "importance": request.importance, "supersedes": superseded, "force": request.force,
                 "status": request.status, **anchors_hashed(request.anchors),
                 **({"branch": request.branch} if request.branch is not None else {})},
            )  # fmt: skip
            record = self._notes.live_idempotency(principal, request.project, request.idempotency_key)
            if record is not None:
                return self._replay(principal, record, request.idempotency_key, hashed)

        self._notes.check_plan_size(principal, content)
        # In a new project every memory is created: refuse one over the plan's note count before the project exists.
        project = writable_project(
            self._deps, principal, request.project, before_create=lambda: self._notes.admit_new_notes(principal, 1)
        )
        attempts = 3  # an update that lost a race is judged again against the fresh note
        for attempt in range(attempts):
            try:
                return self._admit(principal, project, request, content, title, tags, superseded, hashed)
            except VersionConflictError:
                if attempt == attempts - 1:
                    raise
            except IdempotencyKeyTakenError as taken:
                return self._replay(principal, taken.record, request.idempotency_key or "", hashed or "")
        raise AssertionError("unreachable")

    def _admit(
        self,
        principal: Principal,
        project: Project,
        request: RememberRequest,
        content: str,
        title: str,
        tags: tuple[str, ...],
        superseded: list[str],
        hashed: str | None,
    ) -> RememberOutcome:
        ws = principal.workspace_id
        query = ranking.candidate_query(content)
        store = self._deps.store

        def repeat_among(notes: Iterable[Note]) -> Note | None:
            live = [n for n in notes if n.status in CANDIDATE_STATUSES and n.id not in superseded]
            return admission.exact_repeat(content, live)

        # A note that starts with the same text is found by an index on its opening, however many notes the project
        # holds: an exact repeat is answered before the full-text lookup, whose cost grows with the index.
        alike = store.notes_starting_like(ws, project.id, content, REPEATS) if isinstance(store, TextLookup) else []
        repeated = repeat_among(alike)
        keyword_hits: Sequence[SearchHit] = []
        if repeated is None:
            keyword_hits = self._search.related_keyword(ws, project.id, query, related_pool(CANDIDATES))
            repeated = repeat_among(h.note for h in keyword_hits)
        vector: Vector | None = None
        if repeated is not None:  # known word for word: no model, no comparison
            judgement = admission.Judgement(Verdict.DUPLICATE, repeated, Evidence("repeat", "", "", ""))
        else:
            vector = self._vector_of(embedding_text(title, content))
            judgement = self._judge(ws, project, request, content, query, keyword_hits, vector, superseded)
        existing = judgement.note
        key = request.idempotency_key

        if judgement.verdict is Verdict.DUPLICATE and existing is not None:
            self._record_only(principal, request.project, key, hashed, RememberStatus.DUPLICATE, existing)
            return RememberOutcome(
                RememberStatus.DUPLICATE, NoteView(existing, project.slug), existing, evidence=judgement.evidence,
                message=f"Already known as {existing.id} ({existing.title!r}); nothing was written.",
            )  # fmt: skip
        if judgement.verdict is Verdict.CONFLICT and existing is not None:
            self._record_only(principal, request.project, key, hashed, RememberStatus.CONFLICT, existing)
            return self._conflict(request, existing, judgement.evidence)
        if judgement.verdict is Verdict.RESTATEMENT and existing is not None and not superseded:
            outcome = self._restate(principal, project, request, existing, content, (title, vector), tags, key, hashed)
            return replace(outcome, evidence=judgement.evidence)

        note = self._new_note(principal, project, request, content, title, tags)
        writes = [NoteWrite(note, expected_version=None)]
        writes += self._notes.supersession_writes(principal, project.id, note, superseded)
        record = self._record(principal, request.project, key, hashed, RememberStatus.CREATED, note, None)
        self._notes.commit(principal, writes, record, {note.id: vector} if vector is not None else None)
        neighbours = self._neighbours(principal, project.id, note, vector) if note.type in REVIEWED_TYPES else []
        related = [n for n in judgement.related if n.id not in superseded]
        review = note.type in REVIEWED_TYPES or bool(related)
        message = f"Stored as {note.id}."
        resolutions = [
            ResolvingCall(
                "update_note", {"id": note.id, "supersedes": [n.id for n in related[:1]]},
                f"the new note replaces {related[0].id} ({related[0].title!r})",
            )
        ] if related else []  # fmt: skip
        if related:
            close = ", ".join(f"{n.id} ({n.title!r})" for n in related)
            message += (
                f" It is close to {close}: read them; if the new note replaces one, send the resolve call "
                "(or mark the pair disputed)."
            )
        scanned = getattr(keyword_hits, "scanned", None)
        if scanned is not None:
            message += (
                f" Compared with the {scanned} most recently updated notes only (no search index answered): an older "
                "note may say the same; search_notes to check."
            )
        if neighbours:  # none: the first note of its type has nothing to be read against
            message += " Read the neighbours: if one disagrees, supersede it or mark the pair disputed."
        return RememberOutcome(
            RememberStatus.CREATED,
            NoteView(note, project.slug),
            None,
            neighbours,
            review,
            resolutions,
            message,
            related=related,
        )

    def _judge(
        self, ws: str, project: Project, request: RememberRequest, content: str, query: str,
        keyword_hits: Sequence[SearchHit], vector: Vector | None, superseded: list[str],
    ) -> admission.Judgement:  # fmt: skip
        candidates = [
            note
            for note in self._search.related(
                ws, project.id, query, CANDIDATES, vector=vector, keyword_hits=keyword_hits
            )
            if note.status in CANDIDATE_STATUSES and note.id not in superseded
        ]
        meaning = self._search.meaning
        # A cosine means something only against thresholds measured for its model: an uncalibrated one is not used.
        calibration = CALIBRATIONS.get(meaning.model_id) if meaning is not None else None
        similarities = (
            meaning.similarities(ws, vector, candidates)
            if meaning is not None and calibration is not None and vector is not None
            else None
        )
        judgement = admission.admit(
            content, candidates, allow_conflicts=request.force, meaning=similarities, calibration=calibration
        )
        if judgement.verdict is Verdict.UNRELATED and judgement.related and self._judge_model is not None:
            return self._ruled(judgement, content, allow_conflicts=request.force)
        return judgement

    def _ruled(self, judgement: admission.Judgement, content: str, *, allow_conflicts: bool) -> admission.Judgement:
        """The judge's word on the close notes no detector settled, closest first, each under its deadline. A
        contradiction is a conflict with the judge's evidence, a restatement that says more updates the note, an
        independent note leaves the review; no answer leaves the agent to review, as without a judge."""
        assert self._judge_model is not None
        kept: list[Note] = []
        for note in judgement.related[:JUDGED]:
            old = admission.comparable_text(note)
            try:
                ruling = self._judge_model.rule(old, content, timeout=JUDGE_SECONDS)
            except JudgeUnavailableError as exc:
                logger.warning("no ruling on %s (%s); leaving it to the agent's review", note.id, exc)
                kept.append(note)
                continue
            evidence = Evidence(f"judge ({self._judge_model.model_id})", ruling.slot, ruling.old, ruling.new)
            if ruling.verdict == "contradicts" and not allow_conflicts:
                return admission.Judgement(Verdict.CONFLICT, note, evidence)
            if ruling.verdict == "restates" and len(content) > len(old):
                return admission.Judgement(Verdict.RESTATEMENT, note, replace(evidence, new=content[len(old) :][:120]))
            if ruling.verdict != "independent":
                kept.append(note)
        kept += list(judgement.related[JUDGED:])
        return replace(judgement, related=tuple(kept))

    def _vector_of(self, text: str) -> Vector | None:
        """The content's vector, when an embedder is configured and answers in time; else remember goes by words."""
        meaning = self._search.meaning
        if meaning is None:
            return None
        try:
            return meaning.embed_one(text)
        except EmbeddingUnavailableError as exc:
            logger.warning("no vector for remember's content (%s); comparing by words", exc)
            return None

    def _restate(
        self,
        principal: Principal,
        project: Project,
        request: RememberRequest,
        existing: Note,
        content: str,
        embedded: tuple[str, Vector | None],
        tags: tuple[str, ...],
        key: str | None,
        hashed: str | None,
    ) -> RememberOutcome:
        """`embedded`: the title remember embedded the content with, and the vector it got (reused when the
        updated note's own embedding text is the same)."""
        now = self._deps.clock.now()
        updated = replace(
            existing,
            body=content,
            title=rules.check_title(request.title) if request.title else existing.title,
            tags=tuple(dict.fromkeys((*existing.tags, *tags)))[: rules.MAX_TAGS],
            anchors=rules.check_anchors((*existing.anchors, *request.anchors)),
            importance=max(existing.importance, request.importance),
            version=existing.version + 1,
            updated_at=rules.next_updated_at(now, existing.updated_at),
            author=principal.actor,
            write_id=key or self._deps.ids.new_id("w"),
        )
        record = self._record(principal, request.project, key, hashed, RememberStatus.UPDATED, updated, existing)
        title, vector = embedded
        same_text = vector is not None and embedding_text(updated.title, updated.body) == embedding_text(title, content)
        self._notes.commit(
            principal,
            [NoteWrite(updated, expected_version=existing.version, previous=existing)],
            record,
            {updated.id: vector} if same_text and vector is not None else None,
        )
        return RememberOutcome(
            RememberStatus.UPDATED, NoteView(updated, project.slug), existing,
            message=f"Restates {existing.id}: updated it in place to v{updated.version} (v{existing.version} kept).",
        )  # fmt: skip

    def _conflict(self, request: RememberRequest, existing: Note, evidence: Evidence | None) -> RememberOutcome:
        base = request.arguments()
        key = request.idempotency_key
        supersede = {**base, "supersedes": [*request.supersedes, existing.id]}
        force = {**base, "force": True}
        if key is not None:  # the original key now replays this conflict: each resolution needs its own
            supersede["idempotencyKey"] = f"{key}:supersede"
            force["idempotencyKey"] = f"{key}:force"
        change = _described(evidence)
        return RememberOutcome(
            RememberStatus.CONFLICT, None, existing, evidence=evidence,
            resolutions=[
                ResolvingCall("remember", supersede, "the new claim replaces the old one"),
                ResolvingCall("remember", force, "both claims are true"),
            ],
            message=(
                f"This contradicts {existing.id} ({existing.title!r}){change}; nothing was stored. Re-send with "
                f"supersedes: ['{existing.id}'] if the new claim replaces it, or force: true if both are true."
            ),
        )  # fmt: skip

    def _new_note(
        self, principal: Principal, project: Project, request: RememberRequest, content: str, title: str,
        tags: tuple[str, ...],
    ) -> Note:  # fmt: skip
        now = rules.format_ts(self._deps.clock.now())
        return Note(
            id=self._deps.ids.note_id(), workspace_id=principal.workspace_id, project_id=project.id, title=title,
            body=content, version=1, created_at=now, updated_at=now, author=principal.actor,
            write_id=request.idempotency_key or self._deps.ids.new_id("w"), type=request.type, status=request.status,
            tags=tags, importance=request.importance, supersedes=tuple(dict.fromkeys(request.supersedes)),
            anchors=tuple(request.anchors), branch=note_branch(project, request.branch),
        )  # fmt: skip

    def review(self, principal: Principal, created: NoteView) -> Review:
        """The review remember gives a note it creates, for a note create_note created: two contradictory
        constraints stored side by side are flagged the same way whichever tool wrote the second."""
        note = created.note
        if note.type not in REVIEWED_TYPES:
            return Review()
        return Review(self._neighbours(principal, note.project_id, note), required=True)

    def _neighbours(
        self, principal: Principal, project_id: str, note: Note, vector: Vector | None = None
    ) -> list[Note]:
        ws = principal.workspace_id
        found = [
            n
            for n in self._search.related(
                ws, project_id, ranking.candidate_query(f"{note.title} {note.body}"), NEIGHBOURS + 1,
                SearchFilters(types=frozenset({note.type})), vector=vector,
            )
            if n.id != note.id and n.status is not NoteStatus.SUPERSEDED
        ][:NEIGHBOURS]  # fmt: skip
        if len(found) < NEIGHBOURS:  # too few word matches: add the most recent notes of the same type
            recent = self._deps.store.notes_by_type(
                ws, project_id, [note.type], [NoteStatus.CURRENT, NoteStatus.PENDING, NoteStatus.DISPUTED],
                limit=NEIGHBOURS + 1,
            )  # fmt: skip
            seen = {n.id for n in found} | {note.id}
            found += [n for n in recent if n.id not in seen][: NEIGHBOURS - len(found)]
        return found

    # ----- idempotency -------------------------------------------------------------------------------------

    def _record(
        self, principal: Principal, project: str, key: str | None, hashed: str | None, status: RememberStatus,
        note: Note | None, existing: Note | None,
    ) -> IdempotencyRecord | None:  # fmt: skip
        if key is None or hashed is None:
            return None
        result: dict[str, str | int] = {"status": status.value}
        if note is not None:
            result["id"] = note.id
        if existing is not None:
            result["existingId"] = existing.id
        return self._notes.idempotency_record(principal, project, key, hashed, result)

    def _record_only(
        self, principal: Principal, project: str, key: str | None, hashed: str | None, status: RememberStatus,
        existing: Note,
    ) -> None:  # fmt: skip
        """Writeless outcomes (duplicate, conflict) still record the key, so a retry answers the same."""
        record = self._record(principal, project, key, hashed, status, None, existing)
        if record is not None:
            self._notes.commit(principal, [], record)

    def _replay(self, principal: Principal, record: IdempotencyRecord, key: str, hashed: str) -> RememberOutcome:
        if record.request_hash != hashed:
            raise IdempotencyKeyReusedError(
                f"idempotencyKey {key!r} was already used for a different request; use a new key for new content."
            )
        status = RememberStatus(str(record.result["status"]))
        note_id = str(record.result.get("id", "")) or None
        existing_id = str(record.result.get("existingId", "")) or None
        note = visible_note(self._deps, principal, note_id, allow_deleted=True) if note_id else None
        existing = visible_note(self._deps, principal, existing_id, allow_deleted=True) if existing_id else None
        view = None
        target = note or (existing if status is RememberStatus.DUPLICATE else None)
        if target is not None:
            view = NoteView(target, self._notes.slug(principal, target.project_id))
        review = note is not None and status is RememberStatus.CREATED and note.type in REVIEWED_TYPES
        return RememberOutcome(status, view, existing, review_required=review, message="Replayed: nothing new written.")

    # ----- checkpoint --------------------------------------------------------------------------------------

    def checkpoint(
        self,
        principal: Principal,
        project: str,
        *,
        summary: str,
        decisions: Sequence[str] = (),
        open_items: Sequence[str] = (),
        next_actions: Sequence[str] = (),
        failed_approaches: Sequence[str] = (),
        idempotency_key: str | None = None,
        branch: str | None = None,
    ) -> CheckpointOutcome:
        require_write(principal)
        if not summary.strip():
            raise InvalidArgumentError("summary is empty; say what this session did and where it stopped.")
        if branch is not None:
            rules.check_branch(branch)
        items = [("decision", x) for x in decisions] + [("open_item", x) for x in open_items]
        items += [("failed_approach", x) for x in failed_approaches]
        if len(items) + len(next_actions) > MAX_CHECKPOINT_ITEMS:
            raise InvalidArgumentError(
                f"A checkpoint takes at most {MAX_CHECKPOINT_ITEMS} items; store the rest with remember."
            )
        if any(not text.strip() for _, text in items) or any(not a.strip() for a in next_actions):
            raise InvalidArgumentError("An item is empty; drop it or say what it is.")
        body = summary.strip()
        if next_actions:
            body += "\n\nNext actions:\n" + "\n".join(f"- {a.strip()}" for a in next_actions)
        rules.check_body(body)
        for text in (body, *(text.strip() for _, text in items)):  # refuse before the first item is written
            self._notes.check_plan_size(principal, text)
        # A key scoped to another project gets its 404 before anything (even the key's pin below) is written.
        visible_project(self._deps, principal, project)

        if idempotency_key is not None:
            # The whole request is pinned to the key; each part replays under a key derived from it, so a retry
            # after a failure midway finishes the work without writing anything twice.
            hashed = request_hash(
                "checkpoint",
                {"project": project, "summary": summary, "decisions": list(decisions), "open": list(open_items),
                 "next": list(next_actions), "failed": list(failed_approaches),
                 **({"branch": branch} if branch is not None else {})},
            )  # fmt: skip
            record = self._notes.live_idempotency(principal, project, idempotency_key)
            if record is not None and record.request_hash != hashed:
                raise IdempotencyKeyReusedError(
                    f"idempotencyKey {idempotency_key!r} was already used for a different checkpoint; use a new key."
                )
            if record is None:
                pin = self._notes.idempotency_record(principal, project, idempotency_key, hashed, {"op": 1})
                try:
                    self._notes.commit(principal, [], pin)
                except IdempotencyKeyTakenError as taken:
                    if taken.record.request_hash != hashed:
                        raise IdempotencyKeyReusedError(
                            f"idempotencyKey {idempotency_key!r} was already used for a different checkpoint."
                        ) from taken

        kinds = {
            "decision": (NoteType.DECISION, NoteStatus.CURRENT),
            "open_item": (NoteType.TASK, NoteStatus.PENDING),
            "failed_approach": (NoteType.FAILED_APPROACH, NoteStatus.CURRENT),
        }
        results: list[CheckpointItem] = []
        for index, (kind, text) in enumerate(items):
            note_type, status = kinds[kind]
            sub_key = f"{idempotency_key}:{kind}:{index}" if idempotency_key else None
            outcome = self.remember(
                principal,
                RememberRequest(project, text, type=note_type, status=status, idempotency_key=sub_key, branch=branch),
            )
            results.append(CheckpointItem(kind, text, outcome))
        handoff = self._notes.create(
            principal, project, title=f"Handoff: {derive_title(summary, 70)}", body=body,
            type=NoteType.HANDOFF, idempotency_key=f"{idempotency_key}:handoff" if idempotency_key else None,
            branch=branch,
        )  # fmt: skip
        return CheckpointOutcome(handoff, results)

    # ----- conflicts ---------------------------------------------------------------------------------------

    def conflicts(self, principal: Principal, project: str) -> list[Conflict]:
        """Disputed notes and unfinished supersessions of a project, newest first (bounded)."""
        target = visible_project(self._deps, principal, project)
        return [] if target is None else self.conflicts_in(principal, target)

    def conflicts_in(self, principal: Principal, target: Project) -> list[Conflict]:
        """As `conflicts`, for a project the caller has already resolved (no second project lookup)."""
        return conflicts_of(self._deps.store.conflicted_notes(principal.workspace_id, target.id, limit=CONFLICTS_SHOWN))


def _described(evidence: Evidence | None) -> str:
    """The change a conflict rests on, as a clause: ": retries capped 3 -> 5"."""
    if evidence is None:
        return ""
    if evidence.detector in ("negation", "reversal"):
        return f" ({evidence.detector}: {evidence.old!r} -> {evidence.new!r})"
    return f" ({evidence.slot}: {evidence.old!r} -> {evidence.new!r})"


def conflicts_of(notes: Sequence[Note]) -> list[Conflict]:
    """What to do about each note needing attention (packing.needs_attention), in the order given."""
    found: list[Conflict] = []
    for note in notes:
        if note.status is NoteStatus.DISPUTED:
            found.append(
                Conflict(ConflictKind.DISPUTED, note, (), f"{note.id} is disputed: settle it and update its status.")
            )
        elif note.superseded_by:
            newer = ", ".join(note.superseded_by)
            found.append(
                Conflict(
                    ConflictKind.UNFINISHED_SUPERSESSION, note, note.superseded_by,
                    f"{note.id} is still {note.status.value} but {newer} supersedes it: finish with "
                    f"update_note(id='{note.superseded_by[-1]}', supersedes=['{note.id}']), or mark it disputed.",
                )
            )  # fmt: skip
    return found
