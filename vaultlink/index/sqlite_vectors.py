"""Exact vector search over an index's vectors, kept in SQLite and in memory (the
default, ``index.chroma.mode: embedded``; on a Chroma server see ``chroma_vectors.py``).

Every vector an index embeds is stored in its ``idx_<kind>_vec`` table, in the same
transaction as its doc and FTS rows, so the three can never disagree. Queries read a
:class:`VectorMatrix`: the vectors as one float32 matrix, loaded from that table on the
first query of a process and kept in step by every write after it. A query is one
matrix-vector product and a partial sort: exact cosine (the vectors are unit length),
where an HNSW graph is approximate.

Not an embedded Chroma: importing it cost every CLI query more than an exact search
of the whole index (docs/performance.md, "Figures behind rules in the code").
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

# A deleted row stays in the matrix (masked) until this share of it is dead.
COMPACT_AT = 0.25


def to_blob(vector: Sequence[float] | npt.NDArray[np.float32]) -> bytes:
    """A vector as the bytes the table stores (float32, native order)."""
    return np.asarray(vector, dtype=np.float32).tobytes()


class VectorMatrix:
    """The vectors of one index by doc id; exact top-k by cosine similarity."""

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int64)
        self._mat = np.empty((0, 0), dtype=np.float32)
        self._alive = np.empty(0, dtype=bool)
        self._row: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._row)

    def load(self, db: sqlite3.Connection, table: str) -> None:
        """Replace the contents with every row of ``table`` (id, vec)."""
        rows = db.execute(f"SELECT id, vec FROM {table}").fetchall()
        self._ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        flat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        width = len(rows[0][1]) // 4 if rows else 0
        self._mat = flat.reshape(len(rows), width).copy()
        self._alive = np.ones(len(rows), dtype=bool)
        self._row = {int(i): n for n, i in enumerate(self._ids)}

    def add(self, ids: Sequence[int], vectors: Sequence[Sequence[float]]) -> None:
        """Add vectors under new ids (an id already present is replaced)."""
        if not ids:
            return
        self.remove(i for i in ids if i in self._row)
        start = len(self._ids)
        new = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        self._ids = np.concatenate([self._ids, np.asarray(ids, dtype=np.int64)])
        self._mat = np.concatenate([self._mat, new]) if len(self._mat) else new
        self._alive = np.concatenate([self._alive, np.ones(len(ids), dtype=bool)])
        self._row.update((int(i), start + n) for n, i in enumerate(ids))

    def remove(self, ids: Iterable[int]) -> None:
        """Forget vectors; the matrix is compacted once enough of it is dead."""
        for i in ids:
            row = self._row.pop(int(i), None)
            if row is not None:
                self._alive[row] = False
        if len(self._ids) and len(self._row) < (1 - COMPACT_AT) * len(self._ids):
            keep = self._alive
            self._ids, self._mat = self._ids[keep], self._mat[keep]
            self._alive = np.ones(len(self._ids), dtype=bool)
            self._row = {int(i): n for n, i in enumerate(self._ids)}

    def clear(self) -> None:
        """Forget every vector."""
        self.__init__()  # type: ignore[misc]

    def search(self, vector: Sequence[float], k: int,
               allowed: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """The ``k`` nearest ids with their cosine similarity, best first (ties by id);
        only among ``allowed`` when given."""
        if not self._row or k <= 0:
            return []
        # einsum, not ``@``: the BLAS behind ``@`` spreads one product over threads that
        # wait for each other on a busy machine (docs/performance.md, "Figures behind rules")
        sims = np.einsum("ij,j->i", self._mat, np.asarray(vector, dtype=np.float32))
        sims[~self._alive] = -np.inf
        alive = len(self._row)
        if allowed is not None:
            rows = [r for r in (self._row.get(int(i)) for i in allowed) if r is not None]
            keep = np.zeros(len(sims), dtype=bool)
            keep[rows] = True
            sims[~keep] = -np.inf
            alive = len(rows)
            if not alive:
                return []
        k = min(k, alive)
        top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
        order = sorted(top.tolist(), key=lambda n: (-float(sims[n]), int(self._ids[n])))
        return [(int(self._ids[n]), float(sims[n])) for n in order if sims[n] > -np.inf]


def vector_pages(db: sqlite3.Connection, vec_table: str, docs_table: str, page: int
                 ) -> Iterator[tuple[list[int], npt.NDArray[np.float32], list[tuple[str, str]]]]:
    """The stored vectors a page at a time (a large index's are not all read at once):
    their ids, the vectors, and each one's (path, text hash)."""
    last = 0
    while True:
        rows = db.execute(
            f"SELECT v.id, v.vec, d.path, d.text_hash FROM {vec_table} v "
            f"JOIN {docs_table} d ON d.id = v.id WHERE v.id > ? ORDER BY v.id "
            "LIMIT ?", (last, page)).fetchall()
        if not rows:
            return
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        yield ([r[0] for r in rows], vectors.reshape(len(rows), -1),
               [(r[2], r[3]) for r in rows])
        last = rows[-1][0]
