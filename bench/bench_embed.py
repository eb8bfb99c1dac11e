"""Throughput of the default embedder: texts per second by text length and batch size.

Run: ``.venv/bin/python bench/bench_embed.py`` (about a minute on 2 cores).
The texts are random words from a fixed vocabulary with a fixed seed, so runs
compare; the first call (model load) is timed separately and not counted.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from vaultlink.index.embed import MiniLMEmbedder

WORDS = (
    "note vault index search daily link digest meeting project idea review task "
    "garden recipe travel budget reading paper summary draft question answer "
    "server backup python markdown obsidian weekly monday friday because although "
    "rebuild cache model token embedding vector memory journal habit sleep coffee"
).split()


def texts(count: int, low: int, high: int, rng: random.Random) -> list[str]:
    """``count`` texts of ``low``..``high`` random words each."""
    return [" ".join(rng.choices(WORDS, k=rng.randint(low, high))) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--repeat", type=int, default=2, help="runs per case; the best counts")
    args = parser.parse_args()

    rng = random.Random(42)
    cases = {
        "1000 short (10-30 words)": texts(1000, 10, 30, rng),
        "200 long (~300 words)": texts(200, 280, 320, rng),
    }
    warm = MiniLMEmbedder(threads=args.threads)
    started = time.perf_counter()
    warm.embed(["warm up"])
    print(f"cpus={os.cpu_count()} threads={warm.threads} "
          f"first call (load) {time.perf_counter() - started:.2f}s")

    for label, batch in cases.items():
        for batch_size in (16, 32, 64):
            warm.batch_size = batch_size  # one loaded model: this times embedding, not loading
            best = float("inf")
            for _ in range(args.repeat):
                started = time.perf_counter()
                warm.embed(batch)
                best = min(best, time.perf_counter() - started)
            print(f"{label:26s} batch {batch_size:2d}: {best:6.2f}s  "
                  f"{len(batch) / best:7.1f} texts/s")


if __name__ == "__main__":
    main()
