"""DynamoDB Streams as Lambda's event source mapping delivers them, over moto: the indexer driven by real writes.

`StreamPump` reads the table's stream (moto records every write), keeps only what the template's FilterCriteria
lets through, and hands the records to a handler in batches of the template's BatchSize. A failure reported in
`batchItemFailures` is retried from that record, as Lambda does, up to MaximumRetryAttempts times; then the failed
record's sequence range goes to `on_failure` (the stack's on-failure queue) and the shard moves on.

moto gap: botocore sends DescribeStream and GetRecords to the account-based endpoint
(`{account}.streams-ddb.{region}.amazonaws.com`), which moto does not route; the streams client is therefore
pointed at the classic endpoint that moto serves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import yaml

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


def _loader() -> type[yaml.SafeLoader]:
    class Loader(yaml.SafeLoader):
        pass

    def any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_mapping(node)  # type: ignore[arg-type]

    Loader.add_multi_constructor("!", any_tag)
    return Loader


def stream_source(path: Path = TEMPLATE) -> dict[str, Any]:
    """The indexer function's DynamoDB event source properties, from the template."""
    resources = yaml.load(path.read_text(), Loader=_loader())["Resources"]  # noqa: S506 - a safe loader subclass
    events = resources["IndexerFunction"]["Properties"]["Events"]
    ((_, source),) = [(name, e) for name, e in events.items() if e["Type"] == "DynamoDB"]
    return dict(source["Properties"])


def matches(pattern: Any, value: Any) -> bool:
    """EventBridge-style matching, the subset FilterCriteria use here: nested keys, and lists of allowed values."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(k in value and matches(p, value[k]) for k, p in pattern.items())
    if isinstance(pattern, list):
        return value in pattern
    return bool(pattern == value)


@dataclass
class StreamPump:
    client: Any  # the store's DynamoDB client (inside moto)
    table: str
    handler: Callable[[Mapping[str, Any]], Mapping[str, Any]]
    source: dict[str, Any] = field(default_factory=stream_source)
    on_failure: list[dict[str, Any]] = field(default_factory=list)
    delivered: int = 0  # records handed to the handler, retries included
    _iterators: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        region = self.client.meta.region_name
        self._streams = boto3.client(
            "dynamodbstreams", region_name=region, endpoint_url=f"https://streams.dynamodb.{region}.amazonaws.com"
        )
        self._arn = self.client.describe_table(TableName=self.table)["Table"]["LatestStreamArn"]
        self._filters = [json.loads(f["Pattern"]) for f in self.source.get("FilterCriteria", {}).get("Filters", [])]

    def pump(self) -> int:
        """Deliver every record written since the last pump; returns how many passed the filter."""
        records = [r for r in self._read() if not self._filters or any(matches(f, r) for f in self._filters)]
        size = int(self.source.get("BatchSize", 100))
        retries = int(self.source.get("MaximumRetryAttempts", -1))
        start = 0
        while start < len(records):
            batch = records[start : start + size]
            attempts = 0
            while True:
                self.delivered += len(batch)
                result = self.handler({"Records": batch})
                failed = [f["itemIdentifier"] for f in result.get("batchItemFailures", [])]
                if not failed:
                    start += len(batch)
                    break
                first = min(i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed)
                attempts += 1
                if attempts > retries >= 0:
                    bad = batch[first]["dynamodb"]["SequenceNumber"]
                    self.on_failure.append({"startSequenceNumber": bad, "endSequenceNumber": bad})
                    start += first + 1
                    break
                start += first
                batch = records[start : start + size]
        return len(records)

    def _read(self) -> list[dict[str, Any]]:
        description = self._streams.describe_stream(StreamArn=self._arn)["StreamDescription"]
        records: list[dict[str, Any]] = []
        for shard in description["Shards"]:
            shard_id = shard["ShardId"]
            iterator = (
                self._iterators.get(shard_id)
                or self._streams.get_shard_iterator(
                    StreamArn=self._arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
            )
            while True:
                page = self._streams.get_records(ShardIterator=iterator)
                records.extend(_as_lambda_record(r, self._arn) for r in page["Records"])
                iterator = page.get("NextShardIterator")
                if not page["Records"] or iterator is None:
                    break
            if iterator is not None:
                self._iterators[shard_id] = iterator
        return records


def _as_lambda_record(record: dict[str, Any], arn: str) -> dict[str, Any]:
    change = dict(record["dynamodb"])
    change.pop("ApproximateCreationDateTime", None)  # a datetime from boto3; Lambda sends epoch seconds
    return {**record, "dynamodb": change, "eventSourceARN": arn}
