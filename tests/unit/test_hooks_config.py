"""`notewell hooks install|uninstall`, the pure part: Notewell's entries go into each client's hook configuration in
the shape that client reads, leave everything else as it was, are not added twice, and come out exactly."""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notewell.domain.hooks import (
    CLIENTS,
    MARKER,
    HookAction,
    HookClient,
    HookConfigError,
    HookSettings,
    config_diff,
    hook_command,
    hook_commands,
    render_config,
    with_hooks,
    without_hooks,
)

PYTHON = "/home/dev/.venv/bin/python"
URL = "http://127.0.0.1:8765/mcp"


def commands(client: HookClient, url: str = URL, project: str | None = "billing-api") -> dict[str, str]:
    return hook_commands(PYTHON, HookSettings(client, project, url))


def test_claude_code_gets_a_command_group_per_event_with_a_timeout() -> None:
    installed = with_hooks({}, CLIENTS[HookClient.CLAUDE_CODE], commands(HookClient.CLAUDE_CODE))

    assert list(installed["hooks"]) == ["SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"]
    (group,) = installed["hooks"]["SessionStart"]
    (entry,) = group["hooks"]
    assert entry["type"] == "command" and entry["timeout"] == 5
    assert shlex.split(entry["command"])[3:5] == ["context", "--client"]
    (group,) = installed["hooks"]["SessionEnd"]
    assert shlex.split(group["hooks"][0]["command"])[3] == "checkpoint"


@pytest.mark.parametrize("client", [HookClient.CLAUDE_CODE, HookClient.CODEX])
def test_the_first_prompt_is_answered_lean_whatever_the_session_starts_with(client: HookClient) -> None:
    deep = hook_commands(PYTHON, HookSettings(client, "billing-api", URL, "deep", 4000))

    words = shlex.split(deep["UserPromptSubmit"])

    assert words[3] == "prompt" and "--detail" not in words and "--max-tokens" not in words


def test_codex_checkpoints_at_each_turn_end_since_it_has_no_session_end() -> None:
    installed = with_hooks({}, CLIENTS[HookClient.CODEX], commands(HookClient.CODEX))

    assert list(installed["hooks"]) == ["SessionStart", "UserPromptSubmit", "PreCompact", "Stop"]


def test_cursor_gets_version_1_and_flat_commands_without_keys_it_does_not_document() -> None:
    installed = with_hooks({}, CLIENTS[HookClient.CURSOR], commands(HookClient.CURSOR))

    assert installed["version"] == 1
    assert list(installed["hooks"]) == ["sessionStart", "preCompact", "sessionEnd"]
    (entry,) = installed["hooks"]["sessionStart"]
    assert set(entry) == {"command"}


USERS_SETTINGS = {
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "make fmt"}]}],
    },
}


def test_the_users_own_settings_and_hooks_are_kept_and_uninstall_gives_them_back_exactly() -> None:
    spec = CLIENTS[HookClient.CLAUDE_CODE]

    installed = with_hooks(USERS_SETTINGS, spec, commands(HookClient.CLAUDE_CODE))

    assert installed["permissions"] == USERS_SETTINGS["permissions"]
    assert installed["hooks"]["SessionStart"][0] == USERS_SETTINGS["hooks"]["SessionStart"][0]
    assert installed["hooks"]["PostToolUse"] == USERS_SETTINGS["hooks"]["PostToolUse"]
    assert without_hooks(installed, spec) == USERS_SETTINGS
    assert render_config(without_hooks(installed, spec)) == render_config(USERS_SETTINGS)


@pytest.mark.parametrize("client", list(HookClient))
def test_uninstalling_what_was_installed_into_nothing_leaves_nothing(client: HookClient) -> None:
    spec = CLIENTS[client]

    assert without_hooks(with_hooks({}, spec, commands(client)), spec) == {}


