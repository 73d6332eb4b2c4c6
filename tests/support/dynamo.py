"""DynamoDB under moto for tests: the table from template.yaml, per-request atomicity, fault injection.

* `dynamodb_store()` runs one `moto.mock_aws()` with fake credentials, builds the table from the template's
  `NotesTable` (one schema for tests and deploys) and yields a `DynamoDBStore` whose client (`store.client`)
  has the production retry configuration. botocore's backoff is zeroed for the duration: tests never sleep.
* moto is not atomic across threads (read, check, write, no lock), so a global lock around every API call
  restores per-request atomicity while keeping interleavings between requests (dynamodb.md §10).
* `inject_faults(client, plan)` replaces moto's before-send handler on one client: a plan decides, per
  operation and attempt, to let moto answer, to answer with an error, or to let moto commit and lose the reply.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import botocore.client
import botocore.retries.standard
import yaml
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ReadTimeoutError
from moto import mock_aws
from moto.core.models import botocore_stubber as moto_send

from notewell.adapters.dynamodb import DynamoDBStore, make_client

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
REGION = "us-east-1"

Fault = Literal["commit_then_timeout", "timeout"] | Callable[[Any], AWSResponse | None]
FaultPlan = Callable[[str, int], "Fault | None"]


class _CfnLoader(yaml.SafeLoader):  # type: ignore[misc]  # yaml ships no types
    """YAML loader that reads CloudFormation short tags (!Ref, !Sub, !GetAtt, …) as None."""


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


@functools.cache
def _template_resources(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        document = yaml.load(handle, Loader=_CfnLoader)  # a SafeLoader subclass
    resources: dict[str, Any] = document["Resources"]
    return resources


def table_spec(path: Path = TEMPLATE, resource: str = "NotesTable") -> dict[str, Any]:
    """CreateTable arguments (without the name) taken from the template's table resource."""
    properties = _template_resources(path)[resource]["Properties"]
    keys = ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode")
    return {key: json.loads(json.dumps(properties[key])) for key in keys if key in properties}


# ----- process-wide patches, installed for the duration of a store -------------------------------------------

_LOCK = threading.RLock()


@contextlib.contextmanager
def _global_lock() -> Iterator[None]:
    original = botocore.client.BaseClient._make_api_call

    def locked(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        with _LOCK:
            return original(self, operation_name, api_params)

    botocore.client.BaseClient._make_api_call = locked
    try:
        yield
    finally:
        botocore.client.BaseClient._make_api_call = original


@contextlib.contextmanager
def no_backoff() -> Iterator[None]:
    """botocore retries without sleeping: a test with throttling or timeouts stays instant."""
    backoff = botocore.retries.standard.ExponentialBackoff
    original = backoff.delay_amount
    backoff.delay_amount = lambda self, context: 0.0
    try:
        yield
    finally:
        backoff.delay_amount = original


_FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}


@contextlib.contextmanager
def _fake_aws_env() -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in (*_FAKE_ENV, "AWS_PROFILE")}
    os.environ.update(_FAKE_ENV)
    os.environ.pop("AWS_PROFILE", None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def dynamodb_store(table_name: str = "notewell-test", *, streams: bool = False) -> Iterator[DynamoDBStore]:
    """A DynamoDBStore on a fresh moto table built from template.yaml; everything is undone on exit. `streams`: the
    table records its stream as the template asks (tests/support/streams.py reads it); off by default, it costs."""
    with _fake_aws_env(), _global_lock(), no_backoff(), mock_aws():
        client = make_client(region=REGION)
        spec = table_spec()
        if streams:
            view = _template_resources(TEMPLATE)["NotesTable"]["Properties"]["StreamSpecification"]["StreamViewType"]
            spec["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view}
        client.create_table(TableName=table_name, **spec)
        yield DynamoDBStore(client, table_name, sleep=lambda seconds: None)


# ----- fault injection --------------------------------------------------------------------------------------


def inject_faults(client: Any, plan: FaultPlan) -> collections.Counter[str]:
    """Answer this client's requests through `plan(operation, attempt)` (attempt counts from 1 per operation).

    The plan returns None (moto answers), "commit_then_timeout" (moto applies the request, then the reply is
    lost as a read timeout), "timeout" (nothing reaches moto), or a callable building the reply from the
    request (see `error_reply`) or returning None to let moto answer this one after all (a fault that picks
    requests by content). Returns the live count of requests sent per operation, retries included.
    """
    # A before-send handler that merely returns a reply does not stop moto's, which runs too (botocore calls
    # every handler): take moto's out for this client and call it ourselves.
    client.meta.events.unregister("before-send", moto_send)
    sent: collections.Counter[str] = collections.Counter()

    def handler(request: Any, event_name: str, **kwargs: Any) -> AWSResponse | None:
        operation = event_name.rsplit(".", 1)[-1]
        sent[operation] += 1
        fault = plan(operation, sent[operation])
        if fault is None:
            return moto_send(event_name=event_name, request=request)
        if fault == "commit_then_timeout":
            moto_send(event_name=event_name, request=request)
            raise ReadTimeoutError(endpoint_url=request.url)
        if fault == "timeout":
            raise ReadTimeoutError(endpoint_url=request.url)
        assert callable(fault)
        reply = fault(request)
        return reply if reply is not None else moto_send(event_name=event_name, request=request)

    client.meta.events.register("before-send", handler)
    return sent


class _Body:
    def __init__(self, payload: bytes) -> None:
        self._payload = payload

    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        yield self._payload


def error_reply(code: str, message: str = "", *, status: int = 400, **fields: Any) -> Callable[[Any], AWSResponse]:
    """A fault answering with a DynamoDB JSON error `code` (e.g. "ThrottlingException") and extra fields."""

    def reply(request: Any) -> AWSResponse:
        body = {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message, **fields}
        headers = {"x-amzn-ErrorType": code, "Content-Type": "application/x-amz-json-1.0"}
        return AWSResponse(request.url, status, headers, _Body(json.dumps(body).encode()))

    return reply


def throttled() -> Callable[[Any], AWSResponse]:
    return error_reply("ThrottlingException", "Rate of requests exceeds the allowed throughput.")


def transaction_conflict() -> Callable[[Any], AWSResponse]:
    """A TransactWriteItems cancelled by a concurrent transaction, on every item (as DynamoDB reports it)."""

    def reply(request: Any) -> AWSResponse:
        actions = len(json.loads(request.body)["TransactItems"])
        reasons = [{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}] * actions
        codes = ", ".join(["TransactionConflict"] * actions)
        return error_reply(
            "TransactionCanceledException",
            f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
            CancellationReasons=reasons,
        )(request)

    return reply


def count_operations(client: Any) -> collections.Counter[str]:
    """The live count of API calls this client makes, by operation name (one per call, not per retry)."""
    calls: collections.Counter[str] = collections.Counter()

    def count(model: Any, **kwargs: Any) -> None:
        calls[model.name] += 1

    client.meta.events.register("before-call.dynamodb", count)
    return calls


def count_index_reads(client: Any) -> collections.Counter[str]:
    """The live count of this client's Query calls by the index they read (`table` for the table itself)."""
    reads: collections.Counter[str] = collections.Counter()

    def count(params: dict[str, Any], **kwargs: Any) -> None:
        reads[params.get("IndexName", "table")] += 1

    client.meta.events.register("provide-client-params.dynamodb.Query", count)
    return reads
