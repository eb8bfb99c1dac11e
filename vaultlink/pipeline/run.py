"""The auto_dream runner: named steps, executed in order over one shared run state.

``run_dream`` is the one entry point used by the CLI and the daemon. The steps come
from configuration by name; an unknown name is a ``ConfigError`` before anything runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from vaultlink.errors import ConfigError, VaultlinkError
from vaultlink.pipeline.context import DreamContext, RunState, Step
from vaultlink.pipeline.events import RunFinished, RunStarted, StepStarted
from vaultlink.pipeline.extract.step import extract_step
from vaultlink.pipeline.finish import finish_step
from vaultlink.pipeline.integrate.step import integrate_step
from vaultlink.pipeline.shadowing import repair_once
from vaultlink.pipeline.topics import topics_step
from vaultlink.vault.backlog import Backlog, Rates

log = logging.getLogger(__name__)


def step_registry() -> dict[str, Step]:
    """The known steps by their configuration names."""
    return {"dream_extract_step": extract_step, "dream_integrate_step": integrate_step,
            "dream_topics_step": topics_step, "dream_finish_step": finish_step}


def build_steps(names: Sequence[str]) -> list[tuple[str, Step]]:
    """Resolve step names from ``auto_dream.steps``; unknown names are a config error."""
    known = step_registry()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown step(s) in auto_dream.steps: {', '.join(unknown)}; "
                          f"known steps are {', '.join(known)}")
    if not names:
        raise ConfigError("auto_dream.steps is empty; list at least dream_extract_step")
    return [(n, known[n]) for n in names]


def run_dream(ctx: DreamContext, steps: Sequence[tuple[str, Step]]) -> RunState:
    """Run the steps once over the vault; returns the filled run state."""
    run = RunState()
    found, report = run.extraction, run.report
    started = time.monotonic()
    if not ctx.dry_run:
        _repair_names_once(ctx)
    run.run_id = 0 if ctx.dry_run else ctx.state.start_run(False, ctx.provider)
    ctx.report(RunStarted(run.run_id, ctx.provider, ctx.dry_run))
    for name, step in steps:
        ctx.report(StepStarted(name))
        step(ctx, run)
    if not ctx.dry_run and not any(n == "dream_finish_step" for n, _ in steps):
        ctx.state.finish_run(run.run_id, run.counts(), report.changes())
    if not ctx.dry_run and (report.results or found.extracted[0]):
        # The pace of this provider in this vault: what backfill estimates are made of.
        notes, size, units = found.extracted
        Backlog(ctx.state).record(ctx.provider, Rates(
            notes, size, units, len(report.results), time.monotonic() - started))
    ctx.report(RunFinished(run.counts(), report.changes()))
    return run


def _repair_names_once(ctx: DreamContext) -> None:
    """The upgrade's repair, on the first run after it (CLI or daemon): digest nodes
    named as an owner's note or alias move to a qualified name (``rename.py``)."""
    try:
        done = repair_once(ctx.vault, ctx.state)
        if done.paths:
            ctx.index.upsert(done.paths)
    except VaultlinkError as exc:  # tried again next run; `vaultlink check` names them
        log.warning("could not rename the digest nodes that shadow your notes: %s", exc)
