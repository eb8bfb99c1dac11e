"""Crash loop: SIGKILL real ``vaultlink dream`` and daemon processes at the fault points.

A small vault keeps receiving notes. Each trial starts either ``vaultlink dream`` or the
daemon (``vaultlink watch``) with ``VAULTLINK_FAULTS=kill:<point>@<n>`` (a random point of
``vaultlink/vault/faults.py`` and a random n), with the offline integrator or the real
``ollama.Client`` against the fake Ollama server. A process that reaches its point dies
by SIGKILL; one that finishes first counts as "not reached". After each trial: no digest
file torn, none lost (``tests/crashkit.whole``). Every ``--settle-every`` trials, and at
the end, a clean run must settle everything (``crashkit.settled``: check clean, nothing in
flight, the journal matching the files, no duplicate node, every unit decided, every
note checkpointed).

    python -m bench.crash_loop [--trials 1000] [--seed 1] [--providers offline,ollama]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.crashkit import CrashModel, add_note, make_vault, settled, stable_nodes, whole
from tests.fakes.ollama_server import FakeOllama
from vaultlink.daemon.client import live_status
from vaultlink.daemon.process import read_info
from vaultlink.vault.faults import POINTS

REPO = Path(__file__).resolve().parent.parent
AIMED = sorted(p for p in POINTS if p != "mid_undo")  # no undo runs in the loop


def env(fault: str) -> dict[str, str]:
    e = {**os.environ, "PYTHONPATH": str(REPO), "VAULTLINK_API__PORT": "0",
         "VAULTLINK_LLM__RETRIES": "0"}
    e.pop("VAULTLINK_FAULTS", None)
    if fault:
        e["VAULTLINK_FAULTS"] = fault
    return e


def flags(provider: str, url: str) -> list[str]:
    return ["--llm", "offline"] if provider == "offline" else [
        "--llm", "ollama", "--ollama-host", url]


def idle(root: Path, pid: int) -> bool:
    info = read_info(root / ".vaultlink")
    if info is None or info.get("pid") != pid:
        return False
    status = live_status(root / ".vaultlink", timeout=5)[0]
    return bool(status) and status["state"] == "idle" and not status["queue"]


def run_dream(root: Path, provider: str, url: str, fault: str) -> int:
    # every unit waiting in one run: a backlog left by the cap would pass for lost work
    cmd = [sys.executable, "-m", "vaultlink", "dream", "--vault", str(root),
           "--max-units", "100000", *flags(provider, url)]
    return subprocess.run(cmd, env=env(fault), capture_output=True, timeout=600).returncode


def run_daemon(root: Path, provider: str, url: str, fault: str, log: Path) -> int:
    cmd = [sys.executable, "-m", "vaultlink", "watch", "--foreground", "--vault", str(root),
           "--quiet-seconds", "0.2", *flags(provider, url)]
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, env=env(fault), stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            if idle(root, proc.pid):  # drained without reaching the point
                proc.send_signal(signal.SIGTERM)
                return proc.wait(timeout=120)
            time.sleep(0.1)
        return proc.wait(timeout=1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def classify(problem: str) -> str:
    if "torn" in problem or "does not parse" in problem:
        return "corrupt"
    if "created" in problem or "same text" in problem:
        return "duplicate"
    if "gone" in problem or "never decided" in problem or "not checkpointed" in problem:
        return "lost"
    return "other"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--providers", default="offline,ollama")
    ap.add_argument("--settle-every", type=int, default=50)
    ap.add_argument("--keep", action="store_true", help="keep the vaults for inspection")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    providers = args.providers.split(",")
    work = Path(tempfile.mkdtemp(prefix="vaultlink-crash-"))
    vaults = {p: make_vault(work / p) for p in providers}
    notes = dict.fromkeys(providers, 0)
    log = work / "daemon.out"
    outcomes: Counter[str] = Counter()
    problems: list[tuple[int, str, str]] = []
    t0 = time.monotonic()
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(FakeOllama(model=CrashModel()))
        for trial in range(1, args.trials + 1):
            provider = rng.choice(providers)
            root = vaults[provider]
            for _ in range(rng.randint(1, 2)):
                notes[provider] += 1
                add_note(root, notes[provider])
            kind = rng.choice(["dream", "daemon"])
            point = rng.choice(AIMED)
            fault = f"kill:{point}@{rng.choice([1, 1, 2, 3])}"
            before = stable_nodes(root)
            code = (run_dream(root, provider, server.url, fault) if kind == "dream"
                    else run_daemon(root, provider, server.url, fault, log))
            how = f"killed at {point}" if code == -signal.SIGKILL else "not reached"
            outcomes[f"{kind} {how}"] += 1
            found = [(trial, provider, p) for p in whole(root, before)]
            if code not in (-signal.SIGKILL, 0, 1):
                found.append((trial, provider, f"{kind} exited with {code}"))
            if trial % args.settle_every == 0 or trial == args.trials:
                for name in providers:
                    if run_dream(vaults[name], name, server.url, "") not in (0, 1):
                        found.append((trial, name, "the clean run failed"))
                    found += [(trial, name, p) for p in settled(vaults[name], name)]
            for t, name, p in found:  # as they come: a long run may be stopped early
                print(f"  trial {t} ({name}, {kind} {how}): {p}", flush=True)
            problems += found
            if trial % 10 == 0:
                print(f"trial {trial}: {len(problems)} problem(s) so far, "
                      f"{time.monotonic() - t0:.0f} s", flush=True)
    kinds = Counter(classify(p) for _, _, p in problems)
    killed = sum(c for k, c in outcomes.items() if "killed" in k)
    print(f"\ntrials: {args.trials} ({killed} killed at a point), notes added: "
          f"{sum(notes.values())}, time: {time.monotonic() - t0:.0f} s")
    for k, c in sorted(outcomes.items()):
        print(f"  {k}: {c}")
    print(f"lost: {kinds['lost']}, corrupt: {kinds['corrupt']}, duplicate: "
          f"{kinds['duplicate']}, other problems: {kinds['other']}")
    for trial, provider, p in problems[:40]:
        print(f"  trial {trial} ({provider}): {p}")
    if args.keep or problems:
        print(f"vaults kept in {work}")
    else:
        shutil.rmtree(work)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
