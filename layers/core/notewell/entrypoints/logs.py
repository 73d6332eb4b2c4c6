"""Structured JSON logs (Powertools formatter) for the `notewell` loggers. Never log keys, tokens or bodies."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter


def configure_logging(level: str = "INFO", stream: TextIO | None = None) -> None:
    """Send `notewell.*` records as JSON lines to `stream` (stdout by default, as Lambda expects)."""
    root = logging.getLogger("notewell")
    for existing in list(root.handlers):
        root.removeHandler(existing)
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(LambdaPowertoolsFormatter(service="notewell"))
    root.addHandler(handler)
    root.setLevel(level.upper())
    root.propagate = False
