"""realrecall's language axis: each language of a corpus as its own vault.

    .venv/bin/python -m bench.quality.realrecall --corpus langdocs           # every language
    .venv/bin/python -m bench.quality.realrecall --corpus langdocs --language ja

A corpus with a language axis (``langdocs``: React's documentation in English and its
translations, the same pages in each) has one set per language. Each language's pages
are indexed as a vault of their own, a node per page, exactly as ``realrecall`` does for
a whole corpus; the same queries (each page's title and first sentence, in its own
language) run against ``node_search`` and the BM25 + dense RRF baseline of the same run.
The table shows recall@20 and @10 of both per language, node_search's gain over the
baseline and each language's gap to English. Nothing here depends on the language: the
embedder and ``index.body_chars`` come from the product's settings
(``realrecall.configured_embedder``), so a model chosen by configuration, or keyword
search that reads CJK words, shows in these figures without a change here.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.quality.realdocs import load_corpus
from bench.quality.realdocs._build import corpora
from bench.quality.realrecall import RealRecall, run_real_recall
from vaultlink.index.embed import Embedder

# corpora whose sets are languages, and the language the others are compared with
LANGUAGE_AXIS = {"langdocs": "en"}


def run_by_language(embedder: Embedder, body_chars: int, corpus: str = "langdocs",
                    languages: Sequence[str] = ()) -> list[RealRecall]:
    """One run per language (set) of ``corpus``, in the corpus's order, each its own vault."""
    pages = load_corpus(corpora()[corpus].root)
    order: list[str] = []
    for p in pages:
        if p.set not in order:
            order.append(p.set)
    wanted = [lang for lang in order if not languages or lang in languages]
    unknown = set(languages) - set(order)
    if unknown:
        raise SystemExit(f"no such language in {corpus}: {', '.join(sorted(unknown))} "
                         f"(it has {', '.join(order)})")
    return [run_real_recall(embedder, body_chars, corpus,
                            [p for p in pages if p.set == lang], language=lang)
            for lang in wanted]


def language_table(results: Sequence[RealRecall], reference: str = "en") -> str:
    """The per-language table ``python -m bench.quality.realrecall --corpus langdocs`` prints."""
    ref = next((r for r in results if r.language == reference), None)
    head = ("| language | pages | scored | pairs | node_search @20 | baseline @20 | gain @20 "
            "| node_search @10 | baseline @10 | left out @20 | BM25 / dense @20 | chance @20 "
            f"| gap to {reference} @20 | p50 ms |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in results:
        gap = "" if ref is None or r is ref else f"{r.recall_at_20 - ref.recall_at_20:+.3f}"
        lines.append(
            f"| {r.language} | {r.pages} | {r.scored} | {r.truth_pairs} "
            f"| {r.recall_at_20:.3f} | {r.baseline_at_20:.3f} "
            f"| {r.recall_at_20 - r.baseline_at_20:+.3f} | {r.recall_at_10:.3f} "
            f"| {r.baseline_at_10:.3f} | {r.left_out_at_20:.3f} "
            f"| {r.bm25_at_20:.3f} / {r.dense_at_20:.3f} | {r.same_set_chance_at_20:.3f} "
            f"| {gap} | {r.node_search_p50_ms:.1f} |")
    lines.append("Done when (issue 24): every language within 0.05 of English at @20, and "
                 "node_search at least +0.10 over the baseline in every language.")
    return "\n".join(lines)
