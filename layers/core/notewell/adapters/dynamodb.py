"""DynamoDB store: every `notewell.ports.Store` method on one table, through boto3's low-level client.

Key layout (`pk`/`sk` strings; indexes GSI1-5 on `gsi{n}pk`/`gsi{n}sk`, GSI5 with no sort key). Every key carries
the workspace (`WS#{ws}`). Two partitions are read before a workspace is known and hold no notes: the secret
lookup, a pointer to the key, and the WORKSPACES listing (so that listing workspaces is a Query, not a Scan):

    item            pk                           sk                   attributes
    workspace       WS#{ws}                      WORKSPACE            name, plan, revisionCap
    workspace list  WORKSPACES                   WS#{ws}              the same fields: listing is a Query
    project         WS#{ws}                      PROJ#{projectId}     slug, summary, instructions, …
    slug            WS#{ws}                      SLUG#{slug}          projectId (attribute_not_exists: unique)
    usage           WS#{ws}                      USAGE#{period}       one number per counter, `c:{counter}` (ADD)
    tag rename      WS#{ws}                      TAGRENAME#{projectId}#{sha256(from, to)}   where rename_tag stopped
    API key         WS#{ws}                      KEY#{keyId}          name, secretHash, scope, revokedAt
    secret lookup   AUTH#{secretHash}            AUTH                 workspaceId, keyId: nothing else
    note            WS#{ws}#N#{noteId}           NOTE                 all fields, version, writeId, and
                                                                      gsi1pk = WS#{ws}#P#{projectId},
                                                                      gsi1sk = {updatedAt}#{noteId},
                                                                      maybe gsi2pk/sk, gsi3pk/sk, gsi4pk/sk,
                                                                      gsi5pk = WS#{ws}#REF#{ref} (below)
    revision        WS#{ws}#N#{noteId}           REV#{version:010d}   a previous state (no GSI keys)
    anchor pointer  WS#{ws}#P#{projectId}#ANCHOR {path}\\{noteId}      noteId, path: the note is anchored there
    verdict         WS#{ws}#P#{projectId}#VERDICT {noteId}          version, files, judgedAt: a freshness verdict
    idempotency     WS#{ws}#IDEM#{sha256(key)}   IDEM                 requestHash, result, expiresAt, ttl
    feed head       WS#{ws}#P#{projectId}#SEQ    HEAD                 seq (the last commit number), complete
    change record   WS#{ws}#P#{projectId}#SEQ    SEQ#{seq:012d}       noteId, version, updatedAt
    index pointer   WS#{ws}#N#{noteId}           IDX#{index}          docId, version, rank (the stream indexer's)

Every item also names its `entity`, so stream consumers (search indexing) can tell notes from the rest.

Five indexes on note items, the first four sorted by `{updatedAt}#{noteId}` (`gsi{n}sk`):

    GSI1  project feed, every note (tombstones too)    gsi1pk = WS#{ws}#P#{projectId}
    GSI2  live notes of one type and status            gsi2pk = WS#{ws}#P#{projectId}#T#{type}#S#{status}
    GSI3  live notes needing attention: disputed, or   gsi3pk = WS#{ws}#P#{projectId}#ATTN
          superseded_by set but status not superseded
    GSI4  notes get_context weighs, lean: live ones    gsi4pk = WS#{ws}#P#{projectId}#S#{type|other|attention}
          by type when their type has a section (packing.context_section; `other` for the rest), and those needing
          attention apart (the same as GSI3's: get_context lists the newest of them as conflicts)
    GSI5  notes by ref (domain.refs.note_ref), every   gsi5pk = WS#{ws}#REF#{ref}, no sort key, keys only
          note whose id has one (tombstones too: a ref resolves as its id does); `ids_with_ref` reads the note ids
          from the projected `pk`

GSI1-3 project every attribute; GSI4 only what get_context shows (LEAN_ATTRIBUTES: the start of the body as
`excerpt`, not the body), so get_context reads under a kilobyte a candidate whatever the bodies weigh, one Query per
partition. A project made before GSI4 existed holds notes without its keys: its item has no `contextIndex` and
get_context reads it through GSI2 until `notewell reindex --stack` rewrites its notes. One made before the attention
partition (`contextIndexed`, layout 1) has old disputed notes among its sections: get_context reads its conflicts
from GSI3 until the same command moves them. One made before layout 4 (model.TYPE_PARTITION_LAYOUT) keeps older
notes in a partition per section: get_context reads those beside the type partitions until the command moves them.
One made before layout 5 (model.REF_LAYOUT) holds notes without `gsi5pk`: a ref finds them only once the same command
rewrites them.

GSI2, GSI3, GSI4 and GSI5 are sparse: `note_to_item` alone derives their keys from the note, and every note write
Puts the whole item, so a key the note no longer earns (deleted, fixed, moved to another type) leaves with it. GSI5's
key never changes (the id does not), so only notes whose id has no ref (imported ones of another shape) lack it.

Anchor pointers: a note anchored to a file has a pointer per anchored path in its project's ANCHOR partition, sorted
by path, so `anchored_notes` finds the notes anchored to a file, or to files under a directory, with one Query
(begins_with) per path, then reads them whole. A commit Puts the pointers of the paths a note gains and Deletes those
it loses, in its transaction; deletion and status leave them alone (the read checks each note itself), so a delete or
a restore writes none. A project made before the pointers (layout 2) has them once `notewell reindex --stack`
rewrites its notes (refresh_note_items writes each anchored note's pointers). GSI4 does not project anchors:
`note_anchors` reads them for the notes get_context shows.

Verdicts (ports.VerdictRecords): the last freshness verdict on an anchored note, derived data in its project's VERDICT
partition, outside every index, the feed and the stream indexer (`entity` is `verdict`). Reads that judged notes
write the records that changed, in one TransactWriteItems of Puts each conditioned on the record read.

Writes: a note changes only through `commit`, one TransactWriteItems whose note Puts are conditioned on the
version that was read (an insert on the id being new), with ALL_OLD returned on failure. A commit that
landed but whose reply was lost fails its own condition when sent again; the stored `writeId` and version
then show the write was ours, and the retry answers success (the writeId rule). Revisions share the note's
partition; the transaction writing `REV#{r}` deletes `REV#{r - cap}`, so history stays capped without a Query.
A rename is one transaction on three items: the old slug (deleted while it points at the project), the new one
(created while free) and the project. Imports skip ids already stored (BatchGetItem), then BatchWriteItem the
revisions before their notes: a note that exists has its whole history, so an interrupted import reruns cleanly.

The commit sequence (`SequencedFeed`): a commit reads each touched project's feed head (strongly), and its
transaction also moves the head from the number read (a condition) and Puts one change record per note. Numbers
are therefore handed out in commit order with no gap; a commit that lost the head to another retries with the new
number. The feed Queries the records strongly consistently, so a change is served as soon as it is acknowledged.
A project whose head was made after it had notes (written by a version without the sequence) is `complete: false`
and keeps the (updatedAt, id) feed with its horizon.

Reads of the table are strongly consistent; the GSIs (`project_notes`, `notes_by_type`, `conflicted_notes`,
`changes_after`, `ids_with_ref`) are eventually consistent. Nothing scans.
Vendor errors become `notewell.domain.errors` here: throttling, 5xx and timeouts left after botocore's own
retries are `UnavailableError` (503 with a retry hint), oversize items `TooLargeError`.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from botocore import exceptions as botocore_errors
from botocore.config import Config
from botocore.session import get_session

from notewell.config import ConfigError
from notewell.domain import freshness, packing, rules
from notewell.domain.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    NotewellError,
    NotFoundError,
    OutcomeUnknownError,
    TooLargeError,
    UnavailableError,
    VersionConflictError,
)
from notewell.domain.freshness import FileVerdict, Freshness, RecordedVerdict
from notewell.domain.model import (
    Anchor,
    ApiKey,
    ChangeScan,
    FeedPosition,
    IdempotencyRecord,
    LineRange,
    Link,
    Note,
    NoteStatus,
    NoteType,
    NoteWrite,
    Plan,
    Project,
    SequencedChange,
    SequencedScan,
    Workspace,
)
from notewell.domain.refs import note_ref
from notewell.ports import (
    ABSENT,
    ANCHOR_LOOKUP,
    ANY,
    AuthRecord,
    ContextNotes,
    IdempotencyKeyTakenError,
    IndexPointer,
    TagRenameProgress,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from typing import TypeAlias

    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import (
        AttributeValueTypeDef,
        KeysAndAttributesTypeDef,
        PutTypeDef,
        QueryInputTypeDef,
        TransactWriteItemTypeDef,
        UpdateTypeDef,
        WriteRequestUnionTypeDef,
    )

    from notewell.ports import RecordWrite, VerdictWrite

    Item: TypeAlias = dict[str, AttributeValueTypeDef]

__all__ = ["CLIENT_CONFIG", "GSI1", "GSI2", "GSI3", "DynamoDBStore", "make_client"]

GSI1 = "GSI1"  # a project's notes (the feed)
GSI2 = "GSI2"  # a project's live notes of one type and status
GSI3 = "GSI3"  # a project's live notes that need attention
GSI4 = "GSI4"  # a project's live notes by context section, lean
GSI5 = "GSI5"  # a workspace's notes by ref, keys only
OTHER_PARTITION = "other"  # GSI4's partition of settled live notes in no section
ATTENTION_PARTITION = "attention"  # GSI4's partition of notes needing attention (packing.needs_attention)
# What GSI4 projects besides the keys (template.yaml lists the same): enough for item_to_lean_note.
# Not the workspace, project or creation time: the partition names the first two, context never shows the third.
LEAN_ATTRIBUTES = (
    "id", "title", "excerpt", "bodySize", "version", "updatedAt", "type", "status", "importance", "canonical", "links",
    "supersedes",
)  # fmt: skip

# botocore's default ("legacy": 10 attempts, 60 s timeouts) outlasts the HTTP API's 30 s; this budget
# (3 attempts x (2 s + 5 s) plus jittered backoff) fits inside the function's 29 s (template.yaml).
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "total_max_attempts": 3},
    connect_timeout=2,
    read_timeout=5,
    tcp_keepalive=True,
)

# DynamoDB limits (developer guide, "Service, account, and table quotas").
MAX_ITEM_BYTES = 400 * 1024
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024
MAX_TRANSACTION_ACTIONS = 100
MAX_BATCH_GET_KEYS = 100
MAX_BATCH_WRITE_ITEMS = 25
MAX_USAGE_COUNTERS = 100  # per UpdateItem: keeps the update expression far below its 4 KB limit

# The change feed (`changes_after`): at most this many GSI1 Query pages per call, each of at most this many items
# (and 1 MB): a call examines at most 800 index entries, whatever the project holds.
FEED_PAGE_BUDGET = 8
FEED_PAGE_ITEMS = 100
FEED_FILTERED_PAGE_ITEMS = 25  # the least a filtered read asks for: matches may be sparse

# Our own retries, on top of botocore's: cancelled transactions (TransactionConflict) and unprocessed keys.
TRANSACTION_ATTEMPTS = 3
BATCH_GET_ROUNDS = 5
BATCH_WRITE_ROUNDS = 8
RETRY_BASE_SECONDS = 0.025
RETRY_AFTER_SECONDS = 2

# Refused before anything was written: the caller may simply retry later.
_THROTTLING_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "LimitExceededException",
    }
)
# The outcome is unknown: a write may have been applied (or, for a transaction in progress, may still be).
_AMBIGUOUS_CODES = frozenset(
    {
        "InternalServerError",
        "ServiceUnavailable",
        "RequestTimeout",
        "RequestTimeoutException",
        "TransactionInProgressException",
    }
)
_CONNECTION_ERRORS = (botocore_errors.ConnectionError, botocore_errors.HTTPClientError)
_CREDENTIAL_CODES = frozenset(
    {
        "AccessDeniedException",
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "ExpiredTokenException",
        "MissingAuthenticationTokenException",
    }
)
_BUSY_REASONS = frozenset(
    {"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded", "TransactionConflict"}
)

_BUSY_MESSAGE = "The note store is busy right now; retry in a few seconds."
_OUTCOME_UNKNOWN_MESSAGE = (
    "The note store did not confirm this write and is too busy to check it, so it may have been applied: "
    "read the note (get_note or get_changes_since) before writing again, or retry with the same idempotencyKey."
)
_UNCONFIRMED_MESSAGE = (
    "The note store did not confirm this write in time; reload the note before writing again, "
    "or retry with the same idempotencyKey."
)

NOTE_SK = "NOTE"
FEED_HEAD_SK = "HEAD"
FEED_RECORD_PREFIX = "SEQ#"
POINTER_PREFIX = "IDX#"
ANCHOR_PATH_END = "\\"
# Rounds of reading the feed head and committing on it before a commit contended by other writers answers busy.
HEAD_ROUNDS = 8
VERDICT_ROUNDS = 2  # sends of a transaction of verdicts: the second without the records another recorder changed
# The most a note's updatedAt can precede its commit (botocore's retries within the function's time): records more
# than this older than a time are all numbered before anything stamped at that time (`feed_start`).
STAMP_TO_COMMIT_SECONDS = 30
REVISION_PREFIX = "REV#"
WORKSPACE_SK = "WORKSPACE"
WORKSPACES_PK = "WORKSPACES"
IDEMPOTENCY_SK = "IDEM"
USAGE_PREFIX = "USAGE#"
# Counter attributes are prefixed: a counter may have any name, even one of an item's own (pk, sk, entity).
COUNTER_PREFIX = "c:"
AUTH_SK = "AUTH"


def make_client(region: str | None = None, endpoint_url: str | None = None) -> DynamoDBClient:
    """A DynamoDB client with a retry and timeout budget that fits behind API Gateway; create it once.

    From botocore's session, not boto3's: boto3 adds nothing to a low-level client but ~100 ms of imports
    (s3transfer) to every cold start (tests/bench/cold_start.py)."""
    try:
        client: DynamoDBClient = get_session().create_client(
            "dynamodb", region_name=region, endpoint_url=endpoint_url, config=CLIENT_CONFIG
        )
    except botocore_errors.NoRegionError as exc:
        raise ConfigError("No AWS region is set; set AWS_REGION to the region of the stack.") from exc
    except botocore_errors.ProfileNotFound as exc:
        raise ConfigError(f"{exc}; set AWS_PROFILE to a profile in your AWS config, or unset it.") from exc
    return client


def _setup_error(exc: Any, table: str) -> ConfigError | None:
    """A ClientError that says the configuration is wrong (table, credentials), as a one-sentence ConfigError."""
    code = _error_code(exc)
    if code == "ResourceNotFoundException":
        return ConfigError(f"There is no DynamoDB table {table} here; set --table or NOTEWELL_TABLE to the stack's.")
    if code in _CREDENTIAL_CODES:
        return ConfigError(
            f"AWS refused the credentials ({code}); set AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "to ones that can use the table."
        )
    return None


# ----- keys --------------------------------------------------------------------------------------------------


def _part(value: str) -> str:
    # '#' separates key parts: an id holding one could address another tenant's items.
    if not value or "#" in value:
        raise InvalidArgumentError(f"{value!r} is not a valid identifier; identifiers never contain '#'.")
    return value


def workspace_pk(workspace_id: str) -> str:
    return f"WS#{_part(workspace_id)}"


def note_pk(workspace_id: str, note_id: str) -> str:
    return f"WS#{_part(workspace_id)}#N#{_part(note_id)}"


def feed_pk(workspace_id: str, project_id: str) -> str:
    return f"WS#{_part(workspace_id)}#P#{_part(project_id)}"


def feed_sk(note: Note) -> str:
    return f"{note.updated_at}#{note.id}"


def lean_sk(note: Note) -> str:
    """GSI4's sort key: the feed's, then the note's branch when it has one. Keys are always projected, so the lean
    read knows the branch without a projection change (CloudFormation cannot change a GSI's projection in place);
    the order stays the feed's, since `{updatedAt}#{noteId}` alone is unique."""
    return feed_sk(note) if note.branch is None else f"{feed_sk(note)}#B#{note.branch}"


def lean_sk_branch(sk: str) -> str | None:
    """The branch `lean_sk` put in a sort key; None: the default branch. Timestamps and note ids hold no '#'."""
    parts = sk.split("#", 2)
    return parts[2].removeprefix("B#") if len(parts) == 3 and parts[2].startswith("B#") else None


def anchor_pk(workspace_id: str, project_id: str) -> str:
    return f"{feed_pk(workspace_id, project_id)}#ANCHOR"


def anchor_sk(path: str, note_id: str) -> str:
    # No anchor path holds a backslash (rules.check_anchor_path): `{path}\` begins the pointers of that file only.
    return f"{path}{ANCHOR_PATH_END}{_part(note_id)}"


def verdict_pk(workspace_id: str, project_id: str) -> str:
    return f"{feed_pk(workspace_id, project_id)}#VERDICT"


def sequence_pk(workspace_id: str, project_id: str) -> str:
    return f"{feed_pk(workspace_id, project_id)}#SEQ"


def feed_record_sk(seq: int) -> str:
    return f"{FEED_RECORD_PREFIX}{seq:012d}"


def type_status_pk(workspace_id: str, project_id: str, note_type: NoteType, status: NoteStatus) -> str:
    return f"{feed_pk(workspace_id, project_id)}#T#{_part(note_type.value)}#S#{_part(status.value)}"


def section_pk(workspace_id: str, project_id: str, section: str) -> str:
    return f"WS#{_part(workspace_id)}#P#{_part(project_id)}#S#{section}"


def attention_pk(workspace_id: str, project_id: str) -> str:
    return f"{feed_pk(workspace_id, project_id)}#ATTN"


def ref_pk(workspace_id: str, ref: str) -> str:
    return f"WS#{_part(workspace_id)}#REF#{_part(ref)}"


def note_id_of_pk(workspace_id: str, pk: str) -> str:
    """The note id a note item's `pk` (note_pk) names."""
    prefix = f"WS#{_part(workspace_id)}#N#"
    if not pk.startswith(prefix):
        raise ValueError(f"{pk!r} is not the key of a note of workspace {workspace_id}")
    return pk.removeprefix(prefix)


def usage_sk(period: str) -> str:
    return f"{USAGE_PREFIX}{_part(period)}"


def tag_rename_sk(project_id: str, old: str, new: str) -> str:
    # Tags may hold '#': hashed, they cannot address another item.
    digest = hashlib.sha256(f"{old}\n{new}".encode()).hexdigest()
    return f"TAGRENAME#{_part(project_id)}#{digest}"


def revision_sk(version: int) -> str:
    return f"{REVISION_PREFIX}{version:010d}"


def idempotency_pk(workspace_id: str, key: str) -> str:
    return f"WS#{_part(workspace_id)}#IDEM#{hashlib.sha256(key.encode()).hexdigest()}"


def auth_pk(secret_hash: str) -> str:
    return f"AUTH#{_part(secret_hash)}"


def _key(pk: str, sk: str) -> Item:
    return {"pk": _s(pk), "sk": _s(sk)}


# ----- attribute values --------------------------------------------------------------------------------------


_AUTH_PREFIX = "AUTH#"


def _record_from_item(item: Mapping[str, AttributeValueTypeDef]) -> AuthRecord:
    expires = item.get("expires_at")
    return AuthRecord(
        pk=_get_str(item, "pk").removeprefix(_AUTH_PREFIX),
        sk=_get_str(item, "sk"),
        status=_get_str(item, "status"),
        fields=json.loads(_get_str(item, "fields")),
        expires_at=None if expires is None else str(expires["S"]),
    )


def _s(value: str) -> AttributeValueTypeDef:
    return {"S": value}


def _n(value: int) -> AttributeValueTypeDef:
    return {"N": str(value)}


def _flag(value: bool) -> AttributeValueTypeDef:
    return {"BOOL": value}


def _strings(values: Iterable[str]) -> AttributeValueTypeDef:
    return {"L": [{"S": value} for value in values]}


def _get_str(item: Mapping[str, AttributeValueTypeDef], name: str) -> str:
    return str(item[name]["S"])


def _get_opt_str(item: Mapping[str, AttributeValueTypeDef], name: str) -> str | None:
    value = item.get(name)
    return None if value is None or "S" not in value else str(value["S"])


def _get_int(item: Mapping[str, AttributeValueTypeDef], name: str) -> int:
    return int(item[name]["N"])


def _get_opt_int(item: Mapping[str, AttributeValueTypeDef], name: str) -> int | None:
    value = item.get(name)
    return None if value is None or "N" not in value else int(value["N"])


def _get_flag(item: Mapping[str, AttributeValueTypeDef], name: str) -> bool:
    value = item.get(name)
    return bool(value["BOOL"]) if value is not None and "BOOL" in value else False


def _get_strings(item: Mapping[str, AttributeValueTypeDef], name: str) -> tuple[str, ...]:
    value = item.get(name)
    if value is None or "L" not in value:
        return ()
    return tuple(str(element["S"]) for element in value["L"])


def item_size(item: Mapping[str, AttributeValueTypeDef]) -> int:
    """Bytes DynamoDB counts against the 400 KB item limit: UTF-8 names and values (developer guide,
    "Item sizes and formats")."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Mapping[str, Any]) -> int:
    if "S" in value:
        return len(str(value["S"]).encode())
    if "N" in value:
        digits = str(value["N"]).lstrip("-").replace(".", "").strip("0") or "0"
        return 1 + (len(digits) + 1) // 2
    if "L" in value:
        return 3 + sum(1 + _value_size(element) for element in value["L"])
    if "M" in value:
        return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in value["M"].items())
    if "B" in value:
        return len(value["B"])
    return 1  # BOOL, NULL


# ----- conversions: domain values <-> items ------------------------------------------------------------------


def _note_fields(note: Note) -> Item:
    fields: Item = {
        "id": _s(note.id),
        "workspaceId": _s(note.workspace_id),
        "projectId": _s(note.project_id),
        "title": _s(note.title),
        "body": _s(note.body),
        "version": _n(note.version),
        "createdAt": _s(note.created_at),
        "updatedAt": _s(note.updated_at),
        "author": _s(note.author),
        "writeId": _s(note.write_id),
        "type": _s(note.type.value),
        "status": _s(note.status.value),
        "tags": _strings(note.tags),
        "links": {"L": [{"M": {"target": _s(x.target), "relation": _s(x.relation)}} for x in note.links]},
        "importance": _n(note.importance),
        "canonical": _flag(note.canonical),
        "supersedes": _strings(note.supersedes),
        "supersededBy": _strings(note.superseded_by),
    }
    if note.deleted_at is not None:
        fields["deletedAt"] = _s(note.deleted_at)
    if note.anchors:  # absent, not empty: notes without anchors keep the items they had
        fields["anchors"] = {"L": [{"M": _anchor_fields(anchor)} for anchor in note.anchors]}
    if note.branch is not None:
        fields["branch"] = _s(note.branch)
    return fields


def _anchor_fields(anchor: Anchor) -> Item:
    fields: Item = {
        "repo": _s(anchor.repo),
        "path": _s(anchor.path),
        "commit": _s(anchor.commit),
        "contentHash": _s(anchor.content_hash),
        "fileHash": _s(anchor.file_hash),
    }
    if anchor.symbol is not None:
        fields["symbol"] = _s(anchor.symbol)
    if anchor.lines is not None:
        fields["lines"] = {"L": [_n(anchor.lines.start), _n(anchor.lines.end)]}
    return fields


def _item_anchor(fields: Mapping[str, AttributeValueTypeDef]) -> Anchor:
    lines = fields.get("lines", {}).get("L")
    return Anchor(
        repo=_get_str(fields, "repo"),
        path=_get_str(fields, "path"),
        commit=_get_str(fields, "commit"),
        content_hash=_get_str(fields, "contentHash"),
        file_hash=_get_str(fields, "fileHash"),
        symbol=_get_opt_str(fields, "symbol"),
        lines=LineRange(int(lines[0]["N"]), int(lines[1]["N"])) if lines else None,
    )


def note_to_item(note: Note) -> Item:
    """The current state of a note, with its place in the project feed (GSI1), by its ref when its id has one
    (GSI5) and, while it earns them, in the type-and-status index (GSI2: live notes), the needs-attention index
    (GSI3) and the lean context index (GSI4). The one place deriving index keys: commits Put whole items, so keys
    absent here are removed from the stored note."""
    if note.full_size is not None:
        raise ValueError(f"note {note.id} was read lean (the start of its body only); it cannot be written")
    item: Item = {
        **_key(note_pk(note.workspace_id, note.id), NOTE_SK),
        "entity": _s("note"),
        **_note_fields(note),
        "excerpt": _s(rules.lean_text(note.body)),
        "bodySize": _n(len(note.body)),
        "gsi1pk": _s(feed_pk(note.workspace_id, note.project_id)),
        "gsi1sk": _s(feed_sk(note)),
    }
    if not note.is_deleted:
        item["gsi2pk"] = _s(type_status_pk(note.workspace_id, note.project_id, note.type, note.status))
        item["gsi2sk"] = _s(feed_sk(note))
    if packing.needs_attention(note):
        item["gsi3pk"] = _s(attention_pk(note.workspace_id, note.project_id))
        item["gsi3sk"] = _s(feed_sk(note))
    if packing.needs_attention(note):  # apart: get_context lists the newest of them as conflicts
        item["gsi4pk"] = _s(section_pk(note.workspace_id, note.project_id, ATTENTION_PARTITION))
        item["gsi4sk"] = _s(lean_sk(note))
    elif packing.in_live_feed(note):
        partition = note.type.value if packing.context_section(note) is not None else OTHER_PARTITION
        item["gsi4pk"] = _s(section_pk(note.workspace_id, note.project_id, partition))
        item["gsi4sk"] = _s(lean_sk(note))
    if (ref := note_ref(note.id)) is not None:  # deleted notes too: a ref names what its id names
        item["gsi5pk"] = _s(ref_pk(note.workspace_id, ref))
    return item


def _anchor_paths(note: Note | None) -> frozenset[str]:
    """The paths a note is anchored to: one pointer each (several anchors may share a file)."""
    return frozenset(anchor.path for anchor in note.anchors) if note is not None else frozenset()


def anchor_pointer_item(workspace_id: str, project_id: str, path: str, note_id: str) -> Item:
    return {
        **_key(anchor_pk(workspace_id, project_id), anchor_sk(path, note_id)),
        "entity": _s("anchor"), "noteId": _s(note_id), "path": _s(path),
    }  # fmt: skip


def verdict_to_item(workspace_id: str, record: RecordedVerdict) -> Item:
    files = [{"M": {"repo": _s(f.repo), "path": _s(f.path), "freshness": _s(f.freshness.value)}} for f in record.files]
    return {
        **_key(verdict_pk(workspace_id, record.project_id), _part(record.note_id)),
        "entity": _s("verdict"), "noteId": _s(record.note_id), "projectId": _s(record.project_id),
        "version": _n(record.version), "files": {"L": files}, "judgedAt": _s(record.judged_at),
    }  # fmt: skip


def item_to_verdict(item: Mapping[str, AttributeValueTypeDef]) -> RecordedVerdict:
    files = tuple(
        FileVerdict(_get_str(f["M"], "repo"), _get_str(f["M"], "path"), Freshness(_get_str(f["M"], "freshness")))
        for f in item.get("files", {}).get("L", [])
    )
    return RecordedVerdict(
        note_id=_get_str(item, "noteId"), project_id=_get_str(item, "projectId"), version=_get_int(item, "version"),
        files=files, judged_at=_get_str(item, "judgedAt"),
    )  # fmt: skip


# What `anchored_in_project` reads of each note: enough to list it, never its body or anchors.
HEAD_ATTRIBUTES = ("id", "title", "version", "updatedAt", "type", "status", "deletedAt", "bodySize", "branch")


def item_to_head(item: Mapping[str, AttributeValueTypeDef], workspace_id: str, project_id: str) -> Note:
    return Note(
        id=_get_str(item, "id"), workspace_id=workspace_id, project_id=project_id, title=_get_str(item, "title"),
        body="", version=_get_int(item, "version"), created_at=_get_str(item, "updatedAt"),
        updated_at=_get_str(item, "updatedAt"), author="", write_id="", type=NoteType(_get_str(item, "type")),
        status=NoteStatus(_get_str(item, "status")), deleted_at=_get_opt_str(item, "deletedAt"),
        branch=_get_opt_str(item, "branch"), full_size=_get_opt_int(item, "bodySize") or 0,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _LeanPage:
    notes: list[Note]
    last_key: Item | None  # where the partition's Query stopped (None: nothing more)


def _position(note: Note) -> tuple[str, str]:
    """A note's place in GSI order: (updatedAt, id)."""
    return (note.updated_at, note.id)


def item_to_lean_note(item: Mapping[str, AttributeValueTypeDef], workspace_id: str, project_id: str) -> Note:
    """A note as GSI4 projects it: the start of the body (`excerpt`, rules.lean_text) and its size; no creation time
    (given as its update time) or author."""
    links = item.get("links", {}).get("L", [])
    return Note(
        id=_get_str(item, "id"),
        workspace_id=workspace_id,
        project_id=project_id,
        title=_get_str(item, "title"),
        body=_get_str(item, "excerpt"),
        version=_get_int(item, "version"),
        created_at=_get_str(item, "updatedAt"),
        updated_at=_get_str(item, "updatedAt"),
        author="",
        write_id="",
        type=NoteType(_get_str(item, "type")),
        status=NoteStatus(_get_str(item, "status")),
        links=tuple(Link(_get_str(x["M"], "target"), _get_str(x["M"], "relation")) for x in links),
        importance=_get_int(item, "importance"),
        canonical=_get_flag(item, "canonical"),
        supersedes=_get_strings(item, "supersedes"),
        full_size=_get_int(item, "bodySize"),
        branch=lean_sk_branch(_get_str(item, "gsi4sk")),
    )


def revision_to_item(note: Note) -> Item:
    """A previous state of a note, kept in the note's partition; no GSI keys, so the feed skips it."""
    return {
        **_key(note_pk(note.workspace_id, note.id), revision_sk(note.version)),
        "entity": _s("revision"),
        **_note_fields(note),
    }


def item_to_note(item: Mapping[str, AttributeValueTypeDef]) -> Note:
    links = item.get("links", {}).get("L", [])
    return Note(
        id=_get_str(item, "id"),
        workspace_id=_get_str(item, "workspaceId"),
        project_id=_get_str(item, "projectId"),
        title=_get_str(item, "title"),
        body=_get_str(item, "body"),
        version=_get_int(item, "version"),
        created_at=_get_str(item, "createdAt"),
        updated_at=_get_str(item, "updatedAt"),
        author=_get_str(item, "author"),
        write_id=_get_str(item, "writeId"),
        type=NoteType(_get_str(item, "type")),
        status=NoteStatus(_get_str(item, "status")),
        tags=_get_strings(item, "tags"),
        links=tuple(Link(_get_str(x["M"], "target"), _get_str(x["M"], "relation")) for x in links),
        importance=_get_int(item, "importance"),
        canonical=_get_flag(item, "canonical"),
        supersedes=_get_strings(item, "supersedes"),
        superseded_by=_get_strings(item, "supersededBy"),
        deleted_at=_get_opt_str(item, "deletedAt"),
        anchors=tuple(_item_anchor(x["M"]) for x in item.get("anchors", {}).get("L", [])),
        branch=_get_opt_str(item, "branch"),
    )


def _workspace_fields(workspace: Workspace) -> Item:
    fields: Item = {
        "entity": _s("workspace"),
        "id": _s(workspace.id),
        "name": _s(workspace.name),
        "createdAt": _s(workspace.created_at),
        "plan": _s(workspace.plan.value),
        "revisionCap": _n(workspace.revision_cap),
    }
    if workspace.suspended_at is not None:
        fields["suspendedAt"] = _s(workspace.suspended_at)
    return fields


def workspace_to_items(workspace: Workspace) -> tuple[Item, Item]:
    """The workspace item and its copy in the WORKSPACES listing partition."""
    return (
        {**_key(workspace_pk(workspace.id), WORKSPACE_SK), **_workspace_fields(workspace)},
        {**_key(WORKSPACES_PK, workspace_pk(workspace.id)), **_workspace_fields(workspace)},
    )


def item_to_workspace(item: Mapping[str, AttributeValueTypeDef]) -> Workspace:
    return Workspace(
        id=_get_str(item, "id"),
        name=_get_str(item, "name"),
        created_at=_get_str(item, "createdAt"),
        plan=Plan(_get_str(item, "plan")),
        revision_cap=_get_int(item, "revisionCap"),
        suspended_at=_get_opt_str(item, "suspendedAt"),
    )


def project_to_item(project: Project) -> Item:
    item: Item = {
        **_key(workspace_pk(project.workspace_id), f"PROJ#{_part(project.id)}"),
        "entity": _s("project"),
        "id": _s(project.id),
        "workspaceId": _s(project.workspace_id),
        "slug": _s(project.slug),
        "createdAt": _s(project.created_at),
        "updatedAt": _s(project.updated_at),
        "summary": _s(project.summary),
        "instructions": _s(project.instructions),
    }
    if project.default_max_tokens is not None:
        item["defaultMaxTokens"] = _n(project.default_max_tokens)
    if project.context_index:
        item["contextIndex"] = _n(project.context_index)
    item.update(_branch_record(project))
    return item


def _branch_record(project: Project) -> Item:
    """The project's branch record (domain/branches.py) as attributes; absent while it is the default one."""
    return {
        **({"defaultBranch": _s(project.default_branch)} if project.default_branch != "main" else {}),
        **({"mergedBranches": {"L": [_s(b) for b in project.merged_branches]}} if project.merged_branches else {}),
    }


def slug_to_item(project: Project) -> Item:
    return {
        **_key(workspace_pk(project.workspace_id), f"SLUG#{_part(project.slug)}"),
        "entity": _s("slug"),
        "projectId": _s(project.id),
    }


def item_to_project(item: Mapping[str, AttributeValueTypeDef]) -> Project:
    return Project(
        id=_get_str(item, "id"),
        workspace_id=_get_str(item, "workspaceId"),
        slug=_get_str(item, "slug"),
        created_at=_get_str(item, "createdAt"),
        updated_at=_get_str(item, "updatedAt"),
        summary=_get_opt_str(item, "summary") or "",
        instructions=_get_opt_str(item, "instructions") or "",
        default_max_tokens=_get_opt_int(item, "defaultMaxTokens"),
        # `contextIndexed` (a flag): written by the version whose lean index had no attention partition (layout 1).
        context_index=_get_opt_int(item, "contextIndex") or (1 if _get_flag(item, "contextIndexed") else 0),
        default_branch=_get_opt_str(item, "defaultBranch") or "main",
        merged_branches=tuple(x["S"] for x in item.get("mergedBranches", {}).get("L", [])),
    )


def key_to_items(key: ApiKey) -> tuple[Item, Item]:
    """The API key item and the secret lookup pointing at it."""
    item: Item = {
        **_key(workspace_pk(key.workspace_id), f"KEY#{_part(key.id)}"),
        "entity": _s("key"),
        "id": _s(key.id),
        "workspaceId": _s(key.workspace_id),
        "name": _s(key.name),
        "secretHash": _s(key.secret_hash),
        "createdAt": _s(key.created_at),
        "readOnly": _flag(key.read_only),
        "hint": _s(key.hint),
    }
    if key.project_id is not None:
        item["projectId"] = _s(key.project_id)
    if key.revoked_at is not None:
        item["revokedAt"] = _s(key.revoked_at)
    lookup: Item = {
        **_key(auth_pk(key.secret_hash), AUTH_SK),
        "entity": _s("auth"),
        "workspaceId": _s(key.workspace_id),
        "keyId": _s(key.id),
    }
    return item, lookup


def item_to_key(item: Mapping[str, AttributeValueTypeDef]) -> ApiKey:
    return ApiKey(
        id=_get_str(item, "id"),
        workspace_id=_get_str(item, "workspaceId"),
        name=_get_str(item, "name"),
        secret_hash=_get_str(item, "secretHash"),
        created_at=_get_str(item, "createdAt"),
        project_id=_get_opt_str(item, "projectId"),
        read_only=_get_flag(item, "readOnly"),
        revoked_at=_get_opt_str(item, "revokedAt"),
        hint=_get_opt_str(item, "hint") or "",
    )


def idempotency_to_item(record: IdempotencyRecord) -> Item:
    result: dict[str, AttributeValueTypeDef] = {
        name: _n(int(value)) if isinstance(value, int) else _s(value) for name, value in record.result.items()
    }
    return {
        **_key(idempotency_pk(record.workspace_id, record.key), IDEMPOTENCY_SK),
        "entity": _s("idempotency"),
        "workspaceId": _s(record.workspace_id),
        "key": _s(record.key),
        "requestHash": _s(record.request_hash),
        "result": {"M": result},
        "recordedAt": _s(record.recorded_at),
        "expiresAt": _s(record.expires_at),
        # DynamoDB's TTL deletes "typically within a few days": expiresAt is what the code checks.
        "ttl": _n(int(rules.parse_ts(record.expires_at).timestamp())),
    }


def item_to_idempotency(item: Mapping[str, AttributeValueTypeDef]) -> IdempotencyRecord:
    stored: Mapping[str, AttributeValueTypeDef] = item.get("result", {}).get("M", {})
    result: dict[str, str | int] = {
        name: int(value["N"]) if "N" in value else str(value["S"]) for name, value in stored.items()
    }
    return IdempotencyRecord(
        workspace_id=_get_str(item, "workspaceId"),
        key=_get_str(item, "key"),
        request_hash=_get_str(item, "requestHash"),
        result=result,
        recorded_at=_get_str(item, "recordedAt"),
        expires_at=_get_str(item, "expiresAt"),
    )


# ----- vendor errors -----------------------------------------------------------------------------------------


def _error_code(exc: Any) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _is_size_error(message: str) -> bool:
    # DynamoDB reports oversize items and transactions only as ValidationException text.
    text = message.lower()
    return "size" in text and ("exceed" in text or "larger than" in text or "too large" in text)


def _too_large(detail: str) -> TooLargeError:
    return TooLargeError(
        f"{detail}; DynamoDB stores at most {MAX_ITEM_BYTES // 1024} KB per note and "
        f"{MAX_TRANSACTION_BYTES // (1024 * 1024)} MB per change: shorten the note or split the change."
    )


class _UnconfirmedWriteError(UnavailableError):
    """A write whose outcome is unknown (timeout, 5xx): it may have been applied."""

    def __init__(self) -> None:
        super().__init__(_UNCONFIRMED_MESSAGE, retry_after=RETRY_AFTER_SECONDS)


def _translate(exc: Any, *, writing: bool) -> NotewellError | None:
    """The domain error for a botocore ClientError, or None when the caller must decide."""
    code = _error_code(exc)
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    if code in _THROTTLING_CODES:
        return UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)
    if code in _AMBIGUOUS_CODES or status >= 500:
        return _UnconfirmedWriteError() if writing else UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)
    message = str(exc.response.get("Error", {}).get("Message", ""))
    if code == "ValidationException" and _is_size_error(message):
        return _too_large("The change is too large to store")
    return None


