"""``python -m bench.soak``: a week of notes arriving beside ``vaultlink watch`` with a real
local model, as a laptop runs it.

    python -m bench.soak [--model qwen2.5-coder-0.5b] [--days 7] [--minutes-per-day 15]
        [--pages-per-day 2] [--quiet 120] [--drain-minutes 60] [--work DIR] [--out DIR]

It serves the GGUF with ``bench.realmodel.server`` (its ``--transcript`` records every
call), measures the server alone (three extraction calls), starts ``vaultlink watch`` on
an empty vault with the shipped defaults but the model, its host and the quiet time, and
writes the week (``week.py``) at the pace of a working day compressed into
``--minutes-per-day``. Meanwhile a thread asks ``GET /status`` every 10 s as the plugin
does; the bench appends a line to the first fully written day note it sees in the
daemon's hands (``current`` of the status) while the daemon integrates it;
at half-week the daemon is stopped (SIGTERM) and started again. After the last day it
waits for the queue to drain, stops the daemon, measures the server alone again, runs
``vaultlink check`` and writes ``<out>/soak-<model>.md`` and ``.json``. The vault stays
in ``<work>/vault`` to be read (the daemon's log in its ``.vaultlink/logs``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.realmodel.fetch_model import CACHE_ENV, DEFAULT_CACHE, MODELS, fetch
from bench.realmodel.smoke import free_port, wait_up
from bench.soak import probe
from bench.soak.report import Run, figures, markdown
from bench.soak.week import EDIT_LINE, REPO, Write, clipped_pages, schedule
from vaultlink.daemon.client import live_status
from vaultlink.errors import ModelError
from vaultlink.llm.ollama import OllamaChat
from vaultlink.pipeline.extract.prompt import EXTRACT_SCHEMA, extract_prompt

TICK = 1.0  # seconds between the bench's own looks (checkpoints, the edit, the clock)


def speed_alone(host: str, model: str, calls: int = 3) -> float:
    """Extraction calls on clipped pages with nothing else running; their wall time."""
    chat = OllamaChat(host, model, 8192, 0.0, 2, silence_seconds=900)
    t0 = time.monotonic()
    for path, text in clipped_pages(calls):
        try:  # the server records the call's tokens and seconds whatever it answered
            chat.chat([{"role": "system", "content": extract_prompt("en")},
                       {"role": "user",
                        "content": f"Note {path}\n\n{text}\n\n(At most 3 units.)"}],
                      schema=EXTRACT_SCHEMA)
        except ModelError as exc:
            print(f"alone: {path}: {exc}"[:200], flush=True)
    chat.close()
    return time.monotonic() - t0


def start_daemon(root: Path, host: str, model: str, quiet: float,
                 log: Any) -> subprocess.Popen[bytes]:
    """``vaultlink watch`` with shipped defaults but the model, its host, the quiet time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTLINK_")}
    env |= {"VAULTLINK_API__PORT": "0", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "vaultlink", "watch", "--foreground", "--vault", str(root),
           "--llm", "ollama", "--ollama-host", host, "--model", model,
           "--quiet-seconds", str(quiet)]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    deadline = time.monotonic() + 300
    while live_status(root / ".vaultlink", timeout=5)[0] is None:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the daemon did not come up (exit {proc.poll()}); see {log.name}")
        time.sleep(0.5)
    return proc


def stop_daemon(proc: subprocess.Popen[bytes], sampler: probe.Sampler) -> float:
    """SIGTERM (the unit in progress finishes, or is abandoned after 30 s); seconds taken."""
    sampler.sample()
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(180)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)
    return time.monotonic() - t0


