"""Durable state in ``.vaultlink/state.sqlite``: checkpoint, pending units, runs, journal, queue.

One connection per ``State``, WAL mode, every change in its own transaction, so a
crash at any point leaves the database consistent. Tables owned by other modules
(the search index) live in the same file under their own prefix; the journal and the
write intents are in ``journal.py``, the proposals held for review in ``proposals.py``,
runs, failures and pending units in ``runs.py``, what note readings left in
``readings.py``; this module keeps the connection, checkpoints, scan cache and queue.

A database the disk damaged is never dropped in silence: it is moved aside with a
warning, and what can still be read of it (the journal first) is copied into a fresh
one (``salvage.py``); the index tables are rebuilt from the vault.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultlink.errors import StateError
from vaultlink.vault.faults import crash_point
from vaultlink.vault.journal import (
    JOURNAL_SCHEMA,
    Intent,
    JournalEntry,
    JournalTables,
    Row,
    diff_of,
)
from vaultlink.vault.proposals import PROPOSALS_SCHEMA, ProposalTables
from vaultlink.vault.readings import ReadingTables
from vaultlink.vault.runs import Failure, RunTables
from vaultlink.vault.salvage import salvage_state_db
from vaultlink.vault.walk import StatEntry

__all__ = ["Checkpoint", "Failure", "Intent", "JournalEntry", "QueueItem", "Row", "State",
           "diff_of", "immediate_transaction"]

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoint (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, sections TEXT NOT NULL DEFAULT '[]',
    at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS pending_units (
    id INTEGER PRIMARY KEY, unit TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, started_at REAL NOT NULL, finished_at REAL,
    dry_run INTEGER NOT NULL DEFAULT 0, counts TEXT NOT NULL DEFAULT '{}',
    changes TEXT NOT NULL DEFAULT '[]', provider TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS failed_units (
    id INTEGER PRIMARY KEY, run_id INTEGER, unit TEXT NOT NULL, paths TEXT NOT NULL,
    error TEXT NOT NULL, attempts INTEGER NOT NULL, at REAL NOT NULL,
    resolved INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS unread_notes (
    path TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS passed_over (
    path TEXT NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    excerpt TEXT NOT NULL, reason TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS passed_over_path ON passed_over(path);
CREATE TABLE IF NOT EXISTS note_yield (
    path TEXT PRIMARY KEY, units INTEGER NOT NULL, rules TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS queue (
    path TEXT PRIMARY KEY, changed_at REAL NOT NULL, ready_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS note_stat (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, hash TEXT NOT NULL,
    hashed_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS vault_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS backlog (
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL,
    note_time REAL NOT NULL, queued_at REAL);
CREATE INDEX IF NOT EXISTS backlog_order ON backlog(queued_at, note_time);
CREATE TABLE IF NOT EXISTS rates (
    provider TEXT PRIMARY KEY, notes INTEGER NOT NULL, bytes INTEGER NOT NULL,
    units INTEGER NOT NULL, integrated INTEGER NOT NULL, seconds REAL NOT NULL);
""" + JOURNAL_SCHEMA + PROPOSALS_SCHEMA
# (path, inode, size, mtime) of the databases this process has checked already
_CHECKED: set[tuple[str, int, int, int]] = set()

# A queued note never waits longer than this after a clock jump (the longest backoff).
MAX_WAIT = 3600.0
CLOCK_SLACK = 1.0  # seconds "in the future" that are only clock jitter
# The tables worth saving from a damaged database, most precious first.
SALVAGED = ("journal", "checkpoint", "inflight", "failed_units", "pending_units", "queue",
            "unread_notes", "runs", "proposals")
