"""The daemon's process files and plumbing: the vault's writer lock, the info file that
says where the daemon listens, the API token, logging, the daily schedule, signals.

Both sides use it: the daemon writes these files, and ``client.py`` reads them to reach
the daemon, so neither imports the other.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import json
import logging
import logging.handlers
import os
import secrets
import signal
import stat
import threading
from collections.abc import Callable
from io import TextIOWrapper
from pathlib import Path
from typing import Any

from vaultlink.errors import DaemonError, VaultBusy, WriteFailed
from vaultlink.vault.atomic import recover_work_files
from vaultlink.vault.notes import STATE_DIR, Vault

log = logging.getLogger(__name__)

LOCK_NAME = "writer.lock"
INFO_NAME = "daemon.json"
TOKEN_NAME = "token"


def _not_ours(path: Path, what: str) -> DaemonError:
    return DaemonError(
        f"{path} {what}: vaultlink opens its own files in .vaultlink/ only as regular "
        f"files of yours, never through a link; check how it got there, remove it "
        f"(`rm '{path}'`), and start again (vaultlink makes a new one)")


def open_own(path: Path, flags: int, mode: int = 0o600, private: bool = True) -> int:
    """Open one of the daemon's files in .vaultlink/ without following a link: a
    symlink planted there must not turn our write or chmod onto another file.

    Refuses (``DaemonError``) a link or anything but a regular file and, when
    ``private``, a file of another user; a private file is made owner-only (0600).
    """
    # O_NONBLOCK: a FIFO planted here must not hang the open; cleared once it is a file
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: the BSDs' word for it
            raise _not_ours(path, "is a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_ours(path, "is not a regular file")
        if private and info.st_uid != os.getuid():
            raise _not_ours(path, "belongs to another user")
        if private and info.st_mode & 0o077:
            os.fchmod(fd, 0o600)  # tighten a file copied in loosely, or an older log
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_own(path: Path) -> str:
    with os.fdopen(open_own(path, os.O_RDONLY), encoding="ascii") as fh:
        return fh.read().strip()


def ensure_token(state_dir: Path) -> str:
    """The vault's API token, created owner-only (0600) on first use. A token path that
    is a link, or not a regular file of the user's, is refused (``DaemonError``)."""
    path = state_dir / TOKEN_NAME
    state_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:  # O_EXCL: a link there counts as existing, and is refused below
        token = _read_own(path)
        if token:
            return token
        path.unlink()
        return ensure_token(state_dir)
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(token + "\n")
    return token


def read_token(state_dir: Path) -> str | None:
    """The token for a client (``vaultlink status``), or None if there is none.
    ``DaemonError`` for a link: a client must not send another file's text as its token."""
    try:
        return _read_own(state_dir / TOKEN_NAME) or None
    except OSError:
        return None


def read_info(state_dir: Path) -> dict[str, Any] | None:
    """``daemon.json`` of a running daemon (pid, port), or None if none is running."""
    try:
        info = json.loads((state_dir / INFO_NAME).read_text("utf-8"))
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if isinstance(info, dict) else None


def lock_holder(state_dir: Path) -> dict[str, Any] | None:
    """Who holds the vault's writer lock, as its file says: ``{"pid", "holder"}`` of a
    live process, else None. Read without locking, so it never gets in anyone's way."""
    try:
        words = (state_dir / LOCK_NAME).read_text("utf-8").split()
        pid = int(words[0])
        os.kill(pid, 0)
    except PermissionError:
        pass  # alive, another user's process
    except (OSError, ValueError, IndexError):
        return None  # no file, released (empty), or its process is gone
    return {"pid": pid, "holder": words[1] if len(words) > 1 else "unknown"}


