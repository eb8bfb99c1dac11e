"""node_search recall on real documentation pages, against a plain BM25 + dense baseline.

    .venv/bin/python -m bench.quality.realrecall                     # linkdocs, a few minutes
    .venv/bin/python -m bench.quality.realrecall --corpus realdocs   # the 70 pages, 10 s
    .venv/bin/python -m bench.quality.realrecall --corpus langdocs   # per language
    .venv/bin/python -m bench.quality.realrecall --json

The sample vault's link recall (``bench/quality/linkrecall.py``) is saturated at 0.99:
it can no longer tell a better recall from a worse one. This benchmark is harder and was
written by nobody here: real documentation pages with the pages' own links as the
truth. Two corpora: ``linkdocs`` (the default; see its SOURCES.md), sets large enough
that recall@20 is far from saturated, and ``realdocs``, the 70 pages (hatch,
Python-Markdown, fastify) the digest benchmark also reads, where telling three small
sets apart already earns most of recall@20.

* A digest node per page: ``name`` is the page title (the manifest's: a page's H1, or
  its front matter's ``title`` in langdocs), ``description`` its first sentence of prose,
  the body the page's text without its front matter and with its links to other pages
  turned into their labels (``realdocs.write_as_vault`` does the same), so the answer is
  not in it. The embedder and ``index.body_chars`` are the settings' (defaults and
  ``VAULTLINK_*`` variables), read by the product's ``load_settings``.
* ``--corpus langdocs`` has a language axis: each language its own vault
  (``realrecall_lang.py``), one row per language.
* Each node searches with ``name + description``, as a new unit about that page would.
* Truth: the pages it links to or that link to it (``realdocs.truth_pairs``); pages in
  no pair are left out of the mean.
* recall@K: the share of a page's truth among its top K hits (itself left out), averaged.

In the same run, with the same embedder, the **baseline**: plain BM25 (FTS5 defaults,
every query word OR'ed) over each whole node (name, description, all of the body) and
exact cosine search over the vectors of the same text (MiniLM reads its first 256
tokens), fused by RRF (k = 60, equal weights). ``node_search`` is the real
``NodeIndex`` (MiniLM, SQLite vectors and FTS5) as the pipeline opens it.

Every link stays inside its set, so telling the sets apart earns some recall for free:
the "same-set chance" row (the own set first, in a random order) is that floor. With
realdocs' sets of 21-25 pages it is 0.89 at @20.

The "page's own node left out" row asks as a unit about a subject that has no node yet
would: before each page searches, its node is removed from the index (and put back
after), so no recall can come from finding the page itself first.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # `python bench/quality/realrecall.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.quality.realdocs import Page, load_corpus, truth_pairs, unlink
from bench.quality.realdocs._build import corpora
from vaultlink.cli.settings import load_settings, model_cache_dir
from vaultlink.index.embed import Embedder, make_embedder
from vaultlink.index.fusion import rrf_fuse
from vaultlink.index.nodes import NodeIndex
from vaultlink.markdown.frontmatter import render_frontmatter, split_frontmatter
from vaultlink.vault.notes import Vault

_FENCE = re.compile(r"^\s*(```|~~~)")
_SKIP_LINE = re.compile(r"^\s*(#|<|>|\||-{3,}\s*$|={3,}\s*$|\*{3,}\s*$|\[[^\]]+\]:|!\[)")
_INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_MARKUP = re.compile(r"[*_`]+")
_WORD = re.compile(r"\w+")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)  # site metadata, not prose


def first_sentence(text: str) -> str:
    """The first sentence of the page's first prose paragraph, without Markdown markup.

    Headings (ATX and setext), HTML and its comments, block quotes (admonitions), tables,
    rules, code blocks and reference definitions are not prose; a list item is, without
    its marker.
    """
    paragraph: list[str] = []
    in_code = False
    lines = _HTML_COMMENT.sub("", text).splitlines()
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_code = not in_code
            if paragraph:
                break
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        setext = re.match(r"^\s*(=+|-+)\s*$", nxt) is not None and line.strip() != ""
        if in_code or setext or _SKIP_LINE.match(line) or line.startswith("    "):
            if paragraph:
                break
            continue
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(re.sub(r"^\s*([-*+]|\d+\.)\s+", "", line).strip())
    prose = " ".join(paragraph)
    prose = _INLINE_LINK.sub(r"\1", prose)
    prose = _REF_LINK.sub(r"\1", prose)
    prose = " ".join(_MARKUP.sub("", prose).split())
    return _first_of(prose)


def _first_of(prose: str) -> str:
    """The first sentence of ``prose``: up to ". ", "! " or "? " before a capital letter,
    a parenthesis or a quote (in any script), or up to a CJK full stop (no space after)."""
    for i, ch in enumerate(prose):
        if ch in "。！？":
            return prose[: i + 1]
        if ch in ".!?" and i + 2 < len(prose) and prose[i + 1] == " ":
            nxt = prose[i + 2]
            if nxt.isupper() or nxt in "(`\"'":
                return prose[: i + 1]
    return prose


@dataclass(frozen=True)
class RealNode:
    """One page as a digest node."""

    page: str  # corpus path
    rel: str  # vault path of the node
    name: str
    description: str
    body: str

    @property
    def query(self) -> str:
        """What this page's node searches with: name + description."""
        return f"{self.name}: {self.description}" if self.description else self.name


