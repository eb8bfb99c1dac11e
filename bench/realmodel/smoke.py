"""Smoke test of the bench server with the real ``ollama`` client (not run in CI).

Run from the repository root::

    python -m bench.realmodel.smoke [--model qwen2.5-coder-0.5b] [--threads 2]

Fetches the model if needed, starts ``bench.realmodel.server`` on a free loopback
port, then through ``ollama.Client`` runs: list, show, chat (non-stream), chat
(stream), chat with a ``node_search`` tool (and the tool's answer sent back), chat
with a JSON-schema ``format``, and a chat whose prompt is over ``num_ctx``. It prints
what came back and how long each took, then the server's log.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import ollama

from bench.realmodel.fetch_model import CACHE_ENV, DEFAULT_CACHE, MODELS, fetch

REPO = Path(__file__).resolve().parents[2]
SYSTEM = "You are a concise assistant for an Obsidian vault. Answer briefly."
NODE_SEARCH = {
    "type": "function",
    "function": {
        "name": "node_search",
        "description": "Search the vault's notes; returns the titles of matching notes.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "words to look for"}},
            "required": ["query"],
        },
    },
}
DIGEST_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "topics": {"type": "array", "items": {"type": "string"}},
        "summary": {"type": "string"},
    },
    "required": ["title", "topics", "summary"],
}
NOTE = ("2024-05-02. Met Ana about the Rust port of the indexer. We agreed to keep the "
        "SQLite schema, move parsing to a worker thread and measure before optimising. "
        "Todo: read the tokio docs on blocking tasks; ask Ben about the CI cache.")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(host: str, proc: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
    """Wait until the server answers /api/version (or died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode} before answering")
        try:
            httpx.get(host + "/api/version", timeout=1).raise_for_status()
            return
        except httpx.HTTPError:
            time.sleep(0.5)
    raise SystemExit(f"the server did not answer in {timeout:.0f} s")


def step(title: str, fn: Callable[[], Any]) -> Any:
    """Run one step, print its timing and result."""
    print(f"\n=== {title}", flush=True)
    t0 = time.perf_counter()
    result = fn()
    print(f"--- {title}: {time.perf_counter() - t0:.2f} s", flush=True)
    return result


def counts(r: ollama.ChatResponse) -> str:
    """Token counts and durations of a chat response."""
    ns = 1e9
    return (f"prompt_eval_count={r.prompt_eval_count} "
            f"prompt_eval={(r.prompt_eval_duration or 0) / ns:.2f}s "
            f"eval_count={r.eval_count} eval={(r.eval_duration or 0) / ns:.2f}s "
            f"total={(r.total_duration or 0) / ns:.2f}s done_reason={r.done_reason}")


