"""The lexicon shipped inside the package (notewell/data/lexicon.txt.gz, from WordNet 3.0), loaded on first use."""

from __future__ import annotations

import gzip
import threading

from notewell.domain.lexicon import Lexicon

RESOURCE = ("data", "lexicon.txt.gz")


class PackagedLexicon:
    """Loads the lexicon the first time a phrase is weighed (~80 ms, ~23 MB): only a remember that compares
    replaced phrases needs it, so neither a start nor a search pays for it."""

    def __init__(self) -> None:
        self._lexicon: Lexicon | None = None
        self._lock = threading.Lock()

    def relation(self, old: str, new: str) -> str | None:
        return self._loaded().relation(old, new)

    def _loaded(self) -> Lexicon:
        if self._lexicon is None:
            with self._lock:  # concurrent first calls load it once
                if self._lexicon is None:
                    from importlib import resources  # tempfile, random...: not on a cold start's path

                    packed = resources.files("notewell").joinpath(*RESOURCE).read_bytes()
                    self._lexicon = Lexicon(gzip.decompress(packed).decode("utf-8"))
        return self._lexicon