@pytest.mark.parametrize("client", list(HookClient))
def test_installing_twice_changes_nothing(client: HookClient) -> None:
    spec = CLIENTS[client]
    once = with_hooks(USERS_SETTINGS if spec.grouped else {}, spec, commands(client))

    assert with_hooks(once, spec, commands(client)) == once


def test_installing_again_with_another_url_replaces_the_command_where_it_stands_and_keeps_the_users_edits() -> None:
    spec = CLIENTS[HookClient.CLAUDE_CODE]
    installed = with_hooks(USERS_SETTINGS, spec, commands(HookClient.CLAUDE_CODE))
    installed["hooks"]["PreCompact"][0]["hooks"][0]["timeout"] = 9
    installed["hooks"]["PreCompact"][0]["matcher"] = "auto"

    again = with_hooks(installed, spec, commands(HookClient.CLAUDE_CODE, url="https://notes.example.com/mcp"))

    (group,) = again["hooks"]["PreCompact"]
    assert group["matcher"] == "auto" and group["hooks"][0]["timeout"] == 9
    assert "https://notes.example.com/mcp" in group["hooks"][0]["command"]
    assert json.dumps(again).count(MARKER) == 4  # one command per event, never a second


def test_uninstall_takes_out_only_notewells_command_from_a_group_the_user_shares_with_it() -> None:
    spec = CLIENTS[HookClient.CLAUDE_CODE]
    ours = commands(HookClient.CLAUDE_CODE)["SessionEnd"]
    shared = {"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "say bye"},
                                                  {"type": "command", "command": ours}]}]}}  # fmt: skip

    assert without_hooks(shared, spec) == {
        "hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "say bye"}]}]}
    }


def test_an_older_install_on_an_event_no_longer_used_is_removed_by_the_next_install() -> None:
    spec = CLIENTS[HookClient.CLAUDE_CODE]
    stale = {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": commands(HookClient.CLAUDE_CODE)["PreCompact"]}]}]}
    }

    assert "Stop" not in with_hooks(stale, spec, commands(HookClient.CLAUDE_CODE))["hooks"]


@pytest.mark.parametrize(
    "document", [{"hooks": ["SessionStart"]}, {"hooks": {"SessionStart": {"hooks": []}}}], ids=["list", "object"]
)
def test_a_configuration_in_a_shape_the_client_does_not_read_is_refused(document: dict[str, object]) -> None:
    with pytest.raises(HookConfigError, match="fix it by hand"):
        with_hooks(document, CLIENTS[HookClient.CLAUDE_CODE], commands(HookClient.CLAUDE_CODE))


def test_the_diff_of_a_new_file_adds_every_line_as_git_shows_it() -> None:
    after = render_config({"hooks": {}})

    diff = config_diff(".claude/settings.local.json", None, after)

    assert diff.splitlines()[:2] == ["--- /dev/null", "+++ b/.claude/settings.local.json"]
    assert [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")] == [
        "+{",
        '+  "hooks": {}',
        "+}",
    ]


@pytest.mark.parametrize(
    "text",
    ['{\n    "permissions": {\n        "allow": [\n            "Bash(make test)"\n        ]\n    }\n}\n',
     '{\n\t"model": "opus",\n\t"env": {\n\t\t"A": "é"\n\t}\n}', "{}", "{}\n"],
    ids=["four spaces", "tabs without a final line break", "empty object", "empty object and line break"],
)  # fmt: skip
def test_a_file_is_written_back_in_its_own_layout(text: str) -> None:
    assert render_config(json.loads(text), like=text) == text


