"""Backfill is a choice: a vault's first start integrates only its recent notes.

A model takes a minute or more per unit: integrating 10,000 old notes would take weeks,
unasked. So the first start in a vault with notes and no checkpoint puts the notes
unchanged for ``backfill.days`` in the backlog (``vault.backlog``): indexed for search,
not extracted. ``vaultlink backfill --since DATE | --all`` queues them after an estimate
(:func:`estimate`); the daemon works them oldest first, new notes first
(:func:`next_batch`). A vault with checkpoints is adopted with an empty backlog.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from vaultlink.options import Provider
from vaultlink.vault.backlog import Backlog, BacklogItem
from vaultlink.vault.checkpoints import unchanged_since
from vaultlink.vault.notes import NoteInfo, Vault
from vaultlink.vault.state import State

log = logging.getLogger(__name__)

DAY = 86_400.0
# Until a provider is measured in this vault: the offline integrator's pace on 2 cores,
# and a small model on a laptop CPU ("a minute or more per unit").
ASSUMED_SECONDS_PER_UNIT: dict[str, float] = {Provider.OFFLINE: 0.3, Provider.OLLAMA: 60.0}
# Units per 1,000 bytes of note until measured (docs/performance.md, "Backfill is a
# choice").
ASSUMED_UNITS_PER_KB = 1.8
HOW_TO_BACKFILL = "vaultlink backfill --all (or --since YYYY-MM-DD) queues them"


def adopt(state: State, infos: Iterable[NoteInfo], now: float, days: int | None,
          record: bool = True) -> dict[str, str]:
    """On the first start, hold back the notes unchanged for ``days`` (None: none);
    returns them (path -> hash). Later calls do nothing and return ``{}``. With
    ``record`` False (a dry run) the first start is only shown, not recorded."""
    backlog = Backlog(state)
    if backlog.adopted_at() is not None:
        return {}
    held: list[BacklogItem] = []
    if days is not None and not state.has_checkpoints():
        horizon = now - days * DAY
        held = [BacklogItem(i.path, i.hash, i.size, i.mtime, None) for i in infos
                if i.hash and i.mtime < horizon]
    if not record:
        return {b.path: b.hash for b in held}
    backlog.adopt(now, held)
    if held:
        log.warning("first start in this vault: %d note(s) unchanged for %d day(s) or more "
                    "wait in the backlog, indexed for search but not integrated; %s",
                    len(held), days, HOW_TO_BACKFILL)
    return {b.path: b.hash for b in held}


def changed_notes(vault: Vault, state: State, now: float, days: int | None) -> list[str]:
    """The daily/resource notes that changed since their checkpoint, less the unchanged
    notes of the backlog (held back at the first start, which this call may be; queued
    ones are the backlog worker's)."""
    infos = vault.scan([vault.daily, vault.resource], cache=state)  # reads what moved
    adopt(state, infos, now, days)
    held = Backlog(state).hashes()
    checkpoints = state.checkpoint_hashes()
    return [i.path for i in infos if held.get(i.path) != i.hash
            and not unchanged_since(checkpoints.get(i.path), i.hash)]


def held_back(state: State, only: frozenset[str] | None, batch: int) -> dict[str, str]:
    """Path -> hash of the backlog notes a run passes over while their hash is the same:
    the waiting ones, and (in a run over the whole vault) the queued ones beyond the
    oldest ``batch``, so a backlog is worked a few notes per run, as the daemon does."""
    backlog = Backlog(state)
    held = backlog.waiting()
    if only is None:
        queued = backlog.queued()
        held.update((b.path, b.hash) for b in queued[max(batch, 0):])
    return held


def next_batch(state: State, batch: int) -> list[str]:
    """The oldest ``batch`` queued notes of the backlog: the daemon's next backlog run."""
    return [b.path for b in Backlog(state).queued(batch)]


def batch_size(state: State, provider: str, max_units: int) -> int:
    """Backlog notes per run: about ``max_units`` units' worth, at least one."""
    per_note = units_per_kb(state, provider)[0] * average_note_kb(state)
    return max(1, int(max_units / per_note)) if per_note > 0 else 1


def units_per_kb(state: State, provider: str) -> tuple[float, bool]:
    """Units the extractor gives per 1,000 bytes of note, and whether it was measured."""
    r = Backlog(state).rates(provider)
    if r.notes >= 5 and r.bytes > 0:
        return r.units * 1000 / r.bytes, True
    return ASSUMED_UNITS_PER_KB, False


def seconds_per_unit(state: State, provider: str) -> tuple[float, bool]:
    """Seconds one unit takes (extraction and integration), and whether it was measured."""
    r = Backlog(state).rates(provider)
    if r.integrated >= 3 and r.seconds > 0:
        return r.seconds / r.integrated, True
    return ASSUMED_SECONDS_PER_UNIT.get(provider, ASSUMED_SECONDS_PER_UNIT[Provider.OLLAMA]), False


def average_note_kb(state: State) -> float:
    """Mean size of the backlog's notes in KB (1.5 when it is empty)."""
    waiting, wbytes, queued, qbytes = Backlog(state).counts()
    notes = waiting + queued
    return (wbytes + qbytes) / notes / 1000 if notes else 1.5


@dataclass(frozen=True)
class Estimate:
    """How long some notes take: units expected, seconds at the provider's pace."""

    notes: int
    bytes: int
    units: int
    seconds: float
    provider: str
    seconds_per_unit: float
    measured: bool  # False: an assumed pace, nothing measured in this vault yet

    def words(self) -> str:
        """One line for a person: notes, units, time, and where the pace comes from."""
        pace = "measured" if self.measured else "assumed until measured"
        return (f"{self.notes:,} note(s), about {self.units:,} unit(s), about "
                f"{duration(self.seconds)} with the {self.provider} integrator at "
                f"{self.seconds_per_unit:.1f} s per unit ({pace})")

    def public(self) -> dict[str, object]:
        """As the status API and ``--json`` show it."""
        return {"notes": self.notes, "units": self.units, "seconds": round(self.seconds),
                "provider": self.provider, "seconds_per_unit": round(self.seconds_per_unit, 2),
                "measured": self.measured}


def estimate(state: State, provider: str, notes: int, size: int) -> Estimate:
    """What ``notes`` notes of ``size`` bytes in all will take with ``provider``."""
    per_kb, measured_units = units_per_kb(state, provider)
    per_unit, measured_time = seconds_per_unit(state, provider)
    units = round(size / 1000 * per_kb) if notes else 0
    return Estimate(notes, size, units, units * per_unit, provider, per_unit,
                    measured_units and measured_time)


def backlog_status(state: State, provider: str) -> dict[str, object]:
    """The ``backlog`` part of ``GET /status``: waiting and queued notes, with estimates."""
    waiting, wbytes, queued, qbytes = Backlog(state).counts()
    return {"waiting": waiting, "queued": queued,
            "waiting_estimate": estimate(state, provider, waiting, wbytes).public(),
            "eta_seconds": round(estimate(state, provider, queued, qbytes).seconds),
            "how": HOW_TO_BACKFILL if waiting else ""}


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 20 min``, ``17 days``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * DAY:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    return f"{seconds / DAY:.0f} days"
