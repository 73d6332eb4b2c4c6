"""remember's admission: is new content a repeat, an elaboration, a contradiction (with evidence) or new knowledge?

Read top to bottom: text.py (a note as tokens and values), detectors.py (each kind of change, with its evidence),
verdict.py (the verdict from what the detectors found), vocabulary.py and data/ (the words they know).
"""

from __future__ import annotations

from notewell.domain.admission.detectors import Evidence
from notewell.domain.admission.verdict import Judgement, Verdict, admit, comparable_text, compare, exact_repeat
from notewell.domain.calibration import CALIBRATIONS, Calibration

__all__ = ["CALIBRATIONS", "Calibration", "Evidence", "Judgement", "Verdict", "admit", "comparable_text", "compare",
           "exact_repeat"]  # fmt: skip