def test_a_hand_written_file_keeps_every_line_and_gains_only_notewells() -> None:
    theirs = '{\n  "permissions": {"allow": ["Bash(ls)"]},\n  "env": {"A": "1"}  \n}\n'
    spec = CLIENTS[HookClient.CLAUDE_CODE]
    installed = with_hooks(json.loads(theirs), spec, commands(spec.client))

    written = render_config(installed, like=theirs)

    assert json.loads(written) == installed and written.endswith("}\n")
    assert written.startswith('{\n  "permissions": {"allow": ["Bash(ls)"]},\n  "env": {"A": "1"},\n  "hooks": {\n')
    removed = [line for line in config_diff("s.json", theirs, written).splitlines()[2:] if line.startswith("-")]
    assert removed == ['-  "env": {"A": "1"}  ']  # its last line gains a comma; nothing else of theirs moves


def test_a_file_in_its_own_layout_changes_only_by_notewells_lines() -> None:
    theirs = '{\n    "permissions": {\n        "allow": [\n            "Bash(make test)"\n        ]\n    }\n}\n'
    spec = CLIENTS[HookClient.CLAUDE_CODE]

    diff = config_diff(
        "s.json", theirs, render_config(with_hooks(json.loads(theirs), spec, commands(spec.client)), like=theirs)
    )

    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert [line for line in changed if line.startswith("-")] in ([], ["-    }"])  # at most: now "    },"
    assert {(len(line) - len(line[1:].lstrip(" ")) - 1) % 4 for line in changed} == {0}  # four spaces, as theirs


def test_a_command_survives_an_interpreter_path_with_spaces_and_names_no_project_in_user_scope() -> None:
    python = "/Users/Dev Person/venv/bin/python"
    command = hook_command(python, HookAction.CONTEXT, HookSettings(HookClient.CODEX, None, URL, "deep", 1500))

    words = shlex.split(command)
    assert words[0] == python
    assert "--project" not in words
    assert words[-4:] == ["--detail", "deep", "--max-tokens", "1500"]


# ----- the inverse, for any configuration a user could have ------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
_command = st.fixed_dictionaries({"type": st.just("command"), "command": _text},
                                 optional={"timeout": st.integers(1, 600)})  # fmt: skip
_group = st.fixed_dictionaries({"hooks": st.lists(_command, min_size=1, max_size=3)}, optional={"matcher": _text})
_events = st.sampled_from(["SessionStart", "PreCompact", "SessionEnd", "Stop", "PostToolUse", "Notification"])
_grouped_hooks = st.dictionaries(_events, st.lists(_group, min_size=1, max_size=3), max_size=4)
_cursor_events = st.sampled_from(["sessionStart", "preCompact", "sessionEnd", "stop", "afterFileEdit"])
_cursor_hooks = st.dictionaries(
    _cursor_events, st.lists(st.fixed_dictionaries({"command": _text}), min_size=1), max_size=4
)
_others = st.dictionaries(st.sampled_from(["permissions", "env", "model", "theme"]), _text, max_size=3)


@settings(max_examples=150, deadline=None)
@given(others=_others, hooks=_grouped_hooks, client=st.sampled_from([HookClient.CLAUDE_CODE, HookClient.CODEX]))
def test_uninstall_is_the_exact_inverse_of_install_for_any_grouped_configuration(
    others: dict[str, object], hooks: dict[str, object], client: HookClient
) -> None:
    document = {**others, **({"hooks": hooks} if hooks else {})}
    spec = CLIENTS[client]

    installed = with_hooks(document, spec, commands(client))

    assert with_hooks(installed, spec, commands(client)) == installed
    assert without_hooks(installed, spec) == document


@settings(max_examples=100, deadline=None)
@given(others=_others, hooks=_cursor_hooks)
def test_uninstall_is_the_exact_inverse_of_install_for_any_cursor_configuration(
    others: dict[str, object], hooks: dict[str, object]
) -> None:
    document = {"version": 1, **others, "hooks": hooks} if hooks else dict(others)
    spec = CLIENTS[HookClient.CURSOR]

    installed = with_hooks(document, spec, commands(HookClient.CURSOR))

    assert with_hooks(installed, spec, commands(HookClient.CURSOR)) == installed
    assert without_hooks(installed, spec) == document
