"""Index benchmark: build throughput, query latency, sync cost and memory of the recall index.

Run: ``.venv/bin/python bench/bench_index.py`` (10,000 digest nodes and 2,000 other
notes; about 10 minutes on 2 cores) or ``--nodes 1000 --others 200`` for a quick run.

Generates a synthetic but varied vault (sentences from word lists, fixed seed) in a
temporary folder, then reports:

* raw embedding throughput of the model on the very texts the index embeds, and the
  full-build throughput of the node and chunk indexes (target ratio >= 0.8);
* ``node_search`` p50/p95 latency at 1,000 nodes and at the full count (target p95 <
  30 ms at 10,000), query embedding included;
* sync with nothing changed (target < 2 s) and after one note changed (< 0.5 s);
* peak memory (ru_maxrss).
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from vaultlink.index.chunks import ChunkIndex
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.recall import open_indexes
from vaultlink.vault.notes import Vault, parse_note

ADJ = ("stale slow fast hybrid manual nightly broken weekly shared local remote quiet noisy "
       "large small incremental partial full private public urgent minor critical cheap "
       "expensive flaky stable legacy new careful rough").split()
NOUN = ("index cache query vector table backup deploy release budget meeting review garden "
        "recipe journey paper summary draft question server cluster pipeline schema migration "
        "token embedding memory habit sleep coffee bicycle invoice contract lease doctor "
        "insurance tax passport flight hotel concert novel podcast lecture exam thesis "
        "kubernetes postgres vacuum replica shard latency throughput outage incident "
        "alert dashboard metric feature flag rollout rollback sprint roadmap hiring "
        "onboarding mentor salary bonus vacation apartment kitchen balcony tomato basil").split()
VERB = ("rebuilds breaks slows fixes replaces documents explains measures schedules blocks "
        "improves doubles halves delays triggers monitors cleans migrates reviews "
        "approves rejects postpones").split()
PEOPLE = "Mara Jonas Priya Tom Aiko Lena Omar Sven Chloe Ravi".split()
BUCKETS = ("wiki", "procedure", "personal")


def sentence(rng: random.Random) -> str:
    """One sentence of 8-20 words with some structure, so BM25 and vectors both have signal."""
    parts = [rng.choice(PEOPLE), "says the", rng.choice(ADJ), rng.choice(NOUN), rng.choice(VERB),
             "the", rng.choice(NOUN)]
    if rng.random() < 0.6:
        parts += ["because the", rng.choice(ADJ), rng.choice(NOUN), rng.choice(VERB), "it"]
    if rng.random() < 0.4:
        parts += ["during the", rng.choice(NOUN), rng.choice(NOUN)]
    return " ".join(parts) + "."


def paragraph(rng: random.Random, low: int = 2, high: int = 5) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(low, high)))


def make_vault(root: Path, nodes: int, others: int, seed: int) -> tuple[list[str], list[str]]:
    """Write the notes; returns (node paths, other paths). Node i is the i-th in the list."""
    rng = random.Random(seed)
    node_paths, other_paths = [], []
    for i in range(others):
        if i % 2:
            rel = f"daily/2026-{1 + i % 12:02}-{1 + i % 28:02}/note-{i}.md"
        else:
            rel = f"resource/clip-{i}.md"
        sections = [f"## {rng.choice(ADJ).title()} {rng.choice(NOUN)}\n\n{paragraph(rng, 3, 7)}"
                    for _ in range(rng.randint(1, 4))]
        text = f"# Note {i}\n\n{paragraph(rng)}\n\n" + "\n\n".join(sections) + "\n"
        write(root, rel, text)
        other_paths.append(rel)
    for i in range(nodes):
        bucket = BUCKETS[i % 3]
        title = f"{rng.choice(ADJ).title()} {rng.choice(NOUN)} {rng.choice(NOUN)}"
        slug = title.lower().replace(" ", "-") + f"-{i}"
        rel = f"digest/{bucket}/{slug}.md"
        links = " ".join(f"[[{p}]]" for p in rng.sample(node_paths, min(2, len(node_paths))))
        src = rng.choice(other_paths) if other_paths else ""
        body = (f"{paragraph(rng, 3, 8)} Related: {links}\n\n{paragraph(rng)}\n\n## Sources\n\n"
                + (f"- The claim about the {rng.choice(NOUN)} comes from [[{src}]].\n"
                   if src else ""))
        text = (f"---\nname: {title}\ndescription: {sentence(rng)} Use when the "
                f"{rng.choice(NOUN)} {rng.choice(VERB)} the {rng.choice(NOUN)}.\n---\n{body}")
        write(root, rel, text)
        node_paths.append(rel)
    return node_paths, other_paths


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


class Raw:
    """Bare-model throughput on a sample of the index's own texts, one call per half.

    Half is timed before the build and half after, so a machine whose load changes
    during the run shows it (both halves are printed) instead of skewing the ratio.
    """

    def __init__(self, embedder: MiniLMEmbedder, texts: list[str]) -> None:
        self.embedder, self.texts = embedder, texts
        self.runs: list[tuple[int, float]] = []

    def measure(self, half: int) -> float:
        mid = len(self.texts) // 2
        part = self.texts[:mid] if half == 0 else self.texts[mid:]
        seconds, _ = timed(lambda: self.embedder.embed(part))
        self.runs.append((len(part), seconds))
        return len(part) / seconds

    @property
    def rate(self) -> float:
        return sum(n for n, _ in self.runs) / sum(s for _, s in self.runs)


class Timing:
    """Wraps the embedder to sum the seconds spent inside it during a build.

    ``model share`` = time in the model / build time is the build-to-raw ratio measured
    inside one run, so it holds even when other processes load the machine unevenly.
    """

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner, self.model_id, self.dimension = inner, inner.model_id, inner.dimension
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def latencies(search: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    for q in queries[:10]:  # warm caches and the model
        search(q)
    times = []
    for q in queries:
        started = time.perf_counter()
        search(q)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--others", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--raw-sample", type=int, default=2000,
                        help="texts of each index whose bare embedding gives the raw rate")
    parser.add_argument("--keep", action="store_true", help="keep the generated vault")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="vaultlink-bench-"))
    root = tmp / "vault"
    try:
        run(root, args)
    finally:
        if args.keep:
            print(f"vault kept in {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run(root: Path, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed + 1)
    first = min(1000, args.nodes)
    seconds, (node_paths, _) = timed(lambda: make_vault(root, args.nodes, args.others,
                                                         args.seed))  # type: ignore[misc]
    print(f"vault: {args.nodes} digest nodes, {args.others} other notes, written in "
          f"{seconds:.1f}s ({root})")
    queries = [" ".join(rng.choice(ADJ + NOUN + VERB) for _ in range(rng.randint(2, 8)))
               for _ in range(args.queries)]

    embedder = MiniLMEmbedder()
    embedder.embed(["load the model"])
    vault = Vault(root)
    timing = Timing(embedder)
    ix = open_indexes(vault, timing)
    nodes: NodeIndex = ix.nodes
    chunks: ChunkIndex = ix.chunks

    print(f"peak memory after loading the model: {rss_mb():.0f} MB")
    # Raw model speed on a random sample of the very texts the node index embeds.
    raw_nodes = Raw(embedder, [d.embed_text for p in rng.sample(node_paths, min(
        args.raw_sample, len(node_paths))) for d in nodes.docs_of(parse_note(
            p, (root / p).read_bytes()))])
    # The first long inputs grow onnxruntime's memory arena; that is load, not speed.
    embedder.embed(sorted(raw_nodes.texts, key=len)[-64:])
    print(f"raw embedding, node texts (before build): {raw_nodes.measure(0):.1f} texts/s "
          f"({embedder.threads} threads)")

    # Build the node index in two steps so latency can be read at 1,000 nodes.
    hidden = tmp_hide(root, node_paths[first:])
    timing.seconds = 0.0
    seconds, _ = timed(nodes.sync)
    in_model = timing.seconds  # queries below are embedded too: keep them out
    print(f"node build, {first} nodes: {seconds:.1f}s = {first / seconds:.1f} nodes/s")
    p50, p95 = latencies(lambda q: nodes.node_search(q, 20), queries)
    print(f"node_search at {first} nodes: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    tmp_unhide(root, hidden)
    timing.seconds = 0.0
    seconds_rest, _ = timed(nodes.sync)
    in_model += timing.seconds
    total_s = seconds + seconds_rest
    node_share = in_model / total_s
    build = args.nodes / total_s
    print(f"raw embedding, node texts (after build): {raw_nodes.measure(1):.1f} texts/s")
    print(f"node build, all {args.nodes} nodes: {total_s:.1f}s = {build:.1f} nodes/s; raw "
          f"{raw_nodes.rate:.1f}/s; ratio {build / raw_nodes.rate:.2f} (target >= 0.8); "
          f"model share of the build {node_share:.3f}; "
          f"peak memory {rss_mb():.0f} MB")
    p50, p95 = latencies(lambda q: nodes.node_search(q, 20), queries)
    print(f"node_search at {args.nodes} nodes: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
          "(target p95 < 30 ms at 10,000)")

    # The chunk index over all notes.
    raw_chunks = Raw(embedder, [d.embed_text for d in _chunk_texts(chunks, root, rng,
                                                                  args.raw_sample)])
    print(f"raw embedding, chunk texts (before build): {raw_chunks.measure(0):.1f} texts/s")
    timing.seconds = 0.0
    seconds, crep = timed(chunks.sync)
    chunk_share = timing.seconds / seconds
    embedded = crep.embedded  # type: ignore[attr-defined]
    print(f"raw embedding, chunk texts (after build): {raw_chunks.measure(1):.1f} texts/s")
    print(f"chunk build: {embedded} chunks of {args.nodes + args.others} notes in "
          f"{seconds:.1f}s = {embedded / seconds:.1f} chunks/s; raw {raw_chunks.rate:.1f}/s; "
          f"ratio {embedded / seconds / raw_chunks.rate:.2f}; model share of the build "
          f"{chunk_share:.3f}; peak memory {rss_mb():.0f} MB")
    p50, p95 = latencies(lambda q: chunks.search(q, 10), queries[:100])
    print(f"search (chunks + link expansion): p50 {p50:.1f} ms, p95 {p95:.1f} ms")

    s_nodes, _ = timed(nodes.sync)
    s_chunks, _ = timed(chunks.sync)
    print(f"sync, nothing changed: nodes {s_nodes:.3f}s, chunks {s_chunks:.3f}s "
          "(target < 2 s each)")
    target = root / node_paths[len(node_paths) // 2]
    target.write_text(target.read_text() + "\nOne more sentence about the vacuum cache.\n")
    s_nodes, r1 = timed(nodes.sync)
    s_chunks, r2 = timed(chunks.sync)
    print(f"sync, one note changed: nodes {s_nodes:.3f}s ({r1.updated}), chunks "  # type: ignore[attr-defined]
          f"{s_chunks:.3f}s ({r2.embedded} embedded) (target < 0.5 s)")  # type: ignore[attr-defined]
    ix.close()
    print(f"peak memory (ru_maxrss): {rss_mb():.0f} MB")


def _chunk_texts(chunks: ChunkIndex, root: Path, rng: random.Random, count: int) -> list:  # type: ignore[type-arg]
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")
                   if ".vaultlink" not in p.parts)
    docs = []
    for p in rng.sample(paths, min(len(paths), count)):
        docs += chunks.docs_of(parse_note(p, (root / p).read_bytes()))
    rng.shuffle(docs)
    return docs[:count]


def tmp_hide(root: Path, rels: list[str]) -> Path:
    """Move notes out of the vault for a while (to measure a smaller index first)."""
    aside = root.parent / "aside"
    for rel in rels:
        dest = aside / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        (root / rel).rename(dest)
    return aside


def tmp_unhide(root: Path, aside: Path) -> None:
    for path in sorted(aside.rglob("*.md")):
        dest = root / path.relative_to(aside)
        dest.parent.mkdir(parents=True, exist_ok=True)
        path.rename(dest)


if __name__ == "__main__":
    main()
