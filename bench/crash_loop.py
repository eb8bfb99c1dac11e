"""Crash loop: kill -9 the daemon at random moments of its work, restart, repeat.

A copy of the sample vault keeps receiving new notes while ``python -m vaultlink
watch --foreground`` (offline integrator, tiny quiet period) integrates them. Each
trial starts the daemon, adds notes, waits until it is working, lets it work for a
random moment and kills it with SIGKILL. After every kill the vault must hold:

* every digest file parses (no torn write) and no node is missing (set aside);
* every note the checkpoint calls integrated (same hash as on disk) has its
  decisions in the journal, and every node those decisions wrote exists and cites it
  under ``## Sources`` -- a checkpoint never runs ahead of the digest;
* no digest node is duplicated: one CREATE per unit, no two nodes with the same text.
  (Two nodes with one *name* are only reported: the offline integrator makes
  ``hybrid-search-2.md`` beside ``hybrid-search.md`` on the sample vault without any
  crash, when a unit is not similar enough to the existing node.)

At the end the daemon runs until the queue is drained, and then every readable
source note must be checkpointed at its current hash (nothing lost).

    python -m bench.crash_loop [--trials 50] [--seed 1] [--keep]
"""

from __future__ import annotations

import argparse
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

from vaultlink.daemon.client import live_status
from vaultlink.daemon.process import read_info
from vaultlink.dream.extract import source_note
from vaultlink.dream.offline import OfflineExtractor
from vaultlink.dream.units import ACTIONS
from vaultlink.errors import NoteUnreadable
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.sections import find_sources_section
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault, parse_note
from vaultlink.vault.state import State

REPO = Path(__file__).resolve().parent.parent
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


