"""Scale benchmark: a big vault adopted as a user would, from the first build to idle.

    python -m bench.bench_scale --notes 10000          # about 30-60 min on 2 cores
    python -m bench.bench_scale --notes 1000 --search-nodes 1000   # a few minutes

Builds the vault of ``bench/scale_vault.py`` (seeded, linked, dated over three years) in
a temporary folder with ``llm.provider: offline``, then prints, each with the machine's
load average beside it (other people's processes slow every figure):

* first build: ``vaultlink reindex --full`` time, texts embedded, index size, peak RSS;
* first start: ``vaultlink dream`` integrating only the backfill window (units capped
  high so the window is done), the notes held back, and ``backfill --all``'s estimate;
* a dream run with nothing changed and one with one note changed (in-process, counting
  the notes read), and the same ``vaultlink dream`` from the command line;
* the daemon: start to serving with nothing changed (a restart), one note changed to
  its digest write, idle RSS and CPU over ``--idle`` seconds;
* ``vaultlink node-search`` from the command line, without the daemon and through it;
* ``node_search`` p50/p95 in-process over ``--search-nodes`` digest nodes, quiet and with
  two busy processes beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.bench_daemon import cpu_seconds, memory_kb
from bench.scale_vault import ADJ, NOUN, make_vault
from vaultlink.daemon.client import live_status

PY = sys.executable


def load() -> str:
    """The 1-minute load average, as a note beside a figure."""
    return f"load {os.getloadavg()[0]:.1f}"


def say(what: str, value: str) -> None:
    print(f"{what:<48} {value}   ({load()})", flush=True)


LAST_CPU = [0.0]  # CPU seconds of the last `cli` command


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli(root: Path, *args: str, timeout: float = 7200) -> tuple[float, str]:
    """Wall seconds and stdout of one ``vaultlink`` command on the vault (its CPU
    seconds in ``LAST_CPU``: what it costs whatever else the machine runs)."""
    started, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run([PY, "-m", "vaultlink", *args, "--vault", str(root)],
                          capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"vaultlink {' '.join(args)} failed: {done.stderr[-2000:]}")
    LAST_CPU[0] = children_cpu() - cpu
    return time.perf_counter() - started, done.stdout


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def in_process_dream(root: Path) -> tuple[float, int, dict[str, int]]:
    """One dream run in this process: seconds, daily/resource notes read, counts."""
    from dataclasses import dataclass, field

    from vaultlink.cli.settings import load_settings
    from vaultlink.options import Provider
    from vaultlink.pipeline.compose import close_models, dream_context, open_parts
    from vaultlink.pipeline.run import build_steps, run_dream
    from vaultlink.vault.notes import Vault

    @dataclass
    class Counting(Vault):
        reads: list[str] = field(default_factory=list)

        def read_bytes(self, raw: str) -> bytes:
            self.reads.append(raw)
            return super().read_bytes(raw)

    settings = load_settings(root)
    vault = Counting(root)
    parts = open_parts(vault, settings.pipeline())
    try:
        started = time.perf_counter()
        parts.index.sync()
        ctx = dream_context(parts, settings.pipeline(), Provider.OFFLINE)
        try:
            run = run_dream(ctx, build_steps(settings.get("auto_dream.steps")))
        finally:
            close_models(ctx)
        seconds = time.perf_counter() - started
    finally:
        parts.close()
    sources = [r for r in vault.reads if not r.startswith("digest/")]
    return seconds, len(set(sources)), run.counts()


def touch_note(root: Path, rel: str, rng: random.Random) -> None:
    """Add a section the offline extractor makes a unit of."""
    topic = f"{rng.choice(NOUN)} {rng.choice(NOUN)}"
    with (root / rel).open("a", encoding="utf-8") as fh:
        fh.write(f"\n## {topic.title()}\n\nToday I worked on the {topic} for most of the "
                 f"afternoon. The {topic} needed a careful look because last week the {topic} "
                 f"went wrong twice, and I wrote down every step I took so the {topic} work "
                 "can be repeated next time without guessing, including what to check first.\n")


class Daemon:
    """``vaultlink watch`` as a subprocess, measured from outside."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([PY, "-m", "vaultlink", "watch", "--foreground",
                                      "--vault", str(root)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def serving(self, timeout: float = 600) -> float:
        while time.perf_counter() - self.started < timeout:
            status = live_status(self.root / ".vaultlink", timeout=5)[0]
            if status is not None:
                return time.perf_counter() - self.started
            time.sleep(0.05)
        raise SystemExit("the daemon did not serve")

    def idle(self, timeout: float = 3600) -> None:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            s = live_status(self.root / ".vaultlink", timeout=5)[0]
            if s and s["state"] == "idle" and not s["queue"]:
                return
            time.sleep(0.2)
        raise SystemExit("the daemon did not become idle")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)


