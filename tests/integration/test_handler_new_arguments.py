"""The branch and anchor arguments through the deployed MCP handler, in both protocol eras: the API Gateway events
in events/ (mcp_<era>_get_context_branch, _update_project_branches, _remember_anchors_branch, _checkpoint_branch,
_update_note_anchors, _get_note) invoked as Lambda does, DynamoDB served by moto. Each test reads only what a
client reads: the HTTP status, the tool result's text and its structuredContent."""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

import pytest

from functions.mcp import app as mcp_function
from notewell.domain.refs import name_of
from tests.integration.test_lambda_handler import FakeContext, body_of, lambda_env, load_event  # noqa: F401

ERAS = ["legacy", "modern"]
CREATE_NOTE = {"legacy": "mcp_legacy_create_note", "modern": "mcp_modern_create_note_base64"}
FEATURE = "feature/lambda-timeouts"  # the branch the remember and checkpoint events write on
LEFT_OUT_ONE = "1 note of other unmerged branches left out; allBranches: true shows them."

_request_ids = itertools.count()


def arguments_of(name: str) -> dict[str, Any]:
    """The tool arguments events/<name>.json sends."""
    event = load_event(name)
    raw = base64.b64decode(event["body"]) if event.get("isBase64Encoded") else event["body"]
    arguments: dict[str, Any] = json.loads(raw)["params"]["arguments"]
    return arguments


def event(name: str, api_key: str, **changes: object) -> dict[str, Any]:
    """events/<name>.json with the key in place and `changes` made to its arguments, in the event's own encoding
    (the events' REPLACE_WITH_NOTE_ID is such a change)."""
    loaded = load_event(name, api_key)
    encoded = loaded.get("isBase64Encoded", False)
    call = json.loads(base64.b64decode(loaded["body"]) if encoded else loaded["body"])
    call["params"]["arguments"].update(changes)
    body = json.dumps(call)
    loaded["body"] = base64.b64encode(body.encode()).decode() if encoded else body
    return loaded


