"""What a checkpoint hook makes of a session, without a language model: the person's requests, where the agent
stopped, its unfinished to-do items, the decisions it recorded in Notewell and the files git saw change, read from
each client's transcript format (tests/fixtures/hooks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notewell.domain.hooks import (
    CHECKPOINT_NOTICE,
    HookClient,
    HookMoment,
    SessionRecord,
    checkpoint_request,
    context_output,
    files_touched,
    read_session,
    session_context,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
PROJECT = "billing-api"


def transcript(client: str, name: str) -> list[str]:
    return (FIXTURES / client / name).read_text().splitlines()


def test_a_claude_code_transcript_gives_the_persons_requests_not_commands_or_client_notes() -> None:
    record = read_session(transcript("claude-code", "transcript.jsonl"), PROJECT)

    assert record.prompts == (
        "Cap webhook retries at 3 and make the delay exponential; the partner rate-limits us.",
        "Also log each failed attempt with the delivery id.",
    )
    assert record.last_reply is not None and record.last_reply.startswith("Retries are capped at 3")
    assert record.started_at == "2026-08-20T09:00:00.000Z"


def test_open_items_are_the_unfinished_entries_of_the_latest_to_do_list() -> None:
    record = read_session(transcript("claude-code", "transcript.jsonl"), PROJECT)

    assert record.open_items == ("Send exhausted deliveries to a dead-letter queue",)


def test_decisions_are_those_recorded_through_notewell_in_this_project_only() -> None:
    record = read_session(transcript("claude-code", "transcript.jsonl"), PROJECT)

    assert record.decisions == ("Webhook deliveries retry at most 3 times, because the partner rate-limits us.",)
    assert read_session(transcript("claude-code", "transcript.jsonl"), "another-project").decisions == ()


def test_a_codex_rollout_gives_requests_plan_items_and_decisions_from_its_function_calls() -> None:
    record = read_session(transcript("codex", "rollout.jsonl"), PROJECT)

    assert record.prompts == ("Make the CSV importer skip blank lines instead of failing.",)
    assert record.open_items == ("Report skipped line numbers in the import summary",)
    assert record.decisions == ("The CSV importer skips blank lines instead of failing the whole import.",)
    assert record.last_reply is not None and record.last_reply.startswith("The importer now skips blank lines")
    assert record.started_at == "2026-08-21T14:00:00.000Z"


def test_a_cursor_transcript_gives_the_text_inside_user_query() -> None:
    record = read_session(transcript("cursor", "transcript.jsonl"), PROJECT)

    assert record.prompts == ("Add cursor pagination to GET /notes", "Keep the page size at 50")
    assert record.last_reply == "GET /notes now takes a cursor and returns 50 notes a page with the next cursor."


def _line(kind: str, content: object) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}})


def _call(name: str, arguments: dict[str, object]) -> str:
    return _line("assistant", [{"type": "tool_use", "id": "t", "name": name, "input": arguments}])


def test_the_agents_own_checkpoint_closes_the_session_until_the_person_asks_something_else() -> None:
    lines = [
        _line("user", "Rename the billing job"),
        _call(
            "mcp__notewell__checkpoint", {"project": PROJECT, "summary": "Renamed.", "decisions": ["Jobs are verbs."]}
        ),
    ]

    closed = read_session(lines, PROJECT)
    reopened = read_session([*lines, _line("user", "Now update the docs")], PROJECT)

    assert closed.checkpointed and closed.decisions == ("Jobs are verbs.",)
    assert not reopened.checkpointed


def test_unreadable_lines_and_lines_too_long_to_be_a_request_are_skipped() -> None:
    lines = ["{not json", "[1, 2]", _line("user", "x" * 300_000), _line("user", "Fix the flaky test")]

    assert read_session(lines, PROJECT).prompts == ("Fix the flaky test",)


MOMENT = HookMoment(HookClient.CLAUDE_CODE, "5c1e7f0a-9d2b-4c55-8a0e-2b6f1d3c9e41", "SessionEnd", "prompt_input_exit")


def test_the_checkpoint_opens_with_the_first_request_and_says_where_the_session_stopped() -> None:
    record = read_session(transcript("claude-code", "transcript.jsonl"), PROJECT)

    request = checkpoint_request(record, ["billing/webhooks.py"], project=PROJECT, moment=MOMENT)

    assert request is not None
    summary = str(request["summary"])
    assert summary.splitlines()[0] == record.prompts[0]
    assert "Claude Code session 5c1e7f0a-9d2b-4c55-8a0e-2b6f1d3c9e41" in summary
    assert "(SessionEnd: prompt_input_exit)" in summary
    assert "Where it stopped: Retries are capped at 3" in summary
    assert "Also asked:\n- Also log each failed attempt with the delivery id." in summary
    assert "Decisions recorded:\n- Webhook deliveries retry at most 3 times" in summary
    assert "Files touched (git): billing/webhooks.py" in summary
    assert request["openItems"] == ["Send exhausted deliveries to a dead-letter queue"]
    assert "decisions" not in request  # stored already: listed in the handoff, not admitted a second time


def test_the_same_session_content_gets_the_same_idempotency_key_and_new_content_a_new_one() -> None:
    record = read_session(transcript("codex", "rollout.jsonl"), PROJECT)
    moment = HookMoment(HookClient.CODEX, "019a2d7a", "Stop")

    first = checkpoint_request(record, [], project=PROJECT, moment=moment)
    again = checkpoint_request(record, [], project=PROJECT, moment=moment)
    later = checkpoint_request(record, ["billing/importer.py"], project=PROJECT, moment=moment)

    assert first is not None and again is not None and later is not None
    assert first["idempotencyKey"] == again["idempotencyKey"]
    assert first["idempotencyKey"] != later["idempotencyKey"]
    assert str(first["idempotencyKey"]).startswith("hook:019a2d7a:")


def test_a_session_with_nothing_to_hand_off_sends_no_checkpoint() -> None:
    assert checkpoint_request(SessionRecord(), [], project=PROJECT, moment=MOMENT) is None


def test_without_a_transcript_the_clients_last_message_and_git_still_make_a_handoff() -> None:
    stop = json.loads((FIXTURES / "claude-code" / "Stop.json").read_text())

    request = checkpoint_request(
        SessionRecord(), ["README.md"], project=PROJECT, moment=MOMENT, last_message=stop["last_assistant_message"]
    )

    assert request is not None
    assert "Where it stopped: Retries are capped at 3 with exponential backoff." in str(request["summary"])
    assert "Files touched (git): README.md" in str(request["summary"])


def test_files_touched_reads_renames_spaces_and_commits_each_once() -> None:
    status = " M billing/webhooks.py\0R  docs/new name.md\0docs/old name.md\0?? notes/\0"
    committed = "billing/webhooks.py\nbilling/retry.py\n\n"

    assert files_touched(status, committed) == (
        "billing/webhooks.py", "docs/new name.md", "notes/", "billing/retry.py"
    )  # fmt: skip


def test_a_session_starts_with_leading_notes_then_the_context_then_what_the_hooks_do() -> None:
    text = session_context("# billing-api: lean context\n## Decisions", leading=["## Notes on files you changed"])

    assert text.split("\n\n") == ["## Notes on files you changed", "# billing-api: lean context\n## Decisions",
                                  CHECKPOINT_NOTICE]  # fmt: skip


@pytest.mark.parametrize(
    ("client", "path"),
    [
        (HookClient.CLAUDE_CODE, ("hookSpecificOutput", "additionalContext")),
        (HookClient.CODEX, ("hookSpecificOutput", "additionalContext")),
        (HookClient.CURSOR, ("additional_context",)),
    ],
)
def test_the_context_goes_where_each_client_reads_it(client: HookClient, path: tuple[str, ...]) -> None:
    output: object = json.loads(context_output(client, "Décisions: 3 retries"))

    for key in path:
        assert isinstance(output, dict)
        output = output[key]
    assert output == "Décisions: 3 retries"
