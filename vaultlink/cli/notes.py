"""``init``, ``check``, ``rename-shadowing`` and ``links``: the vault and its link graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vaultlink.cli.common import (
    JsonOpt,
    VaultOpt,
    app,
    emit_json,
    open_vault,
)
from vaultlink.cli.settings import DEFAULT_CONFIG_YAML, config_path, config_yaml
from vaultlink.errors import EmbeddingError
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.graph import build_graph, check_vault, resolve_note


@app.command()
def init(
    vault: VaultOpt = Path("."),
    print_only: Annotated[bool, typer.Option("--print",
                                             help="Print the default config, write nothing.")]
    = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing config.")]
    = False,
) -> None:
    """Create .vaultlink/config.yaml with every setting and its default, commented.

    The embedding model is chosen from the notes already there: a sample of up to
    60 notes in the daily and resource folders is read, and when fewer than four in
    five of them are in English the multilingual model (multilingual-e5-small-q4) is
    written instead of MiniLM, with what was seen as a comment.

    Examples:

      vaultlink init --vault ~/notes

      vaultlink init --print > my-config.yaml
    """
    if print_only:
        typer.echo(DEFAULT_CONFIG_YAML, nl=False)
        return
    v, _ = open_vault(vault, any_folder=True)
    path = config_path(v.root)
    if path.exists() and not force:
        typer.echo(f"{path} exists already; edit it, or pass --force to start over.")
        return
    from vaultlink.index.embed import MINILM_MODEL_ID  # the index package: only init needs it
    from vaultlink.index.multilingual import E5_MODEL_ID, e5_files
    from vaultlink.vault.languages import sample_languages  # py3langid: when a note has text

    sample = sample_languages(v, [v.daily, v.resource])
    try:
        e5_files()
        missing = ""
    except EmbeddingError as exc:  # no wheel for this platform: MiniLM, and why
        missing = str(exc)
    if sample.mostly_english or missing:
        text, chose = config_yaml(), f"embedding: {MINILM_MODEL_ID}"
        if missing and not sample.mostly_english:
            chose += f"; the notes are not mostly English, but {missing}"
    else:
        seen = sample.describe()
        text = config_yaml(E5_MODEL_ID, "vaultlink init chose the multilingual model: the "
                           f"notes are not mostly English:\n{seen}")
        chose = f"embedding: {E5_MODEL_ID}, as the notes are not mostly English ({seen})"
    v.write(".vaultlink/config.yaml", text, None if not path.exists() else _hash_of(path))
    typer.echo(f"wrote {path} ({chose})\nnext: vaultlink dream --vault {v.root}")


def _hash_of(path: Path) -> str:
    return content_hash(path.read_bytes())


@app.command()
def check(
    vault: VaultOpt = Path("."),
    strict: Annotated[bool, typer.Option("--strict",
                                         help="Warnings in your own notes fail too.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Report problems: errors in digest/ (exit 1), warnings in your own notes.

    Errors: broken links, nodes without a source link, bare link lines under
    ## Sources, unreadable nodes. Warnings: broken links and unreadable notes in
    daily/ and resource/ (they fail only with --strict).

    Examples:

      vaultlink check --vault sample_vault

      vaultlink check --strict --json
    """
    v, _ = open_vault(vault)
    problems = check_vault(v)
    errors = [p for p in problems if p.level == "error"]
    warnings = [p for p in problems if p.level == "warning"]
    if as_json:
        emit_json({"errors": [p.__dict__ for p in errors],
                   "warnings": [p.__dict__ for p in warnings]})
    else:
        for p in problems:
            typer.echo(str(p))
        typer.echo(f"{len(errors)} error(s) in {v.digest}/, {len(warnings)} warning(s) "
                   "in your notes")
    if errors or (strict and warnings):
        raise typer.Exit(1)


@app.command("rename-shadowing")
def rename_shadowing(
    vault: VaultOpt = Path("."),
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show which nodes would move where; change nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Rename digest nodes whose file name one of your notes (or an alias) has.

    Obsidian resolves [[name]] by file name in any folder, without case: a node
    digest/wiki/copp.md beside your resource/CoPP.md makes your [[CoPP]] links
    ambiguous. `vaultlink check` reports such nodes; this moves each to a free name
    qualified by what it is about (digest/wiki/copp-control-plane-policing.md) and
    rewrites the digest links to it. Your own notes are never changed: their links
    mean your note again. It is one journaled group: `vaultlink undo ID` (the id it
    prints) puts all of it back. The first `dream` after upgrading does this once.

    Examples:

      vaultlink rename-shadowing --dry-run

      vaultlink rename-shadowing --vault ~/notes
    """
    # the journal and the link graph: ~60 ms that --help need not pay
    from vaultlink.cli.common import vault_writer
    from vaultlink.pipeline.shadowing import apply_renames, plan_renames
    from vaultlink.vault.state import State

    v, _ = open_vault(vault)
    if dry_run:
        renames, ids = plan_renames(v), []
    else:
        with vault_writer(v, "rename-shadowing", if_daemon="stop it first, then run this "
                          "again (the daemon's next start does not repeat the upgrade's "
                          "repair)"):
            state = State(v.state_dir / "state.sqlite")
            try:
                done = apply_renames(v, state, plan_renames(v))
            finally:
                state.close()
            renames, ids = done.renames, done.ids
    if as_json:
        emit_json({"dry_run": dry_run, "journal_ids": ids, "renamed": [
            {"from": r.old, "to": r.new, "shadowed": r.why} for r in renames]})
        return
    if not renames:
        typer.echo("no digest node shadows a note or alias of yours")
        return
    verb = "would rename" if dry_run else "renamed"
    for r in renames:
        typer.echo(f"{verb} {r.old} -> {r.new} (it shadowed {r.why})")
    if ids:
        typer.echo(f"journaled as #{ids[0]}-#{ids[-1]}; put it back with: "
                   f"vaultlink undo {ids[0]}")


@app.command()
def links(
    note: Annotated[str, typer.Argument(help="A note: vault path, or a name as in [[name]].")],
    vault: VaultOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Print a note's outlinks and backlinks.

    Examples:

      vaultlink links digest/wiki/hybrid-search.md

      vaultlink links 2026-06-20 --json
    """
    v, _ = open_vault(vault)
    graph = build_graph(v)
    path = resolve_note(v, note, resolver=graph.resolver)
    out = [{"target": e.target, "raw": e.raw, "line": e.line, "broken": e.target is None,
            "reason": e.reason} for e in graph.outlinks.get(path, [])]
    back = [{"source": e.source, "raw": e.raw, "line": e.line}
            for e in graph.backlinks.get(path, [])]
    if as_json:
        emit_json({"path": path, "outlinks": out, "backlinks": back})
        return
    typer.echo(f"{path}\n\noutlinks ({len(out)}):")
    for o in out:
        mark = f"  BROKEN: {o['reason']}" if o["broken"] else ""
        typer.echo(f"  line {o['line']}: {o['raw']} -> {o['target']}{mark}")
    typer.echo(f"\nbacklinks ({len(back)}):")
    for b in back:
        typer.echo(f"  {b['source']} line {b['line']}: {b['raw']}")
