"""Writes that keep the vault whole outside a decision: crash recovery and renames.

:func:`recover` rolls back a digest write whose intent (``vault/journal.py``) is still
recorded after a crash, so the unit is retried and the journal matches the files (an
undo group all-or-nothing the same way); the CLI calls it before every command that
writes. :func:`relink` rewrites the digest links (and topics page entries) that named a
source note renamed outside Obsidian: compare-and-swap, journaled as a ``RELINK`` row.
The user's own notes are never touched (docs/pipeline.md).
"""

from __future__ import annotations

import logging

from vaultlink.errors import VaultError, WriteConflict
from vaultlink.markdown.links import relinked
from vaultlink.pipeline.history import ABSENT, write_or_delete
from vaultlink.vault.actions import Action
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.graph import build_graph
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import Row, State, diff_of

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



def relink(vault: Vault, state: State, old: str, new: str) -> list[str]:
    """Rewrite digest links to ``old`` (renamed) as links to ``new``; the nodes changed."""
    graph = build_graph(vault)
    files = set(vault.iter_files())
    stem = old.rsplit("/", 1)[-1].removesuffix(".md")
    changed: list[str] = []
    rows: list[Row] = []
    for source, text in sorted(graph.texts.items()):
        if vault.folder_of(source) != "digest" or stem not in text:
            continue  # a link naming the old note holds at least its file name
        fresh = relinked(text, source, old, new, files)
        if fresh == text:
            continue
        state.intend(source, text, content_hash(fresh.encode("utf-8")))
        try:
            vault.write(source, fresh, content_hash(text.encode("utf-8")))
        except (WriteConflict, VaultError) as exc:
            state.settle([source])
            log.warning("could not follow the rename of %s in %s: %s", old, source, exc)
            continue
        changed.append(source)
        rows.append(Row(None, {"name": "rename", "paths": [new]}, Action.RELINK, source,
                        f"followed the rename of {old} to {new}",
                        diff_of(source, text, fresh), text, fresh))
    if rows:
        for row in rows:  # one row each: every node is its own compare-and-swap
            state.journal_add_group([row], grouped=False)
        log.info("followed the rename of %s to %s in %d digest note(s)", old, new,
                 len(rows))
    return changed
