"""The decision journal and the write intents, as tables of ``state.sqlite``.

The journal records every decision with the text of its node before and after, so a
decision can be explained, undone and redone. An undo that must change several files
(a cascade) is one *group*: its rows share ``group_id`` and are written in one
transaction.

A write and its journal row cannot share a transaction (one is a file, the other a
row), so a process killed between them would leave a node the journal does not know.
Write *intents* close that gap: before a digest file is written, its path, the text it
had and the hash of what is about to land go to ``inflight``; the journal row that
records the write deletes the intent in the same transaction. An intent still there
at start-up is a write whose decision never got recorded, and ``pipeline/history.py``
rolls it back (the unit is retried, the undo group is all-or-nothing).
"""

from __future__ import annotations

import difflib
import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from vaultlink.vault.actions import DECISIONS, FOLLOW_UPS, REVERSALS, Action
from vaultlink.vault.connection import StateConnection

JOURNAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, run_id INTEGER, unit TEXT NOT NULL,
    queries TEXT NOT NULL DEFAULT '[]', candidates TEXT NOT NULL DEFAULT '[]',
    action TEXT NOT NULL, target TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
    diff TEXT NOT NULL DEFAULT '', before_text TEXT, after_text TEXT,
    undone_by INTEGER, undo_of INTEGER, group_id INTEGER);
CREATE INDEX IF NOT EXISTS journal_target ON journal(target);
CREATE TABLE IF NOT EXISTS inflight (
    path TEXT PRIMARY KEY, before_text TEXT, existed INTEGER NOT NULL,
    written TEXT NOT NULL DEFAULT '[]', at REAL NOT NULL);
