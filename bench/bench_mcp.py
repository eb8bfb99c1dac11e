"""``vaultlink mcp`` as an assistant sees it: how soon it answers, how fast each call is.

On a demo vault (``vaultlink demo``, or ``--vault DIR`` already dreamed), nothing
changed:

- ready: from starting ``vaultlink mcp`` (the MCP SDK's stdio client, as Claude Desktop
  starts it) to its answer to ``initialize``, and to ``tools/list``; ``--starts`` runs;
- calls: ``--calls`` tool calls of each kind (node_search with the README's question,
  search, read, recent, status), first with no daemon (this process reads the vault)
  and then through a running daemon (``vaultlink watch``, offline); p50, p95, max.

Prints the numbers with the load average beside them (2 shared cores: see uptime).

    python -m bench.bench_mcp [--vault DIR] [--starts 5] [--calls 50]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from vaultlink.daemon.client import live_status

REPO = Path(__file__).resolve().parent.parent
QUESTION = "How do we vacuum the bloated documents table?"  # the README's
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("node_search", {"query": QUESTION}),
    ("search", {"query": "why does autovacuum fall behind"}),
    ("read", {"path_or_name": "digest/procedure/postgres-vacuum.md"}),
    ("recent", {"days": 365}),
    ("status", {}),
]


def params(vault: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "vaultlink", "mcp", "--vault", str(vault)],
                                 cwd=str(REPO))


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def percentiles(seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):6.1f} ms  p95 {p95:6.1f} ms  max {ms[-1]:6.1f} ms"


async def ready_once(vault: Path) -> tuple[float, float]:
    start = time.perf_counter()
    async with stdio_client(params(vault)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        ready = time.perf_counter() - start
        await s.list_tools()
        return ready, time.perf_counter() - start


INITIALIZE = ('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {'
              '"protocolVersion": "2025-06-18", "capabilities": {}, '
              '"clientInfo": {"name": "bench", "version": "0"}}}\n')


def ready_raw(vault: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``vaultlink mcp`` until its answer to ``initialize``,
    spoken as raw JSON-RPC (no client in this process competing for the cores). CPU is
    the server's user + system time from /proc, which a busy machine disturbs less."""
    start = time.perf_counter()
    server = subprocess.Popen([sys.executable, *params(vault).args], cwd=REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(INITIALIZE.encode())
    server.stdin.flush()
    answer = server.stdout.readline()
    wall = time.perf_counter() - start
    fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    server.stdin.close()
    server.wait(timeout=60)
    assert b'"serverInfo"' in answer, answer
    return wall, cpu


async def calls(vault: Path, n: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name, _ in CALLS}
    async with stdio_client(params(vault)) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        for name, args in CALLS:  # the first call of each loads what it needs: not timed
            result = await s.call_tool(name, args)
            if result.isError:
                raise SystemExit(f"{name}: {result.content[0].text}")
        for _ in range(n):
            for name, args in CALLS:
                t = time.perf_counter()
                result = await s.call_tool(name, args)
                times[name].append(time.perf_counter() - t)
                assert not result.isError, result.content
        first = (await s.call_tool("node_search", {"query": QUESTION})).structuredContent
        print(f"  node_search first hit: {first['hits'][0]['path']} with "
              f"{len(first['hits'][0]['sources'])} source(s)")
    return times


def report(title: str, times: dict[str, list[float]]) -> None:
    print(f"{title} ({load()})")
    for name, seconds in times.items():
        print(f"  {name:12} {len(seconds)} calls  {percentiles(seconds)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vault", type=Path, help="a dreamed vault (default: a fresh demo)")
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    vault = args.vault
    if vault is None:
        vault = tmp / "demo"
        subprocess.run([sys.executable, "-m", "vaultlink", "demo", "--to", str(vault)],
                       check=True, capture_output=True, cwd=REPO)
    (vault / ".vaultlink").mkdir(exist_ok=True)
    try:
        anyio.run(calls, vault, 1)  # the index brought up to date once: nothing changed after
        starts = [anyio.run(ready_once, vault) for _ in range(args.starts)]
        print(f"ready ({load()}): initialize answered after median "
              f"{statistics.median(s[0] for s in starts):.3f} s (max "
              f"{max(s[0] for s in starts):.3f}), tools listed after median "
              f"{statistics.median(s[1] for s in starts):.3f} s, {args.starts} starts")
        raw = [ready_raw(vault) for _ in range(args.starts)]
        print(f"ready, raw JSON-RPC ({load()}): initialize answered after median "
              f"{statistics.median(r[0] for r in raw):.3f} s wall, "
              f"{statistics.median(r[1] for r in raw):.3f} s of the server's CPU")
        report("without a daemon", anyio.run(calls, vault, args.calls))
        daemon = subprocess.Popen(
            [sys.executable, "-m", "vaultlink", "watch", "--foreground", "--vault", str(vault),
             "--llm", "offline"], cwd=REPO, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env={**os.environ, "VAULTLINK_API__PORT": "0"})
        try:
            deadline = time.monotonic() + 300
            while live_status(vault / ".vaultlink", timeout=2)[0] is None:
                if time.monotonic() > deadline or daemon.poll() is not None:
                    raise SystemExit("the daemon did not start")
                time.sleep(0.2)
            report("through the daemon", anyio.run(calls, vault, args.calls))
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
