"""``node-search``, ``search`` and ``reindex``: the search indexes."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

import typer

from vaultlink.cli.common import (
    JsonOpt,
    VaultOpt,
    app,
    emit_json,
    open_vault,
    vault_writer,
)
from vaultlink.cli.settings import Settings
from vaultlink.daemon.process import writer_or_daemon
from vaultlink.index.fusion import above_floor
from vaultlink.vault.notes import Vault

LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=1, max=500,
                                       help="How many hits to return.")]


def _recall_indexes(v: Vault, settings: Settings) -> Any:
    """Both search indexes of the vault, built from the settings."""
    # Imported here: chromadb and onnxruntime take a second to import, and most
    # commands never touch the index.
    from vaultlink.index.recall import open_recall  # chromadb: ~0.9 s at start-up

    return open_recall(v, settings.pipeline())


def synced(index: Any, label: str, show: bool, always: bool = False) -> Any:
    """Sync an index; a progress bar on stderr once there is real work (or ``always``)."""
    bar: Any = None
    task: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar, task
        if bar is None and show and (always or total > 20):
            # rich.progress: ~100 ms, paid only by a sync long enough to show a bar
            from rich.console import Console
            from rich.progress import Progress

            bar = Progress(console=Console(stderr=True), transient=not always)
            bar.start()
            task = bar.add_task(label, total=total)
        if bar is not None:
            bar.update(task, completed=done, total=total)

    try:
        return index.sync(progress)
    finally:
        if bar is not None:
            bar.stop()


def _hits(v: Vault, settings: Settings, kind: str, query: str, limit: int,
          bucket: str | None = None, digest_only: bool = False) -> list[dict[str, Any]]:
    """Search hits as JSON-ready dicts: from the indexes here, or, while the daemon owns
    the vault, from the daemon (``GET /search``), so two processes never write one index."""
    lock = writer_or_daemon(v, "node-search" if kind == "nodes" else "search")
    if lock is None:

        if kind == "sections":  # the daemon indexes sections on demand, without progress
            typer.echo("asking the running daemon; after many changed notes it indexes "
                       "them first, which can take minutes", err=True)
        from vaultlink.daemon.client import ask_daemon  # urllib.request, ssl: ~30 ms

        params: dict[str, Any] = {"q": query, "limit": limit, "in": kind}
        if bucket:
            params["bucket"] = bucket
        if digest_only:
            params["digest_only"] = 1
        answer = ask_daemon(v.state_dir, "GET", "/search?" + urlencode(params), timeout=3600)
        return above_floor(answer["hits"], float(settings.get("index.min_similarity")))
    try:
        indexes = _recall_indexes(v, settings)
        try:
            if kind == "nodes":
                synced(indexes.nodes, "indexing digest nodes", show=True)
                found: list[Any] = indexes.nodes.node_search(query, limit, bucket=bucket)
            else:
                synced(indexes.chunks, "indexing notes", show=True)
                found = indexes.chunks.search(query, limit, digest_only=digest_only)
        finally:
            indexes.close()
    finally:
        lock.release()
    return above_floor([dataclasses.asdict(h) for h in found],
                       float(settings.get("index.min_similarity")))


@app.command("node-search")
def node_search(
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    limit: LimitOpt = 20,
    bucket: Annotated[str | None, typer.Option(
        "--bucket", help="Only the nodes of this bucket (digest/<bucket>/).")] = None,
    vault: VaultOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Find digest nodes by meaning, words and name (vector, keyword and name recall, fused).

    The index is brought up to date first (only changed notes are read). Each hit has
    a fused score and the cosine similarity of its vector match (0 for a hit found by
    words or name only). While the daemon runs on the vault, it answers instead (it
    keeps the index).

    Name recall finds the node named like the query's subject (the words before a ":"
    or a full stop, or a short query itself), the nodes whose text names it, and the
    nodes the best match names, as a [[link]] or in plain words.

    Examples:

      vaultlink node-search "rebuild the search index"

      vaultlink node-search postgres --limit 5 --json

      vaultlink node-search "deploy" --bucket procedure
    """
    v, settings = open_vault(vault)
    hits = _hits(v, settings, "nodes", query, limit, bucket=bucket)
    if as_json:
        emit_json({"hits": hits})
        return
    if not hits:
        typer.echo("no digest nodes found")
    for n, h in enumerate(hits, start=1):
        typer.echo(f"{n:2}. {h['path']}  (score {h['score']:.4f}, "
                   f"similarity {h['similarity']:.2f})")
        typer.echo(f"    {h['name']}: {h['description']}" if h["description"]
                   else f"    {h['name']}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="A question or some words, in plain language.")],
    limit: LimitOpt = 10,
    digest_only: Annotated[bool, typer.Option(
        "--digest-only", help="Only sections of digest nodes (digest/).")] = False,
    vault: VaultOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Search the sections of all notes (daily/, resource/, digest/) and show their links.

    One hit per note: its best section, with its heading breadcrumb and text, plus up to
    10 notes it links to and 10 notes linking to it. A digest node's match shows the
    passage of the note it cites that backs it ("via" the node). The index is brought up
    to date first; while the daemon runs on the vault, it answers instead.

    Examples:

      vaultlink search "why does autovacuum fall behind"

      vaultlink search "staging deploy" --limit 3 --json

      vaultlink search "autovacuum" --digest-only
    """
    v, settings = open_vault(vault)
    hits = _hits(v, settings, "sections", query, limit, digest_only=digest_only)
    if as_json:
        emit_json({"hits": hits})
        return
    if not hits:
        typer.echo("nothing found")
    for n, h in enumerate(hits, start=1):
        typer.echo(f"{n:2}. {h['path']}:{h['line']}  {h['breadcrumb']}  "
                   f"(score {h['score']:.4f})")
        text = " ".join(h["text"].split())
        typer.echo(f"    {text[:300]}{'...' if len(text) > 300 else ''}")
        if h.get("via"):
            typer.echo("    via: " + ", ".join(h["via"]))
        if h["outlinks"]:
            typer.echo("    links to: " + ", ".join(r["path"] for r in h["outlinks"]))
        if h["inlinks"]:
            typer.echo("    linked from: " + ", ".join(r["path"] for r in h["inlinks"]))


@app.command()
def reindex(
    vault: VaultOpt = Path("."),
    full: Annotated[bool, typer.Option(
        "--full", help="Forget the index and embed every note again.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring the search indexes up to date with the vault (digest nodes, and sections of
    all notes); with --full, rebuild them from scratch.

    Only notes whose size, mtime or inode changed are read, and only texts that changed
    are embedded again, so a sync after a few edits takes a moment. Safe at any time:
    the index is derived from your notes, and a damaged index (the index tables of
    state.sqlite, or a Chroma server that lost vectors) is replaced or healed. With
    index.chroma.mode http, this is how a vault moves to the server: the vectors go
    there as they are, nothing is embedded again. Notes that cannot be read are listed with
    the reason and left out.

    Examples:

      vaultlink reindex --vault ~/notes

      vaultlink reindex --full --json
    """
    v, settings = open_vault(vault)
    reports = {}
    with vault_writer(v, "reindex", if_daemon="stop it, reindex, then start it again"):
        indexes = _recall_indexes(v, settings)
        try:
            for label, index in (("nodes", indexes.nodes), ("chunks", indexes.chunks)):
                if full:
                    index.reset()
                reports[label] = synced(index, f"indexing {label}", show=not as_json,
                                        always=full)
        finally:
            indexes.close()
    summary = {label: {"indexed": len(r.added) + len(r.updated) + len(r.moved),
                       "removed": len(r.removed), "unchanged": r.unchanged,
                       "embedded": r.embedded, "skipped": r.skipped}
               for label, r in reports.items()}
    if as_json:
        emit_json(summary)
        return
    for label, s in summary.items():
        typer.echo(f"{label}: {s['indexed']} notes indexed, {s['embedded']} texts embedded, "
                   f"{s['unchanged']} unchanged, {s['removed']} removed, "
                   f"{len(s['skipped'])} skipped")
    skipped = {**summary["chunks"]["skipped"], **summary["nodes"]["skipped"]}
    for path, reason in sorted(skipped.items()):
        typer.echo(f"  skipped {path}: {reason}")

