"""Daemon numbers: settle -> digest latency, idle CPU and memory, a 1,000-note burst.

Runs ``python -m vaultlink watch --foreground`` (offline integrator) on a copy of the
sample vault as a subprocess and measures it from outside through ``/proc`` (no
psutil): CPU from ``/proc/<pid>/stat`` (utime + stime), memory from
``/proc/<pid>/status`` (VmRSS, VmHWM), wake-ups from the threads' voluntary context
switches.

    python -m bench.bench_daemon [--quiet 1.0] [--notes 10] [--idle 60] [--burst 1000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from vaultlink.daemon.client import live_status
from vaultlink.vault.state import State

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
TOPICS = ["cache", "index", "deploy", "backup", "queue", "review", "search", "schema",
          "metrics", "alerts", "retries", "tokens", "sessions", "logging", "billing"]
VERBS = ["rebuild", "rotate", "throttle", "shard", "compact", "replay", "pin", "drain"]


def note_text(rng: random.Random, n: int) -> str:
    """A day note with two sections the offline extractor turns into units."""
    a, b = rng.sample(TOPICS, 2)
    v = rng.choice(VERBS)
    return (f"## {a.capitalize()} {v} plan {n}\n\nWe decided to {v} the {a} every "
            f"{rng.randint(2, 90)} minutes, because the {a} grew past "
            f"{rng.randint(10, 900)} MB and slowed the {b} path for everyone. The owner "
            f"is team {rng.choice('ABCDEFG')}, who will review the {a} numbers again next "
            f"week.\n\n## {b.capitalize()} capacity {n}\n\nThe {b} service keeps "
            f"{rng.randint(2, 12)} replicas in each region after the {v} work. We measured "
            f"{rng.randint(5, 500)} ms at p99 after the change, down from "
            f"{rng.randint(600, 2000)} ms before it, so the {b} alerts stay as they are.\n")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def memory_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def wakeups(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def status(root: Path) -> dict[str, Any] | None:
    return live_status(root / ".vaultlink", timeout=5)[0]


def wait_idle(root: Path, timeout: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        s = status(root)
        if s is not None and s["state"] == "idle" and not s["queue"]:
            return time.monotonic() - t0
        time.sleep(0.1)
    raise SystemExit(f"the daemon did not become idle in {timeout} s")


def first_decision_at(state: State, path: str) -> float | None:
    entries = [e for e in state.journal(limit=50, path=path) if path in e.unit.get("paths", [])]
    return min((e.at for e in entries), default=None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quiet", type=float, default=1.0, help="watch.quiet_seconds")
    ap.add_argument("--notes", type=int, default=10, help="notes for the latency numbers")
    ap.add_argument("--idle", type=float, default=60.0, help="seconds of idle measured")
    ap.add_argument("--burst", type=int, default=1000, help="notes written at once")
    ap.add_argument("--rich", action="store_true",
                    help="burst notes with material to integrate (default: one-liners)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vaultlink-bench-"))
    root = work / "vault"
    shutil.copytree(REPO / "sample_vault", root, copy_function=shutil.copy)  # fresh mtimes
    env = {**os.environ, "VAULTLINK_API__PORT": "0", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "vaultlink", "watch", "--foreground", "--vault", str(root),
           "--llm", "offline", "--quiet-seconds", str(args.quiet)]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while status(root) is None:
            time.sleep(0.05)
        up = time.monotonic() - t0
        first = wait_idle(root, 600)
        print(f"start-up to API: {up:.1f} s; sample vault (22 notes) integrated in "
              f"{first:.1f} s more")

        # settle -> digest: a note is written once; it settles `quiet` s later
        rng = random.Random(3)
        state = State(root / ".vaultlink/state.sqlite")
        lat: list[float] = []
        for n in range(args.notes):
            path = f"daily/2026-09-{n + 1:02d}.md"
            written = time.time()
            (root / path).write_text(note_text(rng, 900 + n))
            deadline = time.monotonic() + 60
            while (at := first_decision_at(state, path)) is None:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{path} was not integrated in 60 s")
                time.sleep(0.02)
            lat.append(at - (written + args.quiet))
            wait_idle(root, 120)
        print(f"settle -> first digest write ({args.notes} notes, quiet {args.quiet} s): "
              f"median {statistics.median(lat) * 1000:.0f} ms, max {max(lat) * 1000:.0f} ms")

        # idle: nothing changes for a minute
        wait_idle(root, 120)
        c0, w0, t1 = cpu_seconds(proc.pid), wakeups(proc.pid), time.monotonic()
        time.sleep(args.idle)
        secs = time.monotonic() - t1
        cpu, woke = cpu_seconds(proc.pid) - c0, wakeups(proc.pid) - w0
        mem = memory_kb(proc.pid)
        print(f"idle {secs:.0f} s: CPU {cpu:.2f} s ({100 * cpu / secs:.3f} %), "
              f"{woke / secs:.1f} wake-ups/s (all threads), RSS {mem['VmRSS'] / 1024:.0f} MiB")

        # burst: many notes at once (by default one-liners with nothing to extract, so
        # this measures the watcher, the queue and the runs, not the integrator)
        if args.burst:
            burst = root / "daily" / "burst"
            burst.mkdir()
            t2 = time.monotonic()
            for i in range(args.burst):
                text = note_text(rng, 5000 + i) if args.rich else f"- item {i}\n"
                (burst / f"b{i:05d}.md").write_text(text)
            written_s = time.monotonic() - t2
            peak = 0
            while True:
                s = status(root)
                if time.monotonic() - t2 > 3600:
                    raise SystemExit("the burst did not drain in an hour")
                peak = max(peak, memory_kb(proc.pid)["VmRSS"])
                if s is not None and s["state"] == "idle" and not s["queue"] and \
                        time.monotonic() - t2 > args.quiet:
                    break
                time.sleep(0.2)
            drained = time.monotonic() - t2
            done = sum(1 for p in state.checkpoints() if p.startswith("daily/burst/"))
            mem = memory_kb(proc.pid)
            kind = "rich" if args.rich else "one-line"
            print(f"burst of {args.burst} {kind} notes (written in {written_s:.1f} s): drained in "
                  f"{drained:.1f} s, {done} checkpointed; RSS peak {peak / 1024:.0f} MiB, "
                  f"after {mem['VmRSS'] / 1024:.0f} MiB (VmHWM {mem['VmHWM'] / 1024:.0f} MiB)")
        state.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        print(f"SIGTERM: exited with status {code}")
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