def run(client: ollama.Client, name: str, num_ctx: int) -> None:
    """The steps against a running server."""
    opts: dict[str, Any] = {"num_ctx": num_ctx, "temperature": 0, "num_predict": 200}
    user = {"role": "user", "content": f"Summarise this daily note in two sentences:\n\n{NOTE}"}
    msgs = [{"role": "system", "content": SYSTEM}, user]

    def show() -> None:
        info = client.show(name)
        ctx = {k: v for k, v in (info.modelinfo or {}).items() if k.endswith("context_length")}
        print("capabilities:", info.capabilities, "| context:", ctx, "| details:",
              info.details.model_dump() if info.details else None)
        print("template starts:", repr((info.template or "")[:60]))

    step("list", lambda: print([(m.model, m.size, (m.digest or "")[:12])
                                 for m in client.list().models]))
    step("show", show)

    def chat() -> None:
        r = client.chat(model=name, messages=msgs, options=opts, stream=False)
        print(repr(r.message.content))
        print(counts(r))

    step("chat, stream=False", chat)

    def chat_stream() -> None:
        t0 = time.perf_counter()
        first: float | None = None
        parts: list[str] = []
        last: ollama.ChatResponse | None = None
        for chunk in client.chat(model=name, messages=msgs, options=opts, stream=True):
            if first is None:
                first = time.perf_counter() - t0
            parts.append(chunk.message.content or "")
            last = chunk
        print(f"{len(parts)} chunks, first after {first or 0:.2f} s")
        print(repr("".join(parts)))
        if last is not None:
            print(counts(last))

    step("chat, stream=True", chat_stream)

    def chat_tools() -> None:
        ask = [{"role": "system", "content": SYSTEM},
               {"role": "user", "content": "Which of my notes mention the Rust port? "
                                           "Use the node_search tool."}]
        try:
            r = client.chat(model=name, messages=ask, tools=[NODE_SEARCH], options=opts,
                            stream=False)
        except ollama.ResponseError as exc:  # a model whose template has no tools
            print(f"refused: {exc.status_code} {exc.error}")
            return
        print("content:", repr(r.message.content))
        print("tool_calls:", [tc.model_dump() for tc in r.message.tool_calls or []])
        print(counts(r))
        if not r.message.tool_calls:
            print("(no tool call parsed: the model answered in prose or another format)")
            return
        call = r.message.tool_calls[0]
        ask.append({"role": "assistant", "content": r.message.content or "",
                    "tool_calls": [tc.model_dump() for tc in r.message.tool_calls]})
        ask.append({"role": "tool", "tool_name": call.function.name,
                    "content": json.dumps(["2024-05-02 daily", "Rust port plan"])})
        r2 = client.chat(model=name, messages=ask, tools=[NODE_SEARCH], options=opts,
                         stream=False)
        print("after the tool's answer, content:", repr(r2.message.content))
        print("tool_calls:", [tc.model_dump() for tc in r2.message.tool_calls or []])
        print(counts(r2))

    step("chat with tools=[node_search]", chat_tools)

    def chat_schema() -> None:
        ask = [{"role": "system", "content": SYSTEM},
               {"role": "user", "content": f"Make a digest of this note as JSON with title, "
                                           f"topics and summary.\n\n{NOTE}"}]
        r = client.chat(model=name, messages=ask, format=DIGEST_SCHEMA, options=opts,
                        stream=False)
        print(repr(r.message.content))
        try:
            print("parses as JSON with keys:", sorted(json.loads(r.message.content or "")))
        except ValueError as exc:
            print("does not parse as JSON:", exc)
        print(counts(r))

    step("chat with format=<JSON schema>", chat_schema)

    def chat_over_ctx() -> None:
        filler = " ".join(f"Older note {i}: {NOTE}" for i in range(12))
        long_msgs = [{"role": "system", "content": SYSTEM},
                     {"role": "user", "content": filler},
                     {"role": "assistant", "content": "Noted."},
                     {"role": "user", "content": "In one sentence: what is a digest note?"}]
        r = client.chat(model=name, messages=long_msgs,
                        options={**opts, "num_ctx": 512, "num_predict": 40}, stream=False)
        print(repr(r.message.content))
        print(counts(r), "(num_ctx=512: the server log says what it dropped)")

    step("chat over num_ctx (512)", chat_over_ctx)


def main(argv: list[str] | None = None) -> int:
    """Fetch, start the server, run the steps, stop the server, show its log."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--ctx", type=int, default=8192)
    args = p.parse_args(argv)
    # a SIGTERM (e.g. from `timeout`) unwinds like Ctrl-C, so the server is stopped too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    path = fetch(args.model, Path(os.environ.get(CACHE_ENV, DEFAULT_CACHE)).expanduser())
    port = free_port()
    host = f"http://127.0.0.1:{port}"
    name = MODELS[args.model].ollama_name
    with tempfile.TemporaryFile() as server_log:
        cmd = [sys.executable, "-m", "bench.realmodel.server", "--model", str(path),
               "--port", str(port), "--threads", str(args.threads), "--ctx", str(args.ctx)]
        print("starting:", " ".join(cmd), flush=True)
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=server_log, stderr=subprocess.STDOUT)
        try:
            wait_up(host, proc)
            print(f"server up in {time.perf_counter() - t0:.1f} s at {host}, "
                  f"version {httpx.get(host + '/api/version').json()['version']}")
            client = ollama.Client(host=host, timeout=900)
            run(client, name, args.ctx)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            server_log.seek(0)
            print("\n=== server log")
            print(server_log.read().decode(errors="replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
