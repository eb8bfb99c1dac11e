"""The FTS5 table of an index: its columns hold each text's search form
(``words.search_text``: CJK runs as pairs of characters); an index that shows its texts
(``fts_shown``) keeps them as written too, in an unindexed column, only where the two
differ."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from vaultlink.index.words import search_text

FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"


def fts_ddl(table: str, columns: Sequence[str], shown: bool) -> str:
    """The FTS5 table: the columns searched, then (``shown``) one unindexed column each
    for its text as written."""
    cols = list(columns)
    if shown:
        cols += [f"{c}_shown UNINDEXED" for c in columns]
    return (f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5("
            f"{', '.join(cols)}, tokenize='{FTS_TOKENIZE}')")


def fts_write(db: sqlite3.Connection, table: str, columns: Sequence[str], shown: bool,
              doc_id: int, texts: Sequence[str], replace: bool = False) -> None:
    """One doc's row: each text's search form (and, ``shown``, the text as written)."""
    if replace:
        db.execute(f"DELETE FROM {table} WHERE rowid = ?", (doc_id,))
    values: list[str | None] = [search_text(text) for text in texts]
    cols = list(columns)
    if shown:
        cols += [f"{c}_shown" for c in columns]
        values += [None if as_written == indexed else as_written
                   for as_written, indexed in zip(texts, values, strict=True)]
    marks = ",".join("?" * (len(cols) + 1))
    db.execute(f"INSERT INTO {table} (rowid, {', '.join(cols)}) VALUES ({marks})",
               (doc_id, *values))
