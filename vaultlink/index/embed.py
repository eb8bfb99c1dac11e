"""Text embeddings for the search index.

An :class:`Embedder` turns texts into L2-normalised vectors: :class:`MiniLMEmbedder`
(the default; all-MiniLM-L6-v2 on onnxruntime from files pip installed, nothing is
downloaded at run time), :class:`~vaultlink.index.multilingual.MultilingualEmbedder`
(multilingual-e5-small from a pip package, for notes not mostly in English) or
:class:`OllamaEmbedder` (a model served by Ollama).
:func:`make_embedder` picks one from already-read configuration values; the index
stores the vectors it is handed (in state.sqlite, or on a Chroma server), so no store
embeds (nor downloads a model) itself.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vaultlink.errors import ConfigError, EmbeddingError, ModelTimeout, ModelUnavailable
from vaultlink.index.minilm_graph import load_minilm
from vaultlink.index.multilingual import E5_MODEL_ID, MultilingualEmbedder
from vaultlink.options import redact_url

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import ollama
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

MINILM_MODEL_ID = "minilm-l6-v2-int8"
# The same model with int8 matrix products (see minilm_graph): another vector space.
MINILM_FAST_MODEL_ID = "minilm-l6-v2-int8-q8"
MINILM_DIMENSION = 384
# Tokens per onnxruntime run, padding included: 1 text of 256, 8 of 32. Small runs stay
# in the CPU's cache (docs/performance.md, "Figures behind rules in the code").
BATCH_TOKENS = 256
# A call of one run no longer than this (a query) keeps the arena it grew: the next
# query needs the same, and shrinking would cost each query a run.
QUERY_TOKENS = 64


class Embedder(Protocol):
    """Something that turns texts into vectors of one fixed space.

    The similarity the indexes report is the cosine of two vectors, on the scale of
    MiniLM's, which every threshold is set on. A model whose cosines run on another
    scale also has ``calibrate(cosine) -> similarity``, a monotone map onto MiniLM's
    (see ``MultilingualEmbedder.calibrate``).
    """

    @property
    def model_id(self) -> str:
        """Stable id of the vector space ([a-z0-9-]); index collections are named by it."""

    @property
    def dimension(self) -> int:
        """Length of every vector."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in the order of ``texts``."""


