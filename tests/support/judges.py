"""A judge for tests: answers every question the same way (or not at all), and records what it was asked."""

from __future__ import annotations

from notewell.ports import JudgeUnavailableError, Ruling


class ScriptedJudge:
    def __init__(self, verdict: str | None, *, slot: str = "", old: str = "", new: str = "") -> None:
        self._ruling = None if verdict is None else Ruling(verdict, slot, old, new)
        self.asked: list[tuple[str, str]] = []

    @property
    def model_id(self) -> str:
        return "scripted-judge"

    def rule(self, old: str, new: str, *, timeout: float) -> Ruling:
        self.asked.append((old, new))
        if self._ruling is None:
            raise JudgeUnavailableError("the scripted judge stays silent")
        return self._ruling
