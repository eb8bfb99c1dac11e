"""``dream``, ``log``, ``undo`` and ``demo``: running the pipeline and its journal."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import vaultlink
from vaultlink.cli.common import (
    HostOpt,
    JsonOpt,
    LlmOpt,
    ModelOpt,
    VaultOpt,
    app,
    emit_json,
    model_overrides,
    open_vault,
    vault_writer,
)
from vaultlink.daemon.process import writer_or_daemon
from vaultlink.errors import ConfigError
from vaultlink.vault.graph import check_vault, resolve_note

if TYPE_CHECKING:  # the run's types: the parts are imported when a dream runs
    from vaultlink.cli.settings import Settings
    from vaultlink.pipeline.context import RunState
    from vaultlink.vault.notes import Vault

# `dream` finished, but some units or notes failed: they are kept (not checkpointed) and
# a later run retries them; parked ones wait for `dream --retry-parked`.
EXIT_SOME_FAILED = 4

DAEMON_DREAMS = ("it integrates changed notes by itself once they settle (`vaultlink status` "
                 "shows its queue); to dream by hand, stop it first")


@app.command()
def dream(
    vault: VaultOpt = Path("."),
    dry_run: Annotated[bool, typer.Option("--dry-run",
                                          help="Show decisions and diffs; write nothing.")]
    = False,
    llm: LlmOpt = None,
    ollama_host: HostOpt = None,
    model: ModelOpt = None,
    max_units: Annotated[int | None, typer.Option(
        "--max-units", help="Units this run (overrides auto_dream.max_units).")] = None,
    retry_parked: Annotated[bool, typer.Option(
        "--retry-parked", help="Retry the parked units and notes too (see `status`).")]
    = False,
    as_json: JsonOpt = False,
) -> None:
    """Run the pipeline once: extract, integrate (auto_link), topics, finish.

    Changed daily/ and resource/ notes become units; each unit creates, corroborates,
    refines or corrects one digest node. Without a reachable Ollama the offline
    integrator runs. One bad model answer fails one note or unit, never the run: it is
    kept and retried by the next run (parked after auto_dream.park_after runs). Exit
    code 0: all done; 4: finished, some units or notes failed and wait for a retry;
    1: the run stopped (the message says why).

    Examples:

      vaultlink dream --vault ~/notes

      vaultlink dream --dry-run --llm offline

      vaultlink dream --ollama-host http://192.168.1.5:11434 --model qwen3:4b
    """
    from vaultlink.cli.report import run_json, run_summary  # pipeline.context: ~0.1 s

    v, settings = open_vault(vault, {**model_overrides(llm, ollama_host, model),
                                     "auto_dream.max_units": max_units})
    with vault_writer(v, "dream", if_daemon=DAEMON_DREAMS):
        run = _dream_once(v, settings, dry_run=dry_run, retry_parked=retry_parked,
                          quiet=as_json)
    if as_json:
        emit_json(run_json(run, dry_run))
    else:
        for line in run_summary(run, dry_run):
            typer.echo(line)
    if run.report.failed_units or run.extraction.failed_notes:
        raise typer.Exit(EXIT_SOME_FAILED)


def _dream_once(v: Vault, settings: Settings, *, dry_run: bool, retry_parked: bool,
                quiet: bool) -> RunState:
    """One run on the open parts, then the section index brought up to date."""
    # the dream's parts pull in chromadb and onnxruntime: ~1.1 s that --help must not pay
    from vaultlink.cli.recall import synced
    from vaultlink.cli.report import ProgressPrinter
    from vaultlink.pipeline.compose import choose_provider, close_models, dream_context, open_parts
    from vaultlink.pipeline.run import build_steps, run_dream

    steps, options = build_steps(settings.get("auto_dream.steps")), settings.pipeline()
    parts = open_parts(v, options)
    try:
        if retry_parked and not dry_run:
            parts.state.unpark()
        parts.index.sync()
        provider = choose_provider(options, parts.state)
        echo = (lambda *a, **k: None) if quiet else typer.echo
        ctx = dream_context(parts, options, provider, dry_run=dry_run,
                            progress=ProgressPrinter(echo, sys.stdout.isatty()))
        try:
            run = run_dream(ctx, steps)
        finally:
            close_models(ctx)
        if not dry_run:  # the first `search` after a run must not index everything
            synced(parts.indexes.chunks, "indexing notes for search", show=not quiet)
    finally:
        parts.close()
    return run


@app.command()
def log(
    vault: VaultOpt = Path("."),
    limit: Annotated[int, typer.Option("--limit", "-n", min=1,
                                       help="How many decisions.")] = 20,
    note: Annotated[str | None, typer.Option(
        "--note", help="Only decisions about this note: a path or a name, as in links.")]
    = None,
    diff: Annotated[bool, typer.Option("--diff", help="Show each decision's diff.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List recent decisions of the journal (newest first), with their ids for undo.

    Examples:

      vaultlink log

      vaultlink log --note digest/wiki/hybrid-search.md --diff

      vaultlink log --note hybrid-search -n 5
    """
    # the journal and its formatting: ~20 ms that --help need not pay
    from vaultlink.pipeline.history import describe
    from vaultlink.vault.state import State

    v, _ = open_vault(vault)
    path = resolve_note(v, note, gone_ok=True) if note else None
    state = State(v.state_dir / "state.sqlite")
    try:
        entries = state.journal(limit, path)
    finally:
        state.close()
    if as_json:
        emit_json({"decisions": [e.public() for e in entries]})
        return
    if not entries:
        typer.echo(f"no decision touches {path} yet" if path
                   else "no decisions yet: run `vaultlink dream`")
    for e in entries:
        typer.echo(describe(e))
        if diff and e.diff:
            typer.echo(e.diff)


