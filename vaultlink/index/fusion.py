"""Ranking for recall: reciprocal rank fusion, and keyword queries that cannot fail.

Pure functions: the indexes hand in ranked lists and raw query text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

from vaultlink.errors import SearchIndexError
from vaultlink.index.words import words_of as words_of  # the cut, kept importable here

RRF_K = 60
# node_search's weights (tuned on linkdocs, docs/performance.md).
VECTOR_WEIGHT = 0.7
KEYWORD_WEIGHT = 0.3
# ``search``'s over the sections of all notes, chosen on LoCoMo's tuning half
# (conversations 26, 30, 41, 42, 43; docs/quality.md): with 0.7/0.3 the section that
# held the answer was the keyword list's first for half of the questions missed, and
# sank to 9th (median) under sections of the same subject that MiniLM scores alike.
# 0.3/0.7 gave R@5 0.837 against 0.732 (both one entry per note); 0.2/0.8 the same,
# 0.5/0.5 0.800, keywords alone 0.823, vectors alone 0.638.
SEARCH_VECTOR_WEIGHT = 0.3
SEARCH_KEYWORD_WEIGHT = 0.7
# A query longer than this says nothing more to a 256-token model; cut before embedding.
MAX_QUERY_CHARS = 2000
# FTS5 cost grows with OR'ed terms; a pasted page must not become a 10,000-term query.
MAX_QUERY_TERMS = 64

T = TypeVar("T")


def rrf_fuse(vector: Sequence[T], keyword: Sequence[T], *, vector_weight: float = VECTOR_WEIGHT,
             keyword_weight: float = KEYWORD_WEIGHT, k: int = RRF_K) -> list[tuple[T, float]]:
    """Reciprocal rank fusion of a vector and a keyword list, best first (see ``fuse_ranks``)."""
    return fuse_ranks([(vector, vector_weight), (keyword, keyword_weight)], k=k)


def fuse_ranks(lists: Sequence[tuple[Sequence[T], float]], k: int = RRF_K
               ) -> list[tuple[T, float]]:
    """Reciprocal rank fusion of ranked lists, each with its weight, best first.

    A key scores ``weight / (k + rank)`` (rank 1-based) from each list it is in and
    nothing from a list it is missing from. Ties keep first-seen order (earlier lists
    first).
    """
    scores: dict[T, float] = {}
    for ranked, weight in lists:
        seen: set[T] = set()
        for rank, key in enumerate(ranked, start=1):
            if key in seen:  # a repeated key counts at its best rank only
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


def fts_terms(query: str) -> list[str]:
    """The distinct search words of ``query`` in order, as FTS5 is asked for them.

    The words are ``words.words_of``'s (a CJK run gives its pairs of characters, each a
    term), so operators, quotes, ``*``, ``:`` and ``NEAR`` in the query become plain words
    or vanish. No word is left out by a list: which words are too common to count is the
    index's to say (``informative_terms``), in every language alike.
    """
    terms: list[str] = []
    seen: set[str] = set()
    for low in words_of(query):
        if low not in seen:
            seen.add(low)
            terms.append(low)
            if len(terms) >= MAX_QUERY_TERMS:
                break
    return terms


def or_match(terms: Sequence[str]) -> str | None:
    """The terms quoted and OR'ed: an FTS5 MATCH expression that cannot be a syntax
    error; None for no terms."""
    return " OR ".join(f'"{t}"' for t in terms) if terms else None


# Further alternatives for the query of every term, made from the query's text (an FTS5
# expression or None); the product asks none, a bench tries some (bench/quality/cjk_cuts.py).
QueryExtras = Callable[[str], str | None]
_every_term_extras: QueryExtras | None = None


def use_every_term_extras(extras: QueryExtras | None) -> None:
    """Also ask for ``extras(text)`` in the query of every term, in this process from now
    on (None: the product's query again)."""
    global _every_term_extras
    _every_term_extras = extras


def every_term_match(text: str, terms: Sequence[str]) -> str | None:
    """The query of every term of ``text`` (``terms``: its ``fts_terms``): ``or_match``,
    with the extras ``use_every_term_extras`` gave, if any."""
    every = or_match(terms)
    extra = _every_term_extras(text) if _every_term_extras is not None else None
    if not extra:
        return every
    return extra if every is None else f"{every} OR {extra}"


def fts_match(query: str) -> str | None:
    """An FTS5 MATCH expression for ``query`` that cannot be a syntax error: its
    ``fts_terms`` quoted and OR'ed; None when it has no word."""
    return or_match(fts_terms(query))


# BM25 over FTS5 reads and scores every row a term is in: at a million sections a common
# word costs a query dearly for an idf that says next to nothing (docs/performance.md,
# "Figures behind rules in the code"); so in an index of more than LARGE_INDEX_TEXTS
# texts, a query's commonest terms go once its terms match KEYWORD_ROW_BUDGET rows in
# all. A smaller one (every vault the quality benchmarks hold) has no budget: its rule
# is ``informative_terms``'. Both are applied by ``keywords.TermRows``.
LARGE_INDEX_TEXTS = 20_000
KEYWORD_ROW_BUDGET = 20_000


def rarest_terms(terms: Sequence[str], rows: Mapping[str, int],
                 budget: int = KEYWORD_ROW_BUDGET) -> list[str]:
    """The terms worth asking FTS5 for, in their order: rarest first while the rows they
    match (``rows``: term -> rows it is in) stay within ``budget``.

    A term in more rows than ``budget`` is left out even alone: in an index that large it
    is a stop word (at a million sections, a word in 20,000 of them weighs a third of a
    rare one in BM25), and scoring its rows cost a second a query. A term in no row is
    left out too (it cannot match). None may be left: the other lists rank alone.
    """
    found = sorted((t for t in terms if 0 < rows.get(t, 0) <= budget), key=lambda t: rows[t])
    kept: set[str] = set()
    total = 0
    for term in found:
        if total + rows[term] > budget:
            break
        kept.add(term)
        total += rows[term]
    return [t for t in terms if t in kept]


def informative_terms(terms: Sequence[str], rows: Mapping[str, int], total: int) -> list[str]:
    """The terms BM25 gives a weight, in their order: those in fewer than half of the
    ``total`` rows (``rows``: term -> rows it is in, counted at least to ``total // 2 + 1``).

    FTS5's BM25 weighs a term by ``log((N - n + 0.5) / (n + 0.5))`` and floors it at 1e-6
    where that is not positive, which is where a term is in half the rows or more: such a
    term ("the", "und", "react" in React's documentation) moves no row past one that
    matches another term, yet FTS5 scores every row it is in. The index's own counts
    decide, not a list of one language's stop words: a list dropped "much" and "first",
    words a page of English documentation is found by, and kept "der" and "и".
    """
    return [t for t in terms if 2 * rows.get(t, 0) < total]


# A note holding more of the question's rare words within a few sections in a row ranks
# as a list of its own beside the fused one, with this weight: the words of an answer
# are often spread over adjacent sections, each alone matching few of them (figures:
# docs/quality.md). A window, not the whole note: a long note holds many words anyway.
COVERAGE_WEIGHT = 0.4
COVERAGE_REACH = 1  # sections either side of one, in the window


def term_weights(terms: Sequence[str], rows: Mapping[str, int], total: int) -> dict[str, float]:
    """Each term's weight as FTS5's BM25 gives it, ``log((N - n + 0.5) / (n + 0.5))``
    (``rows``: term -> rows it is in, of ``total``), floored at FTS5's 1e-6."""
    return {t: max(math.log((total - rows.get(t, 0) + 0.5) / (rows.get(t, 0) + 0.5)), 1e-6)
            for t in terms}


def window_weight(held: Sequence[Collection[str]], weights: Mapping[str, float],
                  reach: int = COVERAGE_REACH) -> float:
    """The most term weight any run of ``2 * reach + 1`` texts in a row holds (``held``:
    each text's terms, in the note's order), each term counted once."""
    best = 0.0
    for i in range(len(held)):
        terms = set().union(*held[max(0, i - reach):i + reach + 1])
        # summed in the weights' order, not the set's: a set's order changes with the
        # process (string hashing), and a sum's last bit with it, flipping ties
        best = max(best, sum(w for t, w in weights.items() if t in terms))
    return best


def by_coverage(keys: Sequence[T], weight: Mapping[T, float]) -> list[T]:
    """The ``keys`` with some term weight (``weight``: key -> what it holds, as
    ``window_weight`` says), the most first; equals in the given order."""
    return sorted((k for k in keys if weight.get(k, 0.0) > 0),
                  key=lambda k: -weight[k])  # a stable sort keeps the given order


def query_text(query: str) -> str:
    """The query as it is embedded; SearchIndexError for an empty or blank query."""
    if not isinstance(query, str) or not query.strip():
        raise SearchIndexError("the search query is empty; give some words to search for")
    return query.strip()[:MAX_QUERY_CHARS]


# Hits this high in the keyword ranking are shown whatever their similarity: an exact
# ticket number or name that the vector model does not see (bench/quality/floor.py).
KEYWORD_RANKS_KEPT = 3


def above_floor(hits: list[dict[str, Any]], floor: float) -> list[dict[str, Any]]:
    """The hits worth showing (as the API and ``--json`` give them): a similarity at
    ``floor`` (``index.min_similarity``) or above, or one of the best keyword matches;
    the long tail of faint matches goes."""
    return [h for h in hits if float(h.get("similarity", 0)) >= floor
            or 0 < int(h.get("keyword_rank", 0)) <= KEYWORD_RANKS_KEPT]
