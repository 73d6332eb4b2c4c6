"""Calibrate an embedding model for remember: its admission thresholds, from the labelled coding pairs.

    python -m tests.quality.calibrate --embedder bedrock [--save-cosines titan.json]   # with AWS access
    python -m tests.quality.calibrate --cosines titan.json                              # later, anywhere
    python -m tests.quality.calibrate --embedder hash                                   # the plumbing, offline

Each pair of the `tune` split of tests/quality/coding_pairs.jsonl is embedded as remember embeds it (the derived title
and the text, domain/hybrid.py embedding_text) and its cosine taken, with the model calibrated and with the reference
model, whose entry is in the table already (the local model). A threshold is a cosine on its model's own scale, so
it is carried over by what it lets through on the same labelled pairs, not by its value: each of the new model's
thresholds lets through the same share of the contradiction pairs as the reference model's. `related` keeps as many
contradictions within the agent's review; `duplicate` leaves as many within reach of being taken for the same claim
(the failure that loses a change). The entry is printed to paste into CALIBRATIONS (domain/calibration.py); then
check the four targets on the report split with the new model (`python -m tests.quality.coding --split report
--embedder bedrock`).

The cosines are all that the model is needed for: --save-cosines writes them, --cosines reads them back, so the
vectors are computed once by whoever has AWS access and the entry can be printed again anywhere. Hybrid weights
are not measured on these pairs: the entry leaves them out (search then fuses the model's legs by rank) until they
are tuned on the retrieval sets (tests/quality/README.md).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.domain.calibration import CALIBRATIONS, Calibration
from notewell.domain.hybrid import embedding_text
from notewell.domain.titles import derive_title
from tests.quality.coding import PAIRS, read_pairs
from tests.quality.harness import EMBEDDERS, quality_embedder

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from notewell.ports import Embedder

ANCHOR = "contradiction"  # the label whose share each threshold keeps
BATCH = 64


@dataclass(frozen=True, slots=True)
class Cosines:
    """One model's cosine for each labelled pair, by pair id."""

    model_id: str
    by_pair: Mapping[str, float]

    def of(self, pairs: Sequence[dict[str, Any]], label: str) -> list[float]:
        return [self.by_pair[p["id"]] for p in pairs if p["label"] == label]


def embedded_text(text: str) -> str:
    """What remember embeds for content without a title."""
    return embedding_text(derive_title(text), text)


def pair_cosines(pairs: Sequence[dict[str, Any]], embedder: Embedder) -> Cosines:
    texts = list(dict.fromkeys(embedded_text(p[side]) for p in pairs for side in ("a", "b")))
    vectors: dict[str, Sequence[float]] = {}
    for start in range(0, len(texts), BATCH):
        batch = texts[start : start + BATCH]
        vectors.update(zip(batch, embedder.embed(batch), strict=True))
    by_pair = {p["id"]: _cosine(vectors[embedded_text(p["a"])], vectors[embedded_text(p["b"])]) for p in pairs}
    return Cosines(embedder.model_id, by_pair)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0


def share_at_or_above(threshold: float, cosines: Sequence[float]) -> float:
    return sum(c >= threshold for c in cosines) / len(cosines) if cosines else 0.0


def carried_over(threshold: float, reference: Sequence[float], target: Sequence[float]) -> float:
    """The cosine that lets through as many of `target` as `threshold` does of `reference` (the same pairs, by two
    models): halfway between the last one let through and the first one kept out."""
    if len(reference) != len(target) or not target:
        raise ValueError("both models must give a cosine for each of the same pairs")
    through = sum(c >= threshold for c in reference)
    ordered = sorted(target, reverse=True)
    last_in = ordered[through - 1] if through else 1.0
    first_out = ordered[through] if through < len(ordered) else -1.0
    return round((last_in + first_out) / 2, 3)


