"""Process plumbing of the daemon: the vault lock, the info file, logging, the daily
schedule, and status snapshots that need no running daemon.

Kept apart from ``daemon.py`` so the CLI's ``status`` and the API can use them without
the composition root, and so each file reads as one concern.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import logging.handlers
import os
import time
from pathlib import Path
from typing import Any

from vaultlink.errors import DaemonError
from vaultlink.state import State

log = logging.getLogger(__name__)

LOCK_NAME = "daemon.lock"
INFO_NAME = "daemon.json"


def iso(ts: float | None) -> str | None:
    """A Unix time as the API shows it: ``2026-06-21T08:00:00Z``."""
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def durable_status(state: State, now: float, queue_limit: int = 1000) -> dict[str, Any]:
    """What state.sqlite knows without a daemon: queue, last run, open failures."""
    items = state.queue()
    last = state.last_run()
    if last is not None:
        last = {**last, "started_at": iso(last["started_at"]),
                "finished_at": iso(last["finished_at"])}
    return {
        "queue": [{"path": i.path, "settles_in_seconds": round(max(0.0, i.ready_at - now), 1),
                   "state": "ready" if i.ready_at <= now else "settling",
                   "attempts": i.attempts, "last_error": i.last_error}
                  for i in items[:queue_limit]],
        "queue_length": len(items),
        "last_run": last,
        "failed": [{**f, "failed_at": iso(f["failed_at"])} for f in state.failures()],
    }


def read_info(state_dir: Path) -> dict[str, Any] | None:
    """``daemon.json`` of a running daemon (pid, port), or None if none is running."""
    try:
        info = json.loads((state_dir / INFO_NAME).read_text("utf-8"))
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if isinstance(info, dict) else None


def live_status(state_dir: Path, timeout: float = 5.0) -> tuple[dict[str, Any] | None, str]:
    """The running daemon's GET /status, or None with the reason no daemon answered."""
    import urllib.error
    import urllib.request

    from vaultlink.api import read_token

    info, token = read_info(state_dir), read_token(state_dir)
    if info is None or token is None:
        return None, "no daemon holds this vault"
    req = urllib.request.Request(f"http://127.0.0.1:{int(info['port'])}/status",
                                 headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data: dict[str, Any] = json.loads(resp.read())
            return data, ""
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return None, f"pid {info['pid']} does not answer on port {info['port']}: {exc}"


def daemon_status(state_dir: Path, timeout: float = 5.0) -> dict[str, Any]:
    """``vaultlink status``: the running daemon's GET /status, else the durable state."""
    live, reason = live_status(state_dir, timeout)
    if live is not None:
        return {"running": True, **live}
    db = state_dir / "state.sqlite"
    if not db.exists():
        return {"running": False, "reason": reason, "queue": [], "queue_length": 0,
                "last_run": None, "failed": []}
    state = State(db)
    try:
        return {"running": False, "reason": reason, **durable_status(state, time.time())}
    finally:
        state.close()


class VaultLock:
    """``.vaultlink/daemon.lock``: an exclusive flock plus the holder's pid."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise ``DaemonError`` naming the pid that holds it."""
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise DaemonError(f"another vaultlink daemon (pid {holder}) is watching this "
                              f"vault; stop it first (`kill {holder}`), lock: {self.path}"
                              ) from None
        old = os.read(fd, 64).decode("ascii", "replace").strip()
        if old and old != str(os.getpid()):
            # the kernel dropped the flock when that process died: the lock is stale
            log.info("taking over the stale lock of pid %s (no longer running)", old)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Drop the lock (the file stays; an unlocked file is free)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None


def setup_logging(state_dir: Path, level: int = logging.INFO) -> Path:
    """Log to ``.vaultlink/logs/vaultlink.log`` (rotating); for the daemon entry point only."""
    folder = state_dir / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "vaultlink.log"
    root = logging.getLogger()
    if not any(getattr(h, "baseFilename", None) == str(path) for h in root.handlers):
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3,
                                                       encoding="utf-8")
        handler.setFormatter(logging.Formatter(
            "%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
        handler.setLevel(level)
        for other in root.handlers:  # the console keeps the level it had
            if other.level == logging.NOTSET:
                other.setLevel(root.level)
        root.addHandler(handler)
        root.setLevel(min(root.level, level))
    return path


def next_schedule(hhmm: str, now: float) -> float | None:
    """The next local time ``HH:MM`` after ``now``; None for an empty schedule."""
    if not hhmm:
        return None
    try:
        hour, minute = (int(x) for x in hhmm.split(":"))
        at = dt.datetime.fromtimestamp(now).replace(hour=hour, minute=minute, second=0,
                                                    microsecond=0)
    except ValueError:
        raise DaemonError(f"watch.schedule {hhmm!r} is not a time HH:MM") from None
    if at.timestamp() <= now:
        at += dt.timedelta(days=1)
    return at.timestamp()
