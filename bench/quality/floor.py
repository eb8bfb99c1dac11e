"""The relevance floor of ``node-search`` and ``search``: where to cut the long tail.

On ``data/link_vault`` (human-linked notes, links hidden as in ``linkrecall``) every
note searches with its own name and description. A hit is *related* when the two notes
were linked (either direction). For each candidate floor on the cosine similarity it
prints the share of related hits kept and of the other hits dropped; the floor is the
highest that keeps at least ``KEEP`` of the related ones (the best
``KEYWORD_RANKS_KEPT`` keyword matches are kept whatever their similarity, as the CLI
does).

    python -m bench.quality.floor
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.quality.common import DATA, node_index
from bench.quality.linkrecall import hide_links
from vaultlink.index.embed import make_embedder
from vaultlink.index.fusion import KEYWORD_RANKS_KEPT
from vaultlink.pipeline.offline import unit_query
from vaultlink.prose.units import Unit
from vaultlink.vault.notes import Vault

KEEP = 0.98
FLOORS = [round(0.05 * i, 2) for i in range(0, 11)]


def similarities() -> list[tuple[float, bool, bool]]:
    """(similarity, related, kept by its keyword rank) of every hit of every search."""
    out: list[tuple[float, bool, bool]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(DATA / "link_vault", root)
        outlinks = hide_links(root)
        either = {p: set(t) for p, t in outlinks.items()}
        for src, tgts in outlinks.items():
            for t in tgts:
                either[t].add(src)
        vault = Vault(root)
        embedder = make_embedder("local", "minilm-l6-v2-int8", "", 30.0)
        with node_index(root, embedder) as index:
            for rel in sorted(outlinks):
                meta = vault.read_note(rel).frontmatter
                unit = Unit(rel.rsplit("/", 1)[-1][:-3], rel.split("/")[1],
                            f"{meta.get('name', '')}. {meta.get('description', '')}", [])
                for h in index.node_search(unit_query(unit), 50):
                    if h.path != rel:
                        out.append((h.similarity, h.path in either[rel],
                                    0 < h.keyword_rank <= KEYWORD_RANKS_KEPT))
    return out


def main() -> None:
    hits = similarities()
    related = [h for h in hits if h[1]]
    other = [h for h in hits if not h[1]]
    print(f"{len(hits)} hits, {len(related)} related; similarity of related hits: "
          f"min {min(s for s, _, _ in related):.2f}")
    print(f"{'floor':>6} {'related kept':>13} {'others dropped':>15} {'hits kept':>10}")
    best = 0.0
    for floor in FLOORS:
        def kept(group: list[tuple[float, bool, bool]], f: float = floor) -> int:
            return sum(1 for s, _, kw in group if kw or s >= f)
        share = kept(related) / len(related)
        if share >= KEEP:
            best = floor
        print(f"{floor:6.2f} {share:13.1%} {1 - kept(other) / len(other):15.1%} "
              f"{kept(hits) / len(hits):10.1%}")
    print(f"\nfloor keeping >= {KEEP:.0%} of related hits: {best:.2f}")


if __name__ == "__main__":
    main()
