"""The local embedding models side by side on the same texts: texts per second of wall
time and per second of CPU (the figure that a shared machine's load does not bend).

    .venv/bin/python -m bench.bench_embed_models            # a few minutes on 2 cores

Texts: short and long English texts of ``bench_embed`` (fixed seed), and the openings
(600 characters) of the langdocs pages (React's documentation in en, de, ja, zh-hans,
ko and ru, as published). Each model is loaded first (timed apart), then each case runs
once with ``--threads`` threads (default 2).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # `python bench/bench_embed_models.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_embed import texts
from bench.quality.realdocs import load_corpus
from bench.quality.realdocs._build import corpora
from vaultlink.index.embed import LOCAL_MODELS, MiniLMEmbedder
from vaultlink.index.multilingual import MultilingualEmbedder

OPENING = 600


def cases() -> dict[str, list[str]]:
    """The texts of each case, the same for every model."""
    rng = random.Random(42)
    out = {"300 short English (10-30 words)": texts(300, 10, 30, rng),
           "40 long English (~300 words)": texts(40, 280, 320, rng)}
    pages = load_corpus(corpora()["langdocs"].root)
    for lang in dict.fromkeys(p.set for p in pages):
        chosen = [p.text[:OPENING] for p in pages if p.set == lang]
        out[f"{len(chosen)} langdocs {lang} openings"] = chosen
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", action="append", choices=LOCAL_MODELS)
    args = parser.parse_args()
    print(f"cpus={os.cpu_count()} threads={args.threads} load={os.getloadavg()[0]:.1f}")
    work = cases()
    for model in args.model or LOCAL_MODELS:
        embedder = (MultilingualEmbedder(threads=args.threads) if model.startswith("multi")
                    else MiniLMEmbedder(threads=args.threads, fast=model.endswith("q8")))
        started = time.perf_counter()
        embedder.embed(["warm up"])
        print(f"{model}: first call (load) {time.perf_counter() - started:.2f}s")
        for label, batch in work.items():
            wall, cpu = time.perf_counter(), time.process_time()
            embedder.embed(batch)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(f"  {label:34s} {len(batch) / wall:7.1f} texts/s  "
                  f"{len(batch) / cpu:7.1f} texts/CPU-s  (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
