"""The link graph behind the API's note view: a full build, and a rebuild after one edit.

The daemon's API rebuilds the graph after every change the watcher sees, so the
plugin's panel shows fresh backlinks. This measures, on a generated vault of
``--notes`` daily notes plus a digest node per ten of them (each with links and a
``## Sources`` section), how long that rebuild takes with the parse cache the API
keeps (only the edited note is read again) and without it (every note is).

    python -m bench.bench_graph [--notes 5000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench.bench_daemon import note_text
from vaultlink.vault.graph import ParseCache, build_graph
from vaultlink.vault.notes import Vault


def make_vault(root: Path, notes: int, rng: random.Random) -> list[str]:
    """Daily notes and digest nodes citing them; returns the digest node paths."""
    nodes = []
    for i in range(notes):
        day = f"daily/2026-{1 + i // 3000:02d}-{i % 3000:04d}.md"
        (root / day).parent.mkdir(parents=True, exist_ok=True)
        (root / day).write_text(note_text(rng, i) + f"\nSee [[2026-01-{(i + 1) % notes:04d}]].\n")
        if i % 10 == 0:
            node = f"digest/wiki/node-{i}.md"
            other = f"digest/wiki/node-{max(0, i - 10)}.md"
            (root / node).parent.mkdir(parents=True, exist_ok=True)
            (root / node).write_text(
                f"---\nname: Node {i}\ndescription: What day {i} decided.\n---\n"
                f"Day {i} built on [[{other}]].\n\n## Sources\n\n"
                f"- The decision is recorded in [[{day}]].\n")
            nodes.append(node)
    return nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        nodes = make_vault(root, args.notes, rng)
        vault = Vault(root)
        cache = ParseCache()
        start = time.perf_counter()
        graph = build_graph(vault, cache=cache)
        cold = time.perf_counter() - start
        edges = sum(len(e) for e in graph.outlinks.values())
        cached, uncached = [], []
        for n in range(args.rounds):
            node = root / nodes[n % len(nodes)]
            node.write_text(node.read_text() + f"\nAn edit, round {n}.\n")
            reads = cache.reads
            start = time.perf_counter()
            build_graph(vault, cache=cache)
            cached.append(time.perf_counter() - start)
            assert cache.reads == reads + 1, "the rebuild should read exactly the edited note"
            start = time.perf_counter()
            build_graph(vault)
            uncached.append(time.perf_counter() - start)
    print(f"vault: {len(graph.texts)} notes, {edges} links")
    print(f"full build: {cold:.2f} s")
    print(f"rebuild after one edit, with the API's parse cache: median "
          f"{statistics.median(cached) * 1000:.0f} ms, max {max(cached) * 1000:.0f} ms")
    print(f"rebuild after one edit, without it: median {statistics.median(uncached):.2f} s")


if __name__ == "__main__":
    main()
