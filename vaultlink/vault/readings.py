"""What the readings of notes left behind: notes that could not be read, how many units
each reading gave, and the paragraphs it passed over; tables of ``state.sqlite`` mixed
into ``State`` (``state.py``), which owns the connection.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from vaultlink.vault.connection import StateConnection


class ReadingTables(StateConnection):
    """The unread_notes, note_yield and passed_over tables."""

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

    # -- what a reading of a note gave, and passed over ------------------------

    def record_reading(self, path: str, units: int, rules: str,
                       passed: Iterable[dict[str, Any]]) -> None:
        """Replace what the state knows of a note's last reading: how many units it gave
        under which extractor rules, and each paragraph passed over with its reason."""
        now = time.time()
        rows = [(path, int(p["line"]), int(p["end_line"]), str(p["excerpt"]),
                 str(p["reason"]), now) for p in passed]
        with self.transaction() as db:
            db.execute("DELETE FROM passed_over WHERE path=?", (path,))
            db.executemany("INSERT INTO passed_over VALUES (?,?,?,?,?,?)", rows)
            db.execute("INSERT OR REPLACE INTO note_yield VALUES (?,?,?,?)",
                       (path, units, rules, now))

    def forget_readings(self, paths: Iterable[str]) -> None:
        """Drop what is known of notes deleted from the vault."""
        with self.transaction() as db:
            for p in paths:
                db.execute("DELETE FROM passed_over WHERE path=?", (p,))
                db.execute("DELETE FROM note_yield WHERE path=?", (p,))

    def passed_over(self, path: str | None = None) -> list[dict[str, Any]]:
        """Paragraphs no unit took, with why: of one note, or of every note."""
        where, args = ("WHERE path=?", (path,)) if path is not None else ("", ())
        return [{"path": r["path"], "line": r["line"], "end_line": r["end_line"],
                 "excerpt": r["excerpt"], "reason": r["reason"]}
                for r in self._all(f"SELECT * FROM passed_over {where} ORDER BY path, line",
                                   args)]

    def note_yields(self) -> dict[str, tuple[int, str]]:
        """Each read note's units at its last reading, and the rules it was read with."""
        return {r["path"]: (r["units"], r["rules"]) for r in self._all("SELECT * FROM note_yield")}

    def barren_notes(self) -> list[dict[str, Any]]:
        """Notes whose last reading gave no unit, with the reasons of what they hold."""
        out = []
        for r in self._all("SELECT * FROM note_yield WHERE units=0 ORDER BY path"):
            reasons = [p["reason"] for p in self.passed_over(r["path"])]
            out.append({"path": r["path"], "rules": r["rules"], "since": r["at"],
                        "reasons": sorted(set(reasons), key=reasons.index)})
        return out
