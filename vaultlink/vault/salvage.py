"""Saving what can be saved of a damaged ``state.sqlite``.

The state database holds one thing the vault cannot give back: the decision journal
(why each link exists, and how to undo it). So a database the disk damaged is never
deleted or silently replaced. It is renamed aside (``state.sqlite.corrupt-<time>``,
with its ``-wal``), a fresh one is created, and every row SQLite can still read of the
tables that matter is copied over, reading each table forwards and backwards so the
rows on both sides of a bad page are kept. The index tables are left behind: they are
derived from the vault and rebuild themselves. A warning names the file set aside and
what was kept.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)


def salvage_state_db(path: Path, reason: str, schema: str, tables: Sequence[str]) -> Path:
    """Move a damaged database aside and start a fresh one with what can be read of
    ``tables``; returns where the damaged file went."""
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while aside.exists():
        n += 1
        aside = aside.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
    for suffix in ("", "-wal", "-shm"):  # the WAL may hold the newest commits: keep it
        src = Path(f"{path}{suffix}")
        if src.exists():
            os.replace(src, Path(f"{aside}{suffix}"))
    kept = _copy_readable(aside, path, schema, tables)
    got = ", ".join(f"{n} {t}" for t, n in kept.items() if n) or "nothing"
    log.warning("%s was damaged (%s): moved it to %s and started afresh, keeping what could "
                "be read (%s rows). Notes not checkpointed are integrated again; the search "
                "index rebuilds itself.", path.name, reason, aside.name, got)
    return aside


def _copy_readable(old_path: Path, new_path: Path, schema: str,
                   tables: Sequence[str]) -> dict[str, int]:
    new = sqlite3.connect(new_path, isolation_level=None)
    kept: dict[str, int] = {}
    try:
        new.execute("PRAGMA journal_mode=WAL")
        new.executescript(schema)
        try:
            old = sqlite3.connect(f"file:{old_path}?mode=ro", uri=True)
        except sqlite3.Error:
            return kept
        try:
            for table in tables:
                kept[table] = _copy_table(old, new, table)
        finally:
            old.close()
    finally:
        new.close()
    return kept


def _copy_table(old: sqlite3.Connection, new: sqlite3.Connection, table: str) -> int:
    """Rows of ``table`` readable from either end, inserted into ``new``; how many."""
    try:
        cols = [r[1] for r in new.execute(f"PRAGMA table_info({table})")]
        have = {r[1] for r in old.execute(f"PRAGMA table_info({table})")}
    except sqlite3.Error:
        return 0
    names = [c for c in cols if c in have]
    if not names:
        return 0
    rows: dict[object, tuple[object, ...]] = {}
    select = f"SELECT rowid, {', '.join(names)} FROM {table} ORDER BY rowid"
    for order in ("", " DESC"):
        try:
            for row in old.execute(select + order):
                rows.setdefault(row[0], tuple(row[1:]))
        except sqlite3.Error:
            continue  # a bad page: what was read before it is kept
    marks = ",".join("?" * len(names))
    new.execute("BEGIN")
    new.executemany(f"INSERT OR IGNORE INTO {table} ({', '.join(names)}) VALUES ({marks})",
                    list(rows.values()))
    new.execute("COMMIT")
    return len(rows)
