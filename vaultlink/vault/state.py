"""Durable state in ``.vaultlink/state.sqlite``: checkpoint, pending units, runs, journal, queue.

One connection per ``State``, WAL mode, every change in its own transaction, so a
crash at any point leaves the database consistent. Tables owned by other modules
(the search index) live in the same file under their own prefix.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vaultlink.errors import StateError

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
CREATE TABLE IF NOT EXISTS journal (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, run_id INTEGER, unit TEXT NOT NULL,
    queries TEXT NOT NULL DEFAULT '[]', candidates TEXT NOT NULL DEFAULT '[]',
    action TEXT NOT NULL, target TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
    diff TEXT NOT NULL DEFAULT '', before_text TEXT, after_text TEXT,
    undone_by INTEGER, undo_of INTEGER);
CREATE INDEX IF NOT EXISTS journal_target ON journal(target);
CREATE TABLE IF NOT EXISTS unread_notes (
    path TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS queue (
    path TEXT PRIMARY KEY, changed_at REAL NOT NULL, ready_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '');
"""
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


@dataclass
class JournalEntry:
    """One decision: the unit, what recall found, the action, and the diff written."""

    id: int
    at: float
    run_id: int | None
    unit: dict[str, Any]
    queries: list[Any]
    candidates: list[Any]
    action: str
    target: str
    note: str
    diff: str
    before_text: str | None
    after_text: str | None
    undone_by: int | None
    undo_of: int | None
    integrator: str = ""  # "offline", or "ollama <model> <mode>"
    prompt_tokens: int = 0  # the model's tokens for this unit, every turn and attempt
    answer_tokens: int = 0
    model_seconds: float = 0.0
    refusals: list[str] = field(default_factory=list)  # guard refusal codes, in order
    calls: dict[str, int] = field(default_factory=dict)  # tool calls by form

    def public(self) -> dict[str, Any]:
        """The entry as the status API and ``vaultlink log --json`` show it."""
        data = asdict(self)
        data.pop("before_text")
        data.pop("after_text")
        data["undone"] = self.undone_by is not None
        data["undoable"] = (self.undone_by is None and self.undo_of is None
                            and self.before_text != self.after_text
                            and self.action not in ("SKIP", "FAILED"))
        return data


@dataclass(frozen=True)
class Failure:
    """An open failure: a unit that a run could not integrate, or a note it could not
    extract (``kind``), with how many runs tried and whether it waits for the user."""

    id: int
    kind: str
    unit: dict[str, Any]
    paths: list[str]
    error: str
    attempts: int
    parked: bool
    codes: list[str]
    at: float


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


