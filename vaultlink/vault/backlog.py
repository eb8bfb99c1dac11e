"""The backlog: a vault's older notes, held back at its first start until asked for.

On the first start in a vault that has notes, only what changed in the last
``backfill.days`` is integrated (``pipeline/backfill.py``); the older notes wait here with the
hash they had, so they are indexed for search but not extracted. ``vaultlink backfill``
queues them on purpose (``queued_at``), and the daemon works the queued ones oldest
first, between new notes. A note leaves the backlog when it is checkpointed
(``State.set_checkpoints``), or when it changes: a changed note is new material.

Also here, the measured rates that turn a backlog into an estimate: per provider, the
notes and bytes extracted, the units they gave, the units integrated and the seconds it
took. Both live in ``state.sqlite`` (tables ``backlog``, ``vault_meta``, ``rates``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vaultlink.vault.state import State

_COLUMNS = "path, hash, size, note_time, queued_at"
# Past this many integrated units the older half of a provider's measure fades, so the
# rate follows a model or machine that changed.
FADE_AFTER_UNITS = 500


@dataclass(frozen=True)
class BacklogItem:
    """A note held back: its hash and size then, its time (mtime), and when
    ``vaultlink backfill`` queued it (None: it waits for that)."""

    path: str
    hash: str
    size: int
    note_time: float
    queued_at: float | None


@dataclass(frozen=True)
class Rates:
    """What a provider was measured doing so far (all zero: nothing measured yet)."""

    notes: int
    bytes: int
    units: int
    integrated: int
    seconds: float


class Backlog:
    """The backlog and rates tables of a vault's state database."""

    def __init__(self, state: State) -> None:
        self.state = state

    def adopted_at(self) -> float | None:
        """When vaultlink first started in this vault (None: not yet)."""
        rows = self.state.query("SELECT value FROM vault_meta WHERE key='adopted_at'")
        return float(rows[0][0]) if rows else None

    def adopt(self, now: float, held: Iterable[BacklogItem]) -> None:
        """Record the first start and the notes it held back, in one transaction."""
        with self.state.transaction() as db:
            db.execute("INSERT OR REPLACE INTO vault_meta VALUES ('adopted_at', ?)",
                       (repr(now),))
            db.executemany("INSERT OR REPLACE INTO backlog VALUES (?,?,?,?,?)",
                           [(b.path, b.hash, b.size, b.note_time, b.queued_at) for b in held])

    def items(self) -> list[BacklogItem]:
        """Every note of the backlog: queued ones first, each group oldest first."""
        return [BacklogItem(*r) for r in self.state.query(
            f"SELECT {_COLUMNS} FROM backlog ORDER BY queued_at IS NULL, note_time, path")]

    def hashes(self) -> dict[str, str]:
        """Path -> hash of every note of the backlog, queued or not."""
        return {r[0]: r[1] for r in self.state.query("SELECT path, hash FROM backlog")}

    def waiting(self) -> dict[str, str]:
        """Path -> hash of the notes not queued: extract passes them over while unchanged."""
        return {r[0]: r[1] for r in self.state.query(
            "SELECT path, hash FROM backlog WHERE queued_at IS NULL")}

    def queued(self, limit: int | None = None) -> list[BacklogItem]:
        """The queued notes, oldest first (the first ``limit``)."""
        return [BacklogItem(*r) for r in self.state.query(
            f"SELECT {_COLUMNS} FROM backlog WHERE queued_at IS NOT NULL "
            "ORDER BY note_time, path LIMIT ?", (-1 if limit is None else limit,))]

    def counts(self) -> tuple[int, int, int, int]:
        """(waiting notes, their bytes, queued notes, their bytes)."""
        rows = self.state.query(
            "SELECT coalesce(sum(queued_at IS NULL), 0), "
            "coalesce(sum(CASE WHEN queued_at IS NULL THEN size END), 0), "
            "coalesce(sum(queued_at IS NOT NULL), 0), "
            "coalesce(sum(CASE WHEN queued_at IS NOT NULL THEN size END), 0) FROM backlog")
        return (int(rows[0][0]), int(rows[0][1]), int(rows[0][2]), int(rows[0][3]))

    def select(self, since: float | None) -> list[BacklogItem]:
        """The waiting notes changed at or after ``since`` (None: all), oldest first."""
        where = "queued_at IS NULL" + ("" if since is None else " AND note_time >= ?")
        return [BacklogItem(*r) for r in self.state.query(
            f"SELECT {_COLUMNS} FROM backlog WHERE {where} ORDER BY note_time, path",
            () if since is None else (since,))]

    def queue(self, paths: Iterable[str], now: float) -> int:
        """Queue these waiting notes; returns how many were waiting."""
        with self.state.transaction() as db:
            return sum(db.execute("UPDATE backlog SET queued_at=? WHERE path=? AND queued_at "
                                  "IS NULL", (now, p)).rowcount for p in paths)

    def drop(self, paths: Iterable[str]) -> None:
        """Take notes out of the backlog (changed, gone, or handed to the queue)."""
        with self.state.transaction() as db:
            db.executemany("DELETE FROM backlog WHERE path=?", [(p,) for p in paths])

    # -- measured rates ------------------------------------------------------------

    def record(self, provider: str, rates: Rates) -> None:
        """Add one run's measure to the provider's."""
        with self.state.transaction() as db:
            db.execute("INSERT INTO rates VALUES (?,0,0,0,0,0) ON CONFLICT(provider) DO "
                       "NOTHING", (provider,))
            db.execute("UPDATE rates SET notes=notes+?, bytes=bytes+?, units=units+?, "
                       "integrated=integrated+?, seconds=seconds+? WHERE provider=?",
                       (rates.notes, rates.bytes, rates.units, rates.integrated,
                        rates.seconds, provider))
            db.execute("UPDATE rates SET notes=notes/2, bytes=bytes/2, units=units/2, "
                       "integrated=integrated/2, seconds=seconds/2 "
                       "WHERE provider=? AND integrated > ?", (provider, FADE_AFTER_UNITS))

    def rates(self, provider: str) -> Rates:
        """What ``provider`` was measured doing so far."""
        rows = self.state.query("SELECT notes, bytes, units, integrated, seconds FROM rates "
                                "WHERE provider=?", (provider,))
        return Rates(*rows[0]) if rows else Rates(0, 0, 0, 0, 0.0)
