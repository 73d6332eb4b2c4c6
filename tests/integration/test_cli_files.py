"""What the command line leaves on disk, and how it fails, as a person sees it: real processes, real files.

The data directory is its owner's only (0700; the database, its -wal/-shm and the cursor key 0600), `export --out`
never replaces anything but a regular file and never opens a name someone else planted, and every failure is one
`notewell: …` line on stderr with exit code 2.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from notewell.adapters.system import KEY_BYTES, load_or_create_key
from notewell.entrypoints.cli import main


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment without the caller's AWS or Notewell settings, and no way for botocore to find others."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "NOTEWELL_"))}
    env.update(
        HOME=str(home),
        AWS_CONFIG_FILE=str(home / "no-aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(home / "no-aws-credentials"),
        AWS_EC2_METADATA_DISABLED="true",  # never ask the network for credentials
    )
    env.update(extra)
    return env


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "notewell.entrypoints.cli", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        umask=0o022,  # the common default: what SQLite and open() would otherwise let the group and others read
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("notewell: "), result.stderr
    return lines[0]


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# ----- private files -------------------------------------------------------------------------------------------


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Path]:
    """`notewell serve` running on a fresh data directory (with umask 022): its database is open, WAL and all."""
    data = tmp_path / "home" / "notewell"
    process = subprocess.Popen(
        [sys.executable, "-m", "notewell.entrypoints.cli", "serve", "--port", "0", "--data-dir", str(data)],
        env=clean_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        umask=0o022,
    )
    try:
        assert process.stdout is not None
        printed = [process.stdout.readline() for _ in range(3)]
        assert printed[0].startswith("Notewell serving http://127.0.0.1:"), printed  # the key is created by now
        yield data
    finally:
        process.terminate()
        process.wait(10)
        assert process.stdout is not None
        process.stdout.close()


def test_the_data_directory_and_every_file_in_it_are_private_to_their_owner(serving: Path) -> None:
    assert mode_of(serving) == 0o700
    names = {"notewell.db", "notewell.db-wal", "notewell.db-shm", "cursor.key"}
    assert names <= {p.name for p in serving.iterdir()}
    assert {name: mode_of(serving / name) for name in names} == dict.fromkeys(names, 0o600)


def test_a_database_an_older_version_left_readable_is_made_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_cli(["keys", "create", "--data-dir", str(data)], clean_env(tmp_path)).returncode == 0
    (data / "notewell.db").chmod(0o644)
    (data / "cursor.key").chmod(0o644)
    assert run_cli(["keys", "list", "--data-dir", str(data)], clean_env(tmp_path)).returncode == 0
    assert mode_of(data / "notewell.db") == 0o600
    assert mode_of(data / "cursor.key") == 0o600


# ----- the cursor key ------------------------------------------------------------------------------------------


def test_a_cursor_key_cut_short_by_a_crash_is_replaced_by_a_whole_one(tmp_path: Path) -> None:
    key_file = tmp_path / "cursor.key"
    key_file.write_bytes(b"")  # what writing the key in place left after a crash
    key = load_or_create_key(key_file)
    assert len(key) == KEY_BYTES and key_file.read_bytes() == key and mode_of(key_file) == 0o600
    assert load_or_create_key(key_file) == key  # and from then on it is kept


def test_callers_creating_the_cursor_key_at_once_all_use_the_same_one(tmp_path: Path) -> None:
    key_file = tmp_path / "cursor.key"
    start = threading.Barrier(8)

    def create() -> bytes:
        start.wait()
        return load_or_create_key(key_file)

    with ThreadPoolExecutor(8) as pool:
        keys = list(pool.map(lambda _: create(), range(8)))
    assert set(keys) == {key_file.read_bytes()} and len(keys[0]) == KEY_BYTES
    assert [p.name for p in tmp_path.iterdir()] == ["cursor.key"]  # no temporary file is left behind


# ----- export --out --------------------------------------------------------------------------------------------


@pytest.fixture
def data_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    data = ["--data-dir", str(tmp_path / "data")]
    memory = tmp_path / "memory.jsonl"
    memory.write_text('{"type":"entity","name":"Alice","entityType":"person","observations":["Likes tea"]}\n')
    assert main(["import", str(memory), "--project", "mem", *data]) == 0
    capsys.readouterr()
    return data


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_directory(path: Path) -> None:
    path.mkdir()
    (path / "inside.txt").write_text("kept")


def link_to_device(path: Path) -> None:
    path.symlink_to(os.devnull)  # a device without replacing the real /dev/null if the check were missing


@pytest.mark.parametrize(
    ("make", "kind", "check"),
    [
        (make_fifo, "a FIFO", lambda p: stat.S_ISFIFO(p.lstat().st_mode)),
        (make_directory, "a directory", lambda p: (p / "inside.txt").read_text() == "kept"),
        (link_to_device, "a device", lambda p: p.is_symlink() and stat.S_ISCHR(p.stat().st_mode)),
    ],
    ids=["fifo", "directory", "device"],
)
def test_export_never_replaces_a_fifo_a_directory_or_a_device(
    tmp_path: Path,
    data_dir: list[str],
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], None],
    kind: str,
    check: Callable[[Path], bool],
) -> None:
    target = tmp_path / "target"
    make(target)
    assert main(["export", "--project", "mem", "--out", str(target), *data_dir]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"notewell: {target} is {kind}; give --out the path of a file to create or replace, or leave --out out to "
        "write to standard output."
    ]
    assert check(target)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_export_never_writes_through_a_symlink_planted_at_a_temporary_name(
    tmp_path: Path, data_dir: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "mem.jsonl"
    planted = tmp_path / "mem.jsonl.partial"  # the name earlier versions wrote to first
    planted.symlink_to(victim)
    assert main(["export", "--project", "mem", "--out", str(out), *data_dir]) == 0
    assert "(1 notes)" in capsys.readouterr().out
    assert victim.read_text() == "precious" and planted.is_symlink()
    assert '"title":"Alice"' in out.read_text(encoding="utf-8") and mode_of(out) == 0o600
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["data", "mem.jsonl", "mem.jsonl.partial", "memory.jsonl", "victim.txt"]


def test_export_onto_a_symlink_replaces_the_link_not_the_file_it_points_to(
    tmp_path: Path, data_dir: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "mem.jsonl"
    out.symlink_to(victim)
    assert main(["export", "--project", "mem", "--out", str(out), *data_dir]) == 0
    capsys.readouterr()
    assert victim.read_text() == "precious"
    assert not out.is_symlink() and '"title":"Alice"' in out.read_text(encoding="utf-8")


# ----- one line, exit code 2 -----------------------------------------------------------------------------------


def file_as_data_dir(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    (tmp_path / "notes").write_text("not a directory")
    return ["keys", "list", "--data-dir", str(tmp_path / "notes")], clean_env(tmp_path)


def data_dir_under_a_file(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    (tmp_path / "notes").write_text("not a directory")
    return ["export", "--project", "p", "--data-dir", str(tmp_path / "notes" / "data")], clean_env(tmp_path)


def corrupt_database(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notewell.db").write_bytes(b"this is not an SQLite database, only text " * 10)
    return ["keys", "list"], clean_env(tmp_path, NOTEWELL_HOME=str(tmp_path / "data"))


def database_from_a_newer_notewell(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    (tmp_path / "data").mkdir()
    with sqlite3.connect(tmp_path / "data" / "notewell.db") as connection:
        connection.execute("PRAGMA user_version = 999")
    connection.close()
    return ["import", "-", "--project", "p", "--data-dir", str(tmp_path / "data")], clean_env(tmp_path)


DYNAMO = ["keys", "list", "--backend", "dynamodb", "--table", "notewell"]


def no_aws_region(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    return DYNAMO, clean_env(tmp_path, NOTEWELL_CURSOR_SECRET="s")


def no_stack_secret(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    return DYNAMO, clean_env(tmp_path, AWS_REGION="eu-west-1")


def no_aws_credentials(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    # An endpoint nothing listens on: the missing credentials are noticed before any connection is tried.
    env = clean_env(tmp_path, AWS_REGION="eu-west-1", NOTEWELL_CURSOR_SECRET="s")
    return DYNAMO, {**env, "NOTEWELL_DYNAMODB_ENDPOINT": "http://127.0.0.1:9"}


def unknown_aws_profile(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    return DYNAMO, clean_env(tmp_path, AWS_REGION="eu-west-1", AWS_PROFILE="nope", NOTEWELL_CURSOR_SECRET="s")


FAILURES = [
    (file_as_data_dir, "is a file; set --data-dir or NOTEWELL_HOME to a directory."),
    (data_dir_under_a_file, "Cannot create the data directory"),
    (corrupt_database, "is not a usable Notewell database (file is not a database); restore it from a backup"),
    (database_from_a_newer_notewell, "has schema version 999, newer than this Notewell"),
    (no_aws_region, "No AWS region: pass --region (the stack's region, e.g. --region eu-west-1) or set AWS_REGION."),
    (no_stack_secret, "NOTEWELL_CURSOR_SECRET is missing; pass --stack <stack name> to read it from the stack"),
    (no_aws_credentials, "No AWS credentials found; set AWS_PROFILE"),
    (unknown_aws_profile, "The config profile (nope) could not be found; set AWS_PROFILE to a profile"),
]


@pytest.mark.parametrize(("setup", "expected"), FAILURES, ids=[setup.__name__ for setup, _ in FAILURES])
def test_every_failure_is_one_notewell_line_and_exit_code_2(
    tmp_path: Path, setup: Callable[[Path], tuple[list[str], dict[str, str]]], expected: str
) -> None:
    args, env = setup(tmp_path)
    line = one_error_line(run_cli(args, env))
    assert expected in line


def test_a_missing_dynamodb_table_is_one_line_naming_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.dynamo import dynamodb_store

    monkeypatch.setenv("NOTEWELL_CURSOR_SECRET", "test-secret")
    with dynamodb_store("notewell-present"):
        assert main([*DYNAMO[:-1], "notewell-absent", "--data-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "notewell: There is no DynamoDB table notewell-absent here; set --table or NOTEWELL_TABLE to the stack's."
    ]


def test_an_unexpected_failure_is_still_one_line_with_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr("notewell.entrypoints.cli.bootstrap", broken)
    assert main(["keys", "list", "--data-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "notewell: unexpected RuntimeError: a bug over two lines (set NOTEWELL_DEBUG=1 for the traceback)."
    ]
    monkeypatch.setenv("NOTEWELL_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(["keys", "list", "--data-dir", str(tmp_path)])
