"""docs/mcp.md's configuration snippets, each read as its client reads it.

Each ```json block under a ``<!-- client: NAME -->`` marker must parse and have the
shape that client expects: Claude Desktop and Cursor a ``mcpServers`` map of stdio
servers (``command``, ``args``, optional ``env``; Cursor also ``url`` + ``headers``),
VS Code a ``servers`` map whose entries carry ``type`` (``stdio`` with ``command``, or
``http`` with ``url``) and ``inputs`` for the ``${input:...}`` they use, a generic client
either kind under ``mcpServers``. A stdio server must run ``vaultlink mcp --vault DIR``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs/mcp.md"
SNIPPET = re.compile(r"<!-- client: ([a-z-]+) -->\s*```json\n(.*?)```", re.DOTALL)
CLIENTS = {"claude-desktop", "cursor", "vscode", "generic"}


def snippets() -> list[tuple[str, str]]:
    return SNIPPET.findall(DOC.read_text(encoding="utf-8"))


def check_stdio(server: dict[str, Any], extra: frozenset[str] = frozenset()) -> None:
    assert set(server) <= {"command", "args", "env"} | extra, server
    assert isinstance(server["command"], str) and server["command"]
    args = server.get("args", [])
    assert isinstance(args, list) and all(isinstance(a, str) for a in args)
    assert server["command"].endswith("vaultlink") and args[:1] == ["mcp"]
    assert "--vault" in args and args[args.index("--vault") + 1].startswith("/")
    env = server.get("env", {})
    assert isinstance(env, dict) and all(isinstance(v, str) for v in env.values())


def check_http(server: dict[str, Any], extra: frozenset[str] = frozenset()) -> None:
    assert set(server) <= {"url", "headers"} | extra, server
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", server["url"])
    assert server["headers"]["Authorization"].startswith("Bearer ")


def check(client: str, config: dict[str, Any]) -> None:
    if client in ("claude-desktop", "cursor", "generic"):
        assert set(config) == {"mcpServers"}
        for server in config["mcpServers"].values():
            if "url" in server and client != "claude-desktop":  # Claude Desktop: stdio only
                check_http(server)
            else:
                check_stdio(server)
        return
    assert client == "vscode"
    assert set(config) <= {"servers", "inputs"}
    declared = {i["id"] for i in config.get("inputs", [])}
    for i in config.get("inputs", []):
        assert i["type"] in ("promptString", "pickString") and i["description"]
    for server in config["servers"].values():
        assert server["type"] in ("stdio", "http")
        if server["type"] == "stdio":
            check_stdio(server, frozenset({"type"}))
        else:
            check_http(server, frozenset({"type"}))
        used = set(re.findall(r"\$\{input:([^}]+)\}", json.dumps(server)))
        assert used <= declared, f"undeclared inputs {used - declared}"


def test_every_client_has_a_snippet() -> None:
    assert {client for client, _ in snippets()} == CLIENTS


@pytest.mark.parametrize(("client", "text"), snippets())
def test_each_snippet_has_the_shape_its_client_reads(client: str, text: str) -> None:
    check(client, json.loads(text))


@pytest.mark.parametrize(("client", "config"), [
    ("claude-desktop", {"servers": {"v": {"command": "/x/vaultlink", "args": ["mcp"]}}}),
    ("claude-desktop", {"mcpServers": {"v": {"url": "http://127.0.0.1:1/mcp"}}}),
    ("cursor", {"mcpServers": {"v": {"command": "/x/vaultlink", "args": "mcp --vault /n"}}}),
    ("vscode", {"servers": {"v": {"command": "/x/vaultlink", "args": ["mcp", "--vault", "/n"]}}}),
    ("vscode", {"servers": {"v": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                                  "headers": {"Authorization": "Bearer ${input:t}"}}}}),
    ("generic", {"mcpServers": {"v": {"command": "vaultlink", "args": ["watch"]}}}),
])
def test_the_checks_catch_a_wrong_shape(client: str, config: dict[str, Any]) -> None:
    with pytest.raises((AssertionError, KeyError, TypeError)):
        check(client, config)
