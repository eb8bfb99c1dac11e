"""From search hits to ranked sessions, and session-level recall.

A hit on a day note is its session. A hit on a digest node stands for the sessions its
``## Sources`` section links, in the order they are written there (a node without that
section: every day note it links). Sessions are ranked by their best hit and counted
once: a node citing six sessions takes six places. A question counts at k only when all
its evidence sessions are among the top k sessions (R@k); any@k when at least one is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from statistics import mean

from bench.quality.locomo.vault import Layout
from vaultlink.markdown.text import heading_title

_LINK = re.compile(r"\[\[([^\]]+?)\]\]")
_H2 = re.compile(r"^##[ \t]+(.*)$")
GROUPS: dict[str, tuple[int, ...]] = {"1": (1,), "2": (2,), "3": (3,), "4": (4,), "5": (5,),
                                      "1-4": (1, 2, 3, 4), "1-5": (1, 2, 3, 4, 5)}
KS = (5, 10)


def sources_lines(text: str) -> list[str]:
    """The lines of a node's ``## Sources`` section (empty list: it has none)."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        m = _H2.match(line)
        if m:
            inside = heading_title(m.group(1)).strip().lower() == "sources"
            continue
        if inside:
            out.append(line)
    return out


def cited_sessions(text: str, layout: Layout) -> list[int]:
    """The sessions a digest node cites, in the order its Sources (else its body) names them."""
    lines = sources_lines(text) or text.splitlines()
    out: list[int] = []
    for line in lines:
        for m in _LINK.finditer(line):
            n = layout.session_of_link(m.group(1))
            if n is not None and n not in out:
                out.append(n)
    return out


def node_reader(root: Path, layout: Layout) -> Callable[[str], list[int]]:
    cache: dict[str, list[int]] = {}

    def read(path: str) -> list[int]:
        if path not in cache:
            try:
                cache[path] = cited_sessions((root / path).read_text("utf-8"), layout)
            except OSError:
                cache[path] = []
        return cache[path]
    return read


def ranked_sessions(paths: Iterable[str], layout: Layout,
                    cites: Callable[[str], list[int]]) -> list[int]:
    """Sessions in the order of their best hit, each once."""
    out: list[int] = []
    for path in paths:
        found = [layout.session_of[path]] if path in layout.session_of else cites(path)
        for n in found:
            if n not in out:
                out.append(n)
    return out


def score(ranked: list[int], evidence: set[int]) -> dict[str, float]:
    """R@5, R@10 (all evidence sessions in the top k), any@5, any@10."""
    out: dict[str, float] = {}
    for k in KS:
        top = set(ranked[:k])
        out[f"R@{k}"] = float(evidence <= top)
        out[f"any@{k}"] = float(bool(evidence & top))
    return out


def aggregate(rows: list[dict], system: str, convs: Iterable[str]) -> dict[str, dict]:
    """Mean of each measure per category group, over the questions of ``convs``."""
    wanted = set(convs)
    table: dict[str, dict] = {}
    for name, cats in GROUPS.items():
        sel = [r[system] for r in rows if r["conv"] in wanted and r["category"] in cats
               and system in r]
        table[name] = {"n": len(sel), **{m: (round(mean(s[m] for s in sel), 4) if sel else None)
                                         for m in ("R@5", "R@10", "any@5", "any@10")}}
    return table
