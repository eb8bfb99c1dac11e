"""The daemon's side of the backlog: working queued older notes between new ones.

``vaultlink backfill`` (or ``POST /backfill``) queues notes of the backlog
(``vault.backlog``); the daemon's worker takes the oldest few whenever no note of its
own queue is ready, so new notes always go first and a backlog of thousands is worked
in the background, a run of about ``auto_dream.max_units`` units at a time.

After a backlog run, a queued note is checkpointed (it left the backlog), or its units
wait over the cap (it stays queued and the next run takes them up), or it failed or
could not be read: then it leaves the backlog for the daemon's queue, with its backoff,
or for the unread list of ``vaultlink status``, so one bad note never spins the worker.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from vaultlink.daemon.queue import with_waiting_units
from vaultlink.errors import ModelUnavailable
from vaultlink.llm.gate import ModelGate
from vaultlink.pipeline.backfill import batch_size, estimate, next_batch
from vaultlink.pipeline.context import RunState
from vaultlink.vault.backlog import Backlog
from vaultlink.vault.state import State

log = logging.getLogger(__name__)


class BacklogWorker:
    """When the backlog is due, and what to do after one of its runs."""

    def __init__(self, backoff: Callable[[int], float]) -> None:
        self.backoff = backoff
        self.failures = 0
        self.retry_at = 0.0

    def due(self, state: State, now: float) -> bool:
        """True when queued backlog notes wait and no failure backoff holds them."""
        return now >= self.retry_at and bool(next_batch(state, 1))

    def work(self, state: State, run_notes: Callable[[frozenset[str]], Any], gate: ModelGate,
             provider: str, max_units: int, now: float) -> None:
        """One run over the oldest queued notes, about ``max_units`` units' worth."""
        batch = next_batch(state, batch_size(state, provider, max_units))
        try:
            run = run_notes(with_waiting_units(state, batch))
        except ModelUnavailable as exc:
            gate.down(now, str(exc))  # the backlog waits with the queue
            return
        except Exception as exc:  # nothing lost: the notes stay queued in the backlog
            log.exception("backlog run failed")
            self.failed(now, str(exc))
            return
        gate.up()
        self.finished(state, batch, run, time.time())

    def failed(self, now: float, error: str) -> None:
        """A backlog run raised: wait, doubling, before the next one."""
        self.retry_at = now + self.backoff(self.failures)
        self.failures += 1
        log.warning("backlog run failed (%s); the backlog waits %.0f s", error,
                    self.retry_at - now)

    def finished(self, state: State, batch: list[str], run: RunState, now: float) -> None:
        """Settle the batch after a run: what is still queued and not waiting for its
        units leaves the backlog (failed notes go to the queue with a backoff)."""
        self.failures, self.retry_at = 0, 0.0
        still = {b.path for b in Backlog(state).queued() if b.path in set(batch)}
        found = run.extraction
        waiting_units = found.deferred_paths if found.units else set()
        leave = sorted(p for p in still if p not in waiting_units)
        if not leave:
            return
        Backlog(state).drop(leave)
        failed = [p for p in leave if p in run.report.failed_paths or p not in found.unread]
        if failed:
            state.requeue(failed, now, self.backoff(0),
                          "a backlog note that was not integrated; see `vaultlink status`")
        log.info("backlog: %d note(s) not integrated left it (%d requeued, %d unreadable)",
                 len(leave), len(failed), len(leave) - len(failed))


def backfill_request(state: State, provider: str, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /backfill`` and ``vaultlink backfill``: the estimate of the waiting notes
    changed since ``since`` (seconds since the epoch; null or absent: all), and, with
    ``"queue": true``, those notes queued."""
    since = body.get("since")
    backlog = Backlog(state)
    chosen = backlog.select(None if since is None else float(since))
    guess = estimate(state, provider, len(chosen), sum(b.size for b in chosen))
    queued = backlog.queue((b.path for b in chosen), time.time()) if body.get("queue") else 0
    if queued:
        log.info("backfill: %d note(s) of the backlog queued (%s)", queued, guess.words())
    oldest = min((b.note_time for b in chosen), default=None)
    return {"estimate": guess.public(), "words": guess.words(), "queued": queued,
            "oldest": oldest}