@dataclass(frozen=True, slots=True)
class _Position:
    """What one action of a commit transaction stands for, to read its cancellation reason."""

    kind: Literal["note", "revision", "prune", "anchor", "idempotency", "head", "change"]
    write: NoteWrite | None = None


def _import_batches(notes: Sequence[Note], prepared: Mapping[str, tuple[Item, list[Item]]]) -> Iterator[list[Note]]:
    """Notes in groups one commit can take: two actions each (note, change record) and one per anchored path, plus
    the head, within the transaction's action and byte limits."""
    batch: list[Note] = []
    size = actions = 0
    for note in notes:
        paths = _anchor_paths(note)
        item_bytes = item_size(prepared[note.id][0]) + 200 * (1 + len(paths))  # its change record and pointers
        needed = 2 + len(paths)
        if batch and (actions + needed + 1 > MAX_TRANSACTION_ACTIONS or size + item_bytes > MAX_TRANSACTION_BYTES // 2):
            yield batch
            batch, size, actions = [], 0, 0
        batch.append(note)
        size += item_bytes
        actions += needed
    if batch:
        yield batch


class _HeadMovedError(Exception):
    """Another commit took the feed head's next number first: read it again and commit on the new one."""


@dataclass(frozen=True, slots=True)
class _FeedHead:
    """A project's feed head as read: the last number handed out, whether the sequence holds every note of the
    project (`complete`), and whether the item exists yet."""

    seq: int
    complete: bool
    exists: bool


def _is_own_note(old: Mapping[str, AttributeValueTypeDef], write: NoteWrite) -> bool:
    # The writeId rule: the stored note carries our writeId at the version our write produces. The whole
    # state must match too: two writes may share a writeId (an idempotency key), never their whole content.
    produced = 1 if write.expected_version is None else write.expected_version + 1
    if _get_opt_str(old, "writeId") != write.note.write_id or _get_opt_int(old, "version") != produced:
        return False
    return item_to_note(old) == write.note


def _is_own_record(old: Mapping[str, AttributeValueTypeDef], record: IdempotencyRecord) -> bool:
    stored = item_to_idempotency(old)
    return (stored.request_hash, stored.recorded_at, stored.result) == (
        record.request_hash,
        record.recorded_at,
        record.result,
    )


class _RetryableCancellationError(Exception):
    """A transaction was cancelled by contention or throttling only; sending it again may succeed."""

    def __init__(self, position: int | None, throttled: bool) -> None:
        super().__init__("transaction cancelled by contention")
        self.position = position
        self.throttled = throttled


# ----- the store ---------------------------------------------------------------------------------------------


class DynamoDBStore:
    """Workspaces, projects, notes, revisions, idempotency records and API keys in one DynamoDB table."""

    def __init__(self, client: DynamoDBClient, table_name: str, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self._client = client
        self._table = table_name
        self._sleep = sleep

    @property
    def client(self) -> DynamoDBClient:
        return self._client

    @property
    def table_name(self) -> str:
        return self._table

    # ----- OAuth state -----------------------------------------------------------------------------------------
    # Items `AUTH#<pk>` / `<sk>` in the same table, with `ttl` so DynamoDB removes them once expired (the service
    # checks expiry itself: TTL deletion lags).

    def get_record(self, pk: str, sk: str) -> AuthRecord | None:
        item = self._get(_key(_AUTH_PREFIX + pk, sk))
        return None if item is None else _record_from_item(item)

    def records_under(self, pk: str) -> list[AuthRecord]:
        items = self._query(
            {
                "TableName": self._table,
                "KeyConditionExpression": "pk = :pk",
                "ExpressionAttributeValues": {":pk": _s(_AUTH_PREFIX + pk)},
                "ConsistentRead": True,
            }  # fmt: skip
        )
        return [_record_from_item(item) for item in items]

    def write_records(self, writes: Sequence[RecordWrite]) -> int | None:
        actions: list[TransactWriteItemTypeDef] = [self._record_action(write) for write in writes]
        try:
            with self._vendor_errors(writing=True):
                # One request token: botocore's own retry of a commit whose reply was lost is then a no-op success.
                self._client.transact_write_items(TransactItems=actions, ClientRequestToken=uuid.uuid4().hex)
        except botocore_errors.ClientError as exc:
            if _error_code(exc) != "TransactionCanceledException":
                raise
            reasons = exc.response.get("CancellationReasons", [])
            failed = [i for i, reason in enumerate(reasons) if reason.get("Code") == "ConditionalCheckFailed"]
            if failed:
                return failed[0]
            raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS) from exc  # a concurrent write
        except _UnconfirmedWriteError as exc:
            raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS) from exc
        return None

    def _record_action(self, write: RecordWrite) -> TransactWriteItemTypeDef:
        record = write.record
        key = _key(_AUTH_PREFIX + record.pk, record.sk)
        condition: dict[str, Any] = {}
        if write.condition == ABSENT:
            condition = {"ConditionExpression": "attribute_not_exists(pk)"}
        elif write.condition != ANY:
            condition = {
                "ConditionExpression": "#status = :status", "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {":status": _s(write.condition)},
            }  # fmt: skip
        if write.delete:
            return {"Delete": {"TableName": self._table, "Key": key, **condition}}  # type: ignore[typeddict-item]
        item: Item = {**key, "status": _s(record.status), "fields": _s(json.dumps(dict(record.fields)))}
        if record.expires_at is not None:
            item["expires_at"] = _s(record.expires_at)
            item["ttl"] = _n(int(rules.parse_ts(record.expires_at).timestamp()) + 1)
        return {"Put": {"TableName": self._table, "Item": item, **condition}}  # type: ignore[typeddict-item]

    # ----- workspaces ----------------------------------------------------------------------------------------

    def create_workspace(self, workspace: Workspace) -> None:
        """Raises: AlreadyExistsError: a workspace with this id exists."""
        item, listed = workspace_to_items(workspace)
        actions: list[TransactWriteItemTypeDef] = [
            {"Put": self._put_new(item, return_old=True)},
            {"Put": self._put_new(listed)},
        ]
        for attempt in range(TRANSACTION_ATTEMPTS):
            reasons = self._transact_once(actions)
            if reasons is None:
                return
            if any(reason.get("Code") == "ConditionalCheckFailed" for reason in reasons):
                old = reasons[0].get("Item")
                if old is not None and item_to_workspace(old) == workspace:
                    return  # our own earlier attempt landed
                raise AlreadyExistsError(f"Workspace {workspace.id} already exists; create it under a new id.")
            self._backoff(attempt)
        raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        item = self._get(_key(workspace_pk(workspace_id), WORKSPACE_SK))
        return None if item is None else item_to_workspace(item)

    def list_workspaces(self) -> list[Workspace]:
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(WORKSPACES_PK)},
            "ConsistentRead": True,
        }
        return [item_to_workspace(item) for item in self._query(params)]

    def set_plan(self, workspace_id: str, plan: Plan, revision_cap: int) -> Workspace | None:
        """Both copies of the workspace (its item and its WORKSPACES listing) change in one transaction."""
        return self._update_workspace(
            workspace_id,
            "SET #plan = :plan, #cap = :cap",
            {"#plan": "plan", "#cap": "revisionCap"},
            {":plan": _s(Plan(plan).value), ":cap": _n(revision_cap)},
            lambda current: (current.plan, current.revision_cap) == (plan, revision_cap),
        )

    def set_suspended(self, workspace_id: str, suspended_at: str | None) -> Workspace | None:
        if suspended_at is None:
            return self._update_workspace(
                workspace_id, "REMOVE #at", {"#at": "suspendedAt"}, None, lambda w: w.suspended_at is None
            )
        return self._update_workspace(
            workspace_id, "SET #at = :at", {"#at": "suspendedAt"}, {":at": _s(suspended_at)},
            lambda w: w.suspended_at == suspended_at,
        )  # fmt: skip

    def _update_workspace(
        self,
        workspace_id: str,
        expression: str,
        names: dict[str, str],
        values: dict[str, AttributeValueTypeDef] | None,
        landed: Callable[[Workspace], bool],
    ) -> Workspace | None:
        """One update of both copies of the workspace (its item and its WORKSPACES listing), in one transaction;
        `landed` tells whether an unconfirmed attempt took effect. None when there is no such workspace."""

        def update(key: Item) -> UpdateTypeDef:
            action: UpdateTypeDef = {
                "TableName": self._table,
                "Key": key,
                "UpdateExpression": expression,
                "ConditionExpression": "attribute_exists(pk)",  # never create a partial workspace
                "ExpressionAttributeNames": names,
            }
            if values:
                action["ExpressionAttributeValues"] = values
            return action

        actions: list[TransactWriteItemTypeDef] = [
            {"Update": update(_key(workspace_pk(workspace_id), WORKSPACE_SK))},
            {"Update": update(_key(WORKSPACES_PK, workspace_pk(workspace_id)))},
        ]
        for attempt in range(TRANSACTION_ATTEMPTS):
            if attempt:
                self._backoff(attempt - 1)
            try:
                reasons = self._transact_once(actions, writing=True)
            except _UnconfirmedWriteError as unconfirmed:
                current = self.get_workspace(workspace_id)
                if current is not None and landed(current):
                    return current
                raise UnavailableError(unconfirmed.message, retry_after=unconfirmed.retry_after) from unconfirmed
            if reasons is None:
                return self.get_workspace(workspace_id)
            if any(reason.get("Code") == "ConditionalCheckFailed" for reason in reasons):
                return None  # no such workspace
        raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    def add_usage(self, workspace_id: str, period: str, deltas: Mapping[str, int]) -> None:
        """One UpdateItem of `ADD`s on the period's usage item (the first one creates it).

        An ADD is not idempotent: a request whose reply was lost and that botocore sends again counts twice. That
        errs by at most one flush of counts, rarely; exact billing would need one conditional item per flush.
        """
        counters = list(deltas.items())
        for start in range(0, len(counters), MAX_USAGE_COUNTERS):
            names = {"#entity": "entity"}
            values: dict[str, AttributeValueTypeDef] = {":entity": _s("usage")}
            adds: list[str] = []
            for index, (counter, value) in enumerate(counters[start : start + MAX_USAGE_COUNTERS]):
                names[f"#c{index}"] = COUNTER_PREFIX + counter
                values[f":v{index}"] = _n(int(value))
                adds.append(f"#c{index} :v{index}")
            with self._vendor_errors(writing=True):
                self._client.update_item(
                    TableName=self._table,
                    Key=_key(workspace_pk(workspace_id), usage_sk(period)),
                    UpdateExpression="SET #entity = :entity ADD " + ", ".join(adds),
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )

    def usage(self, workspace_id: str, periods: Sequence[str]) -> dict[str, dict[str, int]]:
        """Strongly consistent BatchGetItem of the periods' usage items (100 per request)."""
        unique = list(dict.fromkeys(periods))  # BatchGetItem refuses duplicate keys
        found: dict[str, dict[str, int]] = {}
        for start in range(0, len(unique), MAX_BATCH_GET_KEYS):
            keys = [_key(workspace_pk(workspace_id), usage_sk(p)) for p in unique[start : start + MAX_BATCH_GET_KEYS]]
            for item in self._batch_get(keys):
                counters = {
                    name[len(COUNTER_PREFIX) :]: int(value["N"])
                    for name, value in item.items()
                    if name.startswith(COUNTER_PREFIX) and "N" in value
                }
                if counters:
                    found[_get_str(item, "sk")[len(USAGE_PREFIX) :]] = counters
        return found

    # ----- projects ------------------------------------------------------------------------------------------

    def get_project(self, workspace_id: str, slug: str) -> Project | None:
        pointer = self._get(_key(workspace_pk(workspace_id), f"SLUG#{_part(slug)}"))
        if pointer is None:
            return None
        project = self.get_project_by_id(workspace_id, _get_str(pointer, "projectId"))
        # Two reads: a rename landing between them must not make the old slug resolve.
        return project if project is not None and project.slug == slug else None

    def get_project_by_id(self, workspace_id: str, project_id: str) -> Project | None:
        item = self._get(_key(workspace_pk(workspace_id), f"PROJ#{_part(project_id)}"))
        return None if item is None else item_to_project(item)

    def create_project(self, project: Project) -> Project:
        actions: list[TransactWriteItemTypeDef] = [
            {"Put": self._put_new(slug_to_item(project), return_old=True)},
            {"Put": self._put_new(project_to_item(project))},
        ]
        for attempt in range(TRANSACTION_ATTEMPTS):
            reasons = self._transact_once(actions)
            if reasons is None:
                return project
            slug_reason, project_reason = reasons[0], reasons[1]
            if slug_reason.get("Code") == "ConditionalCheckFailed":
                old = slug_reason.get("Item")
                holder = _get_opt_str(old, "projectId") if old is not None else None
                if holder == project.id:
                    return project  # our own earlier attempt landed
                existing = (
                    self.get_project_by_id(project.workspace_id, holder)
                    if holder is not None
                    else self.get_project(project.workspace_id, project.slug)
                )
                if existing is not None:
                    return existing
            elif project_reason.get("Code") == "ConditionalCheckFailed":
                raise AlreadyExistsError(f"Project id {project.id} is already in use; retry to get a new id.")
            self._backoff(attempt)
        raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    def save_project(self, project: Project, *, expected: Project | None = None) -> bool:
        names = {"#summary": "summary", "#instructions": "instructions", "#updated": "updatedAt"}
        values: dict[str, AttributeValueTypeDef] = {
            ":summary": _s(project.summary),
            ":instructions": _s(project.instructions),
            ":updated": _s(project.updated_at),
        }
        expression = "SET #summary = :summary, #instructions = :instructions, #updated = :updated"
        names.update({"#default": "defaultBranch", "#merged": "mergedBranches"})
        record = _branch_record(project)
        for name, placeholder in (("#default", ":default"), ("#merged", ":merged")):
            if names[name] in record:
                expression += f", {name} = {placeholder}"
                values[placeholder] = record[names[name]]
        removed = [name for name in ("#default", "#merged") if names[name] not in record]
        names["#tokens"] = "defaultMaxTokens"
        if project.default_max_tokens is None:
            removed.append("#tokens")
        else:
            expression += ", #tokens = :tokens"
            values[":tokens"] = _n(project.default_max_tokens)
        if removed:
            expression += " REMOVE " + ", ".join(removed)
        # Never create a partial project item from an update.
        condition = "attribute_exists(pk)"
        if expected is not None:
            # Compare-and-set on the state that was read: a concurrent update or rename changed one of these.
            names["#slug"] = "slug"
            values.update(
                {
                    ":old_slug": _s(expected.slug),
                    ":old_summary": _s(expected.summary),
                    ":old_instructions": _s(expected.instructions),
                    ":old_updated": _s(expected.updated_at),
                }
            )
            condition += " AND #slug = :old_slug AND #updated = :old_updated"
            # Older items may lack the text fields; they read as "".
            for name, value in (("#summary", expected.summary), ("#instructions", expected.instructions)):
                old = f":old_{name[1:]}"
                condition += f" AND ({name} = {old}" + (f" OR attribute_not_exists({name}))" if not value else ")")
            if expected.default_max_tokens is None:
                condition += " AND attribute_not_exists(#tokens)"
            else:
                condition += " AND #tokens = :old_tokens"
                values[":old_tokens"] = _n(expected.default_max_tokens)
        try:
            with self._vendor_errors(writing=True):
                self._client.update_item(
                    TableName=self._table,
                    Key=_key(workspace_pk(project.workspace_id), f"PROJ#{_part(project.id)}"),
                    UpdateExpression=expression,
                    ConditionExpression=condition,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues=values,
                )
        except botocore_errors.ClientError as exc:
            if _error_code(exc) != "ConditionalCheckFailedException":
                raise
            return False  # gone, or changed since `expected` was read: nothing written
        return True

    def refresh_note_items(self, workspace_id: str, notes: Sequence[Note]) -> int:
        rewritten = 0
        for note in notes:
            if note.workspace_id != workspace_id:
                raise ValueError(f"note {note.id} is not of workspace {workspace_id}")
            try:
                with self._vendor_errors(writing=True):
                    self._client.put_item(
                        TableName=self._table,
                        Item=note_to_item(note),
                        ConditionExpression="#version = :version AND #writeId = :writeId",
                        ExpressionAttributeNames={"#version": "version", "#writeId": "writeId"},
                        ExpressionAttributeValues={":version": _n(note.version), ":writeId": _s(note.write_id)},
                    )
            except botocore_errors.ClientError as exc:
                if _error_code(exc) != "ConditionalCheckFailedException":
                    raise
                continue  # changed since it was read: its newer write carries every key
            # Its anchor pointers too: a note anchored before they existed gains them here.
            self._batch_write([
                anchor_pointer_item(workspace_id, note.project_id, path, note.id) for path in _anchor_paths(note)
            ])  # fmt: skip
            rewritten += 1
        return rewritten

    def mark_context_indexed(self, workspace_id: str, project_id: str, layout: int) -> None:
        with self._vendor_errors(writing=True):
            self._client.update_item(
                TableName=self._table,
                Key=_key(workspace_pk(workspace_id), f"PROJ#{_part(project_id)}"),
                UpdateExpression="SET contextIndex = :layout REMOVE contextIndexed",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues={":layout": _n(layout)},
            )

    def get_pointer(self, workspace_id: str, note_id: str, index: str) -> IndexPointer | None:
        item = self._get(_key(note_pk(workspace_id, note_id), f"{POINTER_PREFIX}{index}"))
        if item is None:
            return None
        return IndexPointer(
            workspace_id, note_id, index, _get_int(item, "version"), _get_opt_str(item, "docId"),
            _get_flag(item, "vectored"),
        )  # fmt: skip

    def put_pointer(self, pointer: IndexPointer) -> bool:
        item: Item = {
            **_key(note_pk(pointer.workspace_id, pointer.note_id), f"{POINTER_PREFIX}{pointer.index}"),
            "entity": _s("pointer"),
            "version": _n(pointer.version),
            "rank": _n(pointer.rank),
            "vectored": {"BOOL": pointer.vectored},
        }
        if pointer.doc_id is not None:
            item["docId"] = _s(pointer.doc_id)
        try:
            with self._vendor_errors(writing=True):
                self._client.put_item(
                    TableName=self._table,
                    Item=item,
                    ConditionExpression="attribute_not_exists(#rank) OR #rank < :rank",
                    ExpressionAttributeNames={"#rank": "rank"},
                    ExpressionAttributeValues={":rank": _n(pointer.rank)},
                )
        except botocore_errors.ClientError as exc:
            if _error_code(exc) != "ConditionalCheckFailedException":
                raise
            return False
        return True

    def get_tag_rename(self, workspace_id: str, project_id: str, old: str, new: str) -> TagRenameProgress | None:
        item = self._get(_key(workspace_pk(workspace_id), tag_rename_sk(project_id, old, new)))
        if item is None:
            return None
        position = FeedPosition(_get_str(item, "afterUpdatedAt"), _get_str(item, "afterId"))
        return TagRenameProgress(_get_str(item, "horizon"), position)

    def save_tag_rename(
        self, workspace_id: str, project_id: str, old: str, new: str, progress: TagRenameProgress | None
    ) -> None:
        key = _key(workspace_pk(workspace_id), tag_rename_sk(project_id, old, new))
        # Unconditioned on purpose: progress is a hint (ports.ProjectStore.save_tag_rename), never a condition.
        with self._vendor_errors(writing=True):
            if progress is None:
                self._client.delete_item(TableName=self._table, Key=key)
            else:
                item: Item = {
                    **key,
                    "entity": _s("tag_rename"),
                    "projectId": _s(project_id),
                    "horizon": _s(progress.horizon),
                    "afterUpdatedAt": _s(progress.position.updated_at),
                    "afterId": _s(progress.position.note_id),
                }
                self._client.put_item(TableName=self._table, Item=item)

    def list_projects(self, workspace_id: str) -> list[Project]:
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": _s(workspace_pk(workspace_id)), ":prefix": _s("PROJ#")},
            "ConsistentRead": True,
        }
        return [item_to_project(item) for item in self._query(params)]

    def rename_project(self, workspace_id: str, project_id: str, new_slug: str, updated_at: str) -> Project:
        """One TransactWriteItems: Delete the old slug (condition: it points at the project), Put the new slug
        (attribute_not_exists), Update the project (condition: it still has the old slug). A rename applied earlier
        (a retry, or a resend after a lost reply) finds the project at `new_slug` and returns it."""
        new_sk = f"SLUG#{_part(new_slug)}"
        for attempt in range(TRANSACTION_ATTEMPTS):
            project = self.get_project_by_id(workspace_id, project_id)
            if project is None:
                raise NotFoundError(f"Project {project_id} does not exist; list the projects to find its id.")
            if project.slug == new_slug:
                return project
            renamed = replace(project, slug=new_slug, updated_at=updated_at)
            actions: list[TransactWriteItemTypeDef] = [
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": _key(workspace_pk(workspace_id), f"SLUG#{_part(project.slug)}"),
                        "ConditionExpression": "#project = :project",
                        "ExpressionAttributeNames": {"#project": "projectId"},
                        "ExpressionAttributeValues": {":project": _s(project_id)},
                    }
                },
                {"Put": self._put_new(slug_to_item(renamed), return_old=True)},
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": _key(workspace_pk(workspace_id), f"PROJ#{_part(project_id)}"),
                        "UpdateExpression": "SET #slug = :new, #updated = :updated",
                        # Fails on a missing item too: a comparison with an absent attribute is false.
                        "ConditionExpression": "#slug = :old",
                        "ExpressionAttributeNames": {"#slug": "slug", "#updated": "updatedAt"},
                        "ExpressionAttributeValues": {
                            ":old": _s(project.slug),
                            ":new": _s(new_slug),
                            ":updated": _s(updated_at),
                        },
                    }
                },
            ]
            try:
                reasons = self._transact_once(actions, writing=True)
            except _UnconfirmedWriteError as unconfirmed:
                current = self.get_project_by_id(workspace_id, project_id)
                if current is not None and current.slug == new_slug:
                    return current
                raise UnavailableError(unconfirmed.message, retry_after=unconfirmed.retry_after) from unconfirmed
            if reasons is None:
                return renamed
            codes = [str(reason.get("Code", "None")) for reason in reasons]
            if codes[1] == "ConditionalCheckFailed":
                holder = _get_opt_str(reasons[1].get("Item") or {}, "projectId")
                if holder is None:
                    pointer = self._get(_key(workspace_pk(workspace_id), new_sk))
                    holder = None if pointer is None else _get_opt_str(pointer, "projectId")
                if holder != project_id:
                    raise AlreadyExistsError(
                        f"Another project already uses the slug {new_slug!r}; choose another slug."
                    )
                continue  # our own rename landed earlier: the next read finds the project renamed
            if "ConditionalCheckFailed" in codes:
                continue  # the project changed since it was read: read it again
            if "ValidationError" in codes:
                message = " ".join(str(r.get("Message", "")) for r in reasons if r.get("Code") == "ValidationError")
                raise InvalidArgumentError(f"The note store refused this rename: {message}")
            self._backoff(attempt)
        current = self.get_project_by_id(workspace_id, project_id)
        if current is not None and current.slug == new_slug:
            return current  # the last attempt found the rename applied
        raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    # ----- notes ---------------------------------------------------------------------------------------------

    def get_note(self, workspace_id: str, note_id: str) -> Note | None:
        item = self._get(_key(note_pk(workspace_id, note_id), NOTE_SK))
        return None if item is None else item_to_note(item)

    def get_notes(self, workspace_id: str, note_ids: Sequence[str]) -> dict[str, Note]:
        unique = list(dict.fromkeys(note_ids))  # BatchGetItem refuses duplicate keys
        found: dict[str, Note] = {}
        for start in range(0, len(unique), MAX_BATCH_GET_KEYS):
            keys = [_key(note_pk(workspace_id, i), NOTE_SK) for i in unique[start : start + MAX_BATCH_GET_KEYS]]
            for item in self._batch_get(keys):
                note = item_to_note(item)
                found[note.id] = note
        return found

    def ids_with_ref(self, workspace_id: str, ref: str, *, limit: int) -> list[str]:
        """One GSI5 Query (more pages only past 1 MB of keys, thousands of notes): the index has no sort key, so
        when more than `limit` notes share the ref, which `limit` of them come back is the index's choice."""
        if limit < 1:
            return []
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": GSI5,
            "KeyConditionExpression": "gsi5pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(ref_pk(workspace_id, ref))},
        }
        return sorted(note_id_of_pk(workspace_id, _get_str(item, "pk")) for item in self._query(params, limit=limit))

    def commit(
        self,
        workspace_id: str,
        writes: Sequence[NoteWrite],
        *,
        revision_cap: int,
        idempotency: IdempotencyRecord | None = None,
    ) -> None:
        if not writes and idempotency is None:
            return
        projects = list(dict.fromkeys(write.note.project_id for write in writes))
        for _ in range(HEAD_ROUNDS):
            heads = {project_id: self._feed_head(workspace_id, project_id) for project_id in projects}
            actions, positions = self._commit_actions(workspace_id, writes, revision_cap, idempotency, heads)
            try:
                self._commit_once(workspace_id, writes, idempotency, actions, positions)
                return
            except _HeadMovedError:
                continue  # another commit took the number: read the head again
        raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    def _commit_once(
        self,
        workspace_id: str,
        writes: Sequence[NoteWrite],
        idempotency: IdempotencyRecord | None,
        actions: list[TransactWriteItemTypeDef],
        positions: list[_Position],
    ) -> None:
        busy: _RetryableCancellationError | None = None
        for attempt in range(TRANSACTION_ATTEMPTS):
            if attempt:
                self._backoff(attempt - 1)
            try:
                reasons = self._transact_once(actions, writing=True)
            except _UnconfirmedWriteError as unconfirmed:
                # Timeouts and 5xx leave the outcome open: the transaction may have been applied.
                try:
                    applied = self._was_applied(workspace_id, writes, idempotency)
                except UnavailableError as unread:
                    # Still open: "busy, retry" here would make a key-less retry write the note twice.
                    raise OutcomeUnknownError(_OUTCOME_UNKNOWN_MESSAGE, retry_after=RETRY_AFTER_SECONDS) from unread
                if applied:
                    return
                raise UnavailableError(unconfirmed.message, retry_after=unconfirmed.retry_after) from unconfirmed
            if reasons is None:
                return
            try:
                self._settle_cancellation(workspace_id, reasons, positions, idempotency)
                return  # the reasons show this very commit was applied earlier
            except _RetryableCancellationError as retryable:
                busy = retryable
        assert busy is not None
        if busy.throttled:
            raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)
        raise self._conflict_after_contention(workspace_id, positions, busy.position)

    def list_revisions(
        self, workspace_id: str, note_id: str, *, limit: int, before_version: int | None = None
    ) -> list[Note]:
        if limit < 1 or (before_version is not None and before_version <= 1):
            return []
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "ScanIndexForward": False,
            "ConsistentRead": True,
        }
        if before_version is None:
            params["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :prefix)"
            params["ExpressionAttributeValues"] = {
                ":pk": _s(note_pk(workspace_id, note_id)),
                ":prefix": _s(REVISION_PREFIX),
            }
        else:
            # One sort-key condition per Query: BETWEEN keeps `sk < REV#{before}` from reaching NOTE.
            params["KeyConditionExpression"] = "pk = :pk AND sk BETWEEN :low AND :high"
            params["ExpressionAttributeValues"] = {
                ":pk": _s(note_pk(workspace_id, note_id)),
                ":low": _s(REVISION_PREFIX),
                ":high": _s(revision_sk(before_version - 1)),
            }
        return [item_to_note(item) for item in self._query(params, limit=limit)]

    def get_revision(self, workspace_id: str, note_id: str, version: int) -> Note | None:
        if version < 1:
            return None
        item = self._get(_key(note_pk(workspace_id, note_id), revision_sk(version)))
        return None if item is None else item_to_note(item)

    def get_idempotency(self, workspace_id: str, key: str) -> IdempotencyRecord | None:
        item = self._get(_key(idempotency_pk(workspace_id, key), IDEMPOTENCY_SK))
        return None if item is None else item_to_idempotency(item)

    def project_notes(self, workspace_id: str, project_id: str, *, limit: int) -> list[Note]:
        if limit < 1:
            return []
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": GSI1,
            "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(feed_pk(workspace_id, project_id))},
            "ScanIndexForward": False,
        }
        return [item_to_note(item) for item in self._query(params, limit=limit)]

    def notes_by_type(
        self,
        workspace_id: str,
        project_id: str,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        *,
        limit: int,
    ) -> list[Note]:
        if limit < 1:
            return []
        # One Query per (type, status) pair, each at most `limit` newest: the merge's first `limit` are the answer.
        found: list[Note] = []
        for note_type in dict.fromkeys(NoteType(t) for t in types):
            for status in dict.fromkeys(NoteStatus(s) for s in statuses):
                params: QueryInputTypeDef = {
                    "TableName": self._table,
                    "IndexName": GSI2,
                    "KeyConditionExpression": "gsi2pk = :pk",
                    "ExpressionAttributeValues": {
                        ":pk": _s(type_status_pk(workspace_id, project_id, note_type, status))
                    },
                    "ScanIndexForward": False,
                }
                found.extend(item_to_note(item) for item in self._query(params, limit=limit))
        found.sort(key=lambda note: (note.updated_at, note.id), reverse=True)
        return found[:limit]

    def changes_after(
        self,
        workspace_id: str,
        project_id: str,
        after: FeedPosition | None,
        *,
        horizon: str,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        limit: int,
    ) -> ChangeScan:
        """GSI1 (the project feed, `gsi1sk = {updatedAt}#{noteId}`) read oldest first from `gsi1sk > after`.

        Requests: at most FEED_PAGE_BUDGET Queries, each with Limit <= FEED_PAGE_ITEMS (and DynamoDB's 1 MB), so
        at most 800 index entries are examined per call, whatever the project's size; never a Scan. Without
        filters a page asks for `limit` + 1 items (the extra one tells `more`), so `limit` < 100 costs one Query.
        With filters a page asks for max(2 * `limit`, FEED_FILTERED_PAGE_ITEMS), up to FEED_PAGE_ITEMS.

        Types and statuses are filtered here, not with a FilterExpression: a FilterExpression hides the items it
        drops (while Limit still counts them), so a dropped item past the horizon could not be seen. Seeing every
        item, the first one past the horizon ends the read exactly: the feed is ascending, all after it is newer
        too. Filtered-out items cost the same read capacity either way; only their bytes on the wire are extra.

        `position` is the last item examined at or before the horizon, matching or not (`after` when none), so
        the next call never examines a filtered-out item again; `more` is True when the read stopped at `limit`
        matches with items left, or spent its page budget (then `notes` may be empty). `settling` is True when a
        matching item past the horizon is in the last page, or when the page stopped at the horizon and more items
        follow it unread (conservative: they may match).

        Raises:
            ValueError: `limit` is below 1.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        wanted_types = frozenset(NoteType(t).value for t in types)
        wanted_statuses = frozenset(NoteStatus(s).value for s in statuses)

        def matches(item: Mapping[str, AttributeValueTypeDef]) -> bool:
            return (not wanted_types or _get_str(item, "type") in wanted_types) and (
                not wanted_statuses or _get_str(item, "status") in wanted_statuses
            )

        page_items = max(2 * limit, FEED_FILTERED_PAGE_ITEMS) if wanted_types or wanted_statuses else limit + 1
        values: dict[str, AttributeValueTypeDef] = {":pk": _s(feed_pk(workspace_id, project_id))}
        condition = "gsi1pk = :pk"
        if after is not None:
            condition += " AND gsi1sk > :after"
            values[":after"] = _s(f"{after.updated_at}#{after.note_id}")
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": GSI1,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": True,
            "Limit": min(page_items, FEED_PAGE_ITEMS),
        }
        notes: list[Note] = []
        position = after
        for _ in range(FEED_PAGE_BUDGET):
            with self._vendor_errors(writing=False):
                page = self._client.query(**params)
            items = page.get("Items", [])
            last = page.get("LastEvaluatedKey")
            for index, item in enumerate(items):
                updated_at = _get_str(item, "updatedAt")
                if updated_at > horizon:
                    settling = last is not None or any(matches(newer) for newer in items[index:])
                    return ChangeScan(notes, position, more=False, settling=settling)
                if matches(item):
                    if len(notes) == limit:
                        return ChangeScan(notes, position, more=True, settling=False)
                    notes.append(item_to_note(item))
                position = FeedPosition(updated_at, _get_str(item, "id"))
            if last is None:
                return ChangeScan(notes, position, more=False, settling=False)
            if len(notes) == limit:
                return ChangeScan(notes, position, more=True, settling=False)  # more may follow: not read
            # No FilterExpression: the page's last item is its LastEvaluatedKey, so `position` is there already.
            params["ExclusiveStartKey"] = last
        return ChangeScan(notes, position, more=True, settling=False)

    # ----- the commit sequence (SequencedFeed) -----------------------------------------------------------------

    def _feed_head(self, workspace_id: str, project_id: str) -> _FeedHead:
        """The project's feed head, strongly read. Every commit since the sequence exists writes it, so a missing
        head with notes means notes from before (asked of GSI1 only then: its lag cannot hide notes that old); the
        commit that makes the head marks it incomplete in that case."""
        key = _key(sequence_pk(workspace_id, project_id), FEED_HEAD_SK)
        item = self._get(key)
        if item is None and self._has_notes(workspace_id, project_id):
            # The notes may be from the project's first commits, landed since the first read: they made the head.
            item = self._get(key)
            if item is None:
                return _FeedHead(0, complete=False, exists=False)
        if item is None:
            return _FeedHead(0, complete=True, exists=False)
        return _FeedHead(_get_int(item, "seq"), _get_flag(item, "complete"), exists=True)

    def _has_notes(self, workspace_id: str, project_id: str) -> bool:
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": GSI1,
            "KeyConditionExpression": "gsi1pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(feed_pk(workspace_id, project_id))},
        }
        return bool(self._query(params, limit=1))

    def recently_written(self, workspace_id: str, project_id: str, since: str, limit: int) -> list[Note]:
        """The project's notes changed at or after `since` (newest change first, at most `limit`), read strongly
        consistently from the commit sequence: one Query of change records, one BatchGetItem of their notes."""
        if limit < 1:
            return []
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {
                ":pk": _s(sequence_pk(workspace_id, project_id)),
                ":prefix": _s(FEED_RECORD_PREFIX),
            },
            "ConsistentRead": True,
            "ScanIndexForward": False,
            "Limit": limit,
        }
        with self._vendor_errors(writing=False):
            records = self._client.query(**params).get("Items", [])
        ids = [_get_str(r, "noteId") for r in records if _get_str(r, "updatedAt") >= since]
        notes = self.get_notes(workspace_id, ids) if ids else {}
        return [notes[note_id] for note_id in dict.fromkeys(ids) if note_id in notes]

    def feed_after(
        self,
        workspace_id: str,
        project_id: str,
        after: int,
        *,
        types: Sequence[NoteType],
        statuses: Sequence[NoteStatus],
        limit: int,
    ) -> SequencedScan | None:
        """Change records after `after` (strongly consistent Query pages, at most FEED_PAGE_BUDGET of them), each
        joined to its note (one strongly consistent BatchGetItem per page). A record whose note has moved on is
        skipped (the newer record follows); one whose note does not show its version yet (a transaction seen
        half-way by reads of different items) ends the page as `settling`. None: the project's sequence is not
        complete (notes written before it existed), so the caller serves the (updatedAt, id) feed instead.

        Raises:
            ValueError: `limit` is below 1.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        head = self._feed_head(workspace_id, project_id)
        if not head.complete:
            return None
        if head.seq <= after:
            return SequencedScan([], after, more=False)
        wanted_types = {NoteType(t).value for t in types}
        wanted_statuses = {NoteStatus(s).value for s in statuses}
        filtered = bool(wanted_types or wanted_statuses)
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {
                ":pk": _s(sequence_pk(workspace_id, project_id)),
                ":low": _s(feed_record_sk(after + 1)),
                ":high": _s(feed_record_sk(head.seq)),
            },
            "ConsistentRead": True,
            "Limit": min(max(2 * limit, FEED_FILTERED_PAGE_ITEMS) if filtered else limit + 1, FEED_PAGE_ITEMS),
        }
        changes: list[SequencedChange] = []
        position = after
        for _ in range(FEED_PAGE_BUDGET):
            with self._vendor_errors(writing=False):
                page = self._client.query(**params)
            records = page.get("Items", [])
            last = page.get("LastEvaluatedKey")
            notes = self.get_notes(workspace_id, [_get_str(record, "noteId") for record in records])
            for record in records:
                seq = int(_get_str(record, "sk").removeprefix(FEED_RECORD_PREFIX))
                note = notes.get(_get_str(record, "noteId"))
                version = _get_int(record, "version")
                if note is None or note.version < version:
                    return SequencedScan(changes, position, more=False, settling=True)
                if (
                    note.version == version
                    and (not wanted_types or note.type.value in wanted_types)
                    and (not wanted_statuses or note.status.value in wanted_statuses)
                ):
                    if len(changes) == limit:
                        return SequencedScan(changes, position, more=True)
                    changes.append(SequencedChange(seq, note))
                position = seq
            if last is None:
                return SequencedScan(changes, position, more=False)
            if len(changes) == limit:
                return SequencedScan(changes, position, more=True)
            params["ExclusiveStartKey"] = last
        return SequencedScan(changes, position, more=True)

    def feed_start(self, workspace_id: str, project_id: str, after: FeedPosition) -> int:
        """A number every change stamped after `after` is numbered above: a record stamped more than
        STAMP_TO_COMMIT_SECONDS before it was committed before anything stamped at `after`, and so was every record
        before it. Found by bisecting the records (strong GetItems, about log2 of the project's changes); the
        caller skips what it finds past that number but at or before `after`."""
        head = self._feed_head(workspace_id, project_id)
        try:
            bound = rules.format_ts(rules.parse_ts(after.updated_at) - timedelta(seconds=STAMP_TO_COMMIT_SECONDS))
        except OverflowError:  # a since at the very start of time: from the first change
            return 0
        low, high = 0, head.seq
        while low < high:
            middle = (low + high + 1) // 2
            record = self._get(_key(sequence_pk(workspace_id, project_id), feed_record_sk(middle)))
            if record is not None and _get_str(record, "updatedAt") < bound:
                low = middle
            else:
                high = middle - 1
        return low

    def context_notes(
        self, workspace_id: str, project_id: str, *, per_section: int, recent: int, attention: int,
        by_section: bool = False,
    ) -> ContextNotes:  # fmt: skip
        """One GSI4 Query per partition: `attention` newest needing attention, `per_section` newest of each type of
        each section (and of each section's own partition, where a project before TYPE_PARTITION_LAYOUT kept them:
        `by_section`), then of the rest only what is newer than the `recent`-th newest read so far (the rest serves
        recent notes only, so nothing older can count); recent notes are the newest `recent` of them all. A
        partition whose page ended inside those (it may hold more of the newest) is read on from where it stopped:
        one more Query, only then.
        Unfinished supersessions among those needing attention are read whole (one BatchGetItem, only then): the
        lean index does not hold which notes supersede them."""
        scope = (workspace_id, project_id)
        needing = self._lean_page(scope, ATTENTION_PARTITION, attention, None).notes if attention > 0 else []
        unfinished = [n.id for n in needing if n.status is not NoteStatus.DISPUTED]
        if unfinished:
            whole = self.get_notes(workspace_id, unfinished)
            needing = [whole.get(n.id, n) for n in needing]
        pages: dict[str, _LeanPage] = {
            ATTENTION_PARTITION: _LeanPage([n for n in needing if packing.in_live_feed(n)], None)
        }
        partitions = {  # the status section's own partition is its status type's: one read serves both
            section: list(dict.fromkeys([*(kind.value for kind in kinds), *([section.value] if by_section else [])]))
            for section, kinds in packing.SECTION_TYPES.items()
        }
        for name in (name for names in partitions.values() for name in names):
            pages[name] = self._lean_page(scope, name, per_section, None)
        read = sorted((n for page in pages.values() for n in page.notes), key=_position, reverse=True)
        after = {OTHER_PARTITION: "#".join(_position(read[recent - 1]))} if len(read) >= recent else {}
        pages[OTHER_PARTITION] = self._lean_page(scope, OTHER_PARTITION, recent, None, after.get(OTHER_PARTITION))
        while True:
            newest = sorted((n for page in pages.values() for n in page.notes), key=_position, reverse=True)[:recent]
            cutoff = _position(newest[-1]) if len(newest) == recent else None
            short = [
                (name, page) for name, page in pages.items()
                if page.last_key is not None and page.notes and (cutoff is None or _position(page.notes[-1]) > cutoff)
            ]  # fmt: skip
            if not short:
                break
            for name, page in short:
                more = self._lean_page(scope, name, max(1, recent - len(page.notes)), page.last_key, after.get(name))
                pages[name] = _LeanPage(page.notes + more.notes, more.last_key)
        settled = {s: [n for name in names for n in pages[name].notes] for s, names in partitions.items()}
        sections, newest = packing.with_attention(
            settled, newest, needing, per_section=per_section, recent_limit=recent
        )
        return ContextNotes(sections, newest, needing)

    def _lean_page(
        self, scope: tuple[str, str], partition: str, limit: int, start: Item | None, after: str | None = None
    ) -> _LeanPage:
        """Up to `limit` notes of one GSI4 partition, newest first, from `start`; only those placed after `after`
        (a `gsi4sk`) when given."""
        values = {":pk": _s(section_pk(*scope, partition))}
        if after is not None:
            values[":after"] = _s(after)
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": GSI4,
            "KeyConditionExpression": "gsi4pk = :pk" if after is None else "gsi4pk = :pk AND gsi4sk > :after",
            "ExpressionAttributeValues": values,
            "ScanIndexForward": False,
            "Limit": limit,
        }
        if start is not None:
            params["ExclusiveStartKey"] = start
        with self._vendor_errors(writing=False):
            page = self._client.query(**params)
        notes = [item_to_lean_note(item, *scope) for item in page.get("Items", [])]
        return _LeanPage(notes, page.get("LastEvaluatedKey"))

    def conflicted_notes(self, workspace_id: str, project_id: str, *, limit: int) -> list[Note]:
        if limit < 1:
            return []
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "IndexName": GSI3,
            "KeyConditionExpression": "gsi3pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(attention_pk(workspace_id, project_id))},
            "ScanIndexForward": False,
        }
        return [item_to_note(item) for item in self._query(params, limit=limit)]

    def anchored_notes(
        self, workspace_id: str, project_id: str, paths: Sequence[str], *, statuses: Sequence[NoteStatus], limit: int
    ) -> list[Note]:
        """One Query of anchor pointers per path (begins_with: the file itself, files under it as a directory, and
        look-alikes such as `src/a.py.orig`, dropped), each path taking its share of ANCHOR_LOOKUP pointers at
        most, then the notes read whole (BatchGetItem) and each checked: live, in `statuses`, anchored there now."""
        if not paths or limit < 1:
            return []
        share = max(ANCHOR_LOOKUP // len(paths), 1)
        ids: list[str] = []
        for path in paths:
            params: QueryInputTypeDef = {
                "TableName": self._table,
                "KeyConditionExpression": "pk = :pk AND begins_with(sk, :path)",
                "ExpressionAttributeValues": {":pk": _s(anchor_pk(workspace_id, project_id)), ":path": _s(path)},
                "ProjectionExpression": "noteId, #path",
                "ExpressionAttributeNames": {"#path": "path"},
                "ConsistentRead": True,
            }
            for item in self._query(params, limit=min(share, ANCHOR_LOOKUP - len(ids))):
                found = _get_str(item, "path")
                if found == path or found.startswith(path + "/"):
                    ids.append(_get_str(item, "noteId"))
            if len(ids) >= ANCHOR_LOOKUP:
                break
        wanted = {NoteStatus(status) for status in statuses}
        notes = [
            note for note in self.get_notes(workspace_id, list(dict.fromkeys(ids))).values()
            if note.project_id == project_id and not note.is_deleted and note.status in wanted
        ]  # fmt: skip
        return freshness.anchored_first(notes, paths)[:limit]

    def note_anchors(self, workspace_id: str, note_ids: Sequence[str]) -> dict[str, tuple[Anchor, ...]]:
        """BatchGetItem of the notes' ids and anchors only (GSI4, which get_context reads, does not project them)."""
        unique = list(dict.fromkeys(note_ids))
        found: dict[str, tuple[Anchor, ...]] = {}
        for start in range(0, len(unique), MAX_BATCH_GET_KEYS):
            keys = [_key(note_pk(workspace_id, i), NOTE_SK) for i in unique[start : start + MAX_BATCH_GET_KEYS]]
            for item in self._batch_get(keys, attributes=("id", "anchors")):
                found[_get_str(item, "id")] = tuple(_item_anchor(x["M"]) for x in item.get("anchors", {}).get("L", []))
        return found

    def anchored_in_project(
        self, workspace_id: str, project_id: str, *, statuses: Sequence[NoteStatus], limit: int
    ) -> list[Note]:
        """The project's anchor pointers, a page at a time in path order, and each note they name read lean
        (BatchGetItem of HEAD_ATTRIBUTES), until `limit` live notes in `statuses` are found or the pointers end.
        Deleted notes keep their pointers: their ids are read and passed over."""
        if limit < 1:
            return []
        wanted = {NoteStatus(status) for status in statuses}
        found: dict[str, Note] = {}
        seen: set[str] = set()
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(anchor_pk(workspace_id, project_id))},
            "ProjectionExpression": "noteId",
            "ConsistentRead": True,
            "Limit": MAX_BATCH_GET_KEYS,
        }
        while len(found) < limit:
            with self._vendor_errors(writing=False):
                page = self._client.query(**params)
            named = dict.fromkeys(_get_str(item, "noteId") for item in page.get("Items", []))  # a note per path
            ids = [i for i in named if i not in seen]
            seen.update(ids)
            if ids:
                keys = [_key(note_pk(workspace_id, i), NOTE_SK) for i in ids]
                for item in self._batch_get(keys, attributes=HEAD_ATTRIBUTES):
                    note = item_to_head(item, workspace_id, project_id)
                    if not note.is_deleted and note.status in wanted:
                        found[note.id] = note
            last = page.get("LastEvaluatedKey")
            if last is None:
                break
            params["ExclusiveStartKey"] = last
        return sorted(found.values(), key=_position, reverse=True)[:limit]

    # ----- freshness verdicts --------------------------------------------------------------------------------

    def recorded_verdicts(
        self, workspace_id: str, project_id: str, note_ids: Sequence[str]
    ) -> dict[str, RecordedVerdict]:
        """Strongly consistent BatchGetItem of the notes' records, 100 keys a request."""
        unique = list(dict.fromkeys(note_ids))
        found: dict[str, RecordedVerdict] = {}
        for start in range(0, len(unique), MAX_BATCH_GET_KEYS):
            keys = [
                _key(verdict_pk(workspace_id, project_id), _part(i)) for i in unique[start : start + MAX_BATCH_GET_KEYS]
            ]
            for item in self._batch_get(keys):
                record = item_to_verdict(item)
                found[record.note_id] = record
        return found

    def save_verdicts(self, workspace_id: str, writes: Sequence[VerdictWrite]) -> int:
        """One TransactWriteItems per 100 records, each Put conditioned on the record read (absent, or the same
        version and judgedAt): however many notes a read judged, one request. Records whose condition failed lost to
        another recorder: they are dropped and the rest sent once more.

        Raises:
            UnavailableError: throttled, or a transaction conflict with another writer.
        """
        stored = 0
        for start in range(0, len(writes), MAX_TRANSACTION_ACTIONS):
            pending = list(writes[start : start + MAX_TRANSACTION_ACTIONS])
            for _ in range(VERDICT_ROUNDS):
                reasons = self._transact_once([{"Put": self._verdict_put(workspace_id, w)} for w in pending])
                if reasons is None:
                    stored += len(pending)
                    break
                lost = {i for i, reason in enumerate(reasons) if reason.get("Code") == "ConditionalCheckFailed"}
                if not lost:
                    raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)
                pending = [write for i, write in enumerate(pending) if i not in lost]
                if not pending:
                    break
        return stored

    def _verdict_put(self, workspace_id: str, write: VerdictWrite) -> PutTypeDef:
        item = verdict_to_item(workspace_id, write.record)
        if write.expected is None:
            return {"TableName": self._table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
        return {
            "TableName": self._table, "Item": item,
            "ConditionExpression": "#version = :version AND #judgedAt = :judgedAt",
            "ExpressionAttributeNames": {"#version": "version", "#judgedAt": "judgedAt"},
            "ExpressionAttributeValues": {
                ":version": _n(write.expected.version), ":judgedAt": _s(write.expected.judged_at),
            },
        }  # fmt: skip

    def import_notes(self, workspace_id: str, items: Sequence[tuple[Note, Sequence[Note]]]) -> int:
        """Every item is built and checked against the item size limit before anything is written. Then, per 100
        notes: one BatchGetItem (keys only) tells which ids exist, BatchWriteItem puts the revisions of the new
        notes, then `commit` creates the notes (up to 49 a transaction) with their commit numbers.

        A note created between the check and its commit fails the commit's condition (a 409, nothing of that batch
        written; rerunning skips it); an interrupted import leaves whole notes only.

        Raises:
            TooLargeError: an item exceeds DynamoDB's item size limit (nothing written).
            UnavailableError: DynamoDB kept refusing writes; rerunning the import completes it.
        """
        prepared: dict[str, tuple[Item, list[Item]]] = {}
        notes: dict[str, Note] = {}
        for note, revisions in items:
            if note.workspace_id != workspace_id:
                raise ValueError(f"note {note.id} belongs to workspace {note.workspace_id}, not {workspace_id}")
            if note.id in prepared:
                continue  # the first of two notes with one id wins, as the second would be skipped when stored
            history: dict[int, Item] = {}
            for revision in revisions:
                if revision.id != note.id or revision.workspace_id != workspace_id:
                    raise ValueError(f"a revision given for note {note.id} is another note's")
                history.setdefault(revision.version, revision_to_item(revision))
            note_item = note_to_item(note)
            for item in (note_item, *history.values()):
                size = item_size(item)
                if size > MAX_ITEM_BYTES:
                    raise _too_large(f"Note {note.id} would take {size:,} bytes as stored")
            prepared[note.id] = (note_item, list(history.values()))
            notes[note.id] = note
        ids = list(prepared)
        written = 0
        for start in range(0, len(ids), MAX_BATCH_GET_KEYS):
            chunk = ids[start : start + MAX_BATCH_GET_KEYS]
            keys = [_key(note_pk(workspace_id, note_id), NOTE_SK) for note_id in chunk]
            stored = {_get_str(item, "pk") for item in self._batch_get(keys, attributes=("pk",))}
            new = [note_id for note_id in chunk if note_pk(workspace_id, note_id) not in stored]
            # Revisions first: a note that exists has its whole history, so skipping it on a rerun loses nothing.
            self._batch_write([revision for note_id in new for revision in prepared[note_id][1]])
            # The notes through commits: each takes its commit number and change record with it, so followers of
            # the project's feed see imported notes arrive.
            for batch in _import_batches([notes[note_id] for note_id in new], prepared):
                self.commit(workspace_id, [NoteWrite(note, expected_version=None) for note in batch], revision_cap=0)
            written += len(new)
        return written

    # ----- API keys ------------------------------------------------------------------------------------------

    def put_key(self, key: ApiKey) -> None:
        """Raises: AlreadyExistsError: the secret hash already points at another key."""
        item, lookup = key_to_items(key)
        lookup_put = self._put_new(lookup)
        # The same key may be put again (an update or a retry); another key may not take over the secret.
        lookup_put["ConditionExpression"] = "attribute_not_exists(pk) OR (#ws = :ws AND #key = :key)"
        lookup_put["ExpressionAttributeNames"] = {"#ws": "workspaceId", "#key": "keyId"}
        lookup_put["ExpressionAttributeValues"] = {":ws": _s(key.workspace_id), ":key": _s(key.id)}
        actions: list[TransactWriteItemTypeDef] = [
            {"Put": {"TableName": self._table, "Item": item}},
            {"Put": lookup_put},
        ]
        for attempt in range(TRANSACTION_ATTEMPTS):
            reasons = self._transact_once(actions, writing=True)
            if reasons is None:
                return
            if any(reason.get("Code") == "ConditionalCheckFailed" for reason in reasons):
                raise AlreadyExistsError("This secret is already registered to another key; issue a new key.")
            self._backoff(attempt)
        raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    def find_key(self, secret_hash: str) -> ApiKey | None:
        lookup = self._get(_key(auth_pk(secret_hash), AUTH_SK))
        if lookup is None:
            return None
        workspace_id, key_id = _get_str(lookup, "workspaceId"), _get_str(lookup, "keyId")
        item = self._get(_key(workspace_pk(workspace_id), f"KEY#{_part(key_id)}"))
        if item is None:
            return None
        key = item_to_key(item)
        return key if key.secret_hash == secret_hash else None

    def list_keys(self, workspace_id: str) -> list[ApiKey]:
        params: QueryInputTypeDef = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": _s(workspace_pk(workspace_id)), ":prefix": _s("KEY#")},
            "ConsistentRead": True,
        }
        return [item_to_key(item) for item in self._query(params)]

    def revoke_key(self, workspace_id: str, key_id: str, revoked_at: str) -> ApiKey | None:
        try:
            with self._vendor_errors(writing=True):
                response = self._client.update_item(
                    TableName=self._table,
                    Key=_key(workspace_pk(workspace_id), f"KEY#{_part(key_id)}"),
                    # The first revocation's time stays: revoking again changes nothing.
                    UpdateExpression="SET #revoked = if_not_exists(#revoked, :revoked)",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeNames={"#revoked": "revokedAt"},
                    ExpressionAttributeValues={":revoked": _s(revoked_at)},
                    ReturnValues="ALL_NEW",
                )
        except botocore_errors.ClientError as exc:
            if _error_code(exc) == "ConditionalCheckFailedException":
                return None
            raise
        return item_to_key(response["Attributes"])

    # ----- commit internals ----------------------------------------------------------------------------------

    def _commit_actions(
        self,
        workspace_id: str,
        writes: Sequence[NoteWrite],
        revision_cap: int,
        idempotency: IdempotencyRecord | None,
        heads: Mapping[str, _FeedHead],
    ) -> tuple[list[TransactWriteItemTypeDef], list[_Position]]:
        actions: list[TransactWriteItemTypeDef] = []
        positions: list[_Position] = []
        seen: set[str] = set()
        total = 0
        for write in writes:
            note = write.note
            if note.workspace_id != workspace_id:
                raise ValueError(f"note {note.id} belongs to workspace {note.workspace_id}, not {workspace_id}")
            if note.id in seen:
                raise InvalidArgumentError(f"One change cannot write note {note.id} twice; merge the edits.")
            seen.add(note.id)
            item = note_to_item(note)
            size = item_size(item)
            if size > MAX_ITEM_BYTES:
                raise _too_large(f"Note {note.id} would take {size:,} bytes as stored")
            total += size
            # Never an unconditioned write on a note: an insert needs a new id, an edit the version read.
            if write.expected_version is None:
                put = self._put_new(item, return_old=True)
            else:
                put = {
                    "TableName": self._table,
                    "Item": item,
                    "ConditionExpression": "#version = :expected",
                    "ExpressionAttributeNames": {"#version": "version"},
                    "ExpressionAttributeValues": {":expected": _n(write.expected_version)},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            actions.append({"Put": put})
            positions.append(_Position("note", write))
            # An edit without its previous state (none yet) would leave pointers of paths it dropped: anchored_notes
            # checks each note it reads, so such a pointer costs a read, never a wrong answer.
            before = _anchor_paths(write.previous)
            after = _anchor_paths(note)
            for path in sorted(after - before):
                pointer = anchor_pointer_item(workspace_id, note.project_id, path, note.id)
                total += item_size(pointer)
                actions.append({"Put": {"TableName": self._table, "Item": pointer}})
                positions.append(_Position("anchor", write))
            for path in sorted(before - after):
                key = _key(anchor_pk(workspace_id, note.project_id), anchor_sk(path, note.id))
                actions.append({"Delete": {"TableName": self._table, "Key": key}})
                positions.append(_Position("anchor", write))
            previous = write.previous
            if previous is None or revision_cap < 1:
                continue
            if previous.id != note.id or previous.workspace_id != workspace_id:
                raise ValueError(f"the previous state given for note {note.id} is another note's")
            revision = revision_to_item(previous)
            total += item_size(revision)
            # Unconditioned, yet written once per version: the note's condition guards the transaction.
            actions.append({"Put": {"TableName": self._table, "Item": revision}})
            positions.append(_Position("revision", write))
            pruned = previous.version - revision_cap
            if pruned >= 1:
                actions.append(
                    {
                        "Delete": {
                            "TableName": self._table,
                            "Key": _key(note_pk(workspace_id, note.id), revision_sk(pruned)),
                        }
                    }
                )
                positions.append(_Position("prune", write))
        if idempotency is not None:
            if idempotency.workspace_id != workspace_id:
                raise ValueError(f"idempotency record of workspace {idempotency.workspace_id}, not {workspace_id}")
            record = idempotency_to_item(idempotency)
            total += item_size(record)
            actions.append(
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": record,
                        # An expired record counts as absent (TTL deletes late).
                        "ConditionExpression": "attribute_not_exists(pk) OR #expires <= :recorded",
                        "ExpressionAttributeNames": {"#expires": "expiresAt"},
                        "ExpressionAttributeValues": {":recorded": _s(idempotency.recorded_at)},
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                }
            )
            positions.append(_Position("idempotency"))
        # The commit sequence: one change record per note, numbered after each project's head, and the head moved
        # on the condition that it still holds the number read (so numbers follow commit order, with no gap).
        numbers = {project_id: head.seq for project_id, head in heads.items()}
        for write in writes:
            note = write.note
            numbers[note.project_id] += 1
            change: Item = {
                **_key(sequence_pk(workspace_id, note.project_id), feed_record_sk(numbers[note.project_id])),
                "entity": _s("change"), "noteId": _s(note.id), "version": _n(note.version),
                "updatedAt": _s(note.updated_at),
            }  # fmt: skip
            actions.append({"Put": {"TableName": self._table, "Item": change}})
            positions.append(_Position("change"))
        for project_id, head in heads.items():
            head_item: Item = {
                **_key(sequence_pk(workspace_id, project_id), FEED_HEAD_SK),
                "entity": _s("feedhead"), "seq": _n(numbers[project_id]), "complete": _flag(head.complete),
            }  # fmt: skip
            head_put: PutTypeDef = {"TableName": self._table, "Item": head_item}
            if head.exists:
                head_put["ConditionExpression"] = "#seq = :read"
                head_put["ExpressionAttributeNames"] = {"#seq": "seq"}
                head_put["ExpressionAttributeValues"] = {":read": _n(head.seq)}
            else:
                head_put["ConditionExpression"] = "attribute_not_exists(pk)"
            actions.append({"Put": head_put})
            positions.append(_Position("head"))
        if len(actions) > MAX_TRANSACTION_ACTIONS:
            raise TooLargeError(
                f"This change needs {len(actions)} writes in one transaction; DynamoDB allows "
                f"{MAX_TRANSACTION_ACTIONS}: supersede fewer notes at once."
            )
        if total > MAX_TRANSACTION_BYTES:
            raise _too_large(f"This change writes {total:,} bytes at once")
        return actions, positions

    def _settle_cancellation(
        self,
        workspace_id: str,
        reasons: Sequence[Mapping[str, Any]],
        positions: Sequence[_Position],
        idempotency: IdempotencyRecord | None,
    ) -> None:
        """Read a cancelled commit's reasons (positional): return if the commit was in fact applied earlier;
        raise the domain error it means; or raise _RetryableCancellationError."""

        def code(index: int) -> str:
            return str(reasons[index].get("Code", "None")) if index < len(reasons) else "None"

        def old(index: int) -> Mapping[str, AttributeValueTypeDef] | None:
            item = reasons[index].get("Item") if index < len(reasons) else None
            return item if item else None

        def is_ours(index: int, position: _Position) -> bool:
            stored = old(index)
            if code(index) != "ConditionalCheckFailed" or stored is None:
                return False
            if position.kind == "note":
                assert position.write is not None
                return _is_own_note(stored, position.write)
            return idempotency is not None and _is_own_record(stored, idempotency)

        conditioned = [(i, p) for i, p in enumerate(positions) if p.kind in ("note", "idempotency")]
        # All or nothing: if every condition failed on our own writeId/record, a previous send of this
        # very commit was applied (its reply was lost). A condition that held means it was not.
        if conditioned and all(is_ours(i, p) for i, p in conditioned):
            return
        for index, position in conditioned:
            if position.kind == "idempotency" and code(index) == "ConditionalCheckFailed":
                stored = old(index)
                record = item_to_idempotency(stored) if stored is not None else None
                if record is None and idempotency is not None:
                    record = self.get_idempotency(workspace_id, idempotency.key)
                if record is not None:
                    raise IdempotencyKeyTakenError(record)
        for index, position in conditioned:
            if position.kind == "note" and code(index) == "ConditionalCheckFailed":
                assert position.write is not None
                stored = old(index)
                current = _get_opt_int(stored, "version") if stored is not None else None
                raise VersionConflictError(position.write.note.id, position.write.expected_version or 0, current or 0)
        if any(p.kind == "head" and code(i) == "ConditionalCheckFailed" for i, p in enumerate(positions)):
            raise _HeadMovedError
        codes = [code(i) for i in range(len(reasons))]
        if "ValidationError" in codes:
            message = " ".join(str(r.get("Message", "")) for r in reasons if r.get("Code") == "ValidationError")
            if _is_size_error(message):
                raise _too_large("The change is too large to store")
            raise InvalidArgumentError(f"The note store refused this change: {message}")
        busy = [i for i, c in enumerate(codes) if c in _BUSY_REASONS]
        if not busy:
            raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)
        conflicts = [i for i in busy if codes[i] == "TransactionConflict"]
        raise _RetryableCancellationError(conflicts[0] if conflicts else None, throttled=not conflicts)

    def _was_applied(
        self, workspace_id: str, writes: Sequence[NoteWrite], idempotency: IdempotencyRecord | None
    ) -> bool:
        """Whether a commit whose outcome is unknown is stored: all or nothing, so one item tells."""
        if writes:
            write = writes[0]
            return self.get_note(workspace_id, write.note.id) == write.note
        if idempotency is not None:
            stored = self.get_idempotency(workspace_id, idempotency.key)
            return stored is not None and (stored.request_hash, stored.recorded_at, stored.result) == (
                idempotency.request_hash,
                idempotency.recorded_at,
                idempotency.result,
            )
        return False

    def _conflict_after_contention(
        self, workspace_id: str, positions: Sequence[_Position], index: int | None
    ) -> NotewellError:
        """The 409 for an edit that kept losing to concurrent transactions, naming the contended note; 503 else."""
        position = positions[index] if index is not None and index < len(positions) else None
        if position is not None and position.kind in ("head", "change"):  # other writers of the project: passing
            return UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)
        write = position.write if position is not None and position.write is not None else None
        if write is None:
            write = next((p.write for p in positions if p.write is not None), None)
        # Only an idempotency record, or a create: no version the caller could reload, so "v0, current is v0"
        # would send them to reapply nothing. Contention is passing: busy, retry.
        if write is None or write.expected_version is None:
            return UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)
        current = self.get_note(workspace_id, write.note.id)
        return VersionConflictError(
            write.note.id, write.expected_version or 0, current.version if current is not None else 0
        )

    # ----- low-level helpers ---------------------------------------------------------------------------------

    def _put_new(self, item: Item, *, return_old: bool = False) -> PutTypeDef:
        """A transaction Put that only creates."""
        put: PutTypeDef = {"TableName": self._table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
        if return_old:
            put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return put

    def _transact_once(
        self, actions: Sequence[TransactWriteItemTypeDef], *, writing: bool = True
    ) -> list[Mapping[str, Any]] | None:
        """Send one TransactWriteItems: None when it committed, else its cancellation reasons."""
        try:
            with self._vendor_errors(writing=writing):
                self._client.transact_write_items(TransactItems=actions)
        except botocore_errors.ClientError as exc:
            if _error_code(exc) != "TransactionCanceledException":
                raise
            reasons: list[Mapping[str, Any]] = list(exc.response.get("CancellationReasons", []))
            return reasons + [{"Code": "None"}] * (len(actions) - len(reasons))
        return None

    def _get(self, key: Item) -> Item | None:
        with self._vendor_errors(writing=False):
            response = self._client.get_item(TableName=self._table, Key=key, ConsistentRead=True)
        return response.get("Item")

    def _query(self, params: QueryInputTypeDef, *, limit: int | None = None) -> list[Item]:
        """Every page of a Query, or the first `limit` items."""
        items: list[Item] = []
        while True:
            if limit is not None:
                params["Limit"] = limit - len(items)
            with self._vendor_errors(writing=False):
                page = self._client.query(**params)
            items.extend(page.get("Items", []))
            last = page.get("LastEvaluatedKey")
            if last is None or (limit is not None and len(items) >= limit):
                return items
            params["ExclusiveStartKey"] = last

    def _batch_get(self, keys: list[Item], *, attributes: Sequence[str] = ()) -> Iterator[Item]:
        """Strongly consistent BatchGetItem of at most 100 keys (only `attributes` of each item, when given),
        resending unprocessed keys a few times."""
        request: KeysAndAttributesTypeDef = {"Keys": keys, "ConsistentRead": True}
        if attributes:
            request["ProjectionExpression"] = ", ".join(f"#a{i}" for i in range(len(attributes)))
            request["ExpressionAttributeNames"] = {f"#a{i}": name for i, name in enumerate(attributes)}
        pending = request
        for attempt in range(BATCH_GET_ROUNDS):
            if attempt:
                self._backoff(attempt - 1)
            with self._vendor_errors(writing=False):
                response = self._client.batch_get_item(RequestItems={self._table: pending})
            yield from response.get("Responses", {}).get(self._table, [])
            left = response.get("UnprocessedKeys", {}).get(self._table)
            if left is None or not left.get("Keys"):
                return
            pending = {**request, "Keys": left["Keys"]}
        raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    def _batch_write(self, items: Sequence[Item]) -> None:
        """Put every item with BatchWriteItem, 25 per request, resending unprocessed items with jittered backoff
        a bounded number of times. Unconditioned Puts of fixed content: a resend rewrites the same item."""
        for start in range(0, len(items), MAX_BATCH_WRITE_ITEMS):
            pending: Sequence[WriteRequestUnionTypeDef] = [
                {"PutRequest": {"Item": item}} for item in items[start : start + MAX_BATCH_WRITE_ITEMS]
            ]
            for attempt in range(BATCH_WRITE_ROUNDS):
                if attempt:
                    self._backoff(attempt - 1)
                # writing=False: a lost reply is harmless here, the rerun writes the same items again.
                with self._vendor_errors(writing=False):
                    response = self._client.batch_write_item(RequestItems={self._table: pending})
                left = response.get("UnprocessedItems", {}).get(self._table)
                if not left:
                    break
                pending = left
            else:
                raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS)

    def _backoff(self, attempt: int) -> None:
        self._sleep(random.uniform(0, RETRY_BASE_SECONDS * 2**attempt))

    @contextmanager
    def _vendor_errors(self, *, writing: bool) -> Iterator[None]:
        """Turn what botocore could not retry away into domain errors; leave the rest to the caller."""
        try:
            yield
        except botocore_errors.ClientError as exc:
            mapped: Exception | None = _translate(exc, writing=writing) or _setup_error(exc, self._table)
            if mapped is None:
                raise
            raise mapped from exc
        except botocore_errors.NoCredentialsError as exc:
            raise ConfigError(
                "No AWS credentials found; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
            ) from exc
        except _CONNECTION_ERRORS as exc:
            if writing:
                raise _UnconfirmedWriteError from exc
            raise UnavailableError(_BUSY_MESSAGE, retry_after=RETRY_AFTER_SECONDS) from exc
