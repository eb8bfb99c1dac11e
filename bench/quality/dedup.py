"""Dedup: is the similarity call right on labelled unit/node pairs, and where to cut.

Every unit of ``data/dedup_pairs.json`` is searched exactly as the offline policy
searches (``unit_query``, limit 50) over an index of ``data/link_vault``; the
similarity of each labelled node is read from the hits. ``same_abstraction`` is
called at ``sim >= same_threshold``; a link (related, or same) at ``sim >=
related_threshold``. The sweep picks the threshold with the best F1 (the middle of
the best plateau, so a small shift in the embedder does not fall off a cliff).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.quality.common import DATA, PRF, node_index, prf
from vaultlink.index.embed import Embedder
from vaultlink.pipeline.offline import unit_query
from vaultlink.prose.units import Unit

GRID = [round(0.10 + 0.01 * i, 2) for i in range(86)]  # 0.10 .. 0.95


@dataclass
class DedupResult:
    """Labelled similarities and the sweep's choice."""

    rows: list[tuple[str, float]]  # (label, similarity)
    same_best: float
    same_best_prf: PRF
    related_best: float
    related_best_prf: PRF

    def at(self, same: float, related: float) -> tuple[PRF, PRF]:
        """P/R/F1 of both calls at given thresholds."""
        return (prf([(lab == "same_abstraction", sim >= same) for lab, sim in self.rows]),
                prf([(lab != "unrelated", sim >= related) for lab, sim in self.rows]))


def labelled_similarities(embedder: Embedder) -> list[tuple[str, float]]:
    """(label, similarity) for every labelled pair."""
    data = json.loads((DATA / "dedup_pairs.json").read_text())
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(DATA / "link_vault", root)
        with node_index(root, embedder) as index:
            for u in data["units"]:
                query = unit_query(Unit(u["name"], "wiki", u["summary"], []))
                sims = {h.path: h.similarity for h in index.node_search(query, 50)}
                rows += [(label, sims.get(path, 0.0)) for path, label in u["labels"].items()]
    return rows


def best_threshold(rows: list[tuple[str, float]], positive: set[str]) -> tuple[float, PRF]:
    """The F1-maximising threshold (middle of the best plateau) and its scores."""
    scored = [(t, prf([(lab in positive, sim >= t) for lab, sim in rows])) for t in GRID]
    top = max(s.f1 for _, s in scored)
    plateau = [t for t, s in scored if s.f1 >= top - 1e-9]
    # the longest run of consecutive grid points at the top, then its middle
    runs: list[list[float]] = []
    for t in plateau:
        if runs and abs(t - runs[-1][-1] - 0.01) < 1e-6:
            runs[-1].append(t)
        else:
            runs.append([t])
    run = max(runs, key=len)
    choice = run[(len(run) - 1) // 2]
    return choice, dict(scored)[choice]


def run_dedup(embedder: Embedder) -> DedupResult:
    """Similarities of every pair and the best thresholds."""
    rows = labelled_similarities(embedder)
    same_t, same_s = best_threshold(rows, {"same_abstraction"})
    rel_t, rel_s = best_threshold(rows, {"same_abstraction", "related"})
    return DedupResult(rows, same_t, same_s, rel_t, rel_s)
