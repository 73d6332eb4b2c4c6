"""The bodies the OpenSearch adapter sends, pinned in golden files (tests/golden/opensearch/) and checked against the
documented syntax: syntax.json, JSON Schemas written from the AWS Serverless and OpenSearch documentation it cites,
which itself must accept the documentation's own examples and refuse what the documentation warns of
(documented.json). A change to a body fails here until its golden file is rewritten, after a look at the docs.

An operator would notice the difference: an index whose vector field names no engine is built with nmslib on a
Serverless collection, and every semantic query, which filters inside `knn`, is then refused with HTTP 400."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft202012Validator

from notewell.adapters.opensearch import (
    alias_actions,
    index_settings,
    keyword_query,
    missing_vectors_query,
    vector_query,
    vectors_query,
)
from notewell.domain.model import NoteStatus, NoteType, SearchFilters

if TYPE_CHECKING:
    from collections.abc import Callable

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "opensearch"
MODEL = "amazon.titan-embed-text-v2:0/1024"
FILTERS = SearchFilters(
    types=frozenset({NoteType.DECISION}), statuses=frozenset({NoteStatus.CURRENT}), tags=frozenset({"db"})
)

# golden file -> (the request kind in syntax.json, the body as the adapter builds it)
BODIES: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "create_index": ("create_index", lambda: index_settings(1024)),
    "vector_query": ("search", lambda: vector_query("ws_golden", "prj_golden", MODEL, (3.0, 4.0), 20)),  # sent as unit
    "keyword_query": ("search", lambda: keyword_query("ws_golden", "prj_golden", "orders database", FILTERS, 20)),
    "vectors_query": ("search", lambda: vectors_query("ws_golden", ["n_1", "n_2"], MODEL)),
    "missing_vectors_query": ("search", lambda: missing_vectors_query(100, ("ws_golden", "n_1"))),
    "alias_swap": ("aliases", lambda: alias_actions("notes", "notes-new", ["notes-old"])),
}


def load(name: str) -> Any:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


def problems(kind: str, body: Any) -> list[str]:
    schema = load("syntax")[kind]
    Draft202012Validator.check_schema(schema)
    errors = Draft202012Validator(schema).iter_errors(body)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


@pytest.mark.parametrize("name", sorted(BODIES))
def test_each_body_sent_is_its_golden_file(name: str) -> None:
    _, build = BODIES[name]
    assert build() == load(name), f"{name}.json: if the change is meant, check it against syntax.json, then rewrite it"


@pytest.mark.parametrize("name", sorted(BODIES))
def test_each_golden_body_keeps_to_the_documented_syntax(name: str) -> None:
    kind, _ = BODIES[name]
    assert problems(kind, load(name)) == []


EXAMPLES = load("documented")["examples"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_the_syntax_accepts_the_documented_examples_and_refuses_what_the_docs_warn_of(example: dict[str, Any]) -> None:
    found = problems(example["kind"], example["body"])
    assert (found == []) is example["valid"], found


def test_an_index_without_a_named_engine_is_refused_for_its_missing_method() -> None:
    body = index_settings(1024)
    del body["mappings"]["properties"]["embedding"]["method"]  # what the adapter sent before: nmslib on Serverless
    assert problems("create_index", body) == ["mappings/properties/embedding: 'method' is a required property"]
