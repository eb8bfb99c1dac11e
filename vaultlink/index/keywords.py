"""Keyword recall in a large index: which of a query's words FTS5 is asked for.

BM25 over FTS5 reads and scores every row a term is in, so once an index holds more
than ``LARGE_INDEX_TEXTS`` texts a query asks only for its rarest terms, within
``KEYWORD_ROW_BUDGET`` rows (``fusion.rarest_terms``); below it (every vault the quality benchmarks
hold) a query is asked in full, as it always was.

Knowing how rare a term is costs a count of its rows (up to the budget), and at a
million sections the counts of a query's four words took 6-11 ms of the query's
time; the size check another 2 ms. A daemon or an MCP server asks query after query
and the same words come back, while the index changes only when a note does: so the
counts, and whether the index is large at all, are kept until the database changes
(a commit by any other connection moves SQLite's ``data_version``; this connection's
own writes move its ``total_changes``). A count that would be stale is never used.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from vaultlink.index.fusion import (
    KEYWORD_ROW_BUDGET,
    LARGE_INDEX_TEXTS,
    fts_match,
    fts_terms,
    or_match,
    rarest_terms,
)
from vaultlink.markdown.language import STOP_WORDS

# Terms whose counts are kept at most; past it they are counted afresh (a real vault's
# vocabulary is larger, the words its queries use are not).
MAX_COUNTED_TERMS = 50_000


class TermRows:
    """How many rows of one index's FTS5 table each term is in, counted up to the
    budget, and whether the index is past it; remembered until the database changes.

    Used under the owning index's lock (one SQLite connection, not shared).
    """

    def __init__(self, db: sqlite3.Connection, docs_table: str, fts_table: str) -> None:
        self._db, self._docs, self._fts = db, docs_table, fts_table
        self._state: tuple[int, int, int, int] | None = None
        self._large: bool | None = None
        self._rows: dict[str, int] = {}

    def _current(self) -> None:
        """Forget what was counted if the database changed since."""
        # (and the sizes it was counted against: a test, or a caller, may change them)
        state = (int(self._db.execute("PRAGMA data_version").fetchone()[0]),
                 self._db.total_changes, LARGE_INDEX_TEXTS, KEYWORD_ROW_BUDGET)
        if state != self._state or len(self._rows) > MAX_COUNTED_TERMS:
            self._state, self._large, self._rows = state, None, {}

    def _upto(self, select: str, args: tuple[str, ...], cap: int) -> int:
        """The rows ``select`` gives, counted up to ``cap``: counting all of a term's
        million rows would cost what leaving it out saves."""
        return int(self._db.execute(f"SELECT count(*) FROM ({select} LIMIT ?)",
                                    (*args, cap)).fetchone()[0])

    def large(self) -> bool:
        """True when the index holds more than ``LARGE_INDEX_TEXTS`` texts."""
        self._current()
        if self._large is None:
            cap = LARGE_INDEX_TEXTS + 1
            self._large = self._upto(f"SELECT 1 FROM {self._docs}", (), cap) >= cap
        return self._large

    def rows(self, term: str) -> int:
        """The rows ``term`` is in as the table's tokenizer reads it (stemmed), up to
        the budget + 1 (call ``large`` first: it forgets stale counts)."""
        found = self._rows.get(term)
        if found is None:
            fts = self._fts
            found = self._rows[term] = self._upto(
                f"SELECT 1 FROM {fts} WHERE {fts} MATCH ?", (f'"{term}"',),
                KEYWORD_ROW_BUDGET + 1)
        return found

    def match(self, text: str) -> str | None:
        """The FTS5 query for ``text``: all its terms, but in a large index only its
        rarest (``rarest_terms``); None when no term is left to ask for."""
        terms = fts_terms(text)
        if not terms or not self.large():
            return fts_match(text)
        rows = {t: self.rows(t) for t in terms}
        return or_match(rarest_terms(terms, rows, KEYWORD_ROW_BUDGET))

    def phrase_too_common(self, words: Sequence[str]) -> bool:
        """True when a phrase of ``words`` is not worth asking FTS5 for: the index is
        large and even the phrase's rarest word is in more rows than the budget.

        A phrase is matched within the rows of its rarest word, and each is scored: at
        100,000 nodes a subject of common words cost 26 ms on average and up to half a
        second (p95 55 ms at load 8), the whole budget of a query. Stop words do not
        count as the rarest unless the phrase has nothing else.
        """
        if not words or not self.large():
            return False
        terms = [w for w in words if w not in STOP_WORDS] or list(words)
        return min(self.rows(t) for t in terms) > KEYWORD_ROW_BUDGET
