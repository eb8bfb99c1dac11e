"""Two questions about a source note and its checkpoint, answered once for every caller:
has the note changed since it was checkpointed, and which notes wait on units still open
(a note is checkpointed only by the run that settles its last unit)."""

from __future__ import annotations

from vaultlink.vault.runs import FailureKind
from vaultlink.vault.state import Checkpoint, Failure, State


def unchanged_since(checkpoint: Checkpoint | str | None, digest: str | None) -> bool:
    """Whether a note whose text hashes to ``digest`` (None: it cannot be read) is as its
    ``checkpoint`` (or the checkpoint's hash; None: never checkpointed) holds it."""
    if checkpoint is None or digest is None:
        return False
    held = checkpoint if isinstance(checkpoint, str) else checkpoint.hash
    return held == digest


def pending_paths(state: State) -> set[str]:
    """The notes of units extracted and waiting in pending_units."""
    return {p for _, u in state.pending_units() for p in u.get("paths", [])}


def waiting_paths(state: State, failed_notes: bool = True,
                  failures: list[Failure] | None = None) -> set[str]:
    """The notes with a unit still open: pending, failed or parked, or held for review;
    with ``failed_notes``, also the notes whose extraction failed (a run extracts those
    again, so it leaves them out). ``failures``: the open failures as the caller has
    them already (default: read from ``state``)."""
    if failures is None:
        failures = state.open_failures()
    failed = {p for f in failures if failed_notes or f.kind == FailureKind.UNIT for p in f.paths}
    return pending_paths(state) | failed | state.proposal_paths()