def real_nodes(pages: Sequence[Page]) -> list[RealNode]:
    """A digest node per page, links to other pages removed from the body."""
    by_set: dict[str, set[str]] = {}
    for p in pages:
        by_set.setdefault(p.set, set()).add(p.original_path)
    out = []
    for p in pages:
        slug = p.path.removesuffix(".md").replace("/", "-").lower()
        # a page as published may open with front matter: a node's body never does
        body = split_frontmatter(unlink(p.text, p.original_path, by_set[p.set]))[1]
        out.append(RealNode(p.path, f"digest/wiki/{slug}.md", p.title, first_sentence(body),
                            body))
    return out


def write_nodes(root: Path, nodes: Sequence[RealNode]) -> None:
    """The nodes as ``digest/wiki/*.md`` files of a vault at ``root``."""
    for n in nodes:
        path = root / n.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_frontmatter({"name": n.name, "description": n.description},
                                           n.body), encoding="utf-8")


def truth_by_page(pages: Sequence[Page], pairs: set[frozenset[str]]) -> dict[str, set[str]]:
    """Each page's truth: the pages it links to or that link to it."""
    truth: dict[str, set[str]] = {p.path: set() for p in pages}
    for pair in pairs:
        a, b = sorted(pair)
        truth[a].add(b)
        truth[b].add(a)
    return truth


def recall_at(ranked: dict[str, list[str]], truth: dict[str, set[str]], k: int) -> float:
    """Mean share of each page's truth among its top ``k`` (pages with no truth left out)."""
    values = [len(set(ranked[p][:k]) & t) / len(t) for p, t in truth.items() if t]
    return statistics.fmean(values) if values else 0.0


class Baseline:
    """Plain BM25 (FTS5 defaults) and exact cosine over the same texts, fused by RRF."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], embedder: Embedder) -> None:
        self.ids = list(ids)
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
        self.db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)",
                            [(i, text) for i, text in enumerate(texts)])
        self.embedder = embedder
        self.matrix = np.asarray(embedder.embed(list(texts)), dtype=np.float32)

    def bm25(self, query: str, depth: int) -> list[str]:
        """Ids by BM25, best first: every query word OR'ed, FTS5's default ranking."""
        words = sorted({w.lower() for w in _WORD.findall(query)})
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?",
                               (match, depth))
        return [self.ids[r[0]] for r in rows]

    def dense(self, query: str, depth: int) -> list[str]:
        """Ids by cosine similarity of the query's vector, best first."""
        vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        order = np.argsort(-(self.matrix @ vector))[:depth]
        return [self.ids[int(i)] for i in order]

    def search(self, query: str, depth: int = 50) -> list[str]:
        """BM25 and dense fused by RRF (k = 60, weight 1 each)."""
        fused = rrf_fuse(self.dense(query, depth), self.bm25(query, depth),
                         vector_weight=1.0, keyword_weight=1.0)
        return [key for key, _ in fused]


