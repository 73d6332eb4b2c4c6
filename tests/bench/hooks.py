"""Client hooks against `notewell serve`: how long a coding client waits for the session-start context, and what a
checkpoint at compaction or session end costs.

    python -m tests.bench.hooks [--sizes 1000,10000] [--runs 60] [--rounds 5] [--transcript-mb 5]
                                [--embedder none] [--out .bench/hooks.json]

For each size: start `notewell serve` on a fresh data dir, seed one project with that many generated notes through
the services, then time in interleaved rounds, each a new process as a client starts it:
  python_start       the interpreter alone (`python -c pass`): the floor under any hook written in Python;
  hook_imports       the interpreter plus the hook module's imports;
  get_context_http   the tools/call POST a hook makes, from this process (server and HTTP, no process start);
  start_to_context   `python -m notewell.entrypoints.hooks context ...` with Claude Code's SessionStart payload on
                     stdin, from spawn to exit with the context read from its stdout: what the client waits for;
  prompt_to_context  `... hooks prompt ...` with UserPromptSubmit's payload, a session's first prompt (get_context with
                     the prompt as its query): what the client waits for before the model reads the prompt.
Then, once the reads are done (so they all saw exactly the seeded notes), `checkpoint` with Claude Code's SessionEnd
payload and a transcript of --transcript-mb MB (the fixture session padded with tool results), a new session each
run: transcript, git, the checkpoint call. Claude Code gives a SessionEnd hook 1.5 s by default.
Figures only, nothing fails on speed; the target (issue 39) is start_to_context p50 <= 300 ms at 10k notes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from notewell.adapters.sqlite import SqliteStore
from notewell.bootstrap import bootstrap
from notewell.config import Settings
from notewell.domain.hooks import PROMPT_LEAD
from notewell.entrypoints.hooks import call_tool
from tests.bench.common import PROJECT, CpuWatch, log, seed, table, timed_rounds, unlimited
from tests.bench.corpus import Corpus
from tests.bench.local_server import Served, serve

TARGET_P50_MS = 300.0
FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks" / "claude-code"
READS = ("python_start", "hook_imports", "get_context_http", "start_to_context", "prompt_to_context")
PADDING_LINE_CHARS = 50_000  # a tool result the size of a long file read


def hook_command(action: str, url: str) -> list[str]:
    return [sys.executable, "-m", "notewell.entrypoints.hooks", action, "--client", "claude-code",
            "--project", PROJECT, "--url", url]  # fmt: skip


def payload(event: str, session: str, transcript: Path, cwd: Path) -> str:
    text = (FIXTURES / f"{event}.json").read_text().replace("$TRANSCRIPT", str(transcript)).replace("$CWD", str(cwd))
    data = json.loads(text)
    data["session_id"] = session
    return json.dumps(data)


def padded_transcript(path: Path, megabytes: float) -> Path:
    """The fixture session, then tool results until the file is `megabytes` long (the project name made ours)."""
    lines = (FIXTURES / "transcript.jsonl").read_text().replace("billing-api", PROJECT).splitlines()
    rng = random.Random(39)
    filler = []
    size = sum(len(line) + 1 for line in lines)
    while size < megabytes * 1_000_000:
        text = "".join(rng.choice("abcdefghij \n") for _ in range(PADDING_LINE_CHARS))
        line = json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": f"t{len(filler)}", "type": "tool_result", "content": text}]}})  # fmt: skip
        filler.append(line)
        size += len(line) + 1
    path.write_text("\n".join([*lines[:-2], *filler, *lines[-2:]]) + "\n")
    return path


class Runner:
    """Starts processes the way a client does and checks what they said (a failure is counted, never timed away)."""

    def __init__(self, served: Served, workdir: Path) -> None:
        self.served = served
        self.url = served.url
        self.repo = workdir / "repo"
        self.repo.mkdir()
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)
        self.env = {**os.environ, "NOTEWELL_API_KEY": served.key, "NOTEWELL_HOME": str(workdir / "hooks-home")}
        self.transcript = workdir / "session.jsonl"
        self.transcript.write_text((FIXTURES / "transcript.jsonl").read_text())
        self.errors: dict[str, int] = {}

    def _run(self, name: str, command: list[str], stdin: str = "") -> str:
        done = subprocess.run(command, input=stdin, env=self.env, cwd=self.repo, capture_output=True, text=True,
                              timeout=30, check=False)  # fmt: skip
        if done.returncode != 0:
            self.errors[name] = self.errors.get(name, 0) + 1
        return done.stdout

    def python_start(self, _: object) -> None:
        self._run("python_start", [sys.executable, "-c", "pass"])

    def hook_imports(self, _: object) -> None:
        self._run("hook_imports", [sys.executable, "-c", "import notewell.entrypoints.hooks"])

    def get_context_http(self, _: object) -> None:
        call_tool(self.url, self.served.key, "get_context", {"project": PROJECT, "detail": "lean"}, timeout=30)

    def start_to_context(self, number: object) -> None:
        out = self._run("start_to_context", hook_command("context", self.url),
                        payload("SessionStart", f"bench-start-{number}", self.transcript, self.repo))  # fmt: skip
        if f"# {PROJECT}: lean context" not in out:
            self.errors["start_to_context"] = self.errors.get("start_to_context", 0) + 1

    def prompt_to_context(self, number: object) -> None:
        out = self._run("prompt_to_context", hook_command("prompt", self.url),
                        payload("UserPromptSubmit", f"bench-prompt-{number}", self.transcript, self.repo))  # fmt: skip
        if out and PROMPT_LEAD not in out:  # nothing: every note it found, the session start showed
            self.errors["prompt_to_context"] = self.errors.get("prompt_to_context", 0) + 1

    def checkpoint(self, arguments: tuple[int, Path]) -> None:
        number, transcript = arguments
        self._run("checkpoint", hook_command("checkpoint", self.url),
                  payload("SessionEnd", f"bench-end-{number}", transcript, self.repo))  # fmt: skip


def bench_size(size: int, workdir: Path, corpus: Corpus, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"size": size}
    log(f"{size:,} notes: starting notewell serve on a fresh data dir")
    with serve(workdir / "data", workdir / "home") as served:
        store = SqliteStore(workdir / "data" / "notewell.db")
        try:
            services = bootstrap(Settings(data_dir=workdir / "data"), store=store)
            principal = services.auth.authenticate(served.key)
            if principal is None:
                raise RuntimeError("the key notewell serve printed does not authenticate against its data dir")
            unlimited(services, principal.workspace_id)
            log(f"  seeding {size:,} notes")
            _, result["seeding"] = seed(services, principal, corpus.notes(size))
        finally:
            store.close()
        runner = Runner(served, workdir)
        spent = call_tool(served.url, served.key, "get_context", {"project": PROJECT, "detail": "lean"}, timeout=30)
        result["context_tokens"] = spent["structuredContent"]["meta"]["spent"]
        log(f"  reads: {args.runs} of each, in {args.rounds} rounds")
        watch = CpuWatch(served)
        ops = {name: (getattr(runner, name), list(range(args.runs))) for name in READS}
        result["reads"] = timed_rounds(ops, args.rounds)
        result["reads_cpu_share"] = watch.shares()
        transcript = padded_transcript(workdir / "long-session.jsonl", args.transcript_mb)
        log(f"  checkpoint: {args.checkpoints} sessions ending, a {args.transcript_mb:g} MB transcript each")
        checkpoints = {"checkpoint": (runner.checkpoint, [(n, transcript) for n in range(args.checkpoints)])}
        result["checkpoint"] = timed_rounds(checkpoints, 1)["checkpoint"]
        result["errors"] = runner.errors
    return result


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = ["Hooks against notewell serve (ms; each sample a new process, as a client starts it)", ""]
    rows = []
    for result in results:
        for name in (*READS, "checkpoint"):
            figures = result["reads"][name] if name in READS else result["checkpoint"]
            rows.append([f"{result['size']:,}", name, figures["n"], figures["p50_ms"], figures["p95_ms"],
                         figures.get("best_round_p50_ms")])  # fmt: skip
    lines.append(table(["notes", "measure", "n", "p50", "p95", "best round p50"], rows))
    lines.append("")
    for result in results:
        p50 = {name: figures["p50_ms"] for name, figures in result["reads"].items()}
        imports = p50["hook_imports"] - p50["python_start"]
        rest = p50["start_to_context"] - p50["hook_imports"] - p50["get_context_http"]
        lines.append(
            f"{result['size']:,} notes: start_to_context p50 {p50['start_to_context']:.1f} ms = interpreter "
            f"{p50['python_start']:.1f} + imports {imports:.1f} + get_context over HTTP {p50['get_context_http']:.1f} "
            f"+ the rest {rest:.1f}; context {result['context_tokens']} tokens; cores busy {result['reads_cpu_share']};"
            f" errors {result['errors'] or 0}; the first prompt's context p50 {p50['prompt_to_context']:.1f} ms"
        )
    if len(results) > 1:
        first, last = results[0], results[-1]
        ratio = last["reads"]["start_to_context"]["p50_ms"] / first["reads"]["start_to_context"]["p50_ms"]
        lines.append(f"start_to_context p50, {last['size']:,} / {first['size']:,} notes: {ratio:.2f}")
    at_most = max(results, key=lambda r: r["size"])
    p50 = at_most["reads"]["start_to_context"]["p50_ms"]
    verdict = "meets" if p50 <= TARGET_P50_MS else "misses"
    lines.append(
        f"Target: start_to_context p50 <= {TARGET_P50_MS:g} ms at {at_most['size']:,} notes: {p50:.1f} ms ({verdict})."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="Notes in the project, comma-separated.")
    parser.add_argument("--runs", type=int, default=60, help="Samples of each read measure per size.")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--checkpoints", type=int, default=20, help="Checkpoint samples per size.")
    parser.add_argument("--transcript-mb", type=float, default=5.0)
    parser.add_argument("--embedder", default="none",
                        help="NOTEWELL_EMBEDDER for the server (default none: no background embedding of the seeded "
                             "notes competing for the cores; get_context without a query does not embed).")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="Also write the figures as JSON here.")
    args = parser.parse_args(argv)
    os.environ["NOTEWELL_EMBEDDER"] = args.embedder  # the server inherits it
    corpus = Corpus()
    results = []
    started = time.perf_counter()
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix=f"notewell-hooks-{size}-") as workdir:
            results.append(bench_size(size, Path(workdir), corpus, args))
    print(report(results, args))
    log(f"done in {time.perf_counter() - started:.0f} s")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"results": results, "sizes": args.sizes, "runs": args.runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