class VaultLock:
    """``.vaultlink/writer.lock``: the vault's one writer, an exclusive flock.

    The daemon holds it for its life; CLI commands that write the vault or open the
    search index (``dream``, ``reindex``, ``undo``, ``search``...) hold it while they
    run, so two processes never write the index's tables and vectors at once. The file
    says ``<pid> <holder>``; the kernel drops the flock when its process dies.
    """

    def __init__(self, state_dir: Path, holder: str = "daemon") -> None:
        self.path = state_dir / LOCK_NAME
        self.holder = holder
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise ``VaultBusy`` naming the process that holds it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # not private: another user's daemon may hold the vault, and say so in it
            fd = open_own(self.path, os.O_RDWR | os.O_CREAT, 0o644, private=False)
        except OSError as exc:  # a read-only or full vault: say so, not a traceback
            raise WriteFailed(f".vaultlink/{LOCK_NAME}", exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            words = os.read(fd, 200).decode("utf-8", "replace").split()
            os.close(fd)
            # An empty file is a holder between its flock and its pwrite: not known yet.
            raise VaultBusy(words[0] if words else "unknown",
                            words[1] if len(words) > 1 else "unknown") from None
        old = os.read(fd, 200).decode("utf-8", "replace").split()
        if old and old[0] != str(os.getpid()):
            # the kernel dropped the flock when that process died: the lock is stale
            log.info("taking over the stale lock of pid %s (no longer running)", old[0])
        mine = f"{os.getpid()} {self.holder}\n".encode()
        os.pwrite(fd, mine, 0)  # written before the cut, so a reader never sees it empty
        os.ftruncate(fd, len(mine))
        self._fd = fd

    def acquire_after_commands(self, stopping: threading.Event, poll: float = 1.0) -> bool:
        """Take the lock, waiting while a CLI command holds it (a reindex may take
        minutes; the service must not give up on it). False, holding nothing, when
        ``stopping`` is set first; ``VaultBusy`` at once when another daemon holds it."""
        waited: str | None = None
        while not stopping.is_set():
            try:
                self.acquire()
            except VaultBusy as busy:
                if busy.holder == "daemon":
                    raise
                if waited != busy.pid:
                    log.warning("%s; waiting for it before starting", busy)
                    waited = busy.pid
                stopping.wait(poll)
                continue
            if not stopping.is_set():
                return True
            self.release()  # stopped in the very instant it was taken
        return False

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


def writer_or_daemon(v: Vault, command: str) -> VaultLock | None:
    """The writer lock for ``command``, or None when the running daemon holds it: then
    the command asks the daemon (``client.ask_daemon``) instead of opening the index.
    Raises ``VaultBusy`` when another command holds it."""
    lock = VaultLock(v.state_dir, command)
    try:
        lock.acquire()
    except VaultBusy as busy:
        if busy.holder != "daemon":
            raise
        return None
    try:
        recover_after_crash(v)
    except BaseException:
        lock.release()
        raise
    return lock


def recover_after_crash(v: Vault) -> None:
    """What every writer does first: finish what a killed process left behind (work
    files of an atomic write, and writes it never journaled: ``recovery.recover``)."""
    # the journal, undo and its rollback: ~40 ms that --help need not pay
    from vaultlink.pipeline.recovery import recover
    from vaultlink.vault.state import State

    recover_work_files(v.root, [v.digest, STATE_DIR])
    if not (v.state_dir / "state.sqlite").exists():
        return
    state = State(v.state_dir / "state.sqlite")
    try:
        recover(v, state)
    finally:
        state.close()


class OwnLogFile(logging.handlers.RotatingFileHandler):
    """A rotating log opened owner-only (0600) and never through a link: it names the
    vault's notes and quotes their errors. Rotation renames the file, so backups keep
    its mode."""

    def _open(self) -> TextIOWrapper:
        fd = open_own(Path(self.baseFilename), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)


def _tighten_backups(path: Path, count: int) -> None:
    """Backups an older vaultlink rotated at 0644 become owner-only too (a link is left
    alone: rotation renames or removes it, never writes through it)."""
    for n in range(1, count + 1):
        with contextlib.suppress(OSError, DaemonError):
            os.close(open_own(Path(f"{path}.{n}"), os.O_RDONLY))


def setup_logging(state_dir: Path, level: int = logging.INFO) -> Path:
    """Log to ``.vaultlink/logs/vaultlink.log`` (rotating, owner-only); for the daemon
    entry point only."""
    folder = state_dir / "logs"
    if folder.is_symlink():  # O_NOFOLLOW guards the file's own name, not its folder's
        raise _not_ours(folder, "is a symbolic link")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / "vaultlink.log"
    root = logging.getLogger()
    if not any(getattr(h, "baseFilename", None) == str(path) for h in root.handlers):
        handler = OwnLogFile(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
        _tighten_backups(path, handler.backupCount)
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


def serve_until_signal(start: Callable[[], None], stop: Callable[[], None],
                       stopping: threading.Event, wake: threading.Event) -> None:
    """Run ``start``, block until SIGINT or SIGTERM, then ``stop``.

    The first signal sets ``stopping`` (and ``wake``, so a sleeping worker notices):
    the unit in progress finishes. A second signal exits at once; the abandoned unit's
    writes are atomic and its note is integrated again at the next start.
    """
    def handle(signum: int, _frame: Any) -> None:
        if stopping.is_set():
            log.warning("second signal: abandoning the current unit")
            os._exit(130)
        log.info("signal %d: stopping after the current unit", signum)
        stopping.set()
        wake.set()

    old = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        start()
        while not stopping.wait(3600):
            pass
    finally:
        stop()
        for s, h in old.items():
            signal.signal(s, h)