def _normalise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    import numpy as np  # already loaded by whoever made ``vectors``

    norms: npt.NDArray[np.float32] = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)  # a zero vector stays zero


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU (int8 weights); 384 dimensions.

    ``fast`` False: fp32 arithmetic, the model as published (:data:`MINILM_MODEL_ID`).
    ``fast`` True: int8 matrix products, about twice as fast on a CPU with int8
    dot-product instructions, another vector space (:data:`MINILM_FAST_MODEL_ID`).
    The model loads on the first :meth:`embed`, so constructing one is free.
    ``batch_size`` is at most texts per onnxruntime run; ``threads`` how many runs go
    side by side (None: the CPU count, at most 4), each on one core: no thread waits on
    another. A run holds at most :data:`BATCH_TOKENS` tokens, since onnxruntime's arena
    keeps the largest run's buffers (figures: docs/performance.md, "Figures behind
    rules in the code").
    """

    dimension = MINILM_DIMENSION

    def __init__(self, batch_size: int = 32, threads: int | None = None,
                 cache_dir: Path | None = None, fast: bool = False) -> None:
        """``cache_dir``: where the optimised (and quantised) graph of the model is kept,
        so later processes load it without making it again (None: made each time)."""
        self.fast = fast
        self.model_id = MINILM_FAST_MODEL_ID if fast else MINILM_MODEL_ID
        self.batch_size = max(1, batch_size)
        self.cache_dir = cache_dir
        # Past ~4 threads this small model gains little and starves the daemon and Ollama.
        self.threads = threads if threads is not None else max(1, min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None

    def _load(self) -> tuple[Any, Tokenizer]:
        with self._lock:
            if self._session is None or self._tokenizer is None:
                started = time.monotonic()
                self._session, self._tokenizer = load_minilm(self.cache_dir, self.fast)
                log.debug("%s ready in %.2fs (%d threads)", self.model_id,
                          time.monotonic() - started, self.threads)
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text; inputs past 256 tokens are truncated.

        Texts are sorted by length and cut into batches of at most ``batch_size`` texts
        and :data:`BATCH_TOKENS` tokens, which ``threads`` workers run side by side.
        """
        if not texts:
            return []
        import numpy as np  # 0.1 s of CPU, paid by the first embedding, not by every start

        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        # Longest first: batches pad to similar lengths, a memory problem shows at once.
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        batches: list[list[int]] = []
        start = 0
        while start < len(order):
            longest = max(len(encodings[order[start]].ids), 1)
            size = max(1, min(self.batch_size, BATCH_TOKENS // longest))
            batches.append(order[start:start + size])
            start += size
        out = np.empty((len(texts), MINILM_DIMENSION), dtype=np.float32)

        def run(chunk: list[int]) -> None:
            lengths = np.array([len(encodings[i].ids) for i in chunk])
            mask = (np.arange(lengths.max()) < lengths[:, None]).astype(np.int64)
            ids = np.zeros_like(mask)  # 0 is [PAD]
            for row, i in enumerate(chunk):
                ids[row, :lengths[row]] = encodings[i].ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            try:
                hidden = session.run(["last_hidden_state"], feeds)[0]
            except Exception as exc:
                raise EmbeddingError(f"the embedding model failed: {exc}") from exc
            # Mean of the real tokens' states, as sentence-transformers does.
            weights = mask[..., None].astype(np.float32)
            out[chunk] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)

        if len(batches) == 1 or self.threads == 1:  # a query: no thread to start
            for chunk in batches:
                run(chunk)
        else:
            with ThreadPoolExecutor(self.threads, thread_name_prefix="vaultlink-embed") as pool:
                list(pool.map(run, batches))
        if len(batches) > 1 or len(encodings[order[0]].ids) > QUERY_TOKENS:
            _shrink_arena(session)
        result: list[list[float]] = _normalise(out).tolist()
        return result


def _shrink_arena(session: Any) -> None:
    """Give back what the runs of one call grew onnxruntime's CPU arena by.

    The arena otherwise keeps, for the life of the process, the largest buffers any
    shape of batch has needed: the daemon's RSS rose by a tenth to a quarter over its
    first days of notes and held there (bench/results/soak-*.md). One run of two tokens
    that asks for the shrink costs ~1 ms after a call of several batches, and keeps
    throughput (1,500 real paragraphs, glibc's mmap threshold fixed as the daemon has it:
    331 texts/s against 315 unshrunk with the fast graph, 183 against 188 with the exact
    one; with the arena off, 189 and 134).
    """
    import numpy as np  # loaded already by the embed call that asks for the shrink
    import onnxruntime as ort

    options = ort.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    ids = np.array([[101, 102]], dtype=np.int64)  # [CLS] [SEP]
    try:
        session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                            "token_type_ids": np.zeros_like(ids)}, options)
    except Exception as exc:
        raise EmbeddingError(f"the embedding model failed: {exc}") from exc


