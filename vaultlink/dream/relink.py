"""Following a source note's rename in the digest, so no written link breaks.

Obsidian rewrites links when a note is renamed inside the app, but a rename outside it
(a file manager, ``mv``, a sync tool), or one that lands while a run is writing a node
citing the old name, leaves digest links pointing at nothing. When the daemon sees a
daily/ or resource/ note moved, every digest node (and topics page) whose link named
the old path is rewritten to name the new one: compare-and-swap, journaled as a
``RELINK`` row, so it is explained, and undone never (an undo would break the link).
The user's own notes are never touched.
"""

from __future__ import annotations

import logging

from vaultlink.errors import VaultError, WriteConflict
from vaultlink.markdown.links import LinkResolver, find_wikilinks, render_link
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.graph import build_graph
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import Row, State, diff_of

log = logging.getLogger(__name__)


def relinked(text: str, source: str, old: str, new: str, files: set[str]) -> str:
    """``text`` with each link that named ``old`` (before the rename) naming ``new``."""
    before = LinkResolver(files | {old})
    out = text
    for link in find_wikilinks(text):
        if before.resolve(link.target, source).path != old:
            continue
        fresh = render_link(new, link.anchor, link.alias)
        out = out.replace(link.raw, ("!" if link.raw.startswith("!") else "") + fresh)
    if source.split("/", 2)[1:2] == ["topics"]:
        out = out.replace(f"- {old}\n", f"- {new}\n")  # its frontmatter lists evidence
    return out


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
        rows.append(Row(None, {"name": "rename", "paths": [new]}, "RELINK", source,
                        f"followed the rename of {old} to {new}",
                        diff_of(source, text, fresh), text, fresh))
    if rows:
        for row in rows:  # one row each: every node is its own compare-and-swap
            state.journal_add_group([row], grouped=False)
        log.info("followed the rename of %s to %s in %d digest note(s)", old, new,
                 len(rows))
    return changed
