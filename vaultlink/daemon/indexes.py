"""Keeping a long-running daemon's search indexes whole: healed when their store lost
vectors, brought up to date after each run.

Every run that writes leaves the section index current (``keep_sections_current``),
so the first ``search`` after it answers at once instead of indexing on the spot.

The index is derived data, so the daemon heals it instead of failing run after run. Its
vectors live in state.sqlite with their docs (embedded: nothing can go out of step), or
on a Chroma server (``index.chroma.mode: http``), which can be restarted empty or lose
writes while the daemon runs. Before each run the daemon compares what the server holds
with the journal of state.sqlite (a count and the collection's id); when they differ it
heals the node index (only what the server lacks is embedded again) before the run
recalls from it; the section index heals at its next sync.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultlink.errors import VaultlinkError
from vaultlink.options import PipelineOptions

if TYPE_CHECKING:  # a type only: the daemon hands its parts in
    from vaultlink.pipeline.compose import Parts

log = logging.getLogger(__name__)


def heal_index(parts: Parts, options: PipelineOptions) -> bool:
    """On a Chroma server: heal the node index if the server lost or gained vectors since
    the last run; True if so. A server that does not answer is left to the run, which
    stops with a clear error and keeps the notes queued."""
    if options.chroma_mode != "http":
        return False  # the vectors are in state.sqlite, in step with their docs
    index = parts.indexes.nodes
    try:
        if not index.out_of_step():
            return False
        log.warning("the Chroma server does not hold what the node index journaled; "
                    "healing it")
        index.sync()
    except VaultlinkError as exc:
        log.warning("checking the node index on the Chroma server: %s", exc)
        return False
    return True


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


# A missed watcher event, or a link target outside the watched folders, shows in search
# after at most this long.
SECTIONS_RECHECK_SECONDS = 60.0


@dataclass
class SectionsSynced:
    """When a search last brought the section index up to date. A search syncs it only
    after the watcher saw a change (the daemon's ``generation`` moved) or
    ``SECTIONS_RECHECK_SECONDS`` later: walking a large vault for changes cost most of
    each search's time (docs/performance.md, "`search` at 10,000 notes")."""

    generation: int | None = None
    at: float = 0.0

    def due(self, generation: int, now: float) -> bool:
        """Whether a search at ``now`` (monotonic seconds) must sync first."""
        return self.generation != generation or now - self.at >= SECTIONS_RECHECK_SECONDS

    def done(self, generation: int, now: float) -> None:
        """A sync that started at ``generation`` and ``now`` finished."""
        self.generation, self.at = generation, now