def answer(sent: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The handler's answer to one event: a 200 carrying a successful tool result, as (structuredContent, text)."""
    response = mcp_function.handler(sent, FakeContext(f"req-new-arguments-{next(_request_ids)}"))
    assert response["statusCode"] == 200, response.get("body")
    result: dict[str, Any] = body_of(response)["result"]
    assert not result.get("isError"), result
    (text,) = [block["text"] for block in result["content"] if block["type"] == "text"]
    return result["structuredContent"], text


def ids_in(context: dict[str, Any]) -> set[str]:
    return {entry["id"] for section in context["sections"] for entry in section["entries"]}


def anchored_facts(anchors: list[dict[str, Any]]) -> list[str]:
    """The header facts get_note's text gives each anchor, as `notewell anchor` names what was anchored."""
    facts = []
    for anchor in anchors:
        lines = f"{anchor['lines']['start']}-{anchor['lines']['end']}"
        label = (
            f"{anchor['path']}#{anchor['symbol']} (lines {lines})"
            if "symbol" in anchor
            else f"{anchor['path']}:{lines}"
        )
        facts.append(f"anchored to {label} at {anchor['commit'][:12]}")
    return facts


@pytest.mark.parametrize("era", ERAS)
def test_get_context_on_a_branch_hides_and_counts_other_unmerged_branches_and_all_branches_shows_them(
    lambda_env: str,  # noqa: F811
    era: str,
) -> None:
    on_default = answer(event(CREATE_NOTE[era], lambda_env))[0]["id"]
    on_feature = answer(event(f"mcp_{era}_remember_anchors_branch", lambda_env))[0]["note"]["id"]

    context, text = answer(event(f"mcp_{era}_get_context_branch", lambda_env))
    assert ids_in(context) == {on_default}
    assert context["otherBranches"] == 1 and context["notice"] == LEFT_OUT_ONE
    assert LEFT_OUT_ONE in text and f"- {name_of(on_default)} " in text and name_of(on_feature) not in text

    everything, text = answer(event(f"mcp_{era}_get_context_branch", lambda_env, allBranches=True))
    assert ids_in(everything) == {on_default, on_feature}
    assert "otherBranches" not in everything and "left out" not in text and f"- {name_of(on_feature)} " in text


@pytest.mark.parametrize("era", ERAS)
def test_update_project_sets_the_default_branch_and_records_merges_that_get_context_then_follows(
    lambda_env: str,  # noqa: F811
    era: str,
) -> None:
    assert arguments_of(f"mcp_{era}_update_project_branches") == {
        "project": "demo", "defaultBranch": "trunk", "mergedBranches": [FEATURE],
    }  # fmt: skip
    on_trunk = answer(event(CREATE_NOTE[era], lambda_env, branch="trunk"))[0]["id"]  # trunk is not the default yet
    on_feature = answer(event(f"mcp_{era}_remember_anchors_branch", lambda_env))[0]["note"]["id"]
    trunk_before = answer(event(f"mcp_{era}_get_context_branch", lambda_env))[0]
    feature_before = answer(event(f"mcp_{era}_get_context_branch", lambda_env, branch=FEATURE))[0]
    assert (ids_in(trunk_before), trunk_before["otherBranches"]) == ({on_trunk}, 1)
    assert (ids_in(feature_before), feature_before["otherBranches"]) == ({on_feature}, 1)

    project, text = answer(event(f"mcp_{era}_update_project_branches", lambda_env))
    assert project["project"] == "demo" and json.loads(text) == project

    trunk_after, text = answer(event(f"mcp_{era}_get_context_branch", lambda_env))
    assert ids_in(trunk_after) == {on_trunk, on_feature}  # the merged branch's notes are the default branch's now
    assert "otherBranches" not in trunk_after and "notice" not in trunk_after and "left out" not in text
    feature_after = answer(event(f"mcp_{era}_get_context_branch", lambda_env, branch=FEATURE))[0]
    assert ids_in(feature_after) == {on_trunk, on_feature}  # trunk is the default: every branch sees its notes
    assert "otherBranches" not in feature_after


@pytest.mark.parametrize("era", ERAS)
def test_remember_stores_the_anchors_and_the_branch_it_was_sent(lambda_env: str, era: str) -> None:  # noqa: F811
    sent = arguments_of(f"mcp_{era}_remember_anchors_branch")
    assert sent["branch"] == FEATURE and sent["anchors"]
    on_default = answer(event(CREATE_NOTE[era], lambda_env))[0]["id"]

    remembered, text = answer(event(f"mcp_{era}_remember_anchors_branch", lambda_env))
    note_id = remembered["note"]["id"]
    assert remembered["status"] == "created" and f"Stored as {note_id}." in text
    assert "anchors" not in remembered["note"]  # writes answer lean

    full, text = answer(event(f"mcp_{era}_get_note", lambda_env, id=note_id))
    assert full["id"] == note_id and full["anchors"] == sent["anchors"]
    assert all(fact in text for fact in anchored_facts(sent["anchors"])), text

    on_its_branch = answer(event(f"mcp_{era}_get_context_branch", lambda_env, branch=FEATURE))[0]
    on_trunk, text = answer(event(f"mcp_{era}_get_context_branch", lambda_env))
    assert note_id in ids_in(on_its_branch) and "otherBranches" not in on_its_branch
    assert ids_in(on_trunk) == {on_default} and on_trunk["otherBranches"] == 1 and LEFT_OUT_ONE in text


@pytest.mark.parametrize("era", ERAS)
def test_checkpoint_files_its_handoff_and_items_on_the_branch_it_was_sent(lambda_env: str, era: str) -> None:  # noqa: F811
    assert arguments_of(f"mcp_{era}_checkpoint_branch")["branch"] == FEATURE
    on_default = answer(event(CREATE_NOTE[era], lambda_env))[0]["id"]

    done, text = answer(event(f"mcp_{era}_checkpoint_branch", lambda_env))
    assert json.loads(text) == done
    assert [(item["kind"], item["status"]) for item in done["items"]] == [
        ("decision", "created"), ("open_item", "created"),
    ]  # fmt: skip
    written = {done["handoff"]["id"], *(item["id"] for item in done["items"])}

    on_its_branch = answer(event(f"mcp_{era}_get_context_branch", lambda_env, branch=FEATURE))[0]
    assert written <= ids_in(on_its_branch) and "otherBranches" not in on_its_branch
    status = next(s["entries"] for s in on_its_branch["sections"] if s["name"] == "status")
    assert [entry["id"] for entry in status] == [done["handoff"]["id"]]

    on_trunk, text = answer(event(f"mcp_{era}_get_context_branch", lambda_env))
    assert ids_in(on_trunk) == {on_default} and on_trunk["otherBranches"] == 3
    assert "3 notes of other unmerged branches left out; allBranches: true shows them." in text


@pytest.mark.parametrize("era", ERAS)
def test_get_context_on_a_branch_that_sees_none_of_the_projects_notes_says_they_were_left_out(
    lambda_env: str,  # noqa: F811
    era: str,
) -> None:
    """Every note of the project is on another unmerged branch: the reader is told they exist and how to see
    them, not that the project is empty and should be filled."""
    on_feature = answer(event(f"mcp_{era}_remember_anchors_branch", lambda_env))[0]["note"]["id"]

    context, text = answer(event(f"mcp_{era}_get_context_branch", lambda_env))
    assert ids_in(context) == set() and context["otherBranches"] == 1
    assert context["notice"] == LEFT_OUT_ONE and LEFT_OUT_ONE in text
    assert "has no current notes" not in text
    assert on_feature in ids_in(answer(event(f"mcp_{era}_get_context_branch", lambda_env, allBranches=True))[0])


@pytest.mark.parametrize("era", ERAS)
def test_update_note_replaces_the_anchors_and_an_empty_list_removes_them(lambda_env: str, era: str) -> None:  # noqa: F811
    first = arguments_of(f"mcp_{era}_remember_anchors_branch")["anchors"]
    replacing = arguments_of(f"mcp_{era}_update_note_anchors")["anchors"]
    assert {a["path"] for a in first}.isdisjoint(a["path"] for a in replacing)  # a replace, not a merge, shows
    note_id = answer(event(CREATE_NOTE[era], lambda_env, anchors=first))[0]["id"]

    updated = answer(event(f"mcp_{era}_update_note_anchors", lambda_env, id=note_id))[0]
    assert (updated["id"], updated["version"]) == (note_id, 2) and "anchors" not in updated
    full, text = answer(event(f"mcp_{era}_get_note", lambda_env, id=note_id))
    assert full["anchors"] == replacing
    assert all(fact in text for fact in anchored_facts(replacing)) and not any(f in text for f in anchored_facts(first))

    cleared = answer(event(f"mcp_{era}_update_note_anchors", lambda_env, id=note_id, anchors=[], expectedVersion=2))[0]
    assert cleared["version"] == 3
    full, text = answer(event(f"mcp_{era}_get_note", lambda_env, id=note_id))
    assert "anchors" not in full and "anchored to" not in text and full["version"] == 3
