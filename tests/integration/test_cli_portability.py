"""`notewell export` and `notewell import` as a person runs them, against a data directory."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from notewell.entrypoints.cli import main

MEMORY = [
    {"type": "entity", "name": "Alice", "entityType": "Person", "observations": ["Likes tea", "Works remotely"]},
    {"type": "entity", "name": "Acme", "entityType": "organization", "observations": ["Makes anvils"]},
    {"type": "entity", "name": "Anvil", "entityType": "product", "observations": ["Heavy — très lourd"]},
    {"type": "relation", "from": "Alice", "to": "Acme", "relationType": "works_at"},
    {"type": "relation", "from": "Acme", "to": "Anvil", "relationType": "produces"},
]


@pytest.fixture
def memory_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.jsonl"
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in MEMORY), encoding="utf-8")
    return path


def without_exported_at(text: str) -> list[str]:
    lines = text.splitlines()
    header = json.loads(lines[0])
    assert header.pop("exportedAt")
    return [json.dumps(header), *lines[1:]]


def notes_of(text: str) -> dict[str, dict[str, object]]:
    return {r["title"]: r for r in map(json.loads, text.splitlines()[2:]) if r["kind"] == "note"}


def test_import_export_and_import_into_another_project(
    tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    assert main(["import", str(memory_file), "--project", "mem", *data]) == 0
    captured = capsys.readouterr()
    assert "Imported a memory.jsonl file into project mem: 3 notes written" in captured.out
    assert "\r" not in captured.err  # not a terminal: no progress bar
    assert main(["import", str(memory_file), "--project", "mem", "--json", *data]) == 0
    assert json.loads(capsys.readouterr().out)["notesWritten"] == 0

    export = tmp_path / "mem.jsonl"
    assert main(["export", "--project", "mem", "--out", str(export), *data]) == 0
    assert capsys.readouterr().out == f"Exported project mem to {export} (3 notes).\n"
    exported = export.read_text(encoding="utf-8")
    assert not (tmp_path / "mem.jsonl.partial").exists()
    assert "très lourd" in exported and exported.endswith("\n")

    # Into another project of the same workspace: the same notes, under new ids, links following them.
    assert main(["import", str(export), "--project", "copy", "--json", *data]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "notewell-export" and report["notesWritten"] == 3 and report["idsReassigned"] == 3
    assert main(["export", "--project", "copy", *data]) == 0
    copied = capsys.readouterr().out
    original, copy = notes_of(exported), notes_of(copied)
    assert {t: (n["body"], n["tags"]) for t, n in copy.items()} == {
        t: (n["body"], n["tags"]) for t, n in original.items()
    }
    assert copy["Alice"]["id"] != original["Alice"]["id"]
    assert copy["Alice"]["links"] == [{"target": copy["Acme"]["id"], "relation": "works_at"}]

    # Into a fresh data directory under the same slug: byte-identical but for exportedAt.
    fresh = ["--data-dir", str(tmp_path / "fresh")]
    assert main(["import", str(export), "--project", "mem", *fresh]) == 0
    capsys.readouterr()
    assert main(["export", "--project", "mem", *fresh]) == 0
    assert without_exported_at(capsys.readouterr().out) == without_exported_at(exported)


def test_errors_exit_with_code_2_and_a_message(
    tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(memory_file.read_text(encoding="utf-8") + '{"type":"relation","from":"Alice"}\nnot json\n')
    assert main(["import", str(bad), "--project", "mem", *data]) == 2
    err = capsys.readouterr().err
    assert err.startswith("notewell: Nothing was imported: the file has 2 problems")
    assert "line 6: the field 'to' is missing" in err and "line 7: not valid JSON" in err

    assert main(["import", str(tmp_path / "missing.jsonl"), "--project", "mem", *data]) == 2
    assert "Cannot read" in capsys.readouterr().err
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"type":"entity","name":"caf\u00e9","entityType":"x","observations":[]}\n'.encode("latin-1"))
    assert main(["import", str(latin), "--project", "mem", *data]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err
    assert main(["export", "--project", "nope", "--out", str(tmp_path / "x.jsonl"), *data]) == 2
    assert "No project 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_is_drawn_on_a_terminal_only(
    tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["import", str(memory_file), "--project", "mem", "--data-dir", str(tmp_path)]) == 0
    drawn = terminal.getvalue()
    assert "\rImporting notes [" in drawn and drawn.rstrip().endswith("3/3") and drawn.endswith("\n")
    assert "\r" not in capsys.readouterr().out


def test_export_and_import_work_against_dynamodb(
    tmp_path: Path, memory_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.dynamo import dynamodb_store

    monkeypatch.setenv("NOTEWELL_CURSOR_SECRET", "test-secret")  # the stack provides it; the CLI needs no MCP
    with dynamodb_store("notewell-cli"):
        dynamo = ["--backend", "dynamodb", "--table", "notewell-cli", "--data-dir", str(tmp_path)]
        assert main(["import", str(memory_file), "--project", "mem", *dynamo]) == 0
        assert "3 notes written" in capsys.readouterr().out
        export = tmp_path / "mem.jsonl"
        assert main(["export", "--project", "mem", "--out", str(export), *dynamo]) == 0
        assert main(["import", str(export), "--project", "copy", "--json", *dynamo]) == 0
        out = capsys.readouterr().out.splitlines()
        assert json.loads(out[-1])["notesWritten"] == 3
        assert main(["import", str(memory_file), "--project", "mem", "--json", *dynamo]) == 0
        assert json.loads(capsys.readouterr().out)["notesWritten"] == 0
    assert notes_of(export.read_text(encoding="utf-8"))["Alice"]["tags"] == ["person"]
