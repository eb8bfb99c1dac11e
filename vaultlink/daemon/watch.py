"""Watching the vault: watchdog events -> normalised note changes -> the daemon.

* :func:`normalise` is pure: raw events become :class:`Change` values for the ``.md``
  files under the daily, resource and digest folders (never a dot-folder, an editor's
  temp or backup file, or a sync-conflict copy). An atomic save (a temp file moved onto
  the note) is a change of the note, a vim save is "gone" then "changed", the latest
  change of a path wins; the consumer re-reads the file, so a wrong guess costs a hash.
* :class:`OwnWrites` remembers the hash of every file the daemon wrote;
  :class:`RecordingVault` fills it *before* each write lands, so the event it causes
  triggers no work.
* :class:`Watcher` is the thin thread: a watchdog observer on the folders.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from vaultlink.vault.atomic import content_hash
from vaultlink.vault.atomic import recover_work_files as atomic_recover
from vaultlink.vault.notes import SKIPPED_DIRS, Vault
from vaultlink.vault.paths import is_skipped_name

log = logging.getLogger(__name__)

# Events that can mean "a note's content changed"; opened, closed-without-write and
# attribute changes never do, so the observer is not even asked for them.
WATCHED_EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent,
                  FileClosedEvent, DirCreatedEvent, DirMovedEvent, DirDeletedEvent]
_CHANGED = frozenset({"created", "modified", "closed"})


@dataclass(frozen=True)
class RawEvent:
    """One watchdog event as plain values: absolute paths, ``dest`` only for moves."""

    kind: str
    src: str
    dest: str = ""
    is_dir: bool = False

    @classmethod
    def of(cls, event: FileSystemEvent) -> RawEvent:
        """Convert a watchdog event (paths may be bytes)."""
        return cls(event.event_type, os.fsdecode(event.src_path),
                   os.fsdecode(event.dest_path or b""), bool(event.is_directory))


@dataclass(frozen=True)
class Layout:
    """What the normaliser needs to know of a vault: its root and folder names."""

    root: str
    daily: str = "daily"
    resource: str = "resource"
    digest: str = "digest"

    @classmethod
    def of(cls, vault: Vault) -> Layout:
        """The layout of a vault."""
        return cls(str(vault.root), vault.daily, vault.resource, vault.digest)

    def folder(self, top: str) -> str | None:
        """``daily``, ``resource`` or ``digest`` for a top-level folder name."""
        return {self.daily: "daily", self.resource: "resource",
                self.digest: "digest"}.get(top)


@dataclass(frozen=True)
class Change:
    """A note (or folder) that changed: ``gone`` when it was deleted or moved away.

    ``moved_from`` is set when the note arrived by a rename inside the watched folders,
    so its checkpoint can move with it instead of the note being integrated again.
    """

    path: str
    folder: str
    gone: bool = False
    is_dir: bool = False
    moved_from: str | None = None


def relevant(abs_path: str, layout: Layout, is_dir: bool) -> tuple[str, str] | None:
    """``(vault path, folder kind)`` of a path worth watching, else None."""
    if not abs_path:
        return None
    root = layout.root.rstrip(os.sep)
    if not abs_path.startswith(root + os.sep):
        return None
    rel = unicodedata.normalize("NFC", abs_path[len(root) + 1:].replace(os.sep, "/"))
    parts = rel.split("/")
    if len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
        return None
    kind = layout.folder(parts[0])
    if kind is None:
        return None
    if any(p in SKIPPED_DIRS or p.startswith(".") for p in parts[1:-1]):
        return None
    name = parts[-1]
    if name.startswith(".") or (name in SKIPPED_DIRS):
        return None
    if not is_dir and (is_skipped_name(name) or not name.endswith(".md")):
        return None
    return rel, kind


def normalise(events: Iterable[RawEvent], layout: Layout) -> list[Change]:
    """Raw events -> one change per path, in order of each path's latest event."""
    out: OrderedDict[str, Change] = OrderedDict()

    def put(change: Change) -> None:
        out.pop(change.path, None)  # the latest change of a path wins, and goes last
        out[change.path] = change

    for ev in events:
        if ev.kind in _CHANGED:
            if ev.is_dir and ev.kind != "created":
                continue  # a folder's "modified" only says its entries changed
            hit = relevant(ev.src, layout, ev.is_dir)
            if hit:
                put(Change(hit[0], hit[1], is_dir=ev.is_dir))
        elif ev.kind == "deleted":
            hit = relevant(ev.src, layout, ev.is_dir)
            if hit:
                put(Change(hit[0], hit[1], gone=True, is_dir=ev.is_dir))
        elif ev.kind == "moved":
            src = relevant(ev.src, layout, ev.is_dir)
            dest = relevant(ev.dest, layout, ev.is_dir)
            if src:
                put(Change(src[0], src[1], gone=True, is_dir=ev.is_dir))
            if dest:
                put(Change(dest[0], dest[1], is_dir=ev.is_dir,
                           moved_from=src[0] if src and src[1] != "digest" else None))
        # opened, closed_no_write, attrib and unknown kinds are noise
    return list(out.values())