CascadeOpt = Annotated[bool, typer.Option(
    "--cascade", help="Also revert the later decisions that depend on this one (that "
    "changed the node since, or link to a node the undo removes), as one group.")]


@app.command()
def undo(
    decision: Annotated[int, typer.Argument(help="The decision id from `vaultlink log`.")],
    vault: VaultOpt = Path("."),
    cascade: CascadeOpt = False,
) -> None:
    """Revert one decision, never leaving a broken link.

    A node changed since, or a node others link to, is refused with what else would
    have to go; --cascade reverts all of it as one group. `vaultlink redo ID` brings
    back what an undo removed, if nothing changed since.

    Examples:

      vaultlink log          # find the id

      vaultlink undo 31

      vaultlink undo 8 --cascade
    """
    _revert(vault, "undo", decision, cascade)


@app.command()
def redo(
    decision: Annotated[int, typer.Argument(
        help="The undone decision's id, or the id of its UNDO, from `vaultlink log`.")],
    vault: VaultOpt = Path("."),
    cascade: CascadeOpt = False,
) -> None:
    """Bring back what `vaultlink undo` removed, if nothing changed since.

    Examples:

      vaultlink redo 8

      vaultlink redo 55
    """
    _revert(vault, "redo", decision, cascade)


def _revert(vault: Path, command: str, decision: int, cascade: bool) -> None:
    # the journal, undo and the link graph: ~60 ms that --help need not pay
    from vaultlink.pipeline import history
    from vaultlink.vault.state import State

    v, _ = open_vault(vault)
    lock = writer_or_daemon(v, command)
    if lock is None:  # the daemon's POST also re-indexes the nodes at once
        from vaultlink.daemon.client import ask_daemon  # urllib.request, ssl: ~30 ms

        answer = ask_daemon(v.state_dir, "POST", f"/{command}",
                            {"id": decision, "cascade": cascade})
        ids: list[int] = answer["ids"]
    else:
        state = State(v.state_dir / "state.sqlite")
        try:
            run = history.undo if command == "undo" else history.redo
            ids = run(v, state, decision, cascade).ids
        finally:
            state.close()
            lock.release()
    done = "undid" if command == "undo" else "redid"
    more = f" with {len(ids) - 1} more change(s)" if len(ids) > 1 else ""
    typer.echo(f"{done} decision #{decision}{more} (recorded as #{ids[0]}"
               + (f"-#{ids[-1]}" if len(ids) > 1 else "") + ")")
    if command == "undo":
        typer.echo(f"bring it back with: vaultlink redo {decision}")


@app.command()
def demo(
    to: Annotated[Path | None, typer.Option("--to", help="Folder for the copy (new or empty).")]
    = None,
    source: Annotated[Path | None, typer.Option("--from", help="Vault to copy.")] = None,
    llm: LlmOpt = "auto",
    ollama_host: HostOpt = None,
    model: ModelOpt = None,
) -> None:
    """Copy the sample vault to a new folder and dream there: see vaultlink work.

    Your checkout is never touched: the run happens in the copy (a new temporary
    folder unless --to is given). Works without Ollama (offline integrator).

    Examples:

      vaultlink demo

      vaultlink demo --to ~/vaultlink-demo --llm offline
    """

    # sample_vault/ sits beside the package in a checkout (the editable install)
    src = source or Path(vaultlink.__file__).resolve().parent.parent / "sample_vault"
    if not (src / "daily").is_dir():
        raise ConfigError(f"no sample vault at {src}; pass --from PATH (a vault with daily/)")
    dest = to or Path(tempfile.mkdtemp(prefix="vaultlink-demo-"))
    if dest.exists() and any(dest.iterdir()):
        raise ConfigError(f"{dest} is not empty; pass --to with a new folder")
    # shutil.copy, not copy2: the copy's notes are new, so all are inside backfill.days
    shutil.copytree(src, dest, dirs_exist_ok=True, copy_function=shutil.copy,
                    ignore=shutil.ignore_patterns(".vaultlink", ".obsidian"))
    before = {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("digest/**/*.md")}
    typer.echo(f"copied {src} to {dest}")
    code = 0
    try:
        # The whole sample in one run: the per-run cap is for a vault's daily trickle.
        dream(vault=dest, dry_run=False, llm=llm, ollama_host=ollama_host, model=model,
              max_units=1000, retry_parked=False, as_json=False)
    except typer.Exit as exc:
        code = exc.exit_code
    after = {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("digest/**/*.md")}
    new = sorted(set(after) - set(before))
    changed = sorted(p for p in before if p in after and after[p] != before[p])
    typer.echo(f"\nnew digest nodes ({len(new)}):")
    for p in new:
        typer.echo(f"  {p}")
    typer.echo(f"changed digest nodes ({len(changed)}):")
    for p in changed:
        typer.echo(f"  {p}")
    v, _ = open_vault(dest)
    errors = [problem for problem in check_vault(v) if problem.level == "error"]
    typer.echo(f"\nvaultlink check: {len(errors)} error(s) in digest/")
    for problem in errors:
        typer.echo(f"  {problem}")
    typer.echo(f"\nOpen it in Obsidian: 'Open folder as vault' -> {dest}\n"
               f"See why each link exists: vaultlink log --vault {dest} --diff")
    if code or errors:
        raise typer.Exit(1)


# -- recall: node-search, search, reindex ------------------------------------------
