"""Start-up with nothing changed, on a settled big vault: ``vaultlink dream`` and a daemon
restart (``vaultlink watch`` start to serving), several runs each.

The two figures of issue #17 that ``bench/bench_scale.py`` measures once each, repeated
so a median means something on a shared machine: wall seconds (they follow the load)
and CPU seconds, user + sys (they mostly do not), with the 1-minute load average.

The vault (``bench/scale_vault.py``) is built and settled once (node index, section
index with hash vectors, the backfill window integrated) and kept in ``--vault`` for
later runs:

    python -m bench.bench_startup --vault /tmp/vl10k [--notes 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from bench.bench_daemon import cpu_seconds
from bench.bench_scale import LAST_CPU, Daemon, HashVectors, cli, load
from bench.scale_vault import make_vault


def sections(root: Path) -> None:
    """Build the section index (what ``search`` reads, and what every ``dream`` keeps
    current) with hash vectors: a settled vault has one, and building it with MiniLM
    takes an hour here (46,000 sections). A no-change start never reads its vectors,
    only its list of files, so their values do not change what is measured."""
    from vaultlink.index.recall import open_indexes
    from vaultlink.vault.notes import Vault

    indexes = open_indexes(Vault(root), HashVectors())
    try:
        indexes.chunks.sync()
    finally:
        indexes.close()


def settle(root: Path, notes: int, nodes: int, seed: int, backfill_days: int) -> None:
    """Write the vault, build its node index and integrate the backfill window."""
    t0 = time.perf_counter()
    make_vault(root, notes, nodes, seed)
    with (root / ".vaultlink" / "config.yaml").open("a", encoding="utf-8") as fh:
        fh.write(f"backfill:\n  days: {backfill_days}\n")
    cli(root, "node-search", "first build", "--json")
    sections(root)
    out = cli(root, "dream", "--json", "--max-units", "100000")[1]
    counts = json.loads(out)["counts"]
    print(f"settled {notes} notes, {nodes} nodes in {time.perf_counter() - t0:.0f} s: "
          f"{counts['changed']} notes, {counts['integrated']} units integrated  ({load()})")


def show(what: str, walls: list[float], cpus: list[float], loads: list[float]) -> None:
    print(f"{what:<40} median {statistics.median(walls):.2f} s wall "
          f"(runs {', '.join(f'{t:.2f}' for t in walls)}), median "
          f"{statistics.median(cpus):.2f} s CPU (runs {', '.join(f'{c:.2f}' for c in cpus)})"
          f"   (load {min(loads):.1f}-{max(loads):.1f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, required=True,
                        help="where the settled vault is kept (built if absent)")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=1_000)
    parser.add_argument("--backfill-days", type=int, default=3)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("dream", "daemon"), help="measure one figure")
    parser.add_argument("--bytecode", choices=("cached", "none"), default="cached",
                        help="cached: vaultlink's modules load from .pyc files, as from a "
                        "pip install (kept under the vault's folder); none: compiled from "
                        "source at every start (PYTHONDONTWRITEBYTECODE=1, ~0.16 s of CPU)")
    args = parser.parse_args()
    root = args.vault
    # The commands measured inherit this process's environment.
    if args.bytecode == "cached":
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(root.resolve().parent / f"{root.name}.pyc")
    else:
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    print(f"bytecode: {args.bytecode}", flush=True)
    if not (root / ".vaultlink" / "state.sqlite").exists():
        settle(root, args.notes, args.nodes, args.seed, args.backfill_days)
    # A change since the last run (or none) is read now, and the bytecode written.
    cli(root, "dream", "--json")

    if args.only in (None, "dream"):
        walls, cpus, loads = [], [], []
        for _ in range(args.runs):
            seconds, out = cli(root, "dream", "--json")
            if json.loads(out)["counts"]["changed"]:
                raise SystemExit(f"the vault changed under the benchmark: {out}")
            walls.append(seconds)
            cpus.append(LAST_CPU[0])
            loads.append(os.getloadavg()[0])
        show("`vaultlink dream`, nothing changed", walls, cpus, loads)

    if args.only in (None, "daemon"):
        walls, cpus, loads = [], [], []
        for _ in range(args.runs):
            daemon = Daemon(root)
            try:
                walls.append(daemon.serving())
                cpus.append(cpu_seconds(daemon.proc.pid))
                loads.append(os.getloadavg()[0])
                daemon.idle()
            finally:
                daemon.stop()
        show("daemon: no-change restart to serving", walls, cpus, loads)
    subprocess.run(["uptime"], check=False)


if __name__ == "__main__":
    main()
