"""Notewell's JSON Lines export format, version 1, and the MCP reference memory server's `memory.jsonl`.

Pure: text in, domain values out (and back); no file or store access. The format is described in README.md
("Export format"). Each line is one compact JSON object with sorted keys, so encoding a value twice gives the same
bytes. Decoding checks one line on its own (JSON, fields, types, enum values, sizes, ids, timestamps) with the
domain rules; what spans lines (a revision's note, unknown relation targets) is the import service's to check.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from notewell.domain import rules
from notewell.domain.errors import InvalidArgumentError, NotewellError
from notewell.domain.model import Link, Note, NoteStatus, NoteType
from notewell.domain.portability import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    EntityRecord,
    ExportHeader,
    ImportRecord,
    NoteRecord,
    ProjectRecord,
    RelationRecord,
    RevisionRecord,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from notewell.domain.model import Project

E = TypeVar("E", bound=StrEnum)
T = TypeVar("T")

# Fields of a note line besides "kind" and the id ("id" on a note, "noteId" on a revision).
_NOTE_FIELDS = frozenset(
    {
        "title",
        "body",
        "type",
        "status",
        "tags",
        "links",
        "importance",
        "canonical",
        "supersedes",
        "supersededBy",
        "version",
        "createdAt",
        "updatedAt",
        "deletedAt",
        "author",
        "writeId",
    }
)
# Optional on a note or revision line: written only when set, so an export without them reads as before.
_OPTIONAL_NOTE_FIELDS = frozenset({"anchors", "branch"})
_PROJECT_FIELDS = frozenset({"slug", "summary", "instructions", "defaultMaxTokens", "createdAt", "updatedAt"})
_HEADER_FIELDS = frozenset({"format", "version", "exportedAt"})
_TS_EXAMPLE = "2026-03-01T12:00:00.000Z"


def dump_line(value: dict[str, Any]) -> str:
    """Compact, key-sorted JSON on one line. Characters some readers take for line breaks are escaped."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # json.dumps escapes every control character below U+0020 but leaves these; outside strings the text is ASCII.
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


def _note_fields(note: Note) -> dict[str, Any]:
    return {
        "title": note.title,
        "body": note.body,
        "type": note.type.value,
        "status": note.status.value,
        "tags": list(note.tags),
        "links": [{"target": link.target, "relation": link.relation} for link in note.links],
        "importance": note.importance,
        "canonical": note.canonical,
        "supersedes": list(note.supersedes),
        "supersededBy": list(note.superseded_by),
        "version": note.version,
        "createdAt": note.created_at,
        "updatedAt": note.updated_at,
        "deletedAt": note.deleted_at,
        "author": note.author,
        "writeId": note.write_id,
        **({"anchors": [rules.anchor_json(anchor) for anchor in note.anchors]} if note.anchors else {}),
        **({"branch": note.branch} if note.branch is not None else {}),
    }


