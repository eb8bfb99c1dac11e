"""``vaultlink doctor``'s checks of the Chroma server (``index.chroma.mode: http``): does
it answer, is its version one the client speaks, does it hold this vault's collections
with as many vectors as state.sqlite journaled."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vaultlink.llm.probe import Check
from vaultlink.options import PipelineOptions, redact_url


def _journal(db: Path) -> dict[str, tuple[str, int]]:
    """kind -> (collection it was built into, docs journaled), from state.sqlite."""
    if not db.exists():
        return {}
    con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        found = {}
        for key, name in con.execute(
                "SELECT key, value FROM idx_meta WHERE key LIKE '%.collection'"):
            kind = str(key).split(".")[0]
            count = con.execute(f"SELECT count(*) FROM idx_{kind}_docs").fetchone()[0]
            found[kind] = (str(name), int(count))
        return found
    except sqlite3.Error:
        return {}  # no index yet (or a damaged one: the index check says so)
    finally:
        con.close()


def server_checks(options: PipelineOptions, db: Path) -> list[Check]:
    """The server, its version, this vault's collections; nothing in embedded mode."""
    if options.chroma_mode != "http":
        return []
    # chromadb: 0.8 s at import, paid by doctor in http mode only
    import chromadb

    from vaultlink.index.store import open_server, server_report  # chromadb's client

    shown = redact_url(options.chroma_host)  # doctor prints it: no user info
    where = f"{shown}:{options.chroma_port}"
    try:
        client = open_server(options.chroma_host, options.chroma_port)
        report = server_report(client)
    except Exception as exc:  # doctor reports any failure as a line, never a traceback
        return [Check("chroma", "Chroma server reachable", False,
                      f"{where}: {redact_url(str(exc))}",
                      f"start it: `chroma run --path <folder> --host {shown} "
                      f"--port {options.chroma_port}`, or set index.chroma.mode: embedded")]
    checks = [Check("chroma", "Chroma server reachable", True, where)]
    server, mine = str(report["version"]), chromadb.__version__
    same = server.split(".")[0] == mine.split(".")[0]  # a 1.x server reports "1.0.0"
    checks.append(Check("chroma_version", "Chroma server version", same,
                        f"server {server}, client {mine}",
                        f"run a Chroma server of version {mine.split('.')[0]}.x "
                        "(the client's), or install the chromadb that matches the server"))
    held = report["collections"]
    assert isinstance(held, dict)
    journal = _journal(db)
    if not journal:
        checks.append(Check("chroma_collections", "this vault's collections", False,
                            "not built yet", "`vaultlink reindex` builds them",
                            skipped=True))
        return checks
    lines, ok = [], True
    for kind, (name, docs) in sorted(journal.items()):
        count = held.get(name)
        ok = ok and count == docs
        lines.append(f"{kind}: {name} " + ("missing" if count is None else
                                           f"{count} vectors, {docs} journaled"))
    checks.append(Check("chroma_collections", "this vault's collections", ok,
                        "; ".join(lines),
                        "`vaultlink reindex` heals them: only what the server lacks is "
                        "embedded again"))
    return checks
