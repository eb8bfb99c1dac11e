"""The daemon's queue around a run: notes gone or unchanged since their checkpoint
leave it without one; after a run each note leaves it, or waits again with its backoff
and the reason ``vaultlink status`` shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vaultlink.daemon.watch import current_hash
from vaultlink.vault.checkpoints import pending_paths, unchanged_since
from vaultlink.vault.state import QueueItem, State

if TYPE_CHECKING:  # a type only: the daemon hands its run in
    from vaultlink.pipeline.context import RunState


def drop_settled(root: Path, state: State, items: list[QueueItem]) -> list[QueueItem]:
    """Dequeue the notes gone, or unchanged since their checkpoint; return the rest,
    which need a run."""
    checkpoints = state.checkpoints()
    gone, unchanged, todo = [], [], []
    for item in items:
        digest = current_hash(root, item.path)
        cp = checkpoints.get(item.path)
        if digest is None and not (root / item.path).exists():
            gone.append(item)
        elif unchanged_since(cp, digest):
            unchanged.append(item)
        else:
            todo.append(item)
    if gone:
        state.drop_checkpoints(i.path for i in gone)
    state.note_unread({}, settled=[i.path for i in gone + unchanged])  # read, or gone
    state.dequeue(gone + unchanged)
    return todo


def with_waiting_units(state: State, paths: frozenset[str] | list[str]) -> frozenset[str]:
    """``paths`` and the notes whose units wait in pending_units: they join the run, so
    the run that takes up their last unit can checkpoint them (else they would be
    extracted again)."""
    return frozenset(paths) | pending_paths(state)


def requeue_each(state: State, items: list[QueueItem], now: float,
                 backoff: Callable[[int], float], error: str) -> None:
    """Each note back in the queue after its own backoff (by its attempts so far)."""
    for item in items:
        state.requeue([item.path], now, backoff(item.attempts), error)


def settle_after_run(state: State, items: list[QueueItem], run: RunState, now: float,
                     backoff: Callable[[int], float]) -> None:
    """After a run: a note leaves the queue unless a unit of it failed, or none of its
    units could be taken up (then it waits again, with the reason)."""
    for item in items:
        if item.path in run.report.failed_paths:
            requeue_each(state, [item], now, backoff,
                         "a unit of this note failed; see `vaultlink status`")
        elif item.path not in run.extraction.deferred_paths:
            state.dequeue([item])  # integrated, unreadable (reported) or unchanged
        elif not run.extraction.units:  # nothing can be taken up (auto_dream.max_units: 0?)
            requeue_each(state, [item], now, backoff,
                         "no unit could be integrated; see auto_dream.max_units")