class Soak:
    """One soak: the clock, the writes, the edit, the restart, the drain."""

    def __init__(self, args: argparse.Namespace, root: Path, host: str, model: str,
                 sampler: probe.Sampler, log: Any) -> None:
        self.args, self.root, self.host, self.model = args, root, host, model
        self.sampler, self.log = sampler, log
        self.run = Run(quiet=args.quiet, day_seconds=args.minutes_per_day * 60)
        self.proc: subprocess.Popen[bytes] | None = None
        self.finished: list[str] = []  # day notes written in full: edit candidates

    def write(self, w: Write) -> None:
        path = self.root / w.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(w.text, encoding="utf-8")  # in place, as an editor or clipper does
        self.run.note_written(w.path, w.text.encode("utf-8"), time.time(), w.kind)
        if w.final and w.kind == "day":  # the person adds to their own notes
            self.finished.append(w.path)

    def look(self) -> None:
        """Checkpoints now; the edit when the daemon works on its note."""
        self.run.saw_settled(probe.settled_notes(self.root, self.run.expected), time.time())
        if self.finished and self.run.edit is None:
            doc = live_status(self.root / ".vaultlink", timeout=5)[0]
            current = ((doc or {}).get("current") or {}).get("paths") or []
            caught = [p for p in self.finished if p in current]
            if caught:  # the first finished note seen in the daemon's hands
                self.edit(caught[0], caught=True)

    def edit(self, target: str, caught: bool) -> None:
        path = self.root / target
        text = path.read_text(encoding="utf-8") + EDIT_LINE
        path.write_text(text, encoding="utf-8")
        self.run.note_written(target, text.encode("utf-8"), time.time(), "day")
        self.run.edit = {"path": target, "during_integration": caught, "at": time.time()}
        print(f"edited {target} ({'while the daemon integrated it' if caught else 'late'})",
              flush=True)

    def wait_until(self, when: float) -> None:
        while (now := time.time()) < when:
            self.look()
            time.sleep(min(TICK, max(0.0, when - now)))

    def restart(self) -> None:
        assert self.proc is not None
        took = stop_daemon(self.proc, self.sampler)
        print(f"daemon stopped in {took:.1f} s; starting it again ({probe.load()})", flush=True)
        self.run.restart = {"at": time.time(), "stop_seconds": round(took, 1),
                            "settled_before": len(self.run.settled_at)}
        self.start()

    def start(self) -> None:
        self.proc = start_daemon(self.root, self.host, self.model, self.args.quiet, self.log)
        self.sampler.daemon_pid = self.proc.pid

    def week(self) -> None:
        args = self.args
        writes = schedule(args.days, args.pages_per_day)
        day_s = args.minutes_per_day * 60
        restart_day = args.days // 2
        t0 = time.time()
        self.run.started = t0
        for day in range(args.days):
            base = t0 + day * day_s
            todo = [w for w in writes if w.day == day]
            restarted = day != restart_day
            for w in todo:
                if not restarted and w.at >= 0.5:
                    self.wait_until(base + 0.5 * day_s)
                    self.restart()
                    restarted = True
                self.wait_until(base + w.at * day_s)
                self.write(w)
            if not restarted:
                self.wait_until(base + 0.5 * day_s)
                self.restart()
            self.wait_until(base + day_s)
            self.sampler.sample()
            self.run.end_of_day(day, self.sampler.rss_now(), self.sampler.daemon_cpu(),
                                probe.load())
            print(f"day {day + 1}: {len(self.run.settled_at)}/{len(self.run.expected)} notes "
                  f"integrated, daemon RSS {self.sampler.rss_now():.0f} MB, "
                  f"{probe.load()}", flush=True)
            if day == args.days - 1 and self.run.edit is None and self.finished:
                self.edit(self.finished[-1], caught=False)  # never caught in its hands

    def drain(self) -> None:
        """Wait until every note is integrated, or the daemon idles with notes left over
        (failed or parked: reported), or ``--drain-minutes`` pass."""
        deadline = time.time() + self.args.drain_minutes * 60
        idle_since: float | None = None
        while time.time() < deadline:
            self.look()
            if len(self.run.settled_at) == len(self.run.expected):
                return
            doc = live_status(self.root / ".vaultlink", timeout=5)[0] or {}
            quiet = doc.get("state") == "idle" and not doc.get("queue_length")
            idle_since = (idle_since or time.time()) if quiet else None
            if idle_since and time.time() - idle_since > 60:
                return
            time.sleep(5)


def main(argv: list[str] | None = None) -> int:
    """Serve the model, run the week beside the daemon, write the report."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    p.add_argument("--days", type=int, default=7, choices=range(1, 8))
    p.add_argument("--minutes-per-day", type=float, default=15.0)
    p.add_argument("--pages-per-day", type=int, default=2, help="clipped pages a day")
    p.add_argument("--quiet", type=float, default=120.0, help="watch.quiet_seconds")
    p.add_argument("--drain-minutes", type=float, default=60.0)
    p.add_argument("--threads", type=int, default=2, help="the model server's threads")
    p.add_argument("--alone-calls", type=int, default=3,
                   help="extraction calls timed on the server alone, before and after")
    p.add_argument("--work", type=Path, help="where the vault and logs go (default: new)")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = p.parse_args(argv)
    spec = MODELS[args.model]
    work = args.work or Path(tempfile.mkdtemp(prefix=f"vaultlink-soak-{args.model}-"))
    root = work / "vault"
    if root.exists():
        shutil.rmtree(root)
    for folder in ("daily", "resource", "digest"):
        (root / folder).mkdir(parents=True)
    calls = work / "calls.jsonl"
    calls.unlink(missing_ok=True)
    gguf = fetch(args.model, Path(os.environ.get(CACHE_ENV, DEFAULT_CACHE)).expanduser())
    host = f"http://127.0.0.1:{free_port()}"
    with (work / "server.log").open("wb") as slog, (work / "daemon.out").open("wb") as dlog:
        server = subprocess.Popen(
            [sys.executable, "-m", "bench.realmodel.server", "--model", str(gguf), "--port",
             host.rsplit(":", 1)[1], "--threads", str(args.threads), "--transcript", str(calls)],
            cwd=REPO, stdout=slog, stderr=subprocess.STDOUT)
        try:
            wait_up(host, server)
            loads = [probe.load()]
            print(f"server up; alone: {loads[0]}", flush=True)
            alone = [speed_alone(host, spec.ollama_name, args.alone_calls)]
            n_alone = len(probe.transcript(calls))
            sampler = probe.Sampler(server.pid)
            soak = Soak(args, root, host, spec.ollama_name, sampler, dlog)
            soak.start()
            sampler.start()
            poller = probe.Poller(root)
            poller.start()
            try:
                soak.week()
                soak.drain()
            finally:
                poller.stop.set()
                if soak.proc is not None:
                    stop_daemon(soak.proc, sampler)
                sampler.stop.set()
            n_daemon = len(probe.transcript(calls))
            loads.append(probe.load())
            print(f"week done; alone again: {loads[1]}", flush=True)
            alone.append(speed_alone(host, spec.ollama_name, args.alone_calls))
        finally:
            server.terminate()
            server.wait(30)
    records = probe.transcript(calls)
    check = subprocess.run([sys.executable, "-m", "vaultlink", "check", "--vault", str(root),
                            "--json"], capture_output=True, text=True, cwd=REPO)
    rep = figures(soak.run, root, (records[:n_alone], records[n_daemon:]),
                  records[n_alone:n_daemon], poller, sampler, check, args, spec.ollama_name)
    rep["load_alone"] = loads
    rep["work"] = str(work)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"soak-{args.model}.json").write_text(json.dumps(rep, indent=1) + "\n")
    (args.out / f"soak-{args.model}.md").write_text(markdown(rep))
    print(markdown(rep), flush=True)
    print(f"the vault to read: {root}", flush=True)
    return 0
