"""Which of a query's words FTS5 is asked for, and how many rows each is in.

BM25 over FTS5 reads and scores every row a term is in. In an index of at most
``LARGE_INDEX_TEXTS`` texts a query asks for the terms BM25 gives a weight (in fewer
than half of the texts, ``fusion.informative_terms``); in a larger one only for its
rarest terms, within ``KEYWORD_ROW_BUDGET`` rows (``fusion.rarest_terms``).

Each term's rows are counted (up to what the rule needs), which at a million sections
is a real share of a query (docs/performance.md, "Figures behind rules in the code").
A daemon asks query after query with the same words, while the index changes only when
a note does: so the counts, and the size, are kept until the database changes (SQLite's
``data_version``, or this connection's ``total_changes``); a stale count is never used.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from vaultlink.index.fusion import (
    KEYWORD_ROW_BUDGET,
    LARGE_INDEX_TEXTS,
    informative_terms,
    or_match,
    rarest_terms,
)

# Terms whose counts are kept at most; past it they are counted afresh (a real vault's
# vocabulary is larger, the words its queries use are not).
MAX_COUNTED_TERMS = 50_000


class TermRows:
    """How many texts one index holds and how many rows of its FTS5 table each term is
    in, each counted only as far as the rules need; remembered until the database
    changes.

    Used under the owning index's lock (one SQLite connection, not shared).
    """

    def __init__(self, db: sqlite3.Connection, docs_table: str, fts_table: str) -> None:
        self._db, self._docs, self._fts = db, docs_table, fts_table
        self._state: tuple[int, int, int, int] | None = None
        self._total: int | None = None
        self._rows: dict[str, int] = {}

    def _current(self) -> None:
        """Forget what was counted if the database changed since."""
        # (and the sizes it was counted against: a test, or a caller, may change them)
        state = (int(self._db.execute("PRAGMA data_version").fetchone()[0]),
                 self._db.total_changes, LARGE_INDEX_TEXTS, KEYWORD_ROW_BUDGET)
        if state != self._state or len(self._rows) > MAX_COUNTED_TERMS:
            self._state, self._total, self._rows = state, None, {}

    def _upto(self, select: str, args: tuple[str, ...], cap: int) -> int:
        """The rows ``select`` gives, counted up to ``cap``: counting all of a term's
        million rows would cost what leaving it out saves."""
        return int(self._db.execute(f"SELECT count(*) FROM ({select} LIMIT ?)",
                                    (*args, cap)).fetchone()[0])

    def total(self) -> int:
        """The texts in the index, counted up to ``LARGE_INDEX_TEXTS`` + 1."""
        self._current()
        if self._total is None:
            self._total = self._upto(f"SELECT 1 FROM {self._docs}", (),
                                     LARGE_INDEX_TEXTS + 1)
        return self._total

    def large(self) -> bool:
        """True when the index holds more than ``LARGE_INDEX_TEXTS`` texts."""
        return self.total() > LARGE_INDEX_TEXTS

    def rows(self, term: str) -> int:
        """The rows ``term`` is in as the table's tokenizer reads it (stemmed), counted
        only as far as the rule needs: past half the texts, or past the budget in a
        large index (call ``total`` or ``large`` first: they forget stale counts)."""
        found = self._rows.get(term)
        if found is None:
            total = self.total()
            cap = KEYWORD_ROW_BUDGET + 1 if total > LARGE_INDEX_TEXTS else total // 2 + 1
            fts = self._fts
            found = self._rows[term] = self._upto(
                f"SELECT 1 FROM {fts} WHERE {fts} MATCH ?", (f'"{term}"',), cap)
        return found

    def match(self, terms: Sequence[str]) -> str | None:
        """The FTS5 query for a query's ``terms`` (``fusion.fts_terms``): those in fewer
        than half of the texts, and in a large index only the rarest of them; None when
        no term is left to ask for."""
        return or_match(self.asked(terms))

    def asked(self, terms: Sequence[str]) -> list[str]:
        """The terms of ``match``'s query, in their order."""
        if not terms:
            return []
        total = self.total()
        rows = {t: self.rows(t) for t in terms}
        if total <= LARGE_INDEX_TEXTS:
            return informative_terms(terms, rows, total)
        return rarest_terms(terms, rows, KEYWORD_ROW_BUDGET)

    def phrase_too_common(self, words: Sequence[str]) -> bool:
        """True when a phrase of ``words`` is not worth asking FTS5 for: the index is
        large and even the phrase's rarest word is in more rows than the budget.

        A phrase is matched within the rows of its rarest word, and each is scored: at
        100,000 nodes a subject of common words cost 26 ms on average and up to half a
        second (p95 55 ms at load 8), the whole budget of a query.
        """
        if not words or not self.large():
            return False
        return min(self.rows(w) for w in words) > KEYWORD_ROW_BUDGET
