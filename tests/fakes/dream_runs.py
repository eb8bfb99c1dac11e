"""Helpers for pipeline tests: run a dream on a vault against a fake Ollama server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tests.fakes.ollama_server import reply
from tests.fakes.sample_vault_model import (
    extract_request,
    is_decision_request,
    is_topics_request,
    topics_by_bucket,
    unit_of,
)
from vaultlink.cli.settings import load_settings
from vaultlink.options import Provider
from vaultlink.pipeline.compose import close_models, dream_context, open_parts
from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.vault.notes import Vault


def units_for(request: dict[str, Any], units: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The extract answer for one note: the ``units`` whose ``paths`` name it."""
    path, _ = extract_request(request)
    return reply(json.dumps({"units": [u for u in units if path in u.get("paths", [path])]}))


def with_extract(integrate: Callable[[dict[str, Any]], Any],
                 *units: dict[str, Any]) -> Callable[[dict[str, Any]], Any]:
    """A model that extracts ``units`` (each from the notes its ``paths`` name) and hands
    integrate turns (tool turns, one-shot decisions) to ``integrate``."""
    def model(request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            return topics_by_bucket(request)
        if request.get("format") and not is_decision_request(request):
            return units_for(request, units)
        return integrate(request)
    return model


def turns(*replies: Any) -> Callable[[dict[str, Any]], Any]:
    """Integrate turns played in order, then the last one forever."""
    queue = list(replies)
    def play(_: dict[str, Any]) -> Any:
        return queue.pop(0) if len(queue) > 1 else queue[0]
    return play


def dream(root: Path, host: str, *, dry_run: bool = False, **overrides: Any) -> RunState:
    """One run with the Ollama provider at ``host`` (``dry_run``: nothing written);
    ``overrides`` are dotted settings. Every decision is written (``review.mode: off``)
    unless they say otherwise: these tests judge the integrator's decisions."""
    settings = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "ollama", "llm.host": host, "llm.retries": 0, "llm.max_steps": 4,
         "llm.integrate_mode": "tools", "review.mode": "off",  # held for review: test_review
         **overrides})
    vault = Vault(root)
    parts = open_parts(vault, settings.pipeline())
    try:
        parts.index.sync()
        ctx = dream_context(parts, settings.pipeline(), Provider.OLLAMA, dry_run=dry_run)
        try:
            return run_dream(ctx, build_steps(settings.get("auto_dream.steps")))
        finally:
            close_models(ctx)
    finally:
        parts.close()




def offline_dream(root: Path, **overrides: Any) -> RunState:
    """One run of the offline integrator, as ``vaultlink dream --llm offline`` runs it;
    ``overrides`` are dotted settings."""
    settings = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "offline", **overrides})
    parts = open_parts(Vault(root), settings.pipeline())
    try:
        parts.index.sync()
        return run_dream(dream_context(parts, settings.pipeline(), Provider.OFFLINE),
                         build_steps(settings.get("auto_dream.steps")))
    finally:
        parts.close()


def creator(request: dict[str, Any]) -> dict[str, Any]:
    """Integrate turns of a plain model: CREATE digest/<bucket>/<name>.md citing the source."""
    unit = unit_of(request["messages"])
    target = f"digest/{unit['bucket']}/{unit['name']}.md"
    if not any(m["role"] == "tool" for m in request["messages"]):
        body = (f"{unit['summary']}\n\n## Sources\n\n- This comes from "
                f"[[{unit['paths'][0]}]], where it was written down.\n")
        return reply(tool_calls=[("write", {"path": target, "name": unit["name"],
                                            "description": unit["summary"][:120],
                                            "content": body})])
    return reply(json.dumps({"action": "CREATE", "target_path": target, "note": "new"}))
