"""Walking the vault's folders and remembering what a note's stat says about its bytes.

:func:`walk_entries` lists the files below some folders in one ``scandir`` pass per
folder, with plain strings (``pathlib`` and ``os.walk`` cost more than the stat calls).
:func:`unchanged` decides, as git's index does, whether a note keeps its stored content
hash: same size, mtime, ctime and inode, and both times older than its hashing by more
than :data:`RACY_NS` (a note written in the tick it was hashed could change again
unseen, so it is hashed again). The stored entries live in ``state.sqlite``
(``vault.state.State`` implements :class:`StatCache`).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from vaultlink.errors import VaultError

# Two seconds covers the coarsest timestamps in use (FAT's), and more than covers
# ext4/APFS/NTFS. A note edited that recently before it was hashed is hashed again.
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class StatEntry:
    """What a note's stat was when its bytes had ``hash`` (read at ``hashed_ns``)."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    hash: str
    hashed_ns: int


class StatCache(Protocol):
    """Where scans keep the stat and hash of every note they hashed."""

    def stat_entries(self) -> dict[str, StatEntry]:
        """Every stored entry by vault path."""
        ...

    def store_stat_entries(self, fresh: Mapping[str, StatEntry], gone: Iterable[str]) -> None:
        """Add or replace ``fresh`` entries; forget the ``gone`` paths."""
        ...


def unchanged(entry: StatEntry | None, st: os.stat_result) -> bool:
    """True when ``st`` proves the note still has ``entry.hash`` (no read needed)."""
    if entry is None or not entry.hash:
        return False
    if (entry.size, entry.mtime_ns, entry.ctime_ns, entry.ino) != (
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino):
        return False
    newest = max(st.st_mtime_ns, st.st_ctime_ns)
    return newest < entry.hashed_ns - RACY_NS


def entry_of(st: os.stat_result, digest: str, hashed_ns: int) -> StatEntry:
    """The entry to store for a note just hashed."""
    return StatEntry(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, digest, hashed_ns)


def walk_entries(root: str, folders: Iterable[str] | None, skipped_dirs: frozenset[str],
                 skip_name: Callable[[str], bool], to_rel: Callable[[str], str],
                 check_link: Callable[[str], object], on_skip: Callable[[str, Exception], None],
                 ) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """``(vault path, entry)`` of every file below ``folders`` of ``root`` (None: all).

    Dot-names, ``skipped_dirs`` and names ``skip_name`` refuses are left out; symlinked
    folders are not entered (as ``os.walk`` does not follow them); a symlinked file is
    kept only if ``check_link`` (given its vault path) does not raise. ``to_rel``
    validates and normalises a vault path and may raise too; ``on_skip`` hears of every
    file left out for an error. Unordered.
    """
    stack = ([(os.path.join(root, f), f + "/") for f in folders] if folders is not None
             else [(root, "")])
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # missing folder, not a folder, or vanished mid-walk
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in skipped_dirs:
                        stack.append((entry.path, prefix + name + "/"))
                    continue
                if skip_name(name):
                    continue
                rel = to_rel(prefix + unicodedata.normalize("NFC", name))
                if entry.is_symlink():
                    check_link(rel)
                    if entry.is_dir():  # a linked folder: os.walk would not enter it
                        continue
            except (OSError, ValueError, VaultError) as exc:
                on_skip(entry.path, exc)
                continue
            yield rel, entry
