"""``vaultlink mcp`` as an assistant meets it: a separate process started by the MCP
SDK's own client over stdio (and over streamable HTTP with the vault's token), on a copy
of the sample vault, with the daemon down and then up.

What it pins: the six tools are listed; the README's example question finds the vacuum
node first, with its sources; refused paths and unknown names come back as plain words
in a tool error; with the daemon up every answer comes through it (the daemon keeps the
vault's writer lock) and integrate_now queues a note.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.vaults import copy_sample_vault
from tests.waiting import wait_for
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.process import lock_holder
from vaultlink.daemon.service import Daemon

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "How do we vacuum the bloated documents table?"  # README, "Ask your assistant"
SEARCH_EXAMPLE = "why does autovacuum fall behind"  # `vaultlink search --help`, bench
TOOLS = {"node_search", "search", "read", "recent", "status", "integrate_now"}
VACUUM = "digest/procedure/postgres-vacuum.md"


def copy_sample(base: Path) -> Path:
    root = copy_sample_vault(base / "vault")
    (root / ".vaultlink").mkdir()
    (root / ".vaultlink/config.yaml").write_text("llm:\n  provider: offline\napi:\n  port: 0\n")
    (base / "secret.md").write_text("# Outside the vault\n")
    (root / "digest/wiki/escape.md").symlink_to(base / "secret.md")
    return root


def over_stdio(root: Path, talk: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Start ``vaultlink mcp`` as a client would, talk to it, let it go."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "vaultlink", "mcp", "--vault", str(root)],
                                   cwd=str(ROOT))

    async def run() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await talk(s)
    return anyio.run(run)


def first_hit_and_sources(result: Any) -> tuple[str, set[str]]:
    assert not result.isError, result.content[0].text
    hit = result.structuredContent["hits"][0]
    return hit["path"], {s["path"] for s in hit["sources"]}


def test_the_readme_names_the_example_question() -> None:
    assert QUESTION in (ROOT / "README.md").read_text(encoding="utf-8")


def test_without_a_daemon_a_client_lists_six_tools_and_finds_the_vacuum_node(
        tmp_path: Path) -> None:
    root = copy_sample(tmp_path)

    async def talk(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await s.list_tools()).tools}}
        out["hits"] = await s.call_tool("node_search", {"query": QUESTION, "limit": 5})
        out["why"] = await s.call_tool("node_search", {"query": SEARCH_EXAMPLE, "limit": 5})
        for given in ("../../etc/passwd", "digest/wiki/escape.md", "a-name-of-nothing"):
            out[given] = await s.call_tool("read", {"path_or_name": given})
        out["integrate"] = await s.call_tool("integrate_now", {"path": "daily/2026-06-11.md"})
        out["status"] = await s.call_tool("status", {})
        return out

    out = over_stdio(root, talk)
    assert out["tools"] == TOOLS
    path, sources = first_hit_and_sources(out["hits"])
    assert path == VACUUM
    assert {"daily/2026-06-11.md", "resource/postgres-vacuum-guide.md"} <= sources
    path, sources = first_hit_and_sources(out["why"])
    assert path == "digest/wiki/postgres-autovacuum.md"
    assert {"daily/2026-06-11.md", "resource/postgres-vacuum-guide.md"} <= sources
    for given, words in (("../../etc/passwd", "would leave the vault"),
                         ("digest/wiki/escape.md", "symlink whose target is outside"),
                         ("a-name-of-nothing", "no note named 'a-name-of-nothing'"),
                         ("integrate", "integrate_now needs the daemon")):
        result = out[given]
        assert result.isError and words in result.content[0].text, given
        assert "Traceback" not in result.content[0].text
    assert out["status"].structuredContent["running"] is False
    assert lock_holder(root / ".vaultlink") is None  # let go after each call


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = copy_sample(tmp_path_factory.mktemp("mcp-daemon"))
    settings = load_settings(root, environ={}).with_overrides({"watch.quiet_seconds": 600})
    d = Daemon(root, settings.daemon())
    d.start()
    wait_for(lambda: not [i for i in d.state.queue() if i.ready_at <= time.time()]
             and d.state.last_run() and d.status()["state"] == "idle",
             timeout=600, what="the sample vault to be integrated")
    yield d
    d.stop()


def test_with_the_daemon_up_every_answer_comes_through_it(daemon: Daemon) -> None:
    root = daemon.vault.root

    async def talk(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for tool, args in (("node_search", {"query": QUESTION}),
                           ("search", {"query": "why does autovacuum fall behind"}),
                           ("read", {"path_or_name": VACUUM}),
                           ("recent", {"days": 30, "limit": 3}), ("status", {}),
                           ("integrate_now", {"path": "daily/2026-06-11.md"})):
            out[tool] = await s.call_tool(tool, args)
            out[tool + " lock"] = lock_holder(root / ".vaultlink")
        return out

    out = over_stdio(root, talk)
    for tool in ("node_search", "search", "read", "recent", "status", "integrate_now"):
        assert not out[tool].isError, (tool, out[tool].content[0].text)
        assert out[tool + " lock"]["holder"] == "daemon", tool
    assert first_hit_and_sources(out["node_search"])[0] == VACUUM
    assert out["search"].structuredContent["hits"][0]["path"].endswith("autovacuum.md")
    read = out["read"].structuredContent
    assert read["kind"] == "digest" and "resource/postgres-vacuum-guide.md" in {
        s["path"] for s in read["sources"]}
    recent = out["recent"].structuredContent
    assert recent["decisions"] and recent["cut"]  # the first run made more than three
    assert all(d["link"] == f"[[{d['target']}]]" for d in recent["decisions"])
    assert out["status"].structuredContent["running"] is True
    assert out["integrate_now"].structuredContent["queued"] == ["daily/2026-06-11.md"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_over_http_the_token_is_needed(tmp_path: Path) -> None:
    root = copy_sample(tmp_path)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "vaultlink", "mcp", "--vault", str(root),
                               "--http", "--port", str(port)], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0
        wait_for(listening, timeout=120, what="vaultlink mcp --http to listen")
        url = f"http://127.0.0.1:{port}/mcp"
        token = (root / ".vaultlink/token").read_text().strip()

        async def tools(headers: dict[str, str]) -> set[str]:
            async with httpx.AsyncClient(headers=headers, timeout=60) as http, \
                    streamable_http_client(url, http_client=http) as (read, write, _), \
                    ClientSession(read, write) as s:
                await s.initialize()
                return {t.name for t in (await s.list_tools()).tools}

        assert anyio.run(tools, {"Authorization": f"Bearer {token}"}) == TOOLS
        import urllib.error
        import urllib.request
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(
                url, data=b"{}", headers={"Authorization": "Bearer wrong"}), timeout=30)
        assert refused.value.code == 401
    finally:
        server.terminate()
        server.wait(timeout=30)