class OwnWrites:
    """Content hashes of the files the daemon wrote (``None``: it deleted the file).

    Bounded: only the most recent writes matter, because their events arrive within
    moments. Thread-safe: the worker writes, the watcher thread asks.
    """

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._map: OrderedDict[str, str | None] = OrderedDict()
        self._lock = threading.Lock()

    def expect(self, path: str, digest: str | None) -> None:
        """Remember that ``path`` is about to hold ``digest`` (None: be deleted)."""
        with self._lock:
            self._map.pop(path, None)
            self._map[path] = digest
            while len(self._map) > self._size:
                self._map.popitem(last=False)

    def is_own(self, path: str, current: str | None) -> bool:
        """True if the file's current hash (None: absent) is what the daemon left there."""
        with self._lock:
            return path in self._map and self._map[path] == current


def current_hash(root: Path, rel: str) -> str | None:
    """The content hash of a vault file now, or None if it is not a readable file."""
    try:
        return content_hash((root / rel).read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None


@dataclass
class RecordingVault(Vault):
    """A vault whose writes and deletes are announced to an :class:`OwnWrites` first.

    Announced before the rename lands, because the watcher may see the event before
    ``write`` returns; a write that fails (a compare-and-swap conflict) is forgotten.
    """

    own: OwnWrites = field(default_factory=OwnWrites)

    def write(self, raw: str, content: str, expected_hash: str | None) -> str:
        """``Vault.write``, recorded as the daemon's own."""
        rel = self.rel(raw)
        self.own.expect(rel, content_hash(content.encode("utf-8")))
        try:
            return super().write(raw, content, expected_hash)
        except BaseException:
            self.own.expect(rel, current_hash(self.root, rel))
            raise

    def delete(self, raw: str, expected_hash: str) -> None:
        """``Vault.delete``, recorded as the daemon's own."""
        rel = self.rel(raw)
        self.own.expect(rel, None)
        try:
            super().delete(raw, expected_hash)
        except BaseException:
            self.own.expect(rel, current_hash(self.root, rel))
            raise


def recover_work_files(vault: Vault) -> list[str]:
    """Finish what a killed writer left in digest/ (``atomic.recover_work_files``);
    returns the vault paths of the nodes put back."""
    return [vault.relative_of(p) for p in atomic_recover(vault.root, [vault.digest])]


class _Handler(FileSystemEventHandler):
    def __init__(self, layout: Layout, sink: Callable[[list[Change]], None]) -> None:
        self.layout = layout
        self.sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        changes = normalise([RawEvent.of(event)], self.layout)
        if not changes:
            return
        try:
            self.sink(changes)
        except Exception:  # one bad event must not kill the observer thread
            log.exception("handling %s failed", changes)


class Watcher:
    """A watchdog observer on the vault's folders, feeding ``sink`` with changes.

    The folders are watched recursively; the vault root non-recursively, so a daily/
    or resource/ folder created after start-up is picked up (the root's other entries,
    ``.vaultlink`` included, cause no events below them).
    """

    def __init__(self, vault: Vault, sink: Callable[[list[Change]], None]) -> None:
        self.vault = vault
        self.layout = Layout.of(vault)
        self.sink = sink
        self._observer: BaseObserver | None = None
        self._watched: dict[str, ObservedWatch] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the observer thread."""
        self._observer = Observer()
        self._observer.name = "vaultlink-watch"
        self._observer.daemon = True
        handler = _Handler(self.layout, self._on_changes)
        self._handler = handler
        self._observer.schedule(_RootHandler(self), str(self.vault.root), recursive=False,
                                event_filter=[DirCreatedEvent, DirMovedEvent])
        for folder in self._folders():
            self._watch(folder)
        self._observer.start()

    def stop(self) -> None:
        """Stop the observer and wait for its thread."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    def _folders(self) -> Sequence[str]:
        return (self.vault.daily, self.vault.resource, self.vault.digest)

    def _watch(self, folder: str, again: bool = False) -> bool:
        path = self.vault.root / folder
        with self._lock:
            if self._observer is None or not path.is_dir():
                return False
            old = self._watched.get(folder)
            if old is not None:
                if not again:
                    return False
                # the folder was deleted or moved away and is back: its old inotify
                # watch died with it
                with contextlib.suppress(KeyError, OSError):
                    self._observer.unschedule(old)
            self._watched[folder] = self._observer.schedule(
                self._handler, str(path), recursive=True, event_filter=WATCHED_EVENTS)
        log.info("watching %s", path)
        return True

    def _on_changes(self, changes: list[Change]) -> None:
        self.sink(changes)

    def folder_appeared(self, name: str) -> None:
        """A top-level folder was created: watch it if it is one of ours, and report it."""
        if name in self._folders() and self._watch(name, again=True):
            kind = self.layout.folder(name) or "daily"
            self.sink([Change(name, kind, is_dir=True)])


class _RootHandler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        raw = RawEvent.of(event)
        path = raw.dest if raw.kind == "moved" else raw.src
        if raw.is_dir and os.path.dirname(path) == str(self.watcher.vault.root):
            self.watcher.folder_appeared(os.path.basename(path))