class OllamaEmbedder:
    """An embedding model served by Ollama (``/api/embed``), e.g. ``nomic-embed-text``.
    ``host`` None lets the ollama client pick its default; ``timeout`` is
    seconds per request of ``batch_size`` texts."""

    def __init__(self, model: str, host: str | None = None, timeout: float = 60.0,
                 batch_size: int = 32) -> None:
        self.model, self.host, self.timeout, self.batch_size = model, host, timeout, batch_size
        name = model.lower().removesuffix(":latest")  # "x" and "x:latest" are one model
        self.model_id = "ollama-" + re.sub(r"[^a-z0-9]+", "-", name).strip("-")
        self._dimension: int | None = None
        self._client: ollama.Client | None = None

    @property
    def dimension(self) -> int:
        """Vector length; asks the server once (a probe embedding) if not yet known."""
        return self._dimension or len(self.embed(["dimension probe"])[0])

    def _request(self, texts: list[str]) -> Sequence[Sequence[float]]:
        # ollama, httpx, pydantic: ~0.2 s, paid only when Ollama embeds
        import httpx
        import ollama

        if self._client is None:
            self._client = ollama.Client(host=self.host, timeout=self.timeout)
        where = redact_url(self.host) if self.host else "the default Ollama host"
        try:
            return self._client.embed(model=self.model, input=texts).embeddings
        except ConnectionError as exc:
            raise ModelUnavailable(f"no Ollama server answers at {where}; start it "
                                   f"(ollama serve) and run: ollama pull {self.model}") from exc
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise ModelUnavailable(f"Ollama at {where} does not have {self.model}: "
                                       f"{exc.error}; run: ollama pull {self.model}") from exc
            raise EmbeddingError(f"Ollama could not embed with {self.model}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise ModelTimeout(f"Ollama at {where} gave no answer in {self.timeout:g}s") from exc
        except httpx.HTTPError as exc:
            raise ModelUnavailable(f"talking to Ollama at {where} failed: {exc}") from exc

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, from the server, in the order of ``texts``."""
        import numpy as np  # 0.1 s of CPU, paid by the first embedding, not by every start

        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start:start + self.batch_size])
            got = self._request(chunk)
            widths = {len(v) for v in got}
            if len(got) != len(chunk) or len(widths) != 1 or widths & {0}:
                raise EmbeddingError(f"Ollama returned {len(got)} vectors of widths {widths} "
                                     f"for {len(chunk)} texts")
            self._dimension = self._dimension or widths.pop()
            if len(got[0]) != self._dimension:
                raise EmbeddingError(f"{self.model} changed dimension from {self._dimension}")
            # Ollama normalises today; doing it here keeps the contract if it stops.
            vectors.extend(_normalise(np.asarray(got, dtype=np.float32)).tolist())
        return vectors


# The local models, by the id written as ``embedding.model``, with what they are.
MODEL_NAMES = {
    MINILM_MODEL_ID: "all-MiniLM-L6-v2, English",
    MINILM_FAST_MODEL_ID: "all-MiniLM-L6-v2 with int8 arithmetic, English",
    E5_MODEL_ID: "multilingual-e5-small, 4-bit, ~100 languages",
}
LOCAL_MODELS = tuple(MODEL_NAMES)


def make_embedder(provider: str, model: str | None, host: str | None, timeout: float,
                  cache_dir: Path | None = None) -> Embedder:
    """The embedder for ``provider``: "local" (MiniLM, the default) or "ollama".

    Ollama needs ``model`` and uses ``host`` and ``timeout``. Local takes one of
    :data:`LOCAL_MODELS` (None or empty: MiniLM): MiniLM exact or with int8
    arithmetic, whose graphs are kept in ``cache_dir``, or the multilingual model.
    ConfigError for anything else.
    """
    kind = (provider or "local").strip().lower()
    if kind == "local":
        if model == E5_MODEL_ID:
            return MultilingualEmbedder(cache_dir=cache_dir)
        if model not in (None, "", MINILM_MODEL_ID, MINILM_FAST_MODEL_ID):
            raise ConfigError(f"the local embedder runs {', '.join(LOCAL_MODELS)}, not "
                              f"{model!r}; use provider 'ollama' for other models")
        return MiniLMEmbedder(cache_dir=cache_dir, fast=model == MINILM_FAST_MODEL_ID)
    if kind == "ollama":
        if not model:
            raise ConfigError("provider 'ollama' needs a model name (e.g. nomic-embed-text)")
        return OllamaEmbedder(model, host=host, timeout=timeout)
    raise ConfigError(f"unknown embedding provider {provider!r}; use 'local' or 'ollama'")