def journal_size(root: Path) -> int:
    from vaultlink.vault.state import State

    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        return len(state.journal(limit=1_000_000))
    finally:
        state.close()


def percentiles(fn: Callable[[str], object], queries: list[str]) -> tuple[float, float, float]:
    """p50 and p95 wall milliseconds, and the mean CPU milliseconds (what a query costs
    whatever the load; wall time on a busy machine is mostly waiting for a core)."""
    for q in queries[:10]:
        fn(q)
    times = []
    cpu0 = time.process_time()
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t0) * 1000)
    cpu = (time.process_time() - cpu0) * 1000 / len(queries)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], cpu


def busy() -> list[subprocess.Popen[bytes]]:
    """Two processes spinning on the CPU: the machine 'under load'."""
    return [subprocess.Popen([PY, "-c", "while True: pass"]) for _ in range(2)]


class HashVectors:
    """Unit vectors from a text's hash: an index of the right size, built in seconds.

    A query's cost does not depend on what the stored vectors are (one product over all
    of them), so ``--search-vectors hash`` measures node_search at 10,000 nodes without
    the minutes of embedding them; the query itself is still embedded by MiniLM.
    """

    model_id = "minilm-l6-v2-int8"
    dimension = 384

    def embed(self, texts: list[str]) -> list[list[float]]:
        import hashlib

        import numpy as np

        out = []
        for text in texts:
            seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).normal(size=self.dimension)
            out.append((v / np.linalg.norm(v)).tolist())
        return out


def search_latency(tmp: Path, nodes: int, seed: int, vectors: str) -> None:
    from bench.bench_index import make_vault as make_nodes
    from vaultlink.index.embed import MiniLMEmbedder
    from vaultlink.index.recall import open_indexes
    from vaultlink.vault.notes import Vault

    root = tmp / "nodes"
    make_nodes(root, nodes, 0, seed)
    minilm = MiniLMEmbedder()
    indexes = open_indexes(Vault(root), HashVectors() if vectors == "hash" else minilm)
    try:
        t0 = time.perf_counter()
        indexes.nodes.sync()
        indexes.nodes.embedder = minilm  # queries are embedded by the real model
        say(f"node index build, {nodes} nodes ({vectors} vectors)",
            f"{time.perf_counter() - t0:.1f} s")
        rng = random.Random(seed)
        queries = [" ".join(rng.choice(ADJ + NOUN) for _ in range(rng.randint(2, 8)))
                   for _ in range(200)]
        p50, p95, cpu = percentiles(lambda q: indexes.nodes.node_search(q, 20), queries)
        say(f"node_search at {nodes} nodes, in-process", f"p50 {p50:.1f} ms, p95 {p95:.1f} "
            f"ms wall; {cpu:.1f} ms CPU per query")
        spinners = busy()
        try:
            p50, p95, cpu = percentiles(lambda q: indexes.nodes.node_search(q, 20), queries)
        finally:
            for p in spinners:
                p.kill()
                p.wait()
        say("  the same beside two busy processes", f"p50 {p50:.1f} ms, p95 {p95:.1f} ms "
            f"wall; {cpu:.1f} ms CPU per query")
    finally:
        indexes.close()


