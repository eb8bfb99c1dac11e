"""The owner's edits of digest nodes: re-indexed once they settle, not at each event.

The watcher reports every change under digest/; the daemon's own writes are recognised
(``watch.OwnWrites``) and the rest are the user's. Each waits ``DIGEST_SETTLE`` seconds
(a folder change: the whole node index is synced) so an editor's save burst costs one
re-index.
"""

from __future__ import annotations

import threading

DIGEST_SETTLE = 2.0  # seconds a user-edited digest node waits before re-indexing


class DigestEdits:
    """Digest paths (or the whole folder) waiting to be re-indexed, each with its time."""

    def __init__(self) -> None:
        self._mu = threading.Lock()
        self._due: dict[str, float] = {}
        self._all: float | None = None

    def edited(self, path: str, now: float) -> None:
        """A node changed (not by the daemon): re-index it once it settles."""
        with self._mu:
            self._due[path] = now + DIGEST_SETTLE

    def folder_changed(self, now: float) -> None:
        """A folder under digest/ changed: sync the whole node index once it settles."""
        with self._mu:
            self._all = now + DIGEST_SETTLE

    def take_due(self, now: float) -> tuple[list[str], bool, float | None]:
        """The paths settled by ``now``, whether the whole index is due, and when the
        next one settles (None: nothing waits)."""
        with self._mu:
            due = [p for p, t in self._due.items() if t <= now]
            for p in due:
                del self._due[p]
            full = self._all is not None and self._all <= now
            if full:
                self._all = None
            later = [t for t in (*self._due.values(), self._all) if t is not None]
        return due, full, min(later) if later else None
