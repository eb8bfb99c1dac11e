"""Upkeep of a long-running daemon: its search indexes, and renamed source notes.

Every run that writes leaves the section index current (``keep_sections_current``),
so the first ``search`` after it answers at once instead of indexing on the spot.

The index is derived data, so the daemon heals it instead of failing run after run. A
Chroma store deleted under a running daemon still answers reads from the files it
holds open, but every write fails, so new nodes would silently drop out of recall
(and be duplicated later). A store overwritten with garbage fails on its next read.
Before each run the daemon checks the store it opened is still there and still a
database; if not, it closes the client, reopens (``store.open_chroma`` sets a damaged
store aside) and resyncs both indexes from the vault, with a log line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vaultlink.daemon.watch import current_hash
from vaultlink.dream.upkeep import relink
from vaultlink.errors import VaultlinkError
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.recall import open_recall
from vaultlink.options import PipelineOptions
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import Checkpoint, State

if TYPE_CHECKING:  # a type only: the daemon hands its parts in
    from vaultlink.dream.compose import Parts

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"


def store_damage(state_dir: Path) -> str | None:
    """Why the embedded Chroma store under ``state_dir`` is unusable, or None."""
    db = state_dir / "chroma" / "chroma.sqlite3"
    try:
        with open(db, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return "was deleted"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None if head == SQLITE_HEADER else "is damaged (not a database any more)"


def heal_index(parts: Parts, options: PipelineOptions) -> bool:
    """Rebuild the indexes from the vault if their store is gone or damaged; True if so."""
    if options.chroma_mode != "embedded":
        return False  # a Chroma server looks after its own files
    why = store_damage(parts.vault.state_dir)
    if why is None:
        return False
    log.warning("the search index (.vaultlink/chroma) %s while the daemon ran; rebuilding "
                "it from the vault", why)
    parts.indexes.close()
    parts.indexes = open_recall(parts.vault, options)
    for index in (parts.indexes.nodes, parts.indexes.chunks):
        try:
            index.sync()
        except VaultlinkError as exc:
            log.warning("rebuilding the %s index: %s", index.kind, exc)
    log.warning("the search index is rebuilt from the vault")
    return True


def follow_moves(vault: Vault, state: State, index: NodeIndex,
                 moves: list[tuple[str, str]]) -> None:
    """Source notes renamed (``old``, ``new``): the new name keeps the checkpoint when the
    text is the same (a rename costs no re-integration), and digest links follow it."""
    for old, new in moves:
        cp = state.checkpoints().get(old)
        if cp is not None and cp.hash == current_hash(vault.root, new):
            state.set_checkpoints([Checkpoint(new, cp.hash, cp.sections)])
            state.drop_checkpoints([old])
        try:
            changed = relink(vault, state, old, new)
            if changed:
                index.upsert(changed)
        except VaultlinkError as exc:  # the links stay as they are; check names them
            log.warning("could not follow the rename of %s to %s: %s", old, new, exc)


class _Stopping(Exception):
    """The daemon is stopping: a long section sync gives way (what it stored stays)."""


def keep_sections_current(parts: Parts, stopping: Callable[[], bool]) -> None:
    """Bring the section index (``search``) up to date after a run wrote the vault."""
    def give_way(done: int, total: int) -> None:
        if stopping():
            raise _Stopping

    try:
        parts.indexes.chunks.sync(give_way)
    except _Stopping:
        log.info("section index sync left for the next run: the daemon is stopping")
    except VaultlinkError as exc:  # search syncs on demand all the same
        log.warning("could not update the section index: %s", exc)
