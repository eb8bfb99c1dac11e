"""The runs, the units they could not integrate, and the units left for the next run:
their tables in ``state.sqlite``, mixed into ``State`` (``state.py``), which owns the
connection.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vaultlink.vault.actions import DECISIONS
from vaultlink.vault.connection import StateConnection


class FailureKind(StrEnum):
    """What failed: a unit to integrate, or a note's extraction (stored as its value)."""

    UNIT = "unit"
    NOTE = "note"


@dataclass(frozen=True)
class Failure:
    """An open failure: a unit that a run could not integrate, or a note it could not
    extract (``kind``), with how many runs tried and whether it waits for the user."""

    id: int
    kind: FailureKind
    unit: dict[str, Any]
    paths: list[str]
    error: str
    attempts: int
    parked: bool
    codes: list[str]
    at: float


class RunTables(StateConnection):
    """The runs, failed_units and pending_units tables."""

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

    def model_has_written(self) -> bool:
        """Whether a decision of a model (not the offline integrator) changed the digest."""
        marks = ", ".join("?" * len(DECISIONS))
        rows = self._all(
            "SELECT 1 FROM journal JOIN runs ON runs.id = journal.run_id WHERE runs.provider "
            f"NOT IN ('', 'offline') AND journal.action IN ({marks}) LIMIT 1", DECISIONS)
        return bool(rows)

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
                       attempts: int = 1, *, kind: FailureKind = FailureKind.UNIT,
                       codes: Iterable[str] = (),
                       failure_id: int | None = None, park_after: int = 0) -> bool:
        """A unit (or a note's extraction, ``FailureKind.NOTE``) that failed this run; its paths
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
        return [Failure(r["id"], FailureKind(r["kind"]), json.loads(r["unit"]),
                        json.loads(r["paths"]), r["error"], r["attempts"], bool(r["parked"]),
                        json.loads(r["codes"]), r["at"])
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
