"""The daemon seen from outside: one request to its API, and ``vaultlink status`` with or
without a running daemon (then from ``state.sqlite`` and the lock file)."""

from __future__ import annotations

import datetime as dt
import http.client
import json
import time
import urllib.error
import urllib.request
from enum import StrEnum
from pathlib import Path
from typing import Any

from vaultlink.daemon.process import INFO_NAME, lock_holder, read_info, read_token
from vaultlink.errors import DaemonError
from vaultlink.options import Provider
from vaultlink.pipeline.backfill import backlog_status
from vaultlink.vault.state import State


class DaemonState(StrEnum):
    """The status API's ``state``: what the running daemon is doing now."""

    STOPPING = "stopping"
    WORKING = "working"
    WAITING_FOR_MODEL = "waiting-for-model"  # llm.provider ollama, and it does not answer
    IDLE = "idle"


class QueueState(StrEnum):
    """A queued note's ``state`` in the status: ready to integrate, or still changing."""

    READY = "ready"
    SETTLING = "settling"  # changed less than watch.quiet_seconds ago


def iso(ts: float | None) -> str | None:
    """A Unix time as the API shows it: ``2026-06-21T08:00:00Z``."""
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def durable_status(state: State, now: float, provider: str | None = None,
                   queue_limit: int = 1000) -> dict[str, Any]:
    """What state.sqlite knows without a daemon: queue, last run, open failures, and the
    backlog with its estimates at ``provider``'s pace (None: the last run's provider)."""
    items = state.queue()
    last = state.last_run()
    pace = provider or (last["provider"] if last and last["provider"] else Provider.OFFLINE)
    if last is not None:
        last = {**last, "started_at": iso(last["started_at"]),
                "finished_at": iso(last["finished_at"])}
    return {
        "queue": [{"path": i.path, "settles_in_seconds": round(max(0.0, i.ready_at - now), 1),
                   "state": QueueState.READY if i.ready_at <= now else QueueState.SETTLING,
                   "attempts": i.attempts, "last_error": i.last_error}
                  for i in items[:queue_limit]],
        "queue_length": len(items),
        "last_run": last,
        "failed": [{**f, "failed_at": iso(f["failed_at"])} for f in state.failures()],
        "unreadable": [{**u, "since": iso(u["since"])} for u in state.unread_notes()],
        # notes whose last reading gave no unit, with what they hold (issue #16)
        "barren": [{**b, "since": iso(b["since"])} for b in state.barren_notes()],
        "passed_over": len(state.passed_over()),
        "proposals": state.proposal_count(),  # decisions held for review (`vaultlink review`)
        "backlog": backlog_status(state, pace),
    }


def ask_daemon(state_dir: Path, method: str, path: str, body: dict[str, Any] | None = None,
               timeout: float = 30.0) -> dict[str, Any]:
    """One request to the running daemon's API; its JSON answer.

    Raises ``DaemonError`` when no daemon answers, and with the API's own message when
    it refuses (``docs/status-api.md``).
    """
    info, token = read_info(state_dir), read_token(state_dir)
    if info is None or token is None:
        raise DaemonError(f"no vaultlink daemon answers for {state_dir.parent}: none is "
                          f"running, or it is still starting (it serves once {INFO_NAME} "
                          "appears in .vaultlink/); try again in a moment")
    data = json.dumps(body).encode("utf-8") if body is not None else None
    req = urllib.request.Request(
        f"http://127.0.0.1:{int(info['port'])}{path}", data=data, method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            answer: dict[str, Any] = json.loads(resp.read())
            return answer
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error") or str(exc)
        except (ValueError, AttributeError):
            message = str(exc)
        raise DaemonError(f"the daemon refused: {message}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        # HTTPException: the daemon died (or stopped) half-way through its answer
        raise DaemonError(f"the daemon (pid {info['pid']}) does not answer on port "
                          f"{info['port']}: {exc}") from None


def live_status(state_dir: Path, timeout: float = 5.0) -> tuple[dict[str, Any] | None, str]:
    """The running daemon's GET /status, or None with the reason no daemon answered."""
    try:
        return ask_daemon(state_dir, "GET", "/status", timeout=timeout), ""
    except DaemonError as exc:
        return None, str(exc)


def daemon_status(state_dir: Path, timeout: float = 5.0) -> dict[str, Any]:
    """``vaultlink status``: the running daemon's GET /status, else the durable state
    and ``writer``: the process holding the vault, if any (a CLI command, or a daemon
    still starting)."""
    live, reason = live_status(state_dir, timeout)
    if live is not None:
        return {"running": True, **live}
    writer = lock_holder(state_dir)
    if writer is None or writer["holder"] != "daemon":
        reason = "no daemon answers on this vault"
    else:
        reason = f"the daemon holds the vault but does not answer yet ({reason})"
    head = {"running": False, "reason": reason, "writer": writer}
    db = state_dir / "state.sqlite"
    if not db.exists():
        return {**head, "queue": [], "queue_length": 0, "last_run": None, "failed": []}
    state = State(db)
    try:
        return {**head, **durable_status(state, time.time())}
    finally:
        state.close()
