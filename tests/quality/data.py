"""Convert the public sets placed under a raw directory into the two files the quality runs read.

    python -m tests.quality.data [--raw /work/data/raw] [--out /work/data/quality] [--only pairs|retrieval]

Reads (see tests/quality/README.md for where each comes from and how to place it):
  raw/semeval-sts/<year>/<name>.test.tsv   SemEval STS 2012-2016 gold test pairs: score (0-5), sentence 1, sentence 2
  raw/breaking_nli/data/dataset.jsonl      Breaking NLI (Glockner et al., 2018): SNLI premises with one word swapped
  raw/mnli_contradicting_examples          HANS repository: MultiNLI training pairs that contradict word overlap
  raw/mnli-dev/mnli_development_set_number_of_correct_responses.txt
                                           HANS repository: the MultiNLI matched development set, with gold labels
  raw/madial-bench/MADial-Bench-en-{dialogue,memory}.json
                                           MADial-Bench (He et al., NAACL 2025): dialogues, a memory archive and the
                                           memories each dialogue should recall, annotated

Writes pairs.jsonl (remember's admission: set, split, label, a, b) and retrieval.jsonl (search_notes: one record per
STS file, its sentences as the notes, each pair scored >= 4 a query whose relevant note is its other sentence; and
MADial-Bench, its memory archive as the notes, each dialogue up to the turn that should recall them a query).
`--only retrieval` writes retrieval.jsonl alone, from the STS files and MADial-Bench (the NLI sets not placed).
The coding-project retrieval set needs no conversion: tests/quality/coding_retrieval.jsonl is committed.

Splits: a pair is `tune` or `report` by a hash of its set and id, so a threshold tuned on one half is reported on the
other; STS retrieval is split by year (2012-2014 tune, 2015-2016 report), a held-out year and mostly held-out
genres; MADial-Bench dialogues by a hash of their index (the archive is the same memory for both).
MSRpar is left out everywhere: it is drawn from MRPC, which is reserved for an independent check.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PARAPHRASE_SCORE = 4.0  # STS 4: "mostly equivalent, some unimportant details differ"; 5: "completely equivalent"
RELATED_SCORE = 2.0  # STS 2: "not equivalent, but share some details"; at or below it the meanings differ
RELATED_OVERLAP = 0.5  # ...and "same words" means at least half the words shared (Jaccard)
MNLI_DEV_OVERLAP = 0.8  # a development pair is kept when this share of its hypothesis's words is in the premise
MNLI_DEV_MID_OVERLAP = 0.6  # ...and one sharing from this share up is kept to tune on only (mnli-dev-mid)
EXCLUDED_STS = ("MSRpar",)
TUNE_YEARS = ("2012", "2013", "2014")
WORD = re.compile(r"[a-z0-9]+")


def split_of(*key: str) -> str:
    digest = hashlib.sha256("\x1f".join(key).encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "report"


def word_overlap(a: str, b: str) -> float:
    left, right = set(WORD.findall(a.lower())), set(WORD.findall(b.lower()))
    return len(left & right) / len(left | right) if left | right else 0.0


def sts_files(raw: Path) -> Iterator[tuple[str, str, Path]]:
    """(year, name, path) of every gold test file, MSRpar left out."""
    for path in sorted((raw / "semeval-sts").glob("20*/*.test.tsv")):
        name = path.name.removesuffix(".test.tsv")
        if name not in EXCLUDED_STS:
            yield path.parent.name, name, path


def sts_rows(path: Path) -> Iterator[tuple[int, float, str, str]]:
    """(line number, score, sentence 1, sentence 2) of the rows that carry a gold score."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 3 or not fields[0].strip():
                continue
            try:
                score = float(fields[0])
            except ValueError:
                continue
            a, b = fields[1].strip(), fields[2].strip()
            if a and b:
                yield number, score, a, b


def sts_pairs(raw: Path) -> Iterator[dict[str, Any]]:
    for year, name, path in sts_files(raw):
        for number, score, a, b in sts_rows(path):
            if score >= PARAPHRASE_SCORE:
                label = "paraphrase"
            elif score <= RELATED_SCORE and word_overlap(a, b) >= RELATED_OVERLAP:
                label = "related"
            else:
                continue  # the middle of the scale is neither a restatement nor clearly another fact
            pair_id = f"{year}/{name}/{number}"
            yield {"set": "sts", "id": pair_id, "split": split_of("sts", pair_id), "label": label, "a": a, "b": b}


def breaking_nli_pairs(raw: Path) -> Iterator[dict[str, Any]]:
    path = raw / "breaking_nli" / "data" / "dataset.jsonl"
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            gold, category = record["gold_label"], record["category"]
            if gold == "contradiction":
                label = "contradiction"
            elif gold == "entailment":
                label = "paraphrase" if category == "synonyms" else "entailment"
            else:
                continue  # 47 neutral pairs: no expectation to measure
            pair_id = str(record["pairID"])
            yield {
                "set": "breaking-nli", "id": pair_id, "split": split_of("breaking-nli", pair_id), "label": label,
                "category": category, "a": record["sentence1"].strip(), "b": record["sentence2"].strip(),
            }  # fmt: skip


def hans_mnli_pairs(raw: Path) -> Iterator[dict[str, Any]]:
    path = raw / "mnli_contradicting_examples"
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3 or fields[2] not in ("contradiction", "neutral"):
                continue
            pair_id = str(number)
            yield {
                "set": "mnli-overlap", "id": pair_id, "split": split_of("mnli-overlap", pair_id), "label": fields[2],
                "a": fields[0].strip(), "b": fields[1].strip(),
            }  # fmt: skip


