"""Proposals: decisions held for the owner's review, as a table of ``state.sqlite``.

With ``review.mode`` ``uncertain`` (or ``all``) a decision the integrator was not sure
of is not written: its exact change waits here (the hash of the node's text it was
made against, the text before and after), with the unit, its action and target and
why vaultlink would do it (``pipeline/integrate/review.py`` decides what is uncertain and resolves
proposals). A proposal is ``open`` until the owner approves it (written through the
guard, journaled, undoable), rejects it (remembered: the unit is not proposed again),
has the unit written as a new node instead, or until it goes ``stale``: its node
changed since, so the unit is decided again by the next run.

``marks`` keeps each source note's hash and section fingerprints as the run read
them: a note whose unit waits is not checkpointed, and resolving its last proposal
checkpoints it as the run would have, so the note is not extracted again.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from vaultlink.vault.actions import Action
from vaultlink.vault.connection import StateConnection

PROPOSALS_SCHEMA = """
CREATE TABLE IF NOT EXISTS proposals (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, run_id INTEGER, unit TEXT NOT NULL,
    unit_name TEXT NOT NULL, unit_paths TEXT NOT NULL, action TEXT NOT NULL,
    target TEXT NOT NULL, old_hash TEXT, before_text TEXT, after_text TEXT NOT NULL,
    reason TEXT NOT NULL, note TEXT NOT NULL DEFAULT '', integrator TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'open', decided_at REAL, journal_id INTEGER,
    marks TEXT NOT NULL DEFAULT '{}');
CREATE INDEX IF NOT EXISTS proposals_state ON proposals(state);
"""


class ProposalState(StrEnum):
    """Where a proposal stands: waiting, or how the owner (or a changed node) settled it."""

    OPEN = "open"
    APPROVED = "approved"  # written as proposed
    REJECTED = "rejected"  # not written; the unit is not proposed again
    CREATED = "created"  # the unit was written as a new node instead
    STALE = "stale"  # the node changed since: the unit is decided again


@dataclass(frozen=True)
class Proposal:
    """One held decision: the exact change, the unit, and why vaultlink would make it."""

    id: int
    at: float
    run_id: int | None
    unit: dict[str, Any]
    action: Action
    target: str
    old_hash: str | None  # the node's hash the change was made against (None: absent)
    before_text: str | None
    after_text: str
    reason: str  # why it was held (``review.uncertain``)
    note: str  # why vaultlink would do it (the integrator's note)
    integrator: str
    state: ProposalState
    decided_at: float | None
    journal_id: int | None  # the journal row that settled it (approved, created, rejected)
    marks: dict[str, list[Any]] = field(default_factory=dict)  # path -> [hash, sections]

    @property
    def paths(self) -> list[str]:
        """The unit's source notes."""
        return [str(p) for p in self.unit.get("paths", [])]


class ProposalTables(StateConnection):
    """The proposals table; mixed into ``State``, which owns the connection."""

    def proposal_add(self, run_id: int | None, unit: dict[str, Any], action: Action,
                     target: str, old_hash: str | None, before_text: str | None,
                     after_text: str, reason: str, note: str, integrator: str) -> int:
        """Hold one decision for review; returns the proposal's id."""
        with self.transaction() as db:
            cur = db.execute(
                "INSERT INTO proposals(at, run_id, unit, unit_name, unit_paths, action, target,"
                " old_hash, before_text, after_text, reason, note, integrator) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (time.time(), run_id, json.dumps(unit), str(unit.get("name", "")),
                 json.dumps(sorted(unit.get("paths", []))), action, target, old_hash,
                 before_text, after_text, reason, note, integrator))
            return int(cur.lastrowid or 0)

    def proposal_mark(self, proposal_id: int, marks: dict[str, list[Any]]) -> None:
        """Remember each source note's hash and section fingerprints as the run read them."""
        with self.transaction() as db:
            db.execute("UPDATE proposals SET marks=? WHERE id=?",
                       (json.dumps(marks), proposal_id))

    def proposals(self, state: ProposalState | None = ProposalState.OPEN,
                  limit: int = 200) -> list[Proposal]:
        """Proposals newest first: the open ones, or in ``state`` (None: every one)."""
        if state is None:
            rows = self._all("SELECT * FROM proposals ORDER BY id DESC LIMIT ?", (limit,))
        else:
            rows = self._all("SELECT * FROM proposals WHERE state=? ORDER BY id DESC LIMIT ?",
                             (state.value, limit))
        return [_proposal(r) for r in rows]

    def proposal_get(self, proposal_id: int) -> Proposal | None:
        """One proposal by id."""
        rows = self._all("SELECT * FROM proposals WHERE id=?", (proposal_id,))
        return _proposal(rows[0]) if rows else None

    def proposal_count(self) -> int:
        """How many proposals wait for the owner."""
        return int(self._all("SELECT count(*) FROM proposals WHERE state='open'")[0][0])

    def proposal_paths(self) -> set[str]:
        """The source notes of the open proposals: not extracted, not checkpointed."""
        return {p for r in self._all("SELECT unit_paths FROM proposals WHERE state='open'")
                for p in json.loads(r[0])}

    def proposal_settle(self, proposal_id: int, state: ProposalState,
                        journal_id: int | None = None) -> bool:
        """Settle an open proposal; False if it was not open any more (settled meanwhile)."""
        with self.transaction() as db:
            cur = db.execute("UPDATE proposals SET state=?, decided_at=?, journal_id=? "
                             "WHERE id=? AND state='open'",
                             (state.value, time.time(), journal_id, proposal_id))
            return cur.rowcount == 1

    def rejected_proposal(self, name: str, paths: Iterable[str]) -> Proposal | None:
        """The owner's rejection of this unit (its name and source notes), if any."""
        rows = self._all("SELECT * FROM proposals WHERE state='rejected' AND unit_name=? "
                         "AND unit_paths=? ORDER BY id DESC LIMIT 1",
                         (name, json.dumps(sorted(paths))))
        return _proposal(rows[0]) if rows else None


def _proposal(r: sqlite3.Row) -> Proposal:
    return Proposal(r["id"], r["at"], r["run_id"], json.loads(r["unit"]), Action(r["action"]),
                    r["target"], r["old_hash"], r["before_text"], r["after_text"], r["reason"],
                    r["note"], r["integrator"], ProposalState(r["state"]), r["decided_at"],
                    r["journal_id"], json.loads(r["marks"]))
