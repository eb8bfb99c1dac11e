"""What the daemon reconciles with the vault: at start-up, what happened while it was
off (a killed run's writes recovered, digest edits indexed, changed notes queued); while
it runs, source notes renamed outside Obsidian (their checkpoint and digest links follow).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from vaultlink.daemon.watch import current_hash
from vaultlink.errors import VaultlinkError
from vaultlink.index.nodes import NodeIndex
from vaultlink.pipeline.backfill import changed_notes
from vaultlink.pipeline.recovery import recover
from vaultlink.pipeline.renames import relink
from vaultlink.vault.atomic import recover_work_files
from vaultlink.vault.checkpoints import unchanged_since
from vaultlink.vault.notes import STATE_DIR, Vault
from vaultlink.vault.state import Checkpoint, State

if TYPE_CHECKING:  # a type only: the daemon hands its parts in
    from vaultlink.pipeline.compose import Parts

log = logging.getLogger(__name__)


def reconcile_at_start(vault: Vault, parts: Parts, backfill_days: int | None) -> None:
    """Recover what a killed process left, catch the node index up with digest/, and
    queue the notes changed while the daemon was off (ready now)."""
    recover_work_files(vault.root, [vault.digest, STATE_DIR])
    recover(vault, parts.state)  # writes a killed run never journaled
    try:
        if (report := parts.index.sync()).changed:
            log.info("node index caught up with digest/: %s", report)
    except VaultlinkError as exc:
        log.warning("node index sync failed: %s", exc)
    now, queued = time.time(), {i.path for i in parts.state.queue()}
    changed = changed_notes(vault, parts.state, now, backfill_days)
    for path in changed:
        parts.state.enqueue(path, now, 0.0)
    if changed:
        log.info("start-up: %d note(s) changed while the daemon was off (%d new to the "
                 "queue)", len(changed), len(set(changed) - queued))


def follow_renames(vault: Vault, state: State, index: NodeIndex,
                   renames: list[tuple[str, str]]) -> None:
    """Source notes renamed (``old``, ``new``): the new name keeps the checkpoint when the
    text is the same (a rename costs no re-integration), and digest links follow it."""
    for old, new in renames:
        cp = state.checkpoints().get(old)
        if cp is not None and unchanged_since(cp, current_hash(vault.root, new)):
            state.set_checkpoints([Checkpoint(new, cp.hash, cp.sections)])
            state.drop_checkpoints([old])
        try:
            changed = relink(vault, state, old, new)
            if changed:
                index.upsert(changed)
        except VaultlinkError as exc:  # the links stay as they are; check names them
            log.warning("could not follow the rename of %s to %s: %s", old, new, exc)
