"""Speed of a model behind the bench server, as the ollama client sees it (not run in CI).

Run from the repository root::

    python -m bench.realmodel.speed --model qwen2.5-coder-0.5b [--threads 2] [--reps 3]

Each repetition sends a fresh ~1,000-token prompt (a new first line, so nothing is
reused from the KV cache) asking for a long answer (copy the notes back) capped at
``num_predict`` 100, and records the server's own counts and durations plus the wall
time of the call.
Repetitions during which other processes used the CPU are run again (the machine's
two cores leave no slack: llama.cpp's threads then crawl). Prints one line per
repetition and the medians of the kept ones as a Markdown table row.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ollama

from bench.realmodel.fetch_model import CACHE_ENV, DEFAULT_CACHE, MODELS, fetch
from bench.realmodel.smoke import NOTE, REPO, free_port, wait_up


def _proc_stat() -> tuple[int, int]:
    """(total, idle) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]  # idle + iowait


def _pid_jiffies(pid: int) -> int:
    """utime + stime of one process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_busy(seconds: float = 3.0) -> float:
    """Fraction of the machine's CPU time that was busy over ``seconds`` (Linux /proc/stat)."""
    t0, i0 = _proc_stat()
    time.sleep(seconds)
    t1, i1 = _proc_stat()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def wait_idle(limit: float, timeout: float = 600.0) -> float:
    """Wait until other work leaves the CPU (busy < ``limit``); return the last busy fraction."""
    deadline = time.monotonic() + timeout
    busy = cpu_busy()
    while busy >= limit and time.monotonic() < deadline:
        busy = cpu_busy()
    return busy


def prompt(rep: int, words: int) -> str:
    """About ``words`` words of vault-like text, different from the first line on."""
    body = []
    i = 0
    while sum(len(p.split()) for p in body) < words:
        body.append(f"Note {rep}-{i}. {NOTE}")
        i += 1
    return (f"Run {rep}. Here are my notes:\n\n" + "\n".join(body) +
            "\n\nCopy all of these notes back word for word, one numbered line per note, "
            "then list every task in them.")


def main(argv: list[str] | None = None) -> int:
    """Start the server, run the repetitions, print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--words", type=int, default=640, help="prompt size (~1.5 tokens a word)")
    p.add_argument("--num-predict", type=int, default=100)
    p.add_argument("--idle", type=float, default=0.10,
                   help="before each repetition wait until the CPU is less busy than this "
                        "(fraction; 1 disables the wait): other jobs skew the figures")
    p.add_argument("--max-others", type=float, default=0.15,
                   help="a repetition during which other processes used more CPU cores than "
                        "this is reported but not counted, and run again")
    p.add_argument("--max-tries", type=int, default=12, help="repetitions run at most")
    p.add_argument("--server-arg", action="append", default=[],
                   help="extra argument for the server, e.g. --server-arg=--extra-bufts")
    args = p.parse_args(argv)
    # a SIGTERM (e.g. from `timeout`) unwinds like Ctrl-C, so the server is stopped too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    path = fetch(args.model, Path(os.environ.get(CACHE_ENV, DEFAULT_CACHE)).expanduser())
    port = free_port()
    host = f"http://127.0.0.1:{port}"
    name = MODELS[args.model].ollama_name
    rows: list[tuple[float, float, float, float, float]] = []
    with tempfile.TemporaryFile() as server_log:
        cmd = [sys.executable, "-m", "bench.realmodel.server", "--model", str(path),
               "--port", str(port), "--threads", str(args.threads), "--ctx", "8192",
               *args.server_arg]
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=server_log, stderr=subprocess.STDOUT)
        try:
            wait_up(host, proc)
            client = ollama.Client(host=host, timeout=900)
            opts = {"num_ctx": 8192, "temperature": 0, "num_predict": args.num_predict}
            rep = -1
            while len(rows) < args.reps and rep + 1 < args.max_tries:
                rep += 1
                busy = wait_idle(args.idle) if args.idle < 1 else -1.0
                m0, s0, t0 = _proc_stat(), _pid_jiffies(proc.pid), time.perf_counter()
                r = client.chat(model=name, stream=False, options=opts,
                                messages=[{"role": "user", "content": prompt(rep, args.words)}])
                wall = time.perf_counter() - t0
                (mt1, mi1), (mt0, mi0), s1 = _proc_stat(), m0, _pid_jiffies(proc.pid)
                cores = os.cpu_count() or 1
                machine = (mt1 - mt0 - (mi1 - mi0)) / max(mt1 - mt0, 1) * cores  # busy cores
                server = (s1 - s0) / os.sysconf("SC_CLK_TCK") / wall  # cores the server used
                pe, ec = r.prompt_eval_count or 0, r.eval_count or 0
                pd, ed = (r.prompt_eval_duration or 0) / 1e9, (r.eval_duration or 0) / 1e9
                others = max(machine - server, 0)
                kept = others <= args.max_others
                if kept:
                    rows.append((pe, pe / pd, ec, ec / ed, wall))
                mark = "kept" if kept else "DISCARDED (contended)"
                print(f"rep {rep} {mark}: prompt {pe} tok {pd:.2f} s ({pe / pd:.1f} tok/s), "
                      f"answer {ec} tok {ed:.2f} s ({ec / ed:.1f} tok/s), wall {wall:.2f} s; "
                      f"CPU busy before {busy:.0%}, during: server {server:.2f} cores, "
                      f"others {others:.2f} cores; "
                      f"answer starts {(r.message.content or '')[:60]!r}", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
            server_log.seek(0)
            tail = server_log.read().decode(errors="replace").splitlines()[-rep - 3 :]
            print("server log tail:\n  " + "\n  ".join(tail))
    if not rows:
        print("no repetition ran on an otherwise idle CPU; no figures")
        return 1
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    pe, prate, ec, erate, wall = med
    print(f"\nmedians of {len(rows)}:\n| model | threads | prompt tok | prompt tok/s | "
          "answer tok | answer tok/s | wall s |")
    print(f"| {name} | {args.threads} | {pe:.0f} | {prate:.1f} | {ec:.0f} | {erate:.1f} | "
          f"{wall:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
