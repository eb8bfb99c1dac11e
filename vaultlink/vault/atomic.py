"""Atomic, compare-and-swap file replacement: the only way vaultlink changes a file.

A new text goes to a hidden temp file beside the target and is fsynced; then it takes
the target's name by a hard link (a create fails if the name exists) or by the
set-aside swap below (an update fails if the file no longer holds the hash the caller
read). A crash at any moment leaves either the old file or the new one, whole, plus at
most a hidden ``*.vaultlink.tmp`` or ``*.vaultlink.old`` that start-up cleans up.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from pathlib import Path

from vaultlink.errors import WriteConflict


def content_hash(data: bytes) -> str:
    """The hash vaultlink keys everything by: sha256 of the file's bytes, in hex."""
    return hashlib.sha256(data).hexdigest()


def replace_file(path: Path, rel: str, data: bytes, expected_hash: str | None) -> None:
    """Write ``data`` to ``path`` atomically if it still holds ``expected_hash``
    (``None``: only if it does not exist); else ``WriteConflict`` and nothing changes."""
    tmp = _sibling(path, "tmp")
    with open(tmp, "xb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
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
