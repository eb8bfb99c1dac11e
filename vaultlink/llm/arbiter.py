"""One heavy job at a time: the arbiter every CPU-heavy piece of work in a process goes
through, since a local model sharing the cores collapses (docs/performance.md, "Figures
behind rules in the code"). The kinds, in the order a free arbiter grants them:

* :data:`MODEL` - a call to a model on this machine, held while the server computes;
* :data:`EMBED` - one slice of an embedding batch (:class:`ArbitratedEmbedder` slices a
  long batch, so a model call waits for one slice; a single query text never waits);
* :data:`INDEX` - a *turn* before a reindex or a section-index catch-up;
* :data:`BACKFILL` - a turn before a backlog run, taken only when nothing else waits.

Only leaf work holds it (one HTTP call, one slice), never around a lock of the indexes
or the state, so it cannot deadlock with them; a nested job of the holder runs at once,
and waiters of one kind go first come, first served.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

MODEL, EMBED, INDEX, BACKFILL = 0, 1, 2, 3
KIND_NAMES = {MODEL: "model", EMBED: "embed", INDEX: "index", BACKFILL: "backfill"}
EMBED_SLICE = 64  # texts per embedding job: ~0.4 s of MiniLM on one core, quiet machine


class Arbiter:
    """A lock granted by rank (lower first), first come first served within a rank."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holder: int | None = None  # thread id
        self._depth = 0
        self._queue: list[tuple[int, int]] = []  # (kind, ticket), a heap
        self._tickets = itertools.count()
        self.granted: dict[int, int] = dict.fromkeys(KIND_NAMES, 0)  # jobs run, by kind

    @contextmanager
    def job(self, kind: int) -> Iterator[None]:
        """Hold the arbiter for one heavy job of ``kind``; wait for its turn first."""
        me = threading.get_ident()
        with self._cond:
            if self._holder == me:  # nested in the caller's own job: it holds the CPU
                self._depth += 1
                nested = True
            else:
                nested = False
                ticket = (kind, next(self._tickets))
                heapq.heappush(self._queue, ticket)
                while self._holder is not None or self._queue[0] != ticket:
                    self._cond.wait()
                heapq.heappop(self._queue)
                self._holder, self._depth = me, 1
                self.granted[kind] = self.granted.get(kind, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not nested or self._depth == 0:
                    self._holder, self._depth = None, 0
                    self._cond.notify_all()

    def turn(self, kind: int) -> None:
        """Wait until a job of ``kind`` would be granted, and go on without holding it:
        what a long piece of work does before it starts (its own model calls and
        embedding slices then take their jobs one by one)."""
        with self.job(kind):
            pass

    def busy(self) -> bool:
        """Whether a job runs or waits now (a snapshot, for status and tests)."""
        with self._cond:
            return self._holder is not None or bool(self._queue)

    def waiting(self) -> int:
        """How many jobs wait now."""
        with self._cond:
            return len(self._queue)


# The process's arbiter: the daemon's worker, its API threads and a CLI ``dream`` share it.
ARBITER = Arbiter()


class ArbitratedEmbedder:
    """An embedder whose every batch goes through the arbiter, :data:`EMBED_SLICE` texts
    at a time. Everything else (``model_id``, ``dimension``, ``calibrate``...) is the
    wrapped embedder's."""

    def __init__(self, inner: Any, arbiter: Arbiter = ARBITER,
                 slice_size: int = EMBED_SLICE) -> None:
        self.inner, self.arbiter, self.slice_size = inner, arbiter, max(1, slice_size)

    @property
    def model_id(self) -> str:
        """The wrapped embedder's vector space."""
        return str(self.inner.model_id)

    @property
    def dimension(self) -> int:
        """The wrapped embedder's vector length."""
        return int(self.inner.dimension)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The wrapped ``embed``, one arbiter job per slice of texts; a lone text (a
        search's query: ~10 ms of one core) goes at once, so a search never waits for a
        model call of a minute on a busy laptop."""
        if len(texts) <= 1:
            return list(self.inner.embed(texts))
        out: list[list[float]] = []
        for start in range(0, len(texts), self.slice_size):
            with self.arbiter.job(EMBED):
                out.extend(self.inner.embed(texts[start:start + self.slice_size]))
        return out

    def __getattr__(self, name: str) -> Any:
        # only reached for what this class lacks: calibrate, threads, fast...
        return getattr(self.inner, name)


def is_local_host(host: str) -> bool:
    """Whether a model host runs on this machine (its calls compete for our cores)."""
    name = host.split("://", 1)[-1].split("/", 1)[0]
    if name.startswith("["):  # [::1]:11434
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    return name in ("", "localhost", "127.0.0.1", "::1", "0.0.0.0") or name.startswith("127.")


def lower_priority(nice: int) -> int:
    """Lower this process's CPU priority by ``nice`` steps (0: leave it); returns the
    niceness now. Beside the user's editor and the model's server (which keeps its
    own priority), the daemon's embedding and indexing come last."""
    if nice <= 0 or not hasattr(os, "nice"):
        return 0
    try:
        now = os.nice(0)
        return os.nice(max(0, nice - now))  # an already nicer process is left as it is
    except OSError as exc:
        log.warning("could not lower the daemon's CPU priority: %s", exc)
        return 0