def calibrate(pairs: Sequence[dict[str, Any]], reference: Cosines, target: Cosines) -> Calibration:
    """The target model's thresholds, at the reference model's operating points on the same pairs."""
    entry = CALIBRATIONS.get(reference.model_id)
    if entry is None:
        raise SystemExit(f"The reference model {reference.model_id} has no entry in CALIBRATIONS to carry over.")
    anchor_ref, anchor_target = reference.of(pairs, ANCHOR), target.of(pairs, ANCHOR)
    return Calibration(
        duplicate=carried_over(entry.duplicate, anchor_ref, anchor_target),
        related=carried_over(entry.related, anchor_ref, anchor_target),
    )


def report(pairs: Sequence[dict[str, Any]], reference: Cosines, target: Cosines, found: Calibration) -> str:
    entry = CALIBRATIONS[reference.model_id]
    labels = sorted({p["label"] for p in pairs})
    lines = [
        f"{target.model_id} on {len(pairs)} coding pairs ({len(reference.of(pairs, ANCHOR))} {ANCHOR}s), at the "
        f"operating points of {reference.model_id}:",
        "  share of each label's pairs at or above the threshold, this model / the reference:",
    ]
    for name, value, reference_value in (
        ("duplicate", found.duplicate, entry.duplicate),
        ("related", found.related, entry.related),
    ):
        shares = ", ".join(
            f"{label} {share_at_or_above(value, target.of(pairs, label)):.1%}"
            f" / {share_at_or_above(reference_value, reference.of(pairs, label)):.1%}"
            for label in labels
        )
        lines.append(f"  {name} {value:.3f} (reference {reference_value}): {shares}")
    lines += [
        "Paste into CALIBRATIONS (layers/core/notewell/domain/calibration.py):",
        f'    "{target.model_id}": Calibration(duplicate={found.duplicate}, related={found.related}),',
        "then check the four targets: python -m tests.quality.coding --split report --embedder <this model>.",
        "Hybrid weights are not measured on these pairs: search fuses this model's legs by rank until they are tuned.",
    ]
    return "\n".join(lines)


def save(path: Path, cosines: Cosines, split: str) -> None:
    path.write_text(json.dumps({"model": cosines.model_id, "split": split, "cosines": cosines.by_pair}, indent=1))


def load(path: Path, pairs: Sequence[dict[str, Any]]) -> Cosines:
    saved = json.loads(path.read_text())
    missing = [p["id"] for p in pairs if p["id"] not in saved["cosines"]]
    if missing:
        raise SystemExit(f"{path} has no cosine for {len(missing)} of the pairs (first: {missing[0]}); embed again.")
    return Cosines(saved["model"], {k: float(v) for k, v in saved["cosines"].items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--embedder", choices=EMBEDDERS, help="The model to calibrate.")
    source.add_argument("--cosines", type=Path, help="Its cosines, saved by an earlier run (--save-cosines).")
    parser.add_argument("--save-cosines", type=Path, help="Write the model's cosines here, to calibrate again later.")
    parser.add_argument("--reference", choices=EMBEDDERS, default="local", help="A model with an entry already.")
    parser.add_argument("--split", choices=["tune", "all"], default="tune")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="Another file of labelled pairs.")
    args = parser.parse_args(argv)
    if args.split == "all" and args.pairs == PAIRS:
        parser.error("--split all is for another file of pairs: the coding pairs' report split chooses no threshold.")
    pairs = read_pairs(args.pairs, args.split)
    if args.cosines is not None:
        target = load(args.cosines, pairs)
    else:
        embedder = quality_embedder(args.embedder)
        assert embedder is not None
        target = pair_cosines(pairs, embedder)
    if args.save_cosines is not None:
        save(args.save_cosines, target, args.split)
    reference_embedder = quality_embedder(args.reference)
    assert reference_embedder is not None
    reference = pair_cosines(pairs, reference_embedder)
    found = calibrate(pairs, reference, target)
    print(report(pairs, reference, target, found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
