"""Atomic, compare-and-swap file replacement: the only way vaultlink changes a file.

A new text goes to a hidden temp file beside the target and is fsynced; then it takes
the target's name by a hard link (a create fails if the name exists) or by the
set-aside swap below (an update fails if the file no longer holds the hash the caller
read). A crash at any moment leaves either the old file or the new one, whole, plus at
most a hidden ``*.vaultlink.tmp`` or ``*.vaultlink.old`` that the next writer cleans up
(``recover_work_files``: the daemon at start, every CLI command that writes).

The ``crash_point`` calls mark the moments the crash tests kill the process at.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import secrets
from collections.abc import Iterable
from pathlib import Path

from vaultlink.errors import WriteConflict
from vaultlink.vault.faults import crash_point

log = logging.getLogger(__name__)


def content_hash(data: bytes) -> str:
    """The hash vaultlink keys everything by: sha256 of the file's bytes, in hex."""
    return hashlib.sha256(data).hexdigest()


def replace_file(path: Path, rel: str, data: bytes, expected_hash: str | None) -> None:
    """Write ``data`` to ``path`` atomically if it still holds ``expected_hash``
    (``None``: only if it does not exist); else ``WriteConflict`` and nothing changes."""
    tmp = _sibling(path, "tmp")
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        crash_point("after_temp")
    except BaseException:  # a full disk: leave no partial temp file behind
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    try:
        if expected_hash is None:
            _link_new(tmp, path, rel)
        else:
            _swap(path, rel, expected_hash, tmp)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync_dir(path.parent)


def remove_file(path: Path, rel: str, expected_hash: str) -> None:
    """Remove ``path`` only if it still holds ``expected_hash``; else ``WriteConflict``."""
    _swap(path, rel, expected_hash, None)
    _fsync_dir(path.parent)


def _current_hash(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except FileNotFoundError:
        return None


def _sibling(path: Path, kind: str) -> Path:
    """A hidden, unique name beside ``path`` (the scanner skips dot files)."""
    return path.parent / f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.vaultlink.{kind}"


def _link_new(src: Path, path: Path, rel: str) -> None:
    """Give ``src`` the name ``path`` only if nothing has that name: an atomic create."""
    try:
        os.link(src, path)
    except FileExistsError:
        raise WriteConflict(rel) from None
    crash_point("after_rename")


def _swap(path: Path, rel: str, expected_hash: str, new: Path | None) -> None:
    """Replace ``path`` by ``new`` (or remove it, ``new=None``) if it holds ``expected_hash``.

    Compare-then-rename would lose an editor's save landing between the compare and
    the rename. So the current file is first renamed aside, where nobody changes it
    while it is compared: a save meanwhile creates a fresh ``path``, and ours yields to
    it. On a conflict the file set aside goes back, unless a newer save took its place.
    For that instant the name is absent: a reader may see it missing and read again.
    """
    aside = _sibling(path, "old")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        raise WriteConflict(rel) from None
    crash_point("after_aside")
    try:
        if _current_hash(aside) != expected_hash:
            raise WriteConflict(rel)
        if new is not None:
            _link_new(new, path, rel)
        elif os.path.lexists(path):  # a save landed while ours was aside: it stays
            raise WriteConflict(rel)
    except BaseException:
        _put_back(aside, path)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            aside.unlink()


def _put_back(aside: Path, path: Path) -> None:
    """Return the file set aside to its name, unless a newer save has taken the name."""
    try:
        os.link(aside, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        if not os.path.lexists(path):
            os.replace(aside, path)


def _fsync_dir(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# The working files above: ``.<name>.<pid>-<hex>.vaultlink.tmp`` (the new text) and
# ``.vaultlink.old`` (the current file set aside while it is compared and replaced).
_WORK_FILE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]+\.vaultlink\.(?P<kind>tmp|old)$")


def recover_work_files(root: Path, folders: Iterable[str]) -> list[Path]:
    """Finish what a killed writer left below ``folders``: put set-aside files back,
    drop temps; returns the files put back.

    A writer killed between setting a file aside and linking its new text leaves the
    name empty and the file in ``.vaultlink.old``; it goes back under its name (unless
    a newer file took the name). Files of a writer that is still running are left alone.
    """
    fixed: list[Path] = []
    for top in (root / f for f in folders):
        for folder, _dirs, files in os.walk(top) if top.is_dir() else ():
            for name in files:
                m = _WORK_FILE.match(name)
                if m is None or _alive(int(m["pid"])):
                    continue
                work, target = Path(folder) / name, Path(folder) / m["name"]
                if m["kind"] == "old" and not os.path.lexists(target):
                    with contextlib.suppress(FileExistsError):
                        os.link(work, target)
                        fixed.append(target)
                with contextlib.suppress(FileNotFoundError):
                    work.unlink()
    if fixed:
        log.warning("restored %d file(s) a killed write had set aside: %s", len(fixed),
                    ", ".join(p.relative_to(root).as_posix() for p in fixed))
    return fixed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # ours from before a restart in this process cannot be in flight
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