def run(root: Path, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    sources, _ = make_vault(root, args.notes, args.nodes, args.seed)
    say(f"vault: {args.notes} notes, {args.nodes} digest nodes", f"written in "
        f"{time.perf_counter() - t0:.1f} s")

    with (root / ".vaultlink" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(f"embedding:\n  sections: {args.sections}\n")
        if args.backfill_days is not None:
            fh.write(f"backfill:\n  days: {args.backfill_days}\n")
    if args.no_chunks:  # the node index only (what dream and node-search use)
        seconds, _ = cli(root, "node-search", "first build", "--json")
        say("first build, node index only (node-search)", f"{seconds:.0f} s for "
            f"{args.nodes} nodes; the section index is left to `search`")
    else:
        seconds, out = cli(root, "reindex", "--full", "--json")
        report = json.loads(out)
        texts = report["nodes"]["embedded"] + report["chunks"]["embedded"]
        say("first build (reindex --full)", f"{seconds:.0f} s = {seconds / 60:.1f} min, "
            f"{texts} texts embedded ({report['chunks']['embedded']} chunks), "
            f"{texts / seconds:.1f} texts/s")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    say("index size (.vaultlink)", f"{size_mb(root / '.vaultlink'):.0f} MB; peak RSS "
        f"{rss:.0f} MB")
    if args.build_only:
        return

    seconds, out = cli(root, "dream", "--json", "--max-units", "100000")
    counts = json.loads(out)["counts"]
    _, status = cli(root, "status", "--json")
    backlog = json.loads(status)["backlog"]
    say("first start (dream, the backfill window)", f"{seconds:.0f} s: {counts['changed']} "
        f"notes, {counts['integrated']} units; {backlog['waiting']} older notes held back")
    _, out = cli(root, "backfill", "--all", "--json")
    say("backfill --all estimate (nothing queued)", json.loads(out)["words"])

    seconds, read, counts = in_process_dream(root)
    say("dream, nothing changed (in-process)", f"{seconds:.2f} s, {read} notes read, "
        f"scanned {counts['scanned']}, changed {counts['changed']}")
    seconds, _ = cli(root, "dream", "--json")
    say("  the same, `vaultlink dream`", f"{seconds:.2f} s wall, {LAST_CPU[0]:.2f} s CPU")
    touch_note(root, sources[-1], rng)
    seconds, read, counts = in_process_dream(root)
    say("dream, one note changed (in-process)", f"{seconds:.2f} s, {read} notes read, "
        f"changed {counts['changed']}, integrated {counts['integrated']}")

    times, cpus = [], []
    for _ in range(3):
        times.append(cli(root, "node-search", "stale cache query", "--json")[0])
        cpus.append(LAST_CPU[0])
    say("`vaultlink node-search`, no daemon", f"median {statistics.median(times):.2f} s "
        f"wall (runs {', '.join(f'{t:.2f}' for t in times)}), "
        f"{statistics.median(cpus):.2f} s CPU")

    daemon = Daemon(root)
    try:
        serving = daemon.serving()
        say("daemon: no-change restart to serving", f"{serving:.2f} s wall, "
            f"{cpu_seconds(daemon.proc.pid):.2f} s CPU")
        daemon.idle()
        pid = daemon.proc.pid
        cpu0, w0 = cpu_seconds(pid), time.perf_counter()
        time.sleep(args.idle)
        cpu = cpu_seconds(pid) - cpu0
        say(f"daemon idle {args.idle:.0f} s", f"CPU {cpu:.2f} s "
            f"({100 * cpu / (time.perf_counter() - w0):.2f} %), RSS "
            f"{memory_kb(pid)['VmRSS'] / 1024:.0f} MB")
        before = journal_size(root)
        touch_note(root, sources[-2], rng)
        t1 = time.perf_counter()
        while journal_size(root) == before and time.perf_counter() - t1 < 600:
            time.sleep(0.05)
        say("daemon: one note changed -> digest write", f"{time.perf_counter() - t1:.2f} s "
            "(quiet_seconds 1 included)")
        daemon.idle()
        times = [cli(root, "node-search", "stale cache query", "--json")[0] for _ in range(3)]
        say("`vaultlink node-search` through the daemon", f"median "
            f"{statistics.median(times):.2f} s wall")
    finally:
        daemon.stop()
    if args.search_nodes:
        search_latency(root.parent, args.search_nodes, args.seed, args.search_vectors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=1_000, help="digest nodes in the vault")
    parser.add_argument("--search-nodes", type=int, default=10_000,
                        help="nodes of the separate node_search latency index (0: skip)")
    parser.add_argument("--search-vectors", choices=("minilm", "hash"), default="minilm",
                        help="how the latency index's nodes are embedded (hash: seconds)")
    parser.add_argument("--only-search", action="store_true",
                        help="measure node_search latency only")
    parser.add_argument("--no-chunks", action="store_true",
                        help="build only the node index first (a faster run)")
    parser.add_argument("--backfill-days", type=int,
                        help="backfill.days of the vault (default 14: about 128 notes of "
                             "10,000 integrated at the first start)")
    parser.add_argument("--sections", choices=("fast", "same"), default="fast",
                        help="embedding.sections of the vault: the section index's model "
                             "(fast: MiniLM in int8 arithmetic, the default; same: exact)")
    parser.add_argument("--build-only", action="store_true",
                        help="stop after the first build and its size")
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the generated vault")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vaultlink-scale-"))
    say("machine", f"{os.cpu_count()} cores")
    try:
        if args.only_search:
            search_latency(tmp, args.search_nodes, args.seed, args.search_vectors)
        else:
            run(tmp / "vault", args)
    finally:
        if args.keep:
            print(f"vault kept in {tmp / 'vault'}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
