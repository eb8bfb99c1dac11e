"""``search`` recall on real documentation pages: the exact MiniLM beside its int8 form.

    .venv/bin/python -m bench.quality.sectionrecall          # about a minute on 2 cores

The section index (``search``) embeds every section of every note, so its first build
is the embedder's work, and ``embedding.sections: fast`` runs it on MiniLM with int8
arithmetic (see ``vaultlink/index/minilm_graph.py``). This benchmark says what that
costs in recall, on text nobody here wrote: the 70 pages of ``bench/quality/realdocs``
written as ``resource/`` notes (their links to each other removed), one ChunkIndex per
embedder, built the way ``reindex`` builds it.

* Each page searches with its title and first sentence (as ``realrecall`` does).
* The hits' files, in the order they first appear, are the page's ranking (itself
  left out); truth: the pages it links to or that link to it.
* recall@K: the share of a page's truth among its first K files, averaged over pages
  in a truth pair; the build's texts per second beside it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.quality.realdocs import load_corpus, truth_pairs, write_as_vault
from bench.quality.realrecall import first_sentence, recall_at, truth_by_page
from vaultlink.index.chunks import ChunkIndex
from vaultlink.index.embed import Embedder, MiniLMEmbedder
from vaultlink.vault.notes import Vault


@dataclass(frozen=True)
class SectionRecall:
    """One embedder's figures."""

    model_id: str
    sections: int
    build_seconds: float
    recall_at_20: float
    recall_at_10: float
    recall_at_5: float
    search_p50_ms: float


def run_section_recall(embedder: Embedder, depth: int = 20) -> SectionRecall:
    """Index the corpus as notes with ``embedder`` and score every page's search."""
    pages = load_corpus()
    truth = truth_by_page(pages, truth_pairs(pages))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        rel_of = write_as_vault(pages, root)
        page_of = {rel: page for page, rel in rel_of.items()}
        state = root / ".vaultlink"
        index = ChunkIndex(Vault(root), state / "state.sqlite",
                           None, embedder)
        try:
            started = time.perf_counter()
            report = index.sync()
            build = time.perf_counter() - started
            ranked: dict[str, list[str]] = {}
            times = []
            for p in pages:
                sentence = first_sentence(p.text)
                query = f"{p.title}: {sentence}" if sentence else p.title
                t0 = time.perf_counter()
                hits = index.search(query, limit=depth * 4)
                times.append((time.perf_counter() - t0) * 1000)
                files: list[str] = []
                for hit in hits:
                    page = page_of.get(hit.path)
                    if page and page != p.path and page not in files:
                        files.append(page)
                ranked[p.path] = files[:depth]
        finally:
            index.close()
    return SectionRecall(embedder.model_id, report.embedded, build,
                         recall_at(ranked, truth, 20), recall_at(ranked, truth, 10),
                         recall_at(ranked, truth, 5), statistics.median(times))


def main(argv: list[str] | None = None) -> int:
    """Print the exact and the int8 MiniLM side by side."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality.sectionrecall",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    cache = Path.home() / ".cache" / "vaultlink"
    rows = [run_section_recall(MiniLMEmbedder(cache_dir=cache)),
            run_section_recall(MiniLMEmbedder(cache_dir=cache, fast=True))]
    print(f"| {'model':<24} | sections | build s | texts/s | recall@20 | @10   | @5    "
          f"| search p50 ms |")
    for r in rows:
        print(f"| {r.model_id:<24} | {r.sections:>8} | {r.build_seconds:>7.1f} | "
              f"{r.sections / r.build_seconds:>7.1f} | {r.recall_at_20:>9.3f} | "
              f"{r.recall_at_10:.3f} | {r.recall_at_5:.3f} | {r.search_p50_ms:>13.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
