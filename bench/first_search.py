"""The first ``vaultlink search`` after ``vaultlink demo`` against the next one.

Each repetition makes a fresh demo vault (``vaultlink demo --to DIR``), then runs the
README's example query twice, back to back, and records wall and CPU seconds of each
(CPU: the child's user + system time, which a busy machine disturbs less than wall
time) and the first hit's note. Prints each repetition, then the medians and the
first/second ratios, with the load average beside them.

    python -m bench.first_search [--reps 5] [--vaultlink .venv/bin/vaultlink]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

QUERY = "why does autovacuum fall behind"


def timed(cmd: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(wall seconds, CPU seconds of the child, the finished process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def first_hit(proc: subprocess.CompletedProcess[str], as_json: bool) -> str:
    """The first hit's path, from ``--json`` output, else the first output line."""
    if as_json:
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            return "(no JSON: " + proc.stdout.strip().splitlines()[0][:80] + ")"
        hits = data.get("hits") or data.get("results") or data.get("chunks") or []
        if isinstance(data, list):
            hits = data
        return str(hits[0].get("path", hits[0])) if hits else "(no hits)"
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return lines[0][:100] if lines else "(nothing printed)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--vaultlink", default=".venv/bin/vaultlink",
                    help="the vaultlink executable to measure")
    ap.add_argument("--no-json", action="store_true",
                    help="the search has no --json (an old checkout)")
    args = ap.parse_args()
    exe = str(Path(args.vaultlink).resolve())
    rows = []
    for rep in range(1, args.reps + 1):
        work = Path(tempfile.mkdtemp(prefix="vaultlink-firstsearch-"))
        try:
            dest = work / "demo"
            demo = subprocess.run([exe, "demo", "--to", str(dest)], capture_output=True,
                                  text=True, timeout=1800)
            if demo.returncode not in (0, 1):
                print(demo.stdout[-2000:], demo.stderr[-2000:])
                return 2
            cmd = [exe, "search", QUERY, "--vault", str(dest)]
            if not args.no_json:
                cmd.append("--json")
            load = os.getloadavg()[0]
            w1, c1, p1 = timed(cmd)
            w2, c2, _ = timed(cmd)
            rows.append((w1, c1, w2, c2, load))
            print(f"rep {rep}: first {w1:5.2f} s wall {c1:5.2f} s CPU, next {w2:5.2f} s wall "
                  f"{c2:5.2f} s CPU, ratio wall {w1 / w2:4.2f} CPU {c1 / c2:4.2f}, load "
                  f"{load:.2f}; first hit: {first_hit(p1, not args.no_json)}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    med = [statistics.median(r[i] for r in rows) for i in range(5)]
    print(f"\nmedians over {len(rows)}: first {med[0]:.2f} s wall / {med[1]:.2f} s CPU, "
          f"next {med[2]:.2f} s wall / {med[3]:.2f} s CPU; median ratio wall "
          f"{statistics.median(r[0] / r[2] for r in rows):.2f}, CPU "
          f"{statistics.median(r[1] / r[3] for r in rows):.2f}; load {med[4]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