class State:
    """The vault's state database; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=30,
                                       isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{path} is unreadable ({exc}); move it away and run "
                             "`vaultlink reindex` to start fresh") from None

    def _migrate(self) -> None:
        """Add the columns an older state.sqlite lacks (additive: nothing is lost)."""
        for table, column, decl in MIGRATIONS:
            have = {r["name"] for r in self._db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                try:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
                except sqlite3.OperationalError as exc:  # another process just added it
                    if "duplicate column" not in str(exc):
                        raise

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic change: everything inside commits together or not at all."""
        with self._lock, immediate_transaction(self._db) as db:
            yield db

    def _all(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._db.execute(sql, tuple(args)))

    # -- checkpoint ------------------------------------------------------------

    def checkpoints(self) -> dict[str, Checkpoint]:
        """Every checkpointed note by path."""
        return {r["path"]: Checkpoint(r["path"], r["hash"], tuple(json.loads(r["sections"])))
                for r in self._all("SELECT * FROM checkpoint")}

    def set_checkpoints(self, items: Iterable[Checkpoint]) -> int:
        """Record notes as integrated at their hash; returns how many."""
        rows = [(c.path, c.hash, json.dumps(list(c.sections)), time.time()) for c in items]
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO checkpoint VALUES (?,?,?,?)", rows)
        return len(rows)

    def drop_checkpoints(self, paths: Iterable[str]) -> None:
        """Forget notes (deleted from the vault, or queued for a re-run)."""
        with self.transaction() as db:
            db.executemany("DELETE FROM checkpoint WHERE path=?", [(p,) for p in paths])

    # -- pending units (over the per-run cap) ----------------------------------

    def pending_units(self) -> list[tuple[int, dict[str, Any]]]:
        """Units extracted but not yet integrated, oldest first."""
        return [(r["id"], json.loads(r["unit"]))
                for r in self._all("SELECT * FROM pending_units ORDER BY id")]

    def add_pending(self, units: Iterable[dict[str, Any]]) -> None:
        """Keep units beyond the cap for the next run."""
        with self.transaction() as db:
            db.executemany("INSERT INTO pending_units(unit, at) VALUES (?,?)",
                           [(json.dumps(u), time.time()) for u in units])

    def remove_pending(self, ids: Iterable[int]) -> None:
        """Drop pending units that were taken up by a run."""
        with self.transaction() as db:
            db.executemany("DELETE FROM pending_units WHERE id=?", [(i,) for i in ids])

    # -- runs and failures -----------------------------------------------------

    def start_run(self, dry_run: bool, provider: str) -> int:
        """Open a run record; returns its id."""
        with self.transaction() as db:
            cur = db.execute("INSERT INTO runs(started_at, dry_run, provider) VALUES (?,?,?)",
                             (time.time(), int(dry_run), provider))
            return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, counts: dict[str, int],
                   changes: list[dict[str, str]]) -> None:
        """Close a run record with its counts and list of changes."""
        with self.transaction() as db:
            db.execute("UPDATE runs SET finished_at=?, counts=?, changes=? WHERE id=?",
                       (time.time(), json.dumps(counts), json.dumps(changes), run_id))

    def last_run(self) -> dict[str, Any] | None:
        """The newest finished run, as the status API shows it."""
        rows = self._all("SELECT * FROM runs WHERE finished_at IS NOT NULL "
                         "ORDER BY id DESC LIMIT 1")
        if not rows:
            return None
        r = rows[0]
        return {"id": r["id"], "started_at": r["started_at"], "finished_at": r["finished_at"],
                "dry_run": bool(r["dry_run"]), "provider": r["provider"],
                "counts": json.loads(r["counts"]), "changes": json.loads(r["changes"])}

    def record_failure(self, run_id: int | None, unit: dict[str, Any], error: str,
                       attempts: int = 1, *, kind: str = "unit", codes: Iterable[str] = (),
                       failure_id: int | None = None, park_after: int = 0) -> bool:
        """A unit (or a note's extraction, ``kind="note"``) that failed this run; its paths
        stay unchecked and it is retried. Failing again updates ``failure_id``'s row with
        ``attempts`` more tries (0 when the server, not the answer, failed); at
        ``park_after`` tries (0: never) it is parked, waiting for the user. Returns
        whether it is parked now."""
        codes = list(codes)
        with self.transaction() as db:
            row = None
            if failure_id is not None:
                row = db.execute("SELECT attempts, codes FROM failed_units WHERE id=? AND "
                                 "resolved=0", (failure_id,)).fetchone()
            if row is None:
                tries = attempts
                db.execute("INSERT INTO failed_units(run_id, unit, paths, error, attempts, at, "
                           "kind, parked, codes) VALUES (?,?,?,?,?,?,?,?,?)",
                           (run_id, json.dumps(unit), json.dumps(unit.get("paths", [])), error,
                            tries, time.time(), kind, int(0 < park_after <= tries),
                            json.dumps(codes)))
            else:
                tries = int(row["attempts"]) + attempts
                seen = json.loads(row["codes"]) + codes
                db.execute("UPDATE failed_units SET run_id=?, error=?, attempts=?, at=?, "
                           "parked=?, codes=? WHERE id=?",
                           (run_id, error, tries, time.time(), int(0 < park_after <= tries),
                            json.dumps(seen), failure_id))
        return 0 < park_after <= tries

    def open_failures(self) -> list[Failure]:
        """Failures not resolved yet, parked ones included, oldest first."""
        return [Failure(r["id"], r["kind"], json.loads(r["unit"]), json.loads(r["paths"]),
                        r["error"], r["attempts"], bool(r["parked"]), json.loads(r["codes"]),
                        r["at"])
                for r in self._all("SELECT * FROM failed_units WHERE resolved=0 ORDER BY id")]

    def resolve_failure(self, ids: Iterable[int]) -> None:
        """Mark failures as done: the unit was integrated, the note extracted (or gone)."""
        with self.transaction() as db:
            db.executemany("UPDATE failed_units SET resolved=1 WHERE id=?", [(i,) for i in ids])

    def unpark(self, ids: Iterable[int] | None = None) -> int:
        """Let parked failures be retried again (all of them without ``ids``); how many."""
        with self.transaction() as db:
            if ids is None:
                cur = db.execute("UPDATE failed_units SET parked=0, attempts=0 "
                                 "WHERE parked=1 AND resolved=0")
            else:
                cur = db.executemany("UPDATE failed_units SET parked=0, attempts=0 "
                                     "WHERE id=? AND parked=1 AND resolved=0",
                                     [(i,) for i in ids])
            return cur.rowcount

    def failures(self, include_resolved: bool = False) -> list[dict[str, Any]]:
        """Failed units not yet integrated by a later run, newest first.

        ``kind`` is ``unit``, or ``note`` for a note whose extraction failed; ``parked``
        ones are not retried until the user asks (``POST /rerun``, ``dream --retry``).
        """
        where = "" if include_resolved else "WHERE resolved=0"
        return [{"id": r["id"], "unit": json.loads(r["unit"]).get("name", ""),
                 "paths": json.loads(r["paths"]), "error": r["error"],
                 "attempts": r["attempts"], "failed_at": r["at"], "kind": r["kind"],
                 "parked": bool(r["parked"]), "codes": json.loads(r["codes"])}
                for r in self._all(f"SELECT * FROM failed_units {where} ORDER BY id DESC")]

    def resolve_failures(self, paths: Iterable[str]) -> None:
        """Mark failures whose every path is now checkpointed as resolved."""
        done = set(paths)
        with self.transaction() as db:
            for r in list(db.execute("SELECT id, paths FROM failed_units WHERE resolved=0")):
                if set(json.loads(r["paths"])) <= done:
                    db.execute("UPDATE failed_units SET resolved=1 WHERE id=?", (r["id"],))

    # -- notes that could not be read ------------------------------------------

    def note_unread(self, unread: dict[str, str], settled: Iterable[str]) -> None:
        """Remember why notes were not read (until fixed); forget the ``settled`` ones
        (integrated or deleted since)."""
        now = time.time()
        with self.transaction() as db:
            db.executemany("DELETE FROM unread_notes WHERE path=?", [(p,) for p in settled])
            for path, reason in unread.items():
                # ``at`` stays the first time: how long a note has waited matters to its owner
                db.execute("INSERT INTO unread_notes VALUES (?,?,?) ON CONFLICT(path) DO "
                           "UPDATE SET reason=excluded.reason", (path, reason, now))

    def unread_notes(self) -> list[dict[str, Any]]:
        """Notes left unread by the last runs that saw them: path, reason, since."""
        return [{"path": r["path"], "reason": r["reason"], "since": r["at"]}
                for r in self._all("SELECT * FROM unread_notes ORDER BY path")]

    # -- journal ---------------------------------------------------------------

    def journal_add(self, run_id: int | None, unit: dict[str, Any], action: str,
                    target: str = "", note: str = "", diff: str = "",
                    queries: list[Any] | None = None, candidates: list[Any] | None = None,
                    before_text: str | None = None, after_text: str | None = None,
                    undo_of: int | None = None, *, integrator: str = "",
                    prompt_tokens: int = 0, answer_tokens: int = 0,
                    model_seconds: float = 0.0, refusals: Iterable[str] = (),
                    calls: dict[str, int] | None = None) -> int:
        """Record one decision (with what the model spent on it); returns its id."""
        with self.transaction() as db:
            cur = db.execute(
                "INSERT INTO journal(at, run_id, unit, queries, candidates, action, target, "
                "note, diff, before_text, after_text, undo_of, integrator, prompt_tokens, "
                "answer_tokens, model_seconds, refusals, calls) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (time.time(), run_id, json.dumps(unit), json.dumps(queries or []),
                 json.dumps(candidates or []), action, target, note, diff, before_text,
                 after_text, undo_of, integrator, prompt_tokens, answer_tokens,
                 round(model_seconds, 2), json.dumps(list(refusals)), json.dumps(calls or {})))
            new_id = int(cur.lastrowid or 0)
            if undo_of is not None:
                db.execute("UPDATE journal SET undone_by=? WHERE id=?", (new_id, undo_of))
            return new_id

    def journal(self, limit: int = 50, path: str | None = None) -> list[JournalEntry]:
        """Recent decisions, newest first; with ``path``, those touching that note."""
        if path is None:
            rows = self._all("SELECT * FROM journal ORDER BY id DESC LIMIT ?", (limit,))
        else:
            like = f'%"{path}"%'
            rows = self._all("SELECT * FROM journal WHERE target=? OR unit LIKE ? "
                             "ORDER BY id DESC LIMIT ?", (path, like, limit))
        return [_entry(r) for r in rows]

    def journal_get(self, entry_id: int) -> JournalEntry | None:
        """One decision by id."""
        rows = self._all("SELECT * FROM journal WHERE id=?", (entry_id,))
        return _entry(rows[0]) if rows else None

    # -- queue -----------------------------------------------------------------

    def enqueue(self, path: str, now: float, quiet_seconds: float) -> None:
        """Queue a changed note; a newer change of the same note restarts its quiet period."""
        with self.transaction() as db:
            db.execute("INSERT INTO queue(path, changed_at, ready_at) VALUES (?,?,?) "
                       "ON CONFLICT(path) DO UPDATE SET changed_at=excluded.changed_at, "
                       "ready_at=excluded.ready_at",
                       (path, now, now + quiet_seconds))

    def queue(self) -> list[QueueItem]:
        """Everything queued, soonest first."""
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


def _entry(r: sqlite3.Row) -> JournalEntry:
    return JournalEntry(r["id"], r["at"], r["run_id"], json.loads(r["unit"]),
                        json.loads(r["queries"]), json.loads(r["candidates"]), r["action"],
                        r["target"], r["note"], r["diff"], r["before_text"], r["after_text"],
                        r["undone_by"], r["undo_of"], r["integrator"], r["prompt_tokens"],
                        r["answer_tokens"], r["model_seconds"], json.loads(r["refusals"]),
                        json.loads(r["calls"]))


def diff_of(path: str, before: str | None, after: str | None) -> str:
    """A unified diff of one node, as the journal and the plugin show it."""
    return "".join(difflib.unified_diff(
        (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
        fromfile="/dev/null" if before is None else f"a/{path}",
        tofile="/dev/null" if after is None else f"b/{path}"))
