"""Units as state.sqlite keeps them: the pipeline's one edge between ``Unit`` and the
store's dicts (pending units, failures, proposals, journal rows).

The store (vault/) ranks below prose/, where ``Unit`` lives, so it keeps a unit as the
dict ``Unit.to_dict`` gives; every pipeline module takes and returns ``Unit``, and the
conversion happens here. A stored row copied as it is to another table (a proposal's
unit journaled when it is settled) stays a dict: the pipeline never reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from vaultlink.prose.units import Unit
from vaultlink.vault.actions import Action
from vaultlink.vault.proposals import Proposal
from vaultlink.vault.runs import FailureKind
from vaultlink.vault.state import Failure, State

Row = dict[str, Any]  # a unit as the store keeps it (``Unit.to_dict``)


def pending_units(state: State) -> list[tuple[int, Unit]]:
    """The units that wait in pending_units, with their row ids, oldest first."""
    return [(i, Unit.from_dict(u)) for i, u in state.pending_units()]


def add_pending(state: State, units: Iterable[Unit]) -> None:
    """Keep ``units`` in pending_units until a run decides them."""
    state.add_pending(u.to_dict() for u in units)


def failed_unit(failure: Failure) -> Unit:
    """The unit of a failure of kind ``unit``."""
    return Unit.from_dict(failure.unit)


def proposal_unit(p: Proposal) -> Unit:
    """The unit a proposal holds for review."""
    return Unit.from_dict(p.unit)


def record_unit_failure(state: State, run_id: int | None, unit: Unit, error: str, *,
                        attempts: int, codes: Iterable[str], failure_id: int | None,
                        park_after: int) -> bool:
    """``State.record_failure`` for a unit; whether it is parked now."""
    return state.record_failure(run_id, unit.to_dict(), error, attempts=attempts, codes=codes,
                                failure_id=failure_id, park_after=park_after)


def record_note_failure(state: State, run_id: int | None, path: str, digest: str,
                        error: str, *, attempts: int, failure_id: int | None,
                        park_after: int) -> bool:
    """``State.record_failure`` for a note whose extraction failed, with the hash read
    (``note_hash``); whether it is parked now."""
    return state.record_failure(run_id, {"name": path, "paths": [path], "hash": digest}, error,
                                attempts=attempts, kind=FailureKind.NOTE, failure_id=failure_id,
                                park_after=park_after)


def note_hash(failure: Failure) -> str | None:
    """The hash of the note as read when its extraction failed (a failure of kind note)."""
    digest = failure.unit.get("hash")
    return digest if isinstance(digest, str) else None


def journal_unit(state: State, run_id: int | None, unit: Unit, action: Action, target: str,
                 note: str, diff: str, queries: list[Any], candidates: list[Any], *,
                 before_text: str | None, after_text: str | None, integrator: str,
                 prompt_tokens: int, answer_tokens: int, model_seconds: float,
                 refusals: Sequence[str], calls: dict[str, int]) -> int:
    """``State.journal_add`` of a run's decision on ``unit``; the row's id."""
    return state.journal_add(
        run_id, unit.to_dict(), action, target, note, diff, queries, candidates,
        before_text=before_text, after_text=after_text, integrator=integrator,
        prompt_tokens=prompt_tokens, answer_tokens=answer_tokens, model_seconds=model_seconds,
        refusals=refusals, calls=calls)


def propose(state: State, run_id: int | None, unit: Unit, action: Action, target: str,
            old_hash: str | None, before_text: str | None, after_text: str, reason: str,
            note: str, integrator: str) -> int:
    """``State.proposal_add``: hold the decision on ``unit`` for review; its id."""
    return state.proposal_add(run_id, unit.to_dict(), action, target, old_hash, before_text,
                              after_text, reason, note, integrator)


def stored_name(row: Row, default: str = "") -> str:
    """The name of the unit a stored row holds (``default`` when it has none)."""
    name = row.get("name", default)
    return name if isinstance(name, str) else default


def stored_paths(row: Row) -> list[str]:
    """The source notes of the unit a stored row holds."""
    return [str(p) for p in row.get("paths", [])]


def is_unit(row: Row, unit: Unit, any_order: bool = False) -> bool:
    """Whether a stored row holds this very unit: its name, sources and summary (the
    sources in the same order unless ``any_order``)."""
    paths = row.get("paths")
    if any_order:
        same = sorted(str(p) for p in paths or []) == sorted(unit.paths)
    else:
        same = paths == unit.paths
    return same and row.get("name") == unit.name and row.get("summary") == unit.summary