def mnli_dev_pairs(raw: Path) -> Iterator[dict[str, Any]]:
    """MultiNLI's development pairs whose hypothesis is made (mostly) of the premise's words: the same test as the
    HANS set above, on pairs drawn apart from it (development, not training), so it adds pairs of the same kind.
    The pairs that share fewer of their words (MNLI_DEV_MID_OVERLAP up to MNLI_DEV_OVERLAP) are a set of their own,
    `mnli-dev-mid`, all of it `tune`: more pairs of the kind to tune on, none of them in a reported set."""
    path = raw / "mnli-dev" / "mnli_development_set_number_of_correct_responses.txt"
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 4 or fields[3] not in ("contradiction", "neutral", "entailment"):
                continue  # the header
            pair_id, premise, hypothesis = fields[0], fields[1].strip(), fields[2].strip()
            said = WORD.findall(hypothesis.lower())
            known = set(WORD.findall(premise.lower()))
            shared = sum(word in known for word in said)
            if not said or shared < MNLI_DEV_MID_OVERLAP * len(said):
                continue
            if shared < MNLI_DEV_OVERLAP * len(said):
                yield {"set": "mnli-dev-mid", "id": pair_id, "split": "tune", "label": fields[3], "a": premise,
                       "b": hypothesis}  # fmt: skip
                continue
            yield {
                "set": "mnli-dev-overlap", "id": pair_id, "split": split_of("mnli-dev-overlap", pair_id),
                "label": fields[3], "a": premise, "b": hypothesis,
            }  # fmt: skip


def retrieval_records(raw: Path) -> Iterator[dict[str, Any]]:
    """One record per STS file: its distinct sentences are the notes; the second sentence of a pair scored >= 4
    asks for the first. Sentences of low-scored pairs stay in as the hard distractors they are."""
    for year, name, path in sts_files(raw):
        doc_ids: dict[str, str] = {}
        queries: list[dict[str, Any]] = []
        for number, score, a, b in sts_rows(path):
            for text in (a, b):
                doc_ids.setdefault(text, f"d{len(doc_ids)}")
            if score >= PARAPHRASE_SCORE and a != b:
                queries.append({
                    "id": f"q{number}", "question": b, "relevant": [doc_ids[a]], "exclude": [doc_ids[b]],
                    "overlap": round(word_overlap(a, b), 3),
                })  # fmt: skip
        if queries:
            yield {
                "set": f"sts-{year}-{name}".lower(), "project": "sts",
                "split": "tune" if year in TUNE_YEARS else "report",
                "docs": [{"id": doc_id, "text": text} for text, doc_id in doc_ids.items()], "queries": queries,
            }  # fmt: skip


def madial_records(raw: Path) -> Iterator[dict[str, Any]]:
    """The memory archive as notes ("2023-12-25 · Activity: Bart danced at the Christmas party..."); a query is what
    was said before the turn that should bring the memories up, and its relevant notes are the annotated ones."""
    folder = raw / "madial-bench"
    memories: dict[str, dict[str, Any]] = {}
    with (folder / "MADial-Bench-en-memory.json").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                memories.update(json.loads(line))
    docs = [
        {"id": f"m{key}", "text": f"{m.get('time', '')} · {m.get('scene', '')}: {m['event']}"}
        for key, m in memories.items()
    ]
    queries: dict[str, list[dict[str, Any]]] = {"tune": [], "report": []}
    with (folder / "MADial-Bench-en-dialogue.json").open(encoding="utf-8") as lines:
        for number, line in enumerate(line for line in lines if line.strip()):
            record = json.loads(line)
            turn = min(record["test-turn"])
            said = " ".join(t.strip() for t in record["dialogue"][:turn] if t.strip() not in ("<BOD>", "<EOD>"))
            relevant = [f"m{i}" for i in record["relevant-id"] if str(i) in memories]
            if said and relevant:
                queries[split_of("madial-en", str(number))].append(
                    {"id": f"q{number}", "question": said, "relevant": relevant, "exclude": []}
                )
    for split, asked in queries.items():
        yield {"set": "madial-en", "project": "madial", "split": split, "docs": docs, "queries": asked}


def retrieval(raw: Path) -> Iterator[dict[str, Any]]:
    yield from retrieval_records(raw)
    yield from madial_records(raw)


def write_jsonl(path: Path, records: Iterator[dict[str, Any]]) -> dict[tuple[str, str, str], int]:
    counts: dict[tuple[str, str, str], int] = {}
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            key = (record["set"], record["split"], str(record.get("label", len(record.get("queries", [])))))
            counts[key] = counts.get(key, 0) + 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raw", type=Path, default=Path("/work/data/raw"))
    parser.add_argument("--out", type=Path, default=Path("/work/data/quality"))
    parser.add_argument("--only", choices=["pairs", "retrieval"], default=None, help="Write one of the two files.")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    def pairs() -> Iterator[dict[str, Any]]:
        yield from sts_pairs(args.raw)
        yield from breaking_nli_pairs(args.raw)
        yield from hans_mnli_pairs(args.raw)
        yield from mnli_dev_pairs(args.raw)

    for name, records in (("pairs.jsonl", pairs()), ("retrieval.jsonl", retrieval(args.raw))):
        if args.only is not None and name != f"{args.only}.jsonl":
            continue
        try:
            counts = write_jsonl(args.out / name, records)
        except FileNotFoundError as missing:
            hint = "place the raw data first (tests/quality/README.md)"
            raise SystemExit(f"{missing.filename} is missing: {hint}.") from None
        print(f"{args.out / name}:")
        for (set_name, split, label), count in sorted(counts.items()):
            print(f"  {set_name:28} {split:7} {label:14} {count:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