def same_set_chance(pages: Sequence[Page], truth: dict[str, set[str]], k: int) -> float:
    """recall@k of a ranking that puts the page's own set first, in random order.

    Every link stays inside its set, so this is what telling the three sets apart
    earns with no notion of which pages of a set relate: the floor a useful recall
    must clear, and with sets of 21-25 pages it is already high at k = 20.
    """
    size = {s: sum(1 for p in pages if p.set == s) for s in {p.set for p in pages}}
    set_of = {p.path: p.set for p in pages}
    values = [min(k, size[set_of[p]] - 1) / (size[set_of[p]] - 1)
              for p, t in truth.items() if t]
    return statistics.fmean(values) if values else 0.0


@dataclass
class RealRecall:
    """The figures of one run."""

    corpus: str
    sets: int
    pages: int
    scored: int
    truth_pairs: int
    recall_at_20: float
    recall_at_10: float
    recall_at_5: float
    left_out_at_20: float
    left_out_at_10: float
    baseline_at_20: float
    baseline_at_10: float
    bm25_at_20: float
    dense_at_20: float
    same_set_chance_at_20: float
    same_set_chance_at_10: float
    node_search_p50_ms: float
    seconds: float
    language: str = ""  # the set, on a corpus with a language axis (langdocs)


def ranked_by(search: Callable[[str], list[str]], nodes: Sequence[RealNode],
              depth: int) -> dict[str, list[str]]:
    """Each page's ranked other pages under ``search`` (itself left out)."""
    out = {}
    for n in nodes:
        out[n.page] = [p for p in search(n.query) if p != n.page][:depth]
    return out


def left_out_ranked(index: NodeIndex, root: Path, nodes: Sequence[RealNode],
                    search: Callable[[str], list[str]], depth: int) -> dict[str, list[str]]:
    """Each page's ranked other pages with its own node out of the index while it asks."""
    out = {}
    for n in nodes:
        path = root / n.rel
        data = path.read_bytes()
        path.unlink()
        index.upsert([n.rel])
        try:
            out[n.page] = search(n.query)[:depth]
        finally:
            path.write_bytes(data)
            index.upsert([n.rel])
    return out


def configured_embedder() -> tuple[Embedder, int]:
    """The node embedder and ``index.body_chars`` from the settings (defaults, then
    ``VAULTLINK_*`` variables, e.g. ``VAULTLINK_EMBEDDING__MODEL``), by the product's own
    ``load_settings`` and ``make_embedder``: a model chosen by configuration is measured."""
    with tempfile.TemporaryDirectory() as tmp:
        options = load_settings(Path(tmp)).pipeline()
    embedder = make_embedder(options.embedding_provider, options.embedding_model,
                             options.llm_host, options.timeout, model_cache_dir())
    return embedder, options.body_chars


def run_real_recall(embedder: Embedder, body_chars: int = 1000, corpus: str = "linkdocs",
                    pages: Sequence[Page] | None = None, language: str = "") -> RealRecall:
    """Build both indexes over the corpus (or ``pages`` of it), search for every page,
    score against its links."""
    started = time.monotonic()
    pages = list(pages) if pages is not None else load_corpus(corpora()[corpus].root)
    nodes = real_nodes(pages)
    pairs = truth_pairs(pages)
    truth = truth_by_page(pages, pairs)
    page_of = {n.rel: n.page for n in nodes}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        write_nodes(root, nodes)
        state = root / ".vaultlink"
        index = NodeIndex(Vault(root), state / "state.sqlite", None, embedder,
                          body_chars=body_chars)
        try:
            index.sync()
            # The baseline sees each whole node: name, description and all of the body.
            texts = [f"{n.name}\n{n.description}\n{n.body}" for n in nodes]
            base = Baseline([n.page for n in nodes], texts, embedder)
            times: list[float] = []

            def node_search(query: str) -> list[str]:
                t0 = time.perf_counter()
                hits = index.node_search(query, 21)
                times.append((time.perf_counter() - t0) * 1000)
                return [page_of[h.path] for h in hits]

            ours = ranked_by(node_search, nodes, 20)
            left_out = left_out_ranked(index, root, nodes, node_search, 20)
        finally:
            index.close()
        fused = ranked_by(base.search, nodes, 20)
        bm25 = ranked_by(lambda q: base.bm25(q, 21), nodes, 20)
        dense = ranked_by(lambda q: base.dense(q, 21), nodes, 20)
    return RealRecall(
        corpus=corpus, sets=len({p.set for p in pages}), pages=len(nodes),
        scored=sum(1 for t in truth.values() if t), truth_pairs=len(pairs),
        recall_at_20=recall_at(ours, truth, 20), recall_at_10=recall_at(ours, truth, 10),
        recall_at_5=recall_at(ours, truth, 5),
        left_out_at_20=recall_at(left_out, truth, 20),
        left_out_at_10=recall_at(left_out, truth, 10),
        baseline_at_20=recall_at(fused, truth, 20), baseline_at_10=recall_at(fused, truth, 10),
        bm25_at_20=recall_at(bm25, truth, 20), dense_at_20=recall_at(dense, truth, 20),
        same_set_chance_at_20=same_set_chance(pages, truth, 20),
        same_set_chance_at_10=same_set_chance(pages, truth, 10),
        node_search_p50_ms=statistics.median(times), seconds=time.monotonic() - started,
        language=language)


