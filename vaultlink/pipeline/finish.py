"""dream_finish_step: checkpoint what was integrated, record the run.

Checkpoint = changed notes minus failed paths, minus the notes of units deferred past
the per-run cap, minus notes that could not be read, minus every note a unit still
waits for (pending, failed or parked, from this run or an earlier one, or held for the
owner's review as a proposal). Keyed by the content hash read at the start of the run,
so a note edited during the run is taken up again next time.
"""

from __future__ import annotations

import logging

from vaultlink.pipeline.context import DreamContext, RunState
from vaultlink.vault.checkpoints import waiting_paths
from vaultlink.vault.state import Checkpoint

log = logging.getLogger(__name__)


def checkpoint_paths(run: RunState, waiting: set[str] | None = None) -> list[str]:
    """The notes this run may mark as integrated; ``waiting``: the notes of units still
    open in state.sqlite (pending, failed, parked)."""
    found, report = run.extraction, run.report
    held = report.failed_paths | found.deferred_paths | report.parked_paths | (waiting or set())
    return sorted(p for p in found.changed if p not in held)


def finish_step(ctx: DreamContext, run: RunState) -> None:
    """Write the checkpoint and the run record (not in a dry run)."""
    waiting = waiting_paths(ctx.state)  # held for review too: checkpointed once settled
    paths = checkpoint_paths(run, waiting)
    run.report.checkpointed = paths
    if ctx.dry_run:
        return
    found = run.extraction
    ctx.state.set_checkpoints(Checkpoint(p, found.changed[p], found.sections.get(p, ()))
                              for p in paths)
    ctx.state.resolve_failures(paths)
    ctx.state.note_unread(found.unread,
                          settled=[*found.changed, *found.gone, *found.readable])
    ctx.state.finish_run(run.run_id, run.counts(), run.report.changes())
    log.info("run %d: %s", run.run_id, run.counts())