"""

# Actions that change a file (their rows hold the text before and after): decisions,
# their reversals, and follow-ups (links after a renamed source note, a moved node).
CHANGES_FILE = frozenset((*DECISIONS, *REVERSALS, *FOLLOW_UPS))


@dataclass
class JournalEntry:
    """One decision: the unit, what recall found, the action, and the diff written."""

    id: int
    at: float
    run_id: int | None
    unit: dict[str, Any]
    queries: list[Any]
    candidates: list[Any]
    action: Action
    target: str
    note: str
    diff: str
    before_text: str | None
    after_text: str | None
    undone_by: int | None
    undo_of: int | None
    group_id: int | None = None
    integrator: str = ""  # "offline", or "ollama <model> <mode>"; "" for an undo or redo
    prompt_tokens: int = 0  # the model's tokens for this unit, every turn and attempt
    answer_tokens: int = 0
    model_seconds: float = 0.0
    refusals: list[str] = field(default_factory=list)  # guard refusal codes, in order
    calls: dict[str, int] = field(default_factory=dict)  # tool calls by form (llm.chat)

    @property
    def changes_file(self) -> bool:
        """True for a row that changed its target (a decision, an undo or a redo)."""
        return (self.action in CHANGES_FILE and bool(self.target)
                and self.before_text != self.after_text)

    def public(self) -> dict[str, Any]:
        """The entry as the status API and ``vaultlink log --json`` show it."""
        data = asdict(self)
        data.pop("before_text")
        data.pop("after_text")
        data["undone"] = self.undone_by is not None
        data["undoable"] = (self.undone_by is None and self.undo_of is None
                            and self.changes_file and self.action in DECISIONS)
        data["redoable"] = self.undone_by is not None and self.action in DECISIONS
        return data


@dataclass(frozen=True)
class Intent:
    """A digest write about to land (or landed) whose journal row is not written yet."""

    path: str
    before_text: str | None  # None: the file did not exist
    written: tuple[str, ...]  # content hashes the writer may have left on disk
    at: float


@dataclass(frozen=True)
class Row:
    """A journal row to add (``State.journal_add_group`` takes several at once)."""

    run_id: int | None
    unit: dict[str, Any]
    action: Action
    target: str = ""
    note: str = ""
    diff: str = ""
    before_text: str | None = None
    after_text: str | None = None
    undo_of: int | None = None
    queries: tuple[Any, ...] = ()
    candidates: tuple[Any, ...] = ()
    integrator: str = ""
    prompt_tokens: int = 0
    answer_tokens: int = 0
    model_seconds: float = 0.0
    refusals: tuple[str, ...] = ()
    calls: tuple[tuple[str, int], ...] = ()


class JournalTables(StateConnection):
    """The journal and intent tables; mixed into ``State``, which owns the connection."""

    @staticmethod
    def _migrate_journal(db: sqlite3.Connection) -> None:
        """Add the columns newer versions use to a journal made by an older one."""
        cols = {r[1] for r in db.execute("PRAGMA table_info(journal)")}
        if "group_id" not in cols:
            db.execute("ALTER TABLE journal ADD COLUMN group_id INTEGER")

    # -- journal ---------------------------------------------------------------

    def journal_add(self, run_id: int | None, unit: dict[str, Any], action: Action,
                    target: str = "", note: str = "", diff: str = "",
                    queries: list[Any] | None = None, candidates: list[Any] | None = None,
                    before_text: str | None = None, after_text: str | None = None,
                    undo_of: int | None = None, *, integrator: str = "",
                    prompt_tokens: int = 0, answer_tokens: int = 0,
                    model_seconds: float = 0.0, refusals: Iterable[str] = (),
                    calls: dict[str, int] | None = None) -> int:
        """Record one decision (settling the write intent of its target), with what the
        model spent on it; returns its id."""
        row = Row(run_id, unit, action, target, note, diff, before_text, after_text, undo_of,
                  tuple(queries or ()), tuple(candidates or ()), integrator, prompt_tokens,
                  answer_tokens, round(model_seconds, 2), tuple(refusals),
                  tuple((calls or {}).items()))
        return self.journal_add_group([row], grouped=False)[0]

    def journal_add_group(self, rows: list[Row], grouped: bool = True) -> list[int]:
        """Record rows in one transaction, as one group (``group_id`` = the first id);
        returns their ids. A row that reverts another (``undo_of``) marks it undone and
        brings back to life the row *that* one had reverted (an undo undone is a redo)."""
        ids: list[int] = []
        with self.transaction() as db:
            for r in rows:
                cur = db.execute(
                    "INSERT INTO journal(at, run_id, unit, queries, candidates, action, target, "
                    "note, diff, before_text, after_text, undo_of, group_id, integrator, "
                    "prompt_tokens, answer_tokens, model_seconds, refusals, calls) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (time.time(), r.run_id, json.dumps(r.unit), json.dumps(list(r.queries)),
                     json.dumps(list(r.candidates)), r.action, r.target, r.note, r.diff,
                     r.before_text, r.after_text, r.undo_of, ids[0] if ids else None,
                     r.integrator, r.prompt_tokens, r.answer_tokens, r.model_seconds,
                     json.dumps(list(r.refusals)), json.dumps(dict(r.calls))))
                new_id = int(cur.lastrowid or 0)
                if grouped and not ids:
                    db.execute("UPDATE journal SET group_id=? WHERE id=?", (new_id, new_id))
                ids.append(new_id)
                if r.undo_of is not None:
                    db.execute("UPDATE journal SET undone_by=NULL WHERE id=(SELECT undo_of "
                               "FROM journal WHERE id=?) AND undone_by=?",
                               (r.undo_of, r.undo_of))
                    db.execute("UPDATE journal SET undone_by=? WHERE id=?", (new_id, r.undo_of))
                if r.target:
                    db.execute("DELETE FROM inflight WHERE path=?", (r.target,))
        return ids

    def journal(self, limit: int = 50, path: str | None = None) -> list[JournalEntry]:
        """Recent decisions, newest first; with ``path``, those touching that note."""
        if path is None:
            rows = self._all(f"{_SELECT} ORDER BY journal.id DESC LIMIT ?", (limit,))
        else:
            like = f'%"{path}"%'
            rows = self._all(f"{_SELECT} WHERE journal.target=? OR journal.unit LIKE ? "
                             "ORDER BY journal.id DESC LIMIT ?", (path, like, limit))
        return [_entry(r) for r in rows]

    def journal_get(self, entry_id: int) -> JournalEntry | None:
        """One decision by id."""
        rows = self._all(f"{_SELECT} WHERE journal.id=?", (entry_id,))
        return _entry(rows[0]) if rows else None

    def journal_of(self, target: str) -> list[JournalEntry]:
        """Every row whose target is ``target``, oldest first."""
        return [_entry(r) for r in self._all(
            f"{_SELECT} WHERE journal.target=? ORDER BY journal.id", (target,))]

    def journal_group(self, group_id: int) -> list[JournalEntry]:
        """The rows of one undo or redo group, oldest first."""
        return [_entry(r) for r in self._all(
            f"{_SELECT} WHERE journal.group_id=? ORDER BY journal.id", (group_id,))]

    def journal_targets(self) -> list[str]:
        """Every path a journal row ever changed."""
        return [r[0] for r in self._all(
            "SELECT DISTINCT target FROM journal WHERE target != '' ORDER BY target")]

    # -- write intents -----------------------------------------------------------

    def intend(self, path: str, before_text: str | None, written_hash: str) -> None:
        """Record that ``path`` (which held ``before_text``; None: absent) is about to
        hold the text of ``written_hash``. The first intent's ``before_text`` is kept."""
        with self.transaction() as db:
            row = db.execute("SELECT written FROM inflight WHERE path=?", (path,)).fetchone()
            if row is None:
                db.execute("INSERT INTO inflight VALUES (?,?,?,?,?)",
                           (path, before_text, int(before_text is not None),
                            json.dumps([written_hash]), time.time()))
            else:
                written = [*json.loads(row[0]), written_hash]
                db.execute("UPDATE inflight SET written=? WHERE path=?",
                           (json.dumps(written), path))

    def settle(self, paths: Iterable[str]) -> None:
        """Forget the intents of ``paths`` (rolled back, or journaled another way)."""
        with self.transaction() as db:
            db.executemany("DELETE FROM inflight WHERE path=?", [(p,) for p in paths])

    def intents(self) -> list[Intent]:
        """Writes begun and never journaled, oldest first."""
        return [Intent(r["path"], r["before_text"] if r["existed"] else None,
                       tuple(json.loads(r["written"])), r["at"])
                for r in self._all("SELECT * FROM inflight ORDER BY at")]


# Each row with the integrator that wrote it: its own column, or for a row written
# before the column existed, the provider of its run.
_SELECT = ("SELECT journal.*, COALESCE(NULLIF(journal.integrator, ''), runs.provider, '') "
           "AS run_integrator FROM journal LEFT JOIN runs ON runs.id = journal.run_id")


def _entry(r: sqlite3.Row) -> JournalEntry:
    return JournalEntry(r["id"], r["at"], r["run_id"], json.loads(r["unit"]),
                        json.loads(r["queries"]), json.loads(r["candidates"]), Action(r["action"]),
                        r["target"], r["note"], r["diff"], r["before_text"], r["after_text"],
                        r["undone_by"], r["undo_of"], r["group_id"], r["run_integrator"],
                        r["prompt_tokens"], r["answer_tokens"], r["model_seconds"],
                        json.loads(r["refusals"]), json.loads(r["calls"]))


def diff_of(path: str, before: str | None, after: str | None) -> str:
    """A unified diff of one node, as the journal and the plugin show it."""
    return "".join(difflib.unified_diff(
        (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True),
        fromfile="/dev/null" if before is None else f"a/{path}",
        tofile="/dev/null" if after is None else f"b/{path}"))
