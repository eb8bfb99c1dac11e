"""Cross-language recall of the embedding models: does a page in one language find the
same page in English? The case of a vault that mixes languages.

    .venv/bin/python -m bench.quality.crosslingual            # every local model, ~2 min

On ``langdocs`` (React's documentation and its translations, the same pages under the
same file names, as published), each translated page asks with its title and opening
(the first ``QUERY_CHARS`` characters, as a note would) among the English pages,
embedded as the node index embeds a node (title, then the opening ``body_chars`` of the
text); the answer is the English page of the same name. Plain cosine ranking of the
model's vectors, no keyword search (its words are in another language): it measures
the model alone. hit@1, hit@5 and the mean reciprocal rank, per language.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # `python bench/quality/crosslingual.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.quality.realdocs import Page, load_corpus
from bench.quality.realdocs._build import corpora
from vaultlink.index.embed import LOCAL_MODELS, MINILM_FAST_MODEL_ID, make_embedder

QUERY_CHARS = 300
BODY_CHARS = 1000


def page_key(page: Page) -> str:
    """The file name, the same in every language."""
    return page.path.split("/", 1)[1]


def run(model: str, pages: list[Page]) -> list[tuple[str, float, float, float]]:
    """(language, hit@1, hit@5, MRR) of every language but English."""
    embedder = make_embedder("local", model, None, 30.0)
    english = [p for p in pages if p.set == "en"]
    keys = [page_key(p) for p in english]
    docs = np.asarray(embedder.embed([f"{p.title}\n{p.text[:BODY_CHARS]}" for p in english]))
    rows = []
    for lang in sorted({p.set for p in pages} - {"en"}):
        asking = [p for p in pages if p.set == lang and page_key(p) in keys]
        queries = np.asarray(embedder.embed([f"{p.title}\n{p.text[:QUERY_CHARS]}"
                                             for p in asking]))
        ranks = []
        for page, scores in zip(asking, queries @ docs.T, strict=True):
            order = np.argsort(-scores)
            ranks.append(1 + int(np.where(order == keys.index(page_key(page)))[0][0]))
        rows.append((lang, float(np.mean([r == 1 for r in ranks])),
                     float(np.mean([r <= 5 for r in ranks])),
                     float(np.mean([1 / r for r in ranks]))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.crosslingual",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", choices=LOCAL_MODELS,
                        help="a local model (default: every one but MiniLM's int8 graph)")
    args = parser.parse_args()
    models = args.model or [m for m in LOCAL_MODELS if m != MINILM_FAST_MODEL_ID]
    pages = load_corpus(corpora()["langdocs"].root)
    english = sum(1 for p in pages if p.set == "en")
    print(f"langdocs: each translated page asks among the {english} English pages")
    print("| model | language | hit@1 | hit@5 | MRR | seconds |")
    print("|---|---|---|---|---|---|")
    for model in models:
        started = time.monotonic()
        rows = run(model, pages)
        took = time.monotonic() - started
        for lang, h1, h5, mrr in rows:
            print(f"| {model} | {lang} | {h1:.3f} | {h5:.3f} | {mrr:.3f} | {took:.0f} |")


if __name__ == "__main__":
    main()
