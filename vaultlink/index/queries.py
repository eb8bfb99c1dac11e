"""Answering a query over one index: the query is embedded once, its nearest vectors
(exact, ``sqlite_vectors.VectorMatrix``, or the Chroma server's,
``chroma_vectors.ServedVectors``) fused by rank with BM25 over the FTS5 table and any
list a subclass adds; a ``Scope`` (a bucket, the digest only) filters all of them."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from vaultlink.errors import SearchIndexError
from vaultlink.index.fusion import (
    KEYWORD_WEIGHT,
    VECTOR_WEIGHT,
    every_term_match,
    fts_terms,
    fuse_ranks,
    query_text,
    term_weights,
)
from vaultlink.index.keywords import TermRows

if TYPE_CHECKING:  # the tables it reads; each index mixes the two (a shorter import chain)
    from vaultlink.index.tables import IndexTables

    _Tables = IndexTables
else:
    _Tables = object


@dataclass(frozen=True)
class Scope:
    """What a query is limited to: on a Chroma server, the vectors whose metadata has
    ``where`` (its ``where`` filter); here, the docs whose path starts with ``prefix``."""

    where: dict[str, str | bool]
    prefix: str


class IndexQueries(_Tables):
    """The query side of an index, over its tables (``IndexBase`` is the sync side)."""

    def _ranked(self, query: str, limit: int, bm25_weights: Sequence[float],
                fusion: tuple[float, float] = (VECTOR_WEIGHT, KEYWORD_WEIGHT),
                scope: Scope | None = None) -> list[tuple[int, float, float, int]]:
        """Fused (doc id, score, cosine similarity, BM25 rank or 0), best first; only
        docs within ``scope`` when given."""
        text = query_text(query)
        depth = max(limit * 3, 50)
        vector = self.embedder.embed([text])[0]
        where, prefix = (scope.where, scope.prefix) if scope is not None else ({}, "")
        with self._lock:
            try:
                nearest = self._nearest(vector, depth, where, prefix)
                keyword = self._keyword_list(text, bm25_weights, depth, prefix)
                lists = [([i for i, _ in nearest], fusion[0]), (keyword, fusion[1])]
                more = self._more_lists(text, lists, depth, prefix)
                if prefix and more:  # name lists come from the whole index: keep the scope's
                    allowed = self._ids_under(prefix)
                    more = [([i for i in ids if i in allowed], w) for ids, w in more]
                lists += more
            except sqlite3.DatabaseError as exc:
                raise SearchIndexError(f"keyword search failed: {exc}; run `vaultlink "
                                       "reindex`") from exc
        # A model whose cosines run on another scale reports them on MiniLM's, which
        # every threshold is set on (see Embedder); rankings do not change.
        scale = getattr(self.embedder, "calibrate", None)
        similarity = {i: scale(s) for i, s in nearest} if scale else dict(nearest)
        fused = fuse_ranks(lists)[:limit]
        lexical = {doc: n for n, doc in enumerate(keyword, start=1)}
        return [(i, score, similarity.get(i, 0.0), lexical.get(i, 0)) for i, score in fused]

    @cached_property
    def _terms(self) -> TermRows:
        """How many rows each query word is in (``keywords``), made at the first query
        and kept with its counts until the database changes."""
        return TermRows(self._db, self._docs_t, self._fts_t)

    def _keyword_list(self, text: str, bm25_weights: Sequence[float], depth: int,
                      prefix: str = "") -> list[int]:
        """Doc ids by BM25 for ``text`` (under the lock), best first: asked for the terms
        that weigh (``_keyword_match``); in an index within ``LARGE_INDEX_TEXTS``, when
        they fill fewer than ``depth`` places, asked again with all of its terms.

        The second answer ranks the rows the first found as the first did (the common
        terms add at most FTS5's 1e-6 floor), and after them the rows only common words
        match: the list every term gives, with the common ones scored only when they
        can reach the list (a small vault, or a query of rare words)."""
        terms = fts_terms(text)  # cut once: a Japanese query's cut is UniDic's work
        match = self._terms.match(terms)
        ids = [] if match is None else self._keyword_ids(match, bm25_weights, depth, prefix)
        if len(ids) < depth:
            every = every_term_match(text, terms)
            if every is not None and every != match and not self._terms.large():
                ids = self._keyword_ids(every, bm25_weights, depth, prefix)
        return ids

    def _keyword_match(self, text: str) -> str | None:
        """The FTS5 query for ``text`` (under the lock): the terms that weigh, and in a
        large index only the rarest of them (``TermRows.match``); None when no term is
        left to ask for."""
        return self._terms.match(fts_terms(text))

    def _terms_held(self, text: str, paths: Collection[str]
                    ) -> tuple[dict[str, list[set[str]]], dict[str, float]]:
        """For each of ``paths``, which of the terms ``_keyword_list`` asks FTS5 for each
        of its texts holds, in the texts' order; and each term's weight
        (``fusion.term_weights``). The terms are the rare ones (``TermRows.asked``)."""
        fts, docs = self._fts_t, self._docs_t
        wanted = list(paths)
        with self._lock:
            terms = self._terms.asked(fts_terms(text))
            if not terms or not wanted:
                return {}, {}
            rows = {t: self._terms.rows(t) for t in terms}
            marks = ",".join("?" * len(wanted))
            texts = {i: (path, n) for i, path, n in self._db.execute(
                f"SELECT id, path, ord FROM {docs} WHERE path IN ({marks})", wanted)}
            holds: dict[int, set[str]] = {i: set() for i in texts}
            for term in terms:
                for (i,) in self._db.execute(f"SELECT rowid FROM {fts} WHERE {fts} MATCH ?",
                                             (f'"{term}"',)):
                    if i in holds:
                        holds[i].add(term)
            weights = term_weights(terms, rows, self._terms.total())
        held: dict[str, list[set[str]]] = {}
        for i in sorted(texts, key=lambda i: texts[i][1]):
            held.setdefault(texts[i][0], []).append(holds[i])
        return held, weights

    def _ids_under(self, prefix: str) -> set[int]:
        return {r[0] for r in self._db.execute(
            f"SELECT id FROM {self._docs_t} WHERE substr(path, 1, ?) = ?",
            (len(prefix), prefix))}

    def _more_lists(self, text: str, lists: list[tuple[list[int], float]], depth: int,
                    prefix: str = "") -> list[tuple[list[int], float]]:
        """Further ranked doc ids (with their fusion weight) beside the vector and keyword
        ones in ``lists``; called under the lock. None here."""
        return []

    def _keyword_ids(self, match: str, bm25_weights: Sequence[float], depth: int,
                     prefix: str = "") -> list[int]:
        """Doc ids for an FTS5 MATCH expression, best BM25 first (under the lock); only
        docs whose path starts with ``prefix`` when given."""
        weights = ", ".join(str(float(w)) for w in bm25_weights)
        fts = self._fts_t
        if not prefix:
            return [r[0] for r in self._db.execute(
                f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? "
                f"ORDER BY bm25({fts}, {weights}) LIMIT ?", (match, depth))]
        return [r[0] for r in self._db.execute(
            f"SELECT {fts}.rowid FROM {fts} JOIN {self._docs_t} d ON d.id = {fts}.rowid "
            f"WHERE {fts} MATCH ? AND substr(d.path, 1, ?) = ? "
            f"ORDER BY bm25({fts}, {weights}) LIMIT ?", (match, len(prefix), prefix, depth))]

    def _hit_rows(self, query: str, limit: int, bm25_weights: Sequence[float],
                  fusion: tuple[float, float], select: str, scope: Scope | None = None
                  ) -> list[tuple[tuple[Any, ...], float, float, int]]:
        """(row, score, similarity, BM25 rank or 0) of the fused hits, best first.
        ``select`` reads the docs table as ``d``, selects ``d.id`` first and ends in
        ``d.id IN ({marks})``."""
        ranked = self._ranked(query, limit, bm25_weights, fusion, scope)
        if not ranked:
            return []
        with self._lock:
            marks = ",".join("?" * len(ranked))
            rows = {r[0]: tuple(r[1:]) for r in self._db.execute(
                select.format(marks=marks), [i for i, _, _, _ in ranked])}
        return [(rows[i], score, sim, kw) for i, score, sim, kw in ranked if i in rows]
