"""The daemon: the composition root of ``vaultlink watch``.

One writer per vault: the daemon holds ``.vaultlink/writer.lock`` for its life (after
waiting for a CLI command that holds it); meanwhile the CLI's search and undo go through
the API. Start-up reconciles the vault (``daemon/reconcile.py``), then a watchdog thread
feeds the durable queue in ``state.sqlite`` and one worker thread integrates notes once
they have been quiet for ``watch.quiet_seconds``, and queued backlog notes when none is
ready. The worker sleeps on an event until the next item settles: idle means no
wake-ups. Failures never lose work: a failed unit's notes are requeued with exponential
backoff; with ``llm.provider: ollama`` and no server answering, the queue waits (the
model gate's backoff) and resumes by itself.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from vaultlink import __version__
from vaultlink.daemon.api import ApiServer
from vaultlink.daemon.backlog import BacklogWorker, backfill_request
from vaultlink.daemon.client import DaemonState, durable_status, iso
from vaultlink.daemon.digest_edits import DigestEdits
from vaultlink.daemon.indexes import heal_index, keep_sections_current
from vaultlink.daemon.process import (
    INFO_NAME,
    VaultLock,
    next_schedule,
    serve_until_signal,
)
from vaultlink.daemon.progress import RunProgress, model_view
from vaultlink.daemon.queue import drop_settled, requeue_each, settle_after_run, with_waiting_units
from vaultlink.daemon.reconcile import follow_renames, reconcile_at_start
from vaultlink.daemon.watch import Change, RecordingVault, Watcher, current_hash
from vaultlink.errors import (
    DaemonError,
    IndexServerUnavailable,
    ModelUnavailable,
    VaultlinkError,
)
from vaultlink.index.heap import hold_heap_steady, release_after_run
from vaultlink.llm.arbiter import ARBITER, BACKFILL, INDEX, Arbiter, lower_priority
from vaultlink.llm.gate import MODEL_BACKOFF, ModelGate
from vaultlink.llm.ollama import is_reachable
from vaultlink.options import DaemonOptions, Provider
from vaultlink.pipeline.compose import (
    Parts,
    choose_provider,
    close_models,
    dream_context,
    open_parts,
)
from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.integrate import review, settle
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.vault.proposals import ProposalState
from vaultlink.vault.state import QueueItem, State

log = logging.getLogger(__name__)

BATCH_PATHS = 50  # notes per run: a burst is worked off in runs the status can show


class Daemon:
    """One vault's daemon: ``start()`` returns once it is serving; ``stop()`` ends it."""

    def __init__(self, vault_path: Path, options: DaemonOptions, *, host: str = "127.0.0.1",
                 retry_backoff: tuple[float, float] = (30.0, 3600.0),
                 model_backoff: tuple[float, float] = MODEL_BACKOFF,
                 arbiter: Arbiter = ARBITER) -> None:
        self.daemon_options = options
        self.vault = RecordingVault(
            Path(vault_path), daily=options.daily, resource=options.resource,
            digest=options.digest, max_note_bytes=options.max_note_bytes)
        self.host = host
        self.quiet = options.quiet_seconds
        self.options = options.pipeline
        self.provider, self.llm_host = self.options.provider, self.options.llm_host
        self.retry_backoff = retry_backoff
        self.gate = ModelGate(self.provider, self.llm_host, is_reachable, model_backoff)
        self.arbiter = arbiter  # one heavy job at a time, shared with the API's searches
        self.steps = build_steps(options.steps)
        self.started_at = time.time()
        self.generation, self.runs = 0, 0  # generation: bumped on every change; API caches
        self.user_digest_edits = 0  # digest changes taken for the user's (re-indexed)
        self._lock = VaultLock(self.vault.state_dir)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._mu = threading.Lock()
        self._digest_edits = DigestEdits()
        self._renames: list[tuple[str, str]] = []  # renamed source notes (old, new)
        self._progress = RunProgress()
        self._last_provider: str = self.provider  # the integrator the last run used
        self._next_full = next_schedule(options.schedule, time.time())
        self.backlog = BacklogWorker(self._backoff)
        self._parts: Parts | None = None
        self._watcher: Watcher | None = None
        self._worker: threading.Thread | None = None
        self._api: Any = None

    # -- lifecycle -------------------------------------------------------------------

    @property
    def state(self) -> State:
        """The vault's state database (open while started, and while a unit finishes)."""
        return (self._parts or self.parts).state  # none open: `parts` raises DaemonError

    @property
    def parts(self) -> Parts:
        """The open parts (state, indexes) while the daemon runs and is not stopping."""
        if self._parts is None or self._stop.is_set():  # the API answers 503: try again
            raise DaemonError("the daemon is not running (starting or stopping); try again")
        return self._parts

    @property
    def port(self) -> int:
        """The API's port (useful with ``api.port: 0``)."""
        return int(self._api.port) if self._api is not None else 0

    def start(self) -> None:
        """Lock the vault, open its parts, reconcile, then watch, work and serve."""
        if not self._lock.acquire_after_commands(self._stop):
            return  # stopped while waiting for a CLI command: a clean exit
        hold_heap_steady()
        try:
            self._parts = open_parts(self.vault, self.options)
            self._api = ApiServer(self, self.host, self.daemon_options.api_port)
            self.reconcile()
            self._watcher = Watcher(self.vault, self.on_changes)
            self._watcher.start()
            self._worker = threading.Thread(target=self._loop, name="vaultlink-worker",
                                            daemon=True)
            self._worker.start()
            self._api.start()
            self._write_info()
        except BaseException:
            self.stop()
            raise
        log.info("vaultlink %s watching %s (pid %d, API on 127.0.0.1:%d, provider %s)",
                 __version__, self.vault.root, os.getpid(), self.port, self.provider)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the current unit (abandoned after ``timeout`` s; its writes are atomic)."""
        self._stop.set()
        self._wake.set()
        if self._watcher is not None:
            self._watcher.stop()
        parts_idle = True
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join(timeout)
            parts_idle = not self._worker.is_alive()
            if not parts_idle:
                log.warning("the current unit did not finish within %.0f s; abandoning it "
                            "(its note is not checkpointed and is redone next start)", timeout)
        if self._api is not None:
            parts_idle = self._api.stop() and parts_idle  # a late request still reads parts
        if self._parts is not None and parts_idle:
            self._parts.close()
        self._parts = None if parts_idle else self._parts
        if self._lock.held:  # daemon.json belongs to whoever holds the lock
            with contextlib.suppress(OSError):
                (self.vault.state_dir / INFO_NAME).unlink()
            self._lock.release()

    def run_forever(self) -> None:
        """Start, then block until SIGINT or SIGTERM; a second signal abandons the unit.

        The process first lowers its CPU priority by ``watch.nice``: what the daemon
        computes itself (embedding, indexing) gives way to the user's editor and to the
        model's server, which keeps its own priority."""
        if (niceness := lower_priority(self.daemon_options.nice)) > 0:
            log.info("running at niceness %d (watch.nice)", niceness)
        serve_until_signal(self.start, self.stop, self._stop, self._wake)

    def _write_info(self) -> None:
        info = {"pid": os.getpid(), "port": self.port, "started_at": iso(self.started_at)}
        self.vault.write(f".vaultlink/{INFO_NAME}", json.dumps(info),
                         current_hash(self.vault.root, f".vaultlink/{INFO_NAME}"))

    # -- start-up reconcile and events ------------------------------------------------

    def reconcile(self) -> None:
        """Queue notes changed while the daemon was off (ready now); catch the index up."""
        assert self._parts is not None
        reconcile_at_start(self.vault, self._parts, self.options.backfill_days)

    def on_changes(self, changes: list[Change]) -> None:
        """The watcher's sink: queue source notes, mark user-edited digest nodes."""
        now = time.time()
        state = self.state
        for ch in changes:
            with self._mu:
                self.generation += 1
            if ch.folder == "digest":
                if ch.is_dir:
                    self._digest_edits.folder_changed(now)
                elif not self.vault.own.is_own(ch.path, current_hash(self.vault.root, ch.path)):
                    self._digest_edits.edited(ch.path, now)
                continue
            if ch.is_dir:
                if not ch.gone:
                    for path in self.vault.iter_files([ch.path]):
                        if path.endswith(".md"):
                            state.enqueue(path, now, self.quiet)
                continue
            if ch.moved_from:  # the worker carries its checkpoint and digest links
                with self._mu:
                    self._renames.append((ch.moved_from, ch.path))
            state.enqueue(ch.path, now, self.quiet)
        self._wake.set()

    def rerun(self, paths: list[str]) -> list[str]:
        """Queue notes ready now, forgetting their checkpoint so they are re-extracted."""
        now = time.time()
        self.state.drop_checkpoints(paths)
        for path in paths:
            self.state.enqueue(path, now, 0.0)
        self._wake.set()
        return paths

    def digest_changed(self, path: str) -> None:
        """Re-index a digest node the API's undo just rewrote or removed, now: the
        watcher takes the daemon's own writes for no change and would skip it."""
        try:
            self.parts.index.upsert([path])
        except VaultlinkError as exc:  # the next full sync catches up
            log.warning("could not re-index %s after the undo: %s", path, exc)
        with self._mu:
            self.generation += 1

    def proposals(self, state: ProposalState | None) -> list[dict[str, Any]]:
        """``GET /proposals``: the decisions held for review (``pipeline/integrate/review.py``)."""
        return [review.proposal_view(p, self.vault) for p in self.state.proposals(state)]

    def settle(self, proposal_id: int, verb: str) -> dict[str, Any]:
        """``POST /proposals/{id}/approve|reject|new``: the owner's word on a proposal.
        What it wrote is re-indexed now; a stale one's notes are queued, ready now, so
        the unit is decided again without waiting for another change."""
        how = {"approve": settle.approve, "reject": settle.reject, "new": settle.create_new}
        done = how[verb](self.vault, self.state, proposal_id)
        for path in done.paths:
            self.digest_changed(path)
        if done.stale:
            now = time.time()
            for path in done.proposal.paths:
                if self.vault.exists(path):
                    self.state.enqueue(path, now, 0.0)
            self._wake.set()
        return review.settled_view(done, self.vault)

    # -- the worker -------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # before reading the queue: a later enqueue wakes us again
            try:
                timeout = self._tick(time.time())
            except Exception:
                log.exception("the worker hit an unexpected error; retrying shortly")
                timeout = self.retry_backoff[0]
            if timeout is None or timeout > 0:
                self._wake.wait(timeout)

    def _tick(self, now: float) -> float | None:
        """Do what is due; return seconds until something else is (None: nothing)."""
        with self._mu:
            renames, self._renames = self._renames, []
        if renames and self._parts is not None:
            follow_renames(self.vault, self.state, self._parts.index, renames)
        dues = [self._sync_digest(now)]
        queue = self.state.queue(now)  # also undoes a clock jump back
        ready = [i for i in queue if i.ready_at <= now]
        full_due = self._next_full is not None and self._next_full <= now
        # The backlog is worked only while no note of the queue is ready: new notes first.
        backlog = not (ready or full_due) and self.backlog.due(self.state, now)
        if (ready or full_due or backlog) and not self.gate.open(now):
            dues.append(self.gate.retry_at)  # the queue waits; digest re-indexing not
        elif full_due:
            self._next_full = next_schedule(self.daemon_options.schedule, now)
            self._run(None)
            return 0.0
        elif ready:
            self._process(ready[:BATCH_PATHS])
            return 0.0
        elif backlog:  # one run over the oldest queued notes of the backlog
            self.arbiter.turn(BACKFILL)  # only when no search or other heavy job waits
            self.backlog.work(self.state, self._run, self.gate, self._last_provider,
                              self.options.max_units, now)
            return 0.0
        else:
            dues.append(queue[0].ready_at if queue else None)
            if self.backlog.retry_at > now:
                dues.append(self.backlog.retry_at)
        dues.append(self._next_full)
        pending = [d - now for d in dues if d is not None]
        return max(min(pending), 0.01) if pending else None

    def _sync_digest(self, now: float) -> float | None:
        due, full, later = self._digest_edits.take_due(now)
        assert self._parts is not None
        # Decided after the settle, not at the event: a write that renames the old file
        # aside leaves the name absent for an instant, which looks like a user's delete.
        due = [p for p in due if not self.vault.own.is_own(p, current_hash(self.vault.root, p))]
        self.user_digest_edits += len(due)
        try:
            if full:
                self.arbiter.turn(INDEX)
                self._parts.index.sync()
            elif due:
                self._parts.index.upsert(due)
        except VaultlinkError as exc:
            log.warning("could not re-index %s: %s", due or "digest/", exc)
        return later

    def _process(self, items: list[QueueItem]) -> None:
        """Integrate settled notes; notes gone or unchanged leave the queue without a run."""
        state = self.state
        todo = drop_settled(self.vault.root, state, items)
        if not todo:
            return
        now = time.time()
        try:
            run = self._run(with_waiting_units(state, [i.path for i in todo]))
        except ModelUnavailable as exc:
            self.gate.down(now, str(exc))
            # with ollama the gate holds them; with auto they wait out the same backoff
            delay = 0.0 if self.provider == Provider.OLLAMA else self.gate.wait
            state.requeue([i.path for i in todo], now, delay, str(exc))
            return
        except IndexServerUnavailable as exc:  # said in full; no traceback to add
            log.warning("%s; %d note(s) requeued", exc, len(todo))
            requeue_each(state, todo, now, self._backoff, str(exc))
            return
        except Exception as exc:  # any failure: nothing lost, retried with backoff
            log.exception("run failed; %d note(s) requeued", len(todo))
            requeue_each(state, todo, now, self._backoff, str(exc))
            return
        self.gate.up()
        settle_after_run(state, todo, run, now, self._backoff)

    def backfill(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /backfill``: estimate (and with ``queue``, queue) backlog notes."""
        answer = backfill_request(self.state, self._last_provider, body)
        if answer["queued"]:
            with self._mu:
                self.generation += 1
            self._wake.set()
        return answer

    def _backoff(self, attempts: int) -> float:
        first, longest = self.retry_backoff
        return float(min(first * 2 ** attempts, longest))

    def _run(self, only: frozenset[str] | None) -> RunState:
        assert self._parts is not None
        heal_index(self._parts, self.options)  # its store deleted or damaged meanwhile?
        provider = choose_provider(self.options, self._parts.state)
        self._last_provider = provider
        ctx = dream_context(self._parts, self.options, provider, only=only,
                            progress=self._progress)
        ctx.should_stop = self._stop.is_set
        self._progress.working = True
        try:
            run = run_dream(ctx, self.steps)
            self.arbiter.turn(INDEX)  # a search's embedding or a model call goes first
            keep_sections_current(self._parts, self._stop.is_set)
        finally:
            self._progress.finished()
            close_models(ctx)
            release_after_run()
        self.runs += 1
        log.info("run %d (%s, %d note(s)): %s", run.run_id, provider,
                 len(only) if only is not None else -1, run.counts())
        return run

    # -- status ----------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The ``GET /status`` document (docs/status-api.md)."""
        now = time.time()
        durable = durable_status(self.state, now, self._last_provider)
        reachable = self.gate.reachable()
        state = (DaemonState.STOPPING if self._stop.is_set()
                 else DaemonState.WORKING if self._progress.working
                 else DaemonState.WAITING_FOR_MODEL if self.gate.waiting(now)
                 else DaemonState.IDLE)
        return {
            "api_version": 1, "version": __version__, "vault": str(self.vault.root),
            "pid": os.getpid(), "started_at": iso(self.started_at), "state": state,
            "model": model_view(self.provider, self._last_provider, self.llm_host,
                                str(self.options.model), reachable),
            "current": self._progress.current, **durable,
        }