def report(res: RealRecall) -> str:
    """The table ``python -m bench.quality.realrecall`` prints."""
    gain = res.recall_at_20 - res.baseline_at_20
    rows = [
        ("corpus / sets", f"{res.corpus} / {res.sets}", ""),
        ("pages / scored (in a truth pair) / truth pairs",
         f"{res.pages} / {res.scored} / {res.truth_pairs}", ""),
        ("node_search recall@20", f"{res.recall_at_20:.3f}", "target >= 0.60"),
        ("baseline (BM25 + dense, RRF) recall@20", f"{res.baseline_at_20:.3f}",
         f"node_search {gain:+.3f} (target >= +0.10)"),
        ("node_search recall@10 / @5", f"{res.recall_at_10:.3f} / {res.recall_at_5:.3f}", ""),
        ("baseline recall@10", f"{res.baseline_at_10:.3f}", ""),
        ("page's own node left out: recall@20 / @10",
         f"{res.left_out_at_20:.3f} / {res.left_out_at_10:.3f}",
         f"{res.left_out_at_20 - res.baseline_at_20:+.3f} @20 over the baseline"),
        ("BM25 alone / dense alone recall@20",
         f"{res.bm25_at_20:.3f} / {res.dense_at_20:.3f}", "the baseline's two halves"),
        ("same-set chance recall@20 / @10",
         f"{res.same_set_chance_at_20:.3f} / {res.same_set_chance_at_10:.3f}",
         "own set first, random order: the floor"),
        (f"node_search p50 (ms, {res.pages} nodes)", f"{res.node_search_p50_ms:.1f}", ""),
        ("run time (s)", f"{res.seconds:.1f}", ""),
    ]
    return "\n".join(f"| {name:<48} | {value:>14} | {note}" for name, value, note in rows)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table (or JSON)."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality.realrecall",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--body-chars", type=int, default=None,
                        help="index.body_chars of the node index (default: the setting)")
    parser.add_argument("--corpus", choices=sorted(corpora()), default="linkdocs",
                        help="default linkdocs; langdocs runs language by language")
    parser.add_argument("--language", action="append", default=[], metavar="LANG",
                        help="with a corpus of languages: only this one (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    embedder, body_chars = configured_embedder()
    body_chars = body_chars if args.body_chars is None else args.body_chars
    from bench.quality.realrecall_lang import LANGUAGE_AXIS, language_table, run_by_language
    if args.corpus in LANGUAGE_AXIS:
        runs = run_by_language(embedder, body_chars, args.corpus, args.language)
        print(json.dumps([asdict(r) for r in runs], indent=2) if args.json
              else language_table(runs, LANGUAGE_AXIS[args.corpus]))
        return 0
    res = run_real_recall(embedder, body_chars=body_chars, corpus=args.corpus)
    print(json.dumps(asdict(res), indent=2) if args.json else report(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
