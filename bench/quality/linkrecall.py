"""Link recovery backtest on a vault of human-linked notes (``data/link_vault``).

The links between notes are hidden (each ``[[target|alias]]`` becomes its display
text, the target's name when there is no alias), the index is rebuilt, and every note
searches with its own name and description, as a new unit would. Reported:

* recall@20: share of a note's hidden outlinks among its top 20 hits (itself
  excluded), averaged over notes;
* the links the offline integrator would weave into a new node (hits at or above
  ``related_threshold``, at most ``MAX_RELATED``): precision counts a woven link as
  right when the two notes were linked in either direction (a relation has no
  direction), recall is the share of the note's own outlinks that get woven.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.quality.common import DATA, node_index
from vaultlink.index.embed import Embedder
from vaultlink.markdown.links import find_wikilinks
from vaultlink.pipeline.offline import unit_query
from vaultlink.pipeline.offline.policy import MAX_RELATED
from vaultlink.prose.units import Unit
from vaultlink.vault.notes import Vault, parse_note, render_note

_LINK = re.compile(r"!?\[\[([^\[\]\n|#]+)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")


@dataclass
class LinkResult:
    """The numbers of the backtest."""

    notes: int
    links: int
    recall_at_20: float
    woven: int
    woven_precision: float
    woven_recall: float
    per_note_woven: float


def hide_links(root: Path) -> dict[str, set[str]]:
    """Replace every wikilink by its text; returns each note's hidden outlink targets."""
    vault = Vault(root)
    paths = [p for p in vault.iter_files(["digest"]) if p.endswith(".md")]
    names = {p: str(vault.read_note(p).frontmatter.get("name", "")) for p in paths}
    targets: dict[str, set[str]] = {}
    for rel in paths:
        note = parse_note(rel, (root / rel).read_bytes())
        targets[rel] = {link.target for link in find_wikilinks(note.body)
                        if link.target in names and link.target != rel}

        def text(m: re.Match[str]) -> str:
            return m.group(2) or names.get(m.group(1), m.group(1)).lower()

        (root / rel).write_text(render_note(dict(note.frontmatter), _LINK.sub(text, note.body)))
    return targets


def run_link_recall(embedder: Embedder, related_threshold: float) -> LinkResult:
    """Hide the links, search for every note, compare with what the humans linked."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(DATA / "link_vault", root)
        outlinks = hide_links(root)
        either = {p: set(t) for p, t in outlinks.items()}
        for src, tgts in outlinks.items():
            for t in tgts:
                either[t].add(src)
        vault = Vault(root)
        recalls: list[float] = []
        tp = woven = found = 0
        with node_index(root, embedder) as index:
            for rel in sorted(outlinks):
                meta = vault.read_note(rel).frontmatter
                unit = Unit(rel.rsplit("/", 1)[-1][:-3], rel.split("/")[1],
                            f"{meta.get('name', '')}. {meta.get('description', '')}", [])
                hits = [h for h in index.node_search(unit_query(unit), 21) if h.path != rel]
                top = {h.path for h in hits[:20]}
                if outlinks[rel]:
                    recalls.append(len(top & outlinks[rel]) / len(outlinks[rel]))
                picked = [h.path for h in sorted(hits, key=lambda h: -h.similarity)
                          if h.similarity >= related_threshold][:MAX_RELATED]
                woven += len(picked)
                tp += sum(p in either[rel] for p in picked)
                found += sum(p in outlinks[rel] for p in picked)
        total = sum(len(t) for t in outlinks.values())
        return LinkResult(len(outlinks), total, sum(recalls) / max(len(recalls), 1), woven,
                          tp / woven if woven else 1.0, found / total if total else 1.0,
                          woven / max(len(outlinks), 1))