def start(root: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "VAULTLINK_API__PORT": "0", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "vaultlink", "watch", "--foreground", "--vault", str(root),
           "--llm", "offline", "--quiet-seconds", "0.2"]
    with open(log, "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)


def api_status(root: Path, pid: int) -> dict[str, object] | None:
    """The status of daemon ``pid`` (None while another, or none, answers)."""
    info = read_info(root / ".vaultlink")
    if info is None or info.get("pid") != pid:
        return None
    return live_status(root / ".vaultlink", timeout=2)[0]


def wait(pred, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def check(root: Path) -> list[str]:
    """The crash invariants; returns the problems found."""
    vault = Vault(root)
    problems: list[str] = []
    bodies: Counter[str] = Counter()
    texts: dict[str, str] = {}
    for path in (root / "digest").rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.name.endswith((".vaultlink.old",)):
            problems.append(f"{rel}: a node left set aside")
        if not path.is_file() or path.name.startswith(".") or path.suffix != ".md":
            continue
        try:
            note = parse_note(rel, path.read_bytes())
        except NoteUnreadable as exc:
            problems.append(f"{rel}: does not parse: {exc}")
            continue
        texts[rel] = note.body
        if "/topics/" not in rel:
            bodies[" ".join(note.body.split())] += 1
    problems += [f"{c} nodes hold the same text: {b[:60]!r}" for b, c in bodies.items() if c > 1]
    state = State(root / ".vaultlink/state.sqlite")
    try:
        journal = state.journal(limit=100_000)
        checkpoints = state.checkpoints()
    finally:
        state.close()
    creates = Counter((e.unit.get("name"), tuple(sorted(e.unit.get("paths", []))))
                      for e in journal if e.action == "CREATE" and e.undone_by is None)
    problems += [f"unit {u} created {c} nodes" for u, c in creates.items() if c > 1]
    for path, cp in checkpoints.items():
        try:
            if content_hash(vault.read_bytes(path)) != cp.hash:
                continue  # changed since: it is queued again at start-up
        except Exception:
            continue
        entries = [e for e in journal if path in e.unit.get("paths", [])]
        # Notes here are written once, so every unit of the whole note must be decided.
        src, _ = source_note(vault.read_note(path), frozenset())
        expected = {u.name for u in OfflineExtractor().extract_note(src)}
        lost = expected - {str(e.unit.get("name")) for e in entries}
        if lost:
            problems.append(f"{path}: checkpointed, but unit(s) {sorted(lost)} were never "
                            "integrated")
        for e in entries:
            if e.action not in ACTIONS or e.undone_by is not None:
                continue
            if e.target not in texts:
                problems.append(f"{path}: checkpointed, but {e.target} (#{e.id}) is missing")
                continue
            sec = find_sources_section(texts[e.target])
            cited = {link.target for link in find_wikilinks(
                "\n".join(texts[e.target].split("\n")[sec.start:sec.end]))} if sec else set()
            if path not in cited:
                problems.append(f"{path}: checkpointed, but {e.target} does not cite it")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the vault for inspection")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="vaultlink-crash-"))
    root = work / "vault"
    shutil.copytree(REPO / "sample_vault", root, copy_function=shutil.copy)  # fresh mtimes
    log = work / "daemon.out"
    failures: list[tuple[int, str]] = []
    n = 0
    killed_working = 0
    t0 = time.monotonic()
    for trial in range(1, args.trials + 1):
        proc = start(root, log)
        for _ in range(rng.randint(1, 3)):
            n += 1
            (root / "daily" / f"2026-08-{n:03d}.md").write_text(note_text(rng, n))
        up = wait(lambda p=proc: api_status(root, p.pid) is not None, 60)
        if not up:
            failures.append((trial, "the daemon did not come up in 60 s"))
        working = wait(lambda p=proc: (s := api_status(root, p.pid)) is not None
                       and s.get("state") == "working", 5)
        killed_working += working
        time.sleep(rng.uniform(0.0, 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        failures += [(trial, p) for p in check(root)]
        print(f"trial {trial}: killed {'while working' if working else 'idle'}; "
              f"{len(failures)} failure(s) so far", flush=True)
    proc = start(root, log)
    drained = wait(lambda: (s := api_status(root, proc.pid)) is not None and s["state"] == "idle"
                   and not s["queue"], 300)
    proc.send_signal(signal.SIGTERM)
    stopped = proc.wait(timeout=60) == 0
    failures += [(0, p) for p in check(root)]
    if not drained:
        failures.append((0, "the queue did not drain in 300 s after the last restart"))
    if not stopped:
        failures.append((0, "SIGTERM did not stop the daemon cleanly (exit status != 0)"))
    vault = Vault(root)
    state = State(root / ".vaultlink/state.sqlite")
    checkpoints, queue = state.checkpoints(), state.queue()
    state.close()
    for info in vault.scan([vault.daily, vault.resource]):
        try:
            vault.read_note(info.path)
        except NoteUnreadable:
            continue
        cp = checkpoints.get(info.path)
        if (cp is None or cp.hash != info.hash) and info.path not in {q.path for q in queue}:
            failures.append((0, f"{info.path}: neither integrated nor queued after draining"))
    nodes = len([p for p in (root / "digest").rglob("*.md")])
    names = Counter(str(parse_note(p.name, p.read_bytes()).frontmatter.get("name", "")).lower()
                    for p in (root / "digest").rglob("*.md") if "topics" not in p.parts)
    alike = sorted(n for n, c in names.items() if c > 1)
    print(f"\ntrials: {args.trials} ({killed_working} killed while working), notes added: {n}, "
          f"digest nodes: {nodes}, time: {time.monotonic() - t0:.0f} s")
    print(f"failures: {len(failures)}")
    if alike:
        print(f"(not a failure) names shared by two or more nodes: {alike}")
    for trial, problem in failures[:40]:
        print(f"  trial {trial or 'final'}: {problem}")
    if args.keep or failures:
        print(f"vault kept at {root} (daemon output: {log})")
    else:
        shutil.rmtree(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
