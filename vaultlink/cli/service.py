"""``watch``, ``status`` and ``backfill``: the daemon, its state and its backlog.

``doctor`` lives in ``cli/doctor.py``; importing it here keeps its place in the help,
before ``watch``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vaultlink.cli import doctor  # noqa: F401  (registers doctor)
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
from vaultlink.options import Provider
from vaultlink.pipeline.backfill import duration

if TYPE_CHECKING:
    from vaultlink.vault.notes import Vault


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
    if since is not None and take_all:
        raise ConfigError("give --since DATE or --all, not both")
    v, settings = open_vault(vault)
    start = _day(since) if since is not None else None
    chosen = since is not None or take_all
    lock = writer_or_daemon(v, "backfill")
    ask, close = _backlog_asker(v, settings, start, lock is None)
    try:
        answer = ask(False)
        count = answer["estimate"]["notes"]
        if not as_json:
            what = (f"since {since}" if since else "all") if chosen else "waiting"
            typer.echo(f"backlog ({what}): {answer['words']}")
        if chosen and count and (yes or (not as_json and typer.confirm("Queue them?"))):
            answer = ask(True)
    finally:
        close()
        if lock is not None:
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


def _backlog_asker(v: Vault, settings: Settings, start: float | None, daemon: bool
                   ) -> tuple[Callable[[bool], dict[str, Any]], Callable[[], None]]:
    """Who estimates and queues the backlog: the running daemon, or this command on the
    state it opens (adopting the backlog first, as a first start would); and its closer."""
    from vaultlink.daemon.backlog import backfill_request  # state only: ~20 ms
    from vaultlink.daemon.client import ask_daemon
    from vaultlink.pipeline.backfill import adopt
    from vaultlink.vault.state import State

    if daemon:
        def ask_it(queue: bool) -> dict[str, Any]:
            return ask_daemon(v.state_dir, "POST", "/backfill", {"since": start, "queue": queue})
        return ask_it, lambda: None
    state = State(v.state_dir / "state.sqlite")
    days = settings.pipeline().backfill_days
    adopt(state, v.scan([v.daily, v.resource], cache=state), time.time(), days)
    provider = _pace_provider(settings)

    def ask(queue: bool) -> dict[str, Any]:
        return backfill_request(state, provider, {"since": start, "queue": queue})
    return ask, state.close


def _day(text: str) -> float:
    """Local midnight of a YYYY-MM-DD day, in seconds since the epoch."""
    try:
        return dt.datetime.strptime(text, "%Y-%m-%d").timestamp()
    except ValueError:
        raise ConfigError(f"--since {text!r} is not a date; write it as YYYY-MM-DD") from None


def _pace_provider(settings: Settings) -> str:
    """The integrator whose pace the estimate uses: auto asks Ollama once."""
    provider = Provider(settings.get("llm.provider"))
    if provider != Provider.AUTO:
        return str(provider)
    from vaultlink.llm.ollama import is_reachable  # ollama, httpx: ~0.2 s

    reachable = is_reachable(str(settings.get("llm.host")))
    return str(Provider.OLLAMA if reachable else Provider.OFFLINE)
