"""remember on labelled pairs of coding-agent notes: what happens to the second note of each pair.

    python -m tests.quality.coding [--split tune|report] [--embedder local|hash|bedrock|none] [--json out.json] [--show]

The pairs are tests/quality/coding_pairs.jsonl (written by hand from real project situations; see the README beside
this file). A pair is `tune` or `report` by a hash of its id. Each pair gets its own project: remember(a), then
remember(b), and b's outcome is counted by the pair's label:
  * contradiction: absorbed = duplicate or updated (target <= 1%); caught = conflict, or created with a among its
    `related` notes and reviewRequired (target >= 97%).
  * compatible: false conflict = conflict (target <= 3%); absorbed = duplicate or updated (a fact lost).
  * restatement: recognised = duplicate or updated (target >= 85%).
`--show` prints every pair whose outcome misses its label; it refuses the report split, which is read once per stop
and never to choose a rule.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from notewell.config import EmbedderChoice
from notewell.services.memory import RememberRequest
from tests.quality.harness import EMBEDDERS, fresh_services, percent

PAIRS = Path(__file__).with_name("coding_pairs.jsonl")
OUTCOMES = ("duplicate", "updated", "conflict", "reviewed", "created")


def split_of(pair_id: str) -> str:
    return "tune" if hashlib.sha256(pair_id.encode()).digest()[0] % 2 == 0 else "report"


def read_pairs(path: Path, split: str) -> list[dict[str, Any]]:
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [p for p in pairs if split in ("all", split_of(p["id"]))]


def outcome_of(services: Any, principal: Any, number: int, pair: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """b's outcome after a: duplicate, updated, conflict, reviewed (created beside a, to review) or created."""
    project = f"pair-{number}"
    first = services.memory.remember(principal, RememberRequest(project, pair["a"]))
    second = services.memory.remember(principal, RememberRequest(project, pair["b"]))
    status = second.status.value
    if status == "created" and second.review_required and any(n.id == first.note.note.id for n in second.related):
        status = "reviewed"
    evidence = second.evidence
    detail = {"evidence": None if evidence is None else [evidence.detector, evidence.slot, evidence.old, evidence.new]}
    return status, detail


def run(split: str, embedder: EmbedderChoice, show: bool, path: Path = PAIRS) -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {}
    with fresh_services(embedder) as (services, principal):
        for number, pair in enumerate(read_pairs(path, split)):
            status, detail = outcome_of(services, principal, number, pair)
            counts.setdefault(pair["label"], Counter())[status] += 1
            counts.setdefault(f"  {pair['situation']}/{pair['label']}", Counter())[status] += 1
            if show and not _as_labelled(pair["label"], status):
                print(f"[{pair['id']}] {pair['label']} -> {status} {detail['evidence'] or ''}\n  a: {pair['a']}\n"
                      f"  b: {pair['b']}", file=sys.stderr)  # fmt: skip
    return counts


def _as_labelled(label: str, status: str) -> bool:
    return {
        "contradiction": status in ("conflict", "reviewed"),
        "compatible": status in ("created", "reviewed"),
        "restatement": status in ("duplicate", "updated"),
    }[label]


def figures(counts: dict[str, Counter[str]]) -> dict[str, str]:
    """The issue's four figures."""
    c, k, r = counts.get("contradiction", Counter()), counts.get("compatible", Counter()), counts.get("restatement")
    r = r or Counter()
    return {
        "contradictions absorbed (<= 1%)": percent(c["duplicate"] + c["updated"], c.total()),
        "contradictions caught (>= 97%)": percent(c["conflict"] + c["reviewed"], c.total()),
        "false conflicts on compatible facts (<= 3%)": percent(k["conflict"], k.total()),
        "restatements recognised (>= 85%)": percent(r["duplicate"] + r["updated"], r.total()),
    }


def report(counts: dict[str, Counter[str]], split: str, embedder: str) -> str:
    lines = [
        f"remember on coding pairs, split {split}, embedder {embedder}",
        f"{'label (situation/label)':44} {'pairs':>5} " + " ".join(f"{s:>9}" for s in OUTCOMES),
    ]
    for name in sorted(counts, key=lambda n: (n.startswith(" "), n)):
        c = counts[name]
        lines.append(f"{name:44} {c.total():>5} " + " ".join(f"{c[s]:>9}" for s in OUTCOMES))
    lines += [f"{name}: {value}" for name, value in figures(counts).items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["tune", "report", "all"], default="tune")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="Another file of pairs (with --split all).")
    parser.add_argument("--embedder", choices=[*EMBEDDERS, "none"], default="local")
    parser.add_argument("--json", type=Path, default=None, help="Also write the counts as JSON here.")
    parser.add_argument("--show", action="store_true", help="Print the pairs whose outcome misses (tune only).")
    args = parser.parse_args(argv)
    if args.show and args.split == "report":
        parser.error("--show reads pairs one by one: only on the tune split (the report split chooses no rule).")
    if args.split == "all" and args.pairs == PAIRS:
        parser.error("--split all is for another file of pairs: the coding pairs are read one split at a time.")
    counts = run(args.split, args.embedder, args.show, args.pairs)
    print(report(counts, args.split, args.embedder))
    if args.json:
        args.json.write_text(json.dumps({k.strip(): dict(v) for k, v in counts.items()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
