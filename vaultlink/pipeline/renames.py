"""Renames: digest links that followed a source note renamed outside Obsidian.

:func:`relink` rewrites the digest links (and topics page entries) that named the old
path to name the new one: compare-and-swap, journaled as a ``RELINK`` row. The user's
own notes are never touched (docs/pipeline.md).
"""

from __future__ import annotations

import logging

from vaultlink.errors import VaultError, WriteConflict
from vaultlink.markdown.links import relinked
from vaultlink.vault.actions import Action
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.graph import build_graph
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import Row, State, diff_of

log = logging.getLogger(__name__)


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