# Columns added after the first release: (table, column, declaration). A state.sqlite
# written by an older vaultlink gets them on open, with their defaults.
MIGRATIONS = (
    ("failed_units", "kind", "TEXT NOT NULL DEFAULT 'unit'"),  # unit | note (extract)
    ("failed_units", "parked", "INTEGER NOT NULL DEFAULT 0"),
    ("failed_units", "codes", "TEXT NOT NULL DEFAULT '[]'"),  # guard refusal codes seen
    ("journal", "integrator", "TEXT NOT NULL DEFAULT ''"),  # offline | ollama <model> <mode>
    ("journal", "prompt_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("journal", "answer_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("journal", "model_seconds", "REAL NOT NULL DEFAULT 0"),
    ("journal", "refusals", "TEXT NOT NULL DEFAULT '[]'"),  # guard refusal codes, in order
    ("journal", "calls", "TEXT NOT NULL DEFAULT '{}'"),  # tool calls by form (llm.chat)
)


@dataclass(frozen=True)
class Checkpoint:
    """What was integrated of a note: its hash and the fingerprints of its sections."""

    path: str
    hash: str
    sections: tuple[str, ...]


@dataclass(frozen=True)
class QueueItem:
    """A note waiting to be integrated, ready once it has been quiet until ``ready_at``."""

    path: str
    changed_at: float
    ready_at: float
    attempts: int
    last_error: str


@contextmanager
def immediate_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT on an autocommit connection; ROLLBACK on any error.

    IMMEDIATE takes the write lock up front, so two writers wait for each other
    instead of failing half-way with "database is locked".
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class State(JournalTables, ProposalTables, RunTables, ReadingTables):
    """The vault's state database; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        try:
            self._db = self._open(path)
        except sqlite3.OperationalError as exc:  # read-only, full, locked: not damage
            raise StateError(f"{path} cannot be opened ({exc}): "
                             f"{_sqlite_advice(str(exc))}") from None
        except sqlite3.DatabaseError as exc:  # not a database, malformed: damage
            salvage_state_db(path, str(exc), SCHEMA, SALVAGED)
            try:
                self._db = self._open(path)
            except sqlite3.DatabaseError as again:
                raise StateError(f"{path} cannot be opened even fresh ({again}); check the "
                                 "disk, then move .vaultlink/ away") from None

    @classmethod
    def _open(cls, path: Path) -> sqlite3.Connection:
        """Connect, check the tables this class owns, create what is missing."""
        db = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        try:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
            cls._migrate_journal(db)
            cls._migrate(db)
            # Damage in a page no statement above touched shows only when read: check
            # our tables now, not in the middle of a run; once per process, as the pages
            # of a long journal take a moment to read.
            st = path.stat()
            seen = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
            if seen not in _CHECKED:
                for table in SALVAGED:
                    found = [str(r[0]) for r in db.execute(f"PRAGMA quick_check({table})")]
                    if found != ["ok"]:
                        raise sqlite3.DatabaseError(f"table {table}: {'; '.join(found[:3])}")
                _CHECKED.add(seen)
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        """Add the columns an older state.sqlite lacks (additive: nothing is lost)."""
        for table, column, decl in MIGRATIONS:
            have = {r["name"] for r in db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                try:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
                except sqlite3.OperationalError as exc:  # another process just added it
                    if "duplicate column" not in str(exc):
                        raise

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic change: everything inside commits together or not at all. A disk
        that refuses the write is a ``StateError`` saying what to do; nothing is lost."""
        with self._lock:
            try:
                with immediate_transaction(self._db) as db:
                    yield db
            except sqlite3.OperationalError as exc:
                raise StateError(f"{self.path.name} could not be written ({exc}): "
                                 f"{_sqlite_advice(str(exc))}; what was done before is "
                                 "recorded") from None

    def _all(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._db.execute(sql, tuple(args)))

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Rows of one read (for the stores kept beside this one, e.g. ``vault.backlog``)."""
        return self._all(sql, args)

    # -- checkpoint ------------------------------------------------------------

    def checkpoints(self) -> dict[str, Checkpoint]:
        """Every checkpointed note by path."""
        return {r["path"]: Checkpoint(r["path"], r["hash"], tuple(json.loads(r["sections"])))
                for r in self._all("SELECT * FROM checkpoint")}

    def checkpoint_hashes(self) -> dict[str, str]:
        """Path -> hash of every checkpointed note (no sections: a fifth of the cost)."""
        return {r[0]: r[1] for r in self._all("SELECT path, hash FROM checkpoint")}

    def set_checkpoints(self, items: Iterable[Checkpoint]) -> int:
        """Record notes as integrated at their hash (they leave the backlog); returns
        how many."""
        rows = [(c.path, c.hash, json.dumps(list(c.sections)), time.time()) for c in items]
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO checkpoint VALUES (?,?,?,?)", rows)
            db.executemany("DELETE FROM backlog WHERE path=?", [(r[0],) for r in rows])
            crash_point("mid_checkpoint")
        return len(rows)

    def has_checkpoints(self) -> bool:
        """True once any note was integrated in this vault."""
        return bool(self._all("SELECT 1 FROM checkpoint LIMIT 1"))

    def drop_checkpoints(self, paths: Iterable[str]) -> None:
        """Forget notes (deleted from the vault, or queued for a re-run)."""
        with self.transaction() as db:
            db.executemany("DELETE FROM checkpoint WHERE path=?", [(p,) for p in paths])

    # -- the stat cache of scans (vault.walk.StatCache) ------------------------

    def stat_entries(self) -> dict[str, StatEntry]:
        """The stat and hash of every note a scan hashed, by path."""
        return {r[0]: StatEntry(*r[1:]) for r in self._all(
            "SELECT path, size, mtime_ns, ctime_ns, ino, hash, hashed_ns FROM note_stat")}

    def store_stat_entries(self, fresh: Mapping[str, StatEntry], gone: Iterable[str]) -> None:
        """Remember notes just hashed; forget those no longer in the vault."""
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO note_stat VALUES (?,?,?,?,?,?,?)",
                           [(p, e.size, e.mtime_ns, e.ctime_ns, e.ino, e.hash, e.hashed_ns)
                            for p, e in fresh.items()])
            db.executemany("DELETE FROM note_stat WHERE path=?", [(p,) for p in gone])

    # -- queue -----------------------------------------------------------------

    def enqueue(self, path: str, now: float, quiet_seconds: float) -> None:
        """Queue a changed note; a newer change of the same note restarts its quiet period."""
        with self.transaction() as db:
            db.execute("INSERT INTO queue(path, changed_at, ready_at) VALUES (?,?,?) "
                       "ON CONFLICT(path) DO UPDATE SET changed_at=excluded.changed_at, "
                       "ready_at=excluded.ready_at",
                       (path, now, now + quiet_seconds))

    def queue(self, now: float | None = None) -> list[QueueItem]:
        """Everything queued, soonest first. With ``now``, items changed "in the future"
        are brought back first: the clock jumped back since they were queued, and they
        must not wait for the old time to come round again (a day, a year)."""
        if now is not None:
            with self.transaction() as db:
                db.execute("UPDATE queue SET ready_at=? + min(max(ready_at - changed_at, 0), "
                           "?), changed_at=? WHERE changed_at > ?",
                           (now, MAX_WAIT, now, now + CLOCK_SLACK))
        return [QueueItem(r["path"], r["changed_at"], r["ready_at"], r["attempts"],
                          r["last_error"])
                for r in self._all("SELECT * FROM queue ORDER BY ready_at, path")]

    def dequeue(self, items: Iterable[QueueItem]) -> None:
        """Remove items, but only if they were not changed again since they were read."""
        with self.transaction() as db:
            db.executemany("DELETE FROM queue WHERE path=? AND changed_at=?",
                           [(i.path, i.changed_at) for i in items])

    def requeue(self, paths: Iterable[str], now: float, delay: float, error: str) -> None:
        """Put failed items back with a delay (backoff) and the error that stopped them."""
        with self.transaction() as db:
            for p in paths:
                db.execute("INSERT INTO queue(path, changed_at, ready_at, attempts, last_error)"
                           " VALUES (?,?,?,1,?) ON CONFLICT(path) DO UPDATE SET "
                           "ready_at=max(queue.ready_at, excluded.ready_at), "
                           "attempts=queue.attempts+1, last_error=excluded.last_error",
                           (p, now, now + delay, error))


def _sqlite_advice(message: str) -> str:
    if "full" in message:
        return "the disk is full: free some space, then run again"
    if "readonly" in message or "read-only" in message:
        return "the vault is read-only: make .vaultlink/ writable, then run again"
    if "I/O" in message:
        return "the disk reported an I/O error: check the disk before going on"
    if "locked" in message:
        return "another process holds the database: wait for it, then run again"
    return "check the disk and run again"
