"""``mcp``: the vault for assistants (Claude Desktop, Cursor, VS Code, any MCP client)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vaultlink.cli.common import VaultOpt, app, open_vault
from vaultlink.options import AssistOptions

DEFAULT_PORT = 8766  # the status API's api.port is 8765


@app.command()
def mcp(
    vault: VaultOpt = Path("."),
    http: Annotated[bool, typer.Option(
        "--http", help="Serve the streamable HTTP transport on 127.0.0.1 (with the "
        "vault's token) instead of stdio.")] = False,
    port: Annotated[int, typer.Option(
        "--port", min=1, max=65535, help="The port of --http.")] = DEFAULT_PORT,
) -> None:
    """Serve the vault to an assistant over MCP (the Model Context Protocol).

    Six tools: node_search (digest nodes with their sources), search (sections of all
    notes), read (a note, a digest node's sources resolved), recent (the journal's
    decisions), status, and integrate_now (asks the running daemon to take a note).
    Nothing writes a note. While the daemon runs it answers through it; otherwise this
    process reads the vault, holding the writer lock only during each call.

    stdio is the default: the client starts this command (docs/mcp.md has the
    configuration for Claude Desktop, Cursor and VS Code). With --http it serves
    http://127.0.0.1:PORT/mcp; send 'Authorization: Bearer <.vaultlink/token>'.

    Examples:

      vaultlink mcp --vault ~/Notes

      vaultlink mcp --vault ~/Notes --http --port 8766
    """
    v, settings = open_vault(vault)
    options = AssistOptions(pipeline=settings.pipeline(),
                            min_similarity=float(settings.get("index.min_similarity")))
    # the MCP SDK (pydantic, starlette, anyio): ~0.4 s that no other command pays
    from vaultlink.mcp.server import serve_http, serve_stdio
    from vaultlink.mcp.tools import Assistant

    assistant = Assistant(v, options)
    if http:
        typer.echo(f"serving MCP at http://127.0.0.1:{port}/mcp for {v.root} "
                   "(token: .vaultlink/token)", err=True)
        serve_http(assistant, port)
    else:
        serve_stdio(assistant)
