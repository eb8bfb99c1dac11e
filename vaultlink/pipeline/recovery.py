"""Crash recovery: the writes a killed process left without their journal row.

:func:`recover` rolls back a digest write whose intent (``vault/journal.py``) is still
recorded after a crash, so the unit is retried and the journal matches the files (an
undo group all-or-nothing the same way); the CLI calls it before every command that
writes, the daemon at start (docs/pipeline.md).
"""

from __future__ import annotations

import logging

from vaultlink.errors import VaultError, WriteConflict
from vaultlink.pipeline.history import ABSENT, write_or_delete
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

log = logging.getLogger(__name__)


def recover(vault: Vault, state: State) -> list[str]:
    """Roll back writes a killed process made without journaling them; returns the paths.

    An intent whose file holds what its writer wrote goes back to the text before (the
    unit is retried, the undo is all or nothing); a file holding anything else is the
    user's newer edit and stays.
    """
    restored: list[str] = []
    for intent in state.intents():
        try:
            raw = vault.read_bytes(intent.path)
            now: str | None = raw.decode("utf-8", "replace")
            mark = content_hash(raw)
        except VaultError:
            now, mark = None, ABSENT
        if now != intent.before_text and mark in intent.written:
            try:
                write_or_delete(vault, intent.path, now, intent.before_text)
                restored.append(intent.path)
            except (WriteConflict, VaultError, OSError) as exc:
                log.warning("could not roll back %s (%s); left as it is", intent.path, exc)
        state.settle([intent.path])
    if restored:
        log.warning("rolled back %d write(s) a killed run never journaled (its units are "
                    "retried): %s", len(restored), ", ".join(restored))
    return restored


# -- renamed source notes -------------------------------------------------------
