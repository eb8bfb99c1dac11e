"""What the soak measures from outside the daemon: its CPU and memory (``/proc``), the
status API as the plugin polls it, the notes' checkpoints, and the model server's own
record of every call (``server.py --transcript``)."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from vaultlink.daemon.client import live_status
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.state import State

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def load() -> str:
    """The load averages, as ``uptime`` prints them."""
    return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def pct(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) by the nearest rank; None for no values."""
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * len(s) + 0.5) - 1))]


class Poller(threading.Thread):
    """Asks ``GET /status`` every ``every`` seconds, as the Obsidian plugin does, and
    notes each answer's state, the current unit's notes and how long the answer took."""

    def __init__(self, root: Path, every: float = 10.0) -> None:
        super().__init__(daemon=True, name="soak-status")
        self.root, self.every = root, every
        self.answers: list[dict[str, Any]] = []
        self.misses = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                doc = live_status(self.root / ".vaultlink", timeout=5)[0]
            except Exception:  # the daemon restarting, or not up yet
                doc = None
            took = time.monotonic() - t0
            if doc is None:
                self.misses += 1
            else:
                self.answers.append({"at": time.time(), "seconds": took,
                                     "state": doc.get("state"),
                                     "queue": doc.get("queue_length"),
                                     "current": (doc.get("current") or {}).get("paths")})
            self.stop.wait(self.every)


class Sampler(threading.Thread):
    """Every ``every`` seconds: the daemon's RSS and CPU, the server's CPU. The daemon
    is restarted once, so its CPU is kept per process id and summed."""

    def __init__(self, server_pid: int, every: float = 5.0) -> None:
        super().__init__(daemon=True, name="soak-proc")
        self.server_pid, self.every = server_pid, every
        self.daemon_pid = 0
        self.cpu_by_pid: dict[int, float] = {}
        self.rss: list[tuple[int, float]] = []  # (daemon pid, MB), in time order
        self.server_cpu0 = cpu_seconds(server_pid)
        self.server_cpu = self.server_cpu0
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def sample(self) -> None:
        """One sample now (also called right before the daemon is stopped)."""
        with self._lock:
            pid = self.daemon_pid
            if pid:
                cpu = cpu_seconds(pid)
                if cpu:
                    self.cpu_by_pid[pid] = cpu
                mb = rss_mb(pid)
                if mb:
                    self.rss.append((pid, mb))
            self.server_cpu = cpu_seconds(self.server_pid) or self.server_cpu

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.every)

    def daemon_cpu(self) -> float:
        """CPU seconds of every daemon process so far."""
        with self._lock:
            return sum(self.cpu_by_pid.values())

    def rss_by_process(self) -> list[dict[str, float]]:
        """Per daemon process, in start order: its first, last and largest RSS (MB)."""
        with self._lock:
            pids = list(dict.fromkeys(pid for pid, _ in self.rss))
            out = []
            for pid in pids:
                mbs = [mb for p, mb in self.rss if p == pid]
                out.append({"first": round(mbs[0], 1), "last": round(mbs[-1], 1),
                            "max": round(max(mbs), 1)})
            return out

    def rss_now(self) -> float:
        """The latest RSS sample (MB)."""
        with self._lock:
            return self.rss[-1][1] if self.rss else 0.0


def settled_notes(root: Path, expected: dict[str, bytes]) -> set[str]:
    """The notes whose checkpoint holds the text the bench last wrote (integrated)."""
    db = root / ".vaultlink" / "state.sqlite"
    if not db.exists():
        return set()
    state = State(db)
    try:
        hashes = state.checkpoint_hashes()
    finally:
        state.close()
    return {p for p, text in expected.items() if hashes.get(p) == content_hash(text)}


def transcript(path: Path) -> list[dict[str, Any]]:
    """Every call the model server recorded."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def call_kind(record: dict[str, Any]) -> str:
    """extract, decide, topics or other, by the system prompt's opening."""
    head = str(record.get("system_head", ""))
    return ("extract" if head.startswith("You pick what is worth") else
            "decide" if head.startswith("You file one memory unit") else
            "topics" if "topic" in head.lower() else "other")


def token_rate(records: list[dict[str, Any]]) -> float | None:
    """Answer tokens per second of generation over ``records`` (None: none)."""
    tokens = sum(int(r.get("answer_tokens", 0)) for r in records)
    seconds = sum(float(r.get("eval_seconds", 0.0)) for r in records)
    return tokens / seconds if seconds > 0 and tokens else None


def calls_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Calls, prompt tokens, tokens read from the prefix cache, per kind of call."""
    out: dict[str, Any] = {}
    for kind in ("extract", "decide", "topics", "other"):
        rs = [r for r in records if call_kind(r) == kind]
        if not rs:
            continue
        prompt = sum(int(r.get("prompt_tokens", 0)) for r in rs)
        cached = sum(int(r.get("cached_tokens", 0)) for r in rs)
        out[kind] = {"calls": len(rs), "prompt_tokens": prompt, "cached_tokens": cached,
                     "evaluated_tokens": prompt - cached,
                     "median_seconds": round(statistics.median(
                         float(r.get("seconds", 0.0)) for r in rs), 1)}
    return out
