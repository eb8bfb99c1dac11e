"""``search`` (the section search over all notes) at 10,000 notes, through the daemon.

    python -m bench.bench_search_scale                    # 10-20 min on 2 cores
    python -m bench.bench_search_scale --keep             # keep the vault, then:
    python -m bench.bench_search_scale --vault DIR        # measure it again, no build

Writes the vault of ``bench/scale_vault.py`` (``--notes`` notes, ``--nodes`` digest
nodes citing them), builds both indexes in this process as the product opens them
(``open_recall``: the section index with MiniLM int8, from the package, no download),
then prints, each with the load average beside it:

* the index build: seconds, sections embedded;
* ``GET /search?in=sections`` of a running daemon (``vaultlink watch``): p50/p95 wall
  milliseconds and the daemon's CPU milliseconds per query, for ~200 questions cut from
  the vault's notes and for questions naming one of its days ("what did I do on May 3,
  2024"), after a few warm-up queries; measured again while the load is above
  ``--max-load``;
* ``vaultlink search QUERY`` as a fresh process: wall and CPU seconds of each run,
  without a daemon and with one running;
* with ``--profile``: the daemon's answer (the sync, then ``ChunkIndex.search``) in
  this process under cProfile.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import os
import pstats
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.bench_daemon import cpu_seconds
from bench.bench_scale import LAST_CPU, Daemon, cli, percentiles, say
from bench.scale_vault import make_vault

WARM = 10  # queries ``percentiles`` runs first and does not time
MONTHS = ("January February March April May June July August September October "
          "November December").split()


def build(root: Path) -> None:
    """Both indexes of the vault, opened as the CLI and the daemon open them."""
    from vaultlink.cli.settings import load_settings
    from vaultlink.index.recall import open_recall
    from vaultlink.vault.notes import Vault

    indexes = open_recall(Vault(root), load_settings(root).pipeline())
    try:
        t0 = time.perf_counter()
        nodes = indexes.nodes.sync()
        say("node index build", f"{time.perf_counter() - t0:.0f} s, {nodes.embedded} "
            "nodes embedded")
        shown = [0.0]

        def progress(done: int, total: int) -> None:
            if time.perf_counter() - shown[0] > 60 or done == total:
                shown[0] = time.perf_counter()
                say(f"  sections: {done} of {total} notes", f"{shown[0] - t1:.0f} s")

        t1 = time.perf_counter()
        report = indexes.chunks.sync(progress)
        seconds = time.perf_counter() - t1
        say(f"section index build ({indexes.chunks.embedder.model_id})",
            f"{seconds:.0f} s = {seconds / 60:.1f} min, {report.embedded} sections "
            f"embedded, {report.embedded / seconds:.0f} sections/s")
    finally:
        indexes.close()


def note_paths(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for folder in ("daily", "resource")
                  for p in (root / folder).rglob("*.md"))


def cut_questions(root: Path, count: int, rng: random.Random) -> list[str]:
    """``count`` runs of 10-14 words cut from the vault's own notes (no headings, no
    links), as a question that remembers a passage roughly."""
    paths = note_paths(root)
    out = []
    while len(out) < count:
        text = (root / rng.choice(paths)).read_text(encoding="utf-8")
        words = " ".join(ln for ln in text.splitlines()
                         if ln and not ln.startswith(("#", "See also"))).split()
        n = rng.randint(10, 14)
        if len(words) > n:
            start = rng.randrange(len(words) - n)
            out.append(" ".join(words[start:start + n]).strip(".,"))
    return out


def date_questions(root: Path, count: int, rng: random.Random) -> list[str]:
    """``count`` questions naming a day the vault has day notes of."""
    days = sorted({dt.date.fromisoformat(p.split("/")[1]) for p in note_paths(root)
                   if p.startswith("daily/")})
    forms = ("what did I do on {m} {d}, {y}", "what happened on {m} {d}, {y}",
             "what did I work on {d} {m} {y}", "notes from {iso}")
    out = []
    for day in rng.sample(days, min(count, len(days))):
        form = rng.choice(forms)
        out.append(form.format(m=MONTHS[day.month - 1], d=day.day, y=day.year,
                               iso=day.isoformat()))
    return out


def asker(root: Path, limit: int) -> Callable[[str], object]:
    """One ``GET /search`` of the running daemon, as ``vaultlink search`` asks it."""
    from vaultlink.daemon.client import ask_daemon

    def ask(query: str) -> object:
        params = {"q": query, "limit": limit, "in": "sections"}
        return ask_daemon(root / ".vaultlink", "GET", "/search?" + urlencode(params),
                          timeout=600)
    return ask


def daemon_latency(label: str, ask: Callable[[str], object], pid: int,
                   queries: list[str], max_load: float, tries: int = 3) -> None:
    """p50/p95 through the daemon and its CPU per query; again while the machine's load
    is above ``max_load`` (the last try is printed whatever the load)."""
    for attempt in range(1, tries + 1):
        before = os.getloadavg()[0]
        cpu0 = cpu_seconds(pid)
        p50, p95, client = percentiles(ask, queries)
        cpu = (cpu_seconds(pid) - cpu0) * 1000 / (len(queries) + WARM)
        after = os.getloadavg()[0]
        say(f"{label}, try {attempt}", f"p50 {p50:.1f} ms, p95 {p95:.1f} ms wall; daemon "
            f"{cpu:.1f} ms CPU per query, client {client:.1f} ms; load before {before:.1f}")
        if max(before, after) <= max_load:
            return


def cli_runs(root: Path, label: str, query: str, runs: int) -> None:
    """``vaultlink search`` as a fresh process, ``runs`` times: wall and CPU of each."""
    walls, cpus = [], []
    for _ in range(runs):
        walls.append(cli(root, "search", query, "--json")[0])
        cpus.append(LAST_CPU[0])
    say(label, f"median {statistics.median(walls):.2f} s wall (runs "
        f"{', '.join(f'{w:.2f}' for w in walls)}), CPU "
        f"{', '.join(f'{c:.2f}' for c in cpus)} s")


# The parts of the daemon's answer (``GET /search``: a sync, then the search), as
# (file, function, what it is) for the table ``profile`` prints.
PARTS = (("base.py", "sync", "sync: the whole of it"),
         ("chunks.py", "_scan", "  walk of the vault (stat of every file)"),
         ("base.py", "_stored", "  the index's rows of its files"),
         ("base.py", "_sync_paths", "  comparing the two"),
         ("chunks.py", "search", "search: the whole of it"),
         ("embed.py", "embed", "  embedding the query (MiniLM int8)"),
         ("tables.py", "_nearest", "  vector product and top-k"),
         ("queries.py", "_keyword_list", "  FTS5 keyword list (BM25)"),
         ("queries.py", "_hit_rows", "  fused list and its rows (the three above)"),
         ("queries.py", "_terms_held", "  coverage: which sections hold the terms"),
         ("chunks.py", "_by_coverage", "  coverage list fused"),
         ("chunks.py", "_by_date", "  date list fused"),
         ("chunks.py", "_backing", "  backing sections of digest nodes"),
         ("chunks.py", "_linked_hits", "  links_of for the hits"))


def answer_times(chunks: Any, queries: list[str], limit: int) -> tuple[list[float], ...]:
    """Milliseconds of the sync and of the search for each query, as the daemon asks."""
    syncs, searches = [], []
    for q in queries:
        t0 = time.perf_counter()
        chunks.sync()
        t1 = time.perf_counter()
        chunks.search(q, limit)
        syncs.append((t1 - t0) * 1000)
        searches.append((time.perf_counter() - t1) * 1000)
    return syncs, searches


def profile(root: Path, queries: list[str], limit: int) -> None:
    """The daemon's answer in this process: sync and search timed, then under cProfile,
    milliseconds per query for each part (``PARTS``)."""
    from vaultlink.cli.settings import load_settings
    from vaultlink.index.recall import open_recall
    from vaultlink.vault.notes import Vault

    indexes = open_recall(Vault(root), load_settings(root).pipeline())
    try:
        answer_times(indexes.chunks, queries[:WARM], limit)
        cpu0 = time.process_time()
        syncs, searches = answer_times(indexes.chunks, queries, limit)
        cpu = (time.process_time() - cpu0) * 1000 / len(queries)
        for name, ms in (("sync", syncs), ("search", searches)):
            ms.sort()
            say(f"in-process {name}, {len(queries)} queries", f"p50 "
                f"{statistics.median(ms):.1f} ms, p95 {ms[int(len(ms) * 0.95) - 1]:.1f} ms")
        say("  both together", f"{cpu:.1f} ms CPU per query")
        prof = cProfile.Profile()
        prof.runcall(answer_times, indexes.chunks, queries, limit)
        stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        print("under cProfile (which slows the Python parts), ms per query:", flush=True)
        for file, function, what in PARTS:
            cum = sum(v[3] for k, v in stats.items()
                      if k[0].endswith(f"/{file}") and k[2] == function)
            print(f"  {what:<48} {cum * 1000 / len(queries):7.1f}", flush=True)
    finally:
        indexes.close()


def measure(root: Path, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    cut = cut_questions(root, args.queries, rng)
    dated = date_questions(root, args.date_queries, rng)
    print(f"queries: {len(cut)} cut from notes, e.g. {cut[0]!r}; {len(dated)} naming a "
          f"day, e.g. {dated[0]!r}", flush=True)
    cli_runs(root, "`vaultlink search`, no daemon", cut[0], args.cli_runs)
    daemon = Daemon(root)
    try:
        serving = daemon.serving()
        daemon.idle()
        say("daemon: start to idle", f"serving after {serving:.1f} s")
        ask = asker(root, args.limit)
        for q in cut[:3]:  # the first section search syncs the index and loads its vectors
            t0 = time.perf_counter()
            ask(q)
            say("  warm-up query", f"{(time.perf_counter() - t0) * 1000:.0f} ms")
        daemon_latency("search via daemon, cut questions", ask, daemon.proc.pid, cut,
                       args.max_load)
        daemon_latency("search via daemon, date questions", ask, daemon.proc.pid, dated,
                       args.max_load)
        cli_runs(root, "`vaultlink search`, daemon running", cut[1], args.cli_runs)
    finally:
        daemon.stop()
    if args.profile:
        profile(root, cut[:100] + dated[:50], args.limit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=1_000, help="digest nodes in the vault")
    parser.add_argument("--queries", type=int, default=200, help="questions cut from notes")
    parser.add_argument("--date-queries", type=int, default=100)
    parser.add_argument("--limit", type=int, default=10, help="hits asked for (the CLI's)")
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--max-load", type=float, default=4.0,
                        help="measure the daemon again while the load is above this")
    parser.add_argument("--profile", action="store_true",
                        help="time the parts of the daemon's answer in this process")
    parser.add_argument("--vault", type=Path, help="a vault this bench built (--keep)")
    parser.add_argument("--keep", action="store_true", help="keep the generated vault")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    say("machine", f"{os.cpu_count()} cores")
    fresh = args.vault is None  # a vault of an earlier run is measured again as it is
    root = args.vault or Path(tempfile.mkdtemp(prefix="vaultlink-search-scale-")) / "vault"
    try:
        if fresh:
            t0 = time.perf_counter()
            make_vault(root, args.notes, args.nodes, args.seed)
            say(f"vault: {args.notes} notes, {args.nodes} digest nodes", f"written in "
                f"{time.perf_counter() - t0:.1f} s")
            build(root)
        measure(root, args)
    finally:
        if fresh and args.keep:
            print(f"vault kept in {root}; measure it again with --vault {root}")
        elif fresh:
            shutil.rmtree(root.parent, ignore_errors=True)

if __name__ == "__main__":
    main()