class JsonlCodec:
    """ExportCodec for format version 1; also decodes memory.jsonl lines."""

    # ----- encoding ----------------------------------------------------------------------------------------

    def encode_header(self, exported_at: str) -> str:
        return dump_line({"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exportedAt": exported_at})

    def encode_project(self, project: Project) -> str:
        return dump_line(
            {
                "kind": "project",
                "slug": project.slug,
                "summary": project.summary,
                "instructions": project.instructions,
                "defaultMaxTokens": project.default_max_tokens,
                "createdAt": project.created_at,
                "updatedAt": project.updated_at,
            }
        )

    def encode_note(self, note: Note) -> str:
        return dump_line({"kind": "note", "id": note.id, **_note_fields(note)})

    def encode_revision(self, revision: Note) -> str:
        return dump_line({"kind": "revision", "noteId": revision.id, **_note_fields(revision)})

    # ----- decoding ----------------------------------------------------------------------------------------

    def decode(self, line: str) -> ImportRecord:
        try:
            value = json.loads(line, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise InvalidArgumentError(f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
        except ValueError as exc:  # NaN / Infinity
            raise InvalidArgumentError(str(exc)) from exc
        if not isinstance(value, dict):
            raise InvalidArgumentError(f"expected a JSON object, found {_json_kind(value)}")
        if "kind" in value:
            return _decode_kind(value)
        if "format" in value:
            return _decode_header(value)
        if "type" in value:
            return _decode_memory(value)
        raise InvalidArgumentError(
            "the object has no 'kind' (a Notewell export line), 'format' (a Notewell export header) or "
            "'type' (a memory.jsonl entity or relation)"
        )


# ----- Notewell export lines ------------------------------------------------------------------------------------


def _decode_header(value: dict[str, Any]) -> ExportHeader:
    _only(value, _HEADER_FIELDS, "header")
    name = _str(value, "format")
    if name != EXPORT_FORMAT:
        raise InvalidArgumentError(f"format {name!r} is not {EXPORT_FORMAT!r}")
    version = _int(value, "version")
    if version != EXPORT_VERSION:
        raise InvalidArgumentError(
            f"export format version {version} is not supported; this Notewell reads version {EXPORT_VERSION} "
            "(upgrade Notewell to import it)"
        )
    return ExportHeader(version=version, exported_at=_str(value, "exportedAt"))


def _decode_kind(value: dict[str, Any]) -> ImportRecord:
    kind = value["kind"]
    if kind == "note":
        _only(value, _NOTE_FIELDS | {"kind", "id"}, "note line", optional=_OPTIONAL_NOTE_FIELDS)
        return NoteRecord(_note(value, "id"))
    if kind == "revision":
        _only(value, _NOTE_FIELDS | {"kind", "noteId"}, "revision line", optional=_OPTIONAL_NOTE_FIELDS)
        return RevisionRecord(_note(value, "noteId"))
    if kind == "project":
        _only(value, _PROJECT_FIELDS | {"kind"}, "project line")
        tokens = value.get("defaultMaxTokens", _MISSING)
        if tokens is _MISSING:
            _missing("defaultMaxTokens")
        if tokens is not None and not _is_int(tokens):
            raise InvalidArgumentError(f"'defaultMaxTokens' must be an integer or null, not {_json_kind(tokens)}")
        created_at = _ts(value, "createdAt")
        return ProjectRecord(
            slug=_checked("slug", rules.check_project_slug, _str(value, "slug")),
            summary=_checked("summary", lambda text: rules.check_project_text("summary", text), _str(value, "summary")),
            instructions=_checked(
                "instructions",
                lambda text: rules.check_project_text("instructions", text),
                _str(value, "instructions"),
            ),
            default_max_tokens=tokens,
            created_at=created_at,
            updated_at=_ts(value, "updatedAt", not_before=created_at),
        )
    raise InvalidArgumentError(f"unknown kind {kind!r}; Notewell export lines are 'project', 'note' or 'revision'")


def _note(value: dict[str, Any], id_field: str) -> Note:
    note_id = _checked(id_field, rules.check_note_id, _str(value, id_field))
    links = []
    for item in _list(value, "links"):
        if not isinstance(item, dict) or set(item) != {"target", "relation"}:
            raise InvalidArgumentError("each of 'links' must be an object with exactly 'target' and 'relation'")
        target, relation = item["target"], item["relation"]
        if not isinstance(target, str) or not isinstance(relation, str):
            raise InvalidArgumentError("a link's 'target' and 'relation' must be strings")
        links.append(Link(target, relation))
    version = _int(value, "version")
    if version < 1:
        raise InvalidArgumentError(f"'version' {version} is out of range; versions start at 1")
    created_at = _ts(value, "createdAt")
    deleted_at = value.get("deletedAt", _MISSING)
    if deleted_at is _MISSING:
        _missing("deletedAt")
    return Note(
        id=note_id,
        workspace_id="",
        project_id="",
        title=_checked("title", rules.check_title, _str(value, "title")),
        body=_checked("body", rules.check_body, _str(value, "body")),
        version=version,
        created_at=created_at,
        updated_at=_ts(value, "updatedAt", not_before=created_at),
        author=_str(value, "author"),
        write_id=_str(value, "writeId"),
        type=_enum(NoteType, value, "type"),
        status=_enum(NoteStatus, value, "status"),
        tags=_checked("tags", rules.check_tags, _str_list(value, "tags")),
        links=_checked("links", lambda found: rules.check_links(found, own_id=note_id), tuple(links)),
        importance=_checked("importance", rules.check_importance, _int(value, "importance")),
        canonical=_bool(value, "canonical"),
        supersedes=tuple(_checked("supersedes", rules.check_note_id, x) for x in _str_list(value, "supersedes")),
        superseded_by=tuple(_checked("supersededBy", rules.check_note_id, x) for x in _str_list(value, "supersededBy")),
        deleted_at=None if deleted_at is None else _ts(value, "deletedAt"),
        anchors=rules.anchors_of_json(_list(value, "anchors")) if "anchors" in value else (),  # names anchors[i]
        branch=_checked("branch", rules.check_branch, value["branch"]) if "branch" in value else None,
    )


# ----- memory.jsonl lines -------------------------------------------------------------------------------------


def _decode_memory(value: dict[str, Any]) -> EntityRecord | RelationRecord:
    """Unknown extra fields are ignored: forks of the reference server add their own (timestamps, ids)."""
    kind = value["type"]
    if kind == "entity":
        name = _str(value, "name").strip()
        if not name:
            raise InvalidArgumentError("the entity's 'name' is empty")
        entity_type = value.get("entityType", "")
        if not isinstance(entity_type, str):
            raise InvalidArgumentError(f"'entityType' must be a string, not {_json_kind(entity_type)}")
        observations = _str_list(value, "observations") if "observations" in value else ()
        return EntityRecord(name=name, entity_type=entity_type, observations=observations)
    if kind == "relation":
        fields = {key: _str(value, key).strip() for key in ("from", "to", "relationType")}
        for key, text in fields.items():
            if not text:
                raise InvalidArgumentError(f"the relation's {key!r} is empty")
        return RelationRecord(source=fields["from"], target=fields["to"], relation_type=fields["relationType"])
    raise InvalidArgumentError(f"unknown type {kind!r}; memory.jsonl lines have type 'entity' or 'relation'")


# ----- field readers ------------------------------------------------------------------------------------------

_MISSING: Any = object()


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _missing(field: str) -> NoReturn:
    raise InvalidArgumentError(f"the field {field!r} is missing")


def _only(value: dict[str, Any], allowed: frozenset[str], what: str, optional: frozenset[str] = frozenset()) -> None:
    unknown = sorted(set(value) - allowed - optional)
    if unknown:
        raise InvalidArgumentError(f"unknown field {unknown[0]!r} in a {what}")
    absent = sorted(allowed - set(value))
    if absent:
        _missing(absent[0])


def _get(value: dict[str, Any], field: str) -> Any:
    if field not in value:
        _missing(field)
    return value[field]


def _str(value: dict[str, Any], field: str) -> str:
    found = _get(value, field)
    if not isinstance(found, str):
        raise InvalidArgumentError(f"{field!r} must be a string, not {_json_kind(found)}")
    return found


def _int(value: dict[str, Any], field: str) -> int:
    found = _get(value, field)
    if not _is_int(found):
        raise InvalidArgumentError(f"{field!r} must be an integer, not {_json_kind(found)}")
    return int(found)


def _bool(value: dict[str, Any], field: str) -> bool:
    found = _get(value, field)
    if not isinstance(found, bool):
        raise InvalidArgumentError(f"{field!r} must be true or false, not {_json_kind(found)}")
    return found


def _list(value: dict[str, Any], field: str) -> list[Any]:
    found = _get(value, field)
    if not isinstance(found, list):
        raise InvalidArgumentError(f"{field!r} must be an array, not {_json_kind(found)}")
    return found


def _str_list(value: dict[str, Any], field: str) -> tuple[str, ...]:
    found = _list(value, field)
    for item in found:
        if not isinstance(item, str):
            raise InvalidArgumentError(f"{field!r} must be an array of strings, but holds {_json_kind(item)}")
    return tuple(found)


def _enum(kind: type[E], value: dict[str, Any], field: str) -> E:
    text = _str(value, field)
    try:
        return kind(text)
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        raise InvalidArgumentError(f"{field!r} is {text!r}, which is not one of: {allowed}") from None


def _ts(value: dict[str, Any], field: str, *, not_before: str | None = None) -> str:
    text = _str(value, field)
    try:
        canonical = rules.format_ts(rules.parse_ts(text))
    except (NotewellError, ValueError, OverflowError):
        canonical = None
    if canonical != text:
        raise InvalidArgumentError(f"{field!r} is {text!r}; use a UTC timestamp with milliseconds like {_TS_EXAMPLE!r}")
    if not_before is not None and text < not_before:
        raise InvalidArgumentError(f"{field!r} ({text}) is before createdAt ({not_before})")
    return text


def _checked(field: str, check: Callable[[T], T], found: T) -> T:
    """Apply a domain rule; its message, prefixed with the field, says what is wrong."""
    try:
        return check(found)
    except NotewellError as exc:
        raise InvalidArgumentError(f"{field}: {exc.message}") from exc
