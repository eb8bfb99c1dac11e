"""dream_integrate_step: auto_link, one agent session per unit.

Each unit gets two attempts. A failed attempt is rolled back, so nothing half-done
stays in the vault. A unit that errors twice goes to ``failed_units`` and its notes to
``failed_paths`` (never checkpointed, retried next run); a unit that twice ends with
no usable receipt and no change is skipped and reported. One unit's failure never
stops the others. Every outcome is journaled.
"""

from __future__ import annotations

import json
import logging

from vaultlink.dream.context import DreamContext, RunState, UnitResult
from vaultlink.dream.guard import Guard
from vaultlink.dream.prompts import prompt
from vaultlink.dream.session import SessionOutcome, run_session
from vaultlink.dream.tools import Toolbox
from vaultlink.dream.units import Unit
from vaultlink.errors import ModelError, VaultlinkError
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import diff_of

log = logging.getLogger(__name__)

ATTEMPTS = 2


def system_prompt(bucket: str) -> str:
    """The integrate instructions with the bucket's writing focus."""
    return prompt("integrate").replace("{bucket}", bucket) + "\n\n" + prompt(bucket)


def user_prompt(unit: Unit) -> str:
    """The unit, as JSON the model (and the offline policy) can read back exactly."""
    return ("Integrate this memory unit.\n\n```json\n"
            + json.dumps(unit.to_dict(), ensure_ascii=False, indent=1) + "\n```\n"
            "Its source notes, to cite under ## Sources: "
            + ", ".join(f"[[{p}]]" for p in unit.paths))


def integrate_step(ctx: DreamContext, run: RunState) -> None:
    """Integrate every unit of the run, each in its own session."""
    for i, unit in enumerate(run.units, start=1):
        if ctx.should_stop is not None and ctx.should_stop():
            # Stopping: the units not started stay in pending_units for the next run,
            # and their notes are not checkpointed.
            rest = run.units[i - 1:]
            run.deferred_paths.update(p for u in rest for p in u.paths)
            ctx.report("stopped", remaining=len(rest))
            break
        ctx.report("unit_started", index=i, total=len(run.units), unit=unit.name,
                   paths=unit.paths)
        result = integrate_unit(ctx, run.run_id, unit)
        if not ctx.dry_run and i <= len(run.pending_ids):
            ctx.state.remove_pending([run.pending_ids[i - 1]])  # decided: journaled above
        run.results.append(result)
        if result.status == "failed":
            run.failed_units.append(unit)
            run.failed_paths.update(unit.paths)
        elif result.status == "skipped":
            run.skipped[unit.name] = result.error
        if result.action and result.status == "integrated":
            run.changes.append({"target": result.target, "action": result.action,
                                "note": result.note})
        ctx.report("unit_finished", index=i, total=len(run.units), unit=unit.name,
                   status=result.status, action=result.action, target=result.target,
                   note=result.note, error=result.error)


def vault_files(vault: Vault) -> frozenset[str]:
    """Every file of the vault, digest/ walked on its own: the whole-vault walk does not
    enter a symlinked folder, and a symlinked digest/ must still hold its nodes."""
    files = frozenset(vault.iter_files())
    if (vault.root / vault.digest).is_symlink():  # otherwise the first walk covered it
        files |= frozenset(vault.iter_files([vault.digest]))
    return files


def integrate_unit(ctx: DreamContext, run_id: int, unit: Unit) -> UnitResult:
    """Up to two sessions for one unit; the outcome is journaled either way."""
    errors: list[str] = []
    unusable = 0
    tokens: list[int] = []
    for attempt in range(1, ATTEMPTS + 1):
        files = vault_files(ctx.vault)  # link targets, until a write lands
        existed = frozenset(p for p in files
                            if p.startswith(f"{ctx.vault.digest}/") and p.endswith(".md"))
        guard = Guard(unit, existed, lambda: vault_files(ctx.vault), digest=ctx.vault.digest,
                      files=files)
        toolbox = Toolbox(ctx.vault, ctx.index, guard, dry_run=ctx.dry_run,
                          intents=None if ctx.dry_run else ctx.state)
        try:
            outcome = run_session(ctx.integrator, toolbox, system_prompt(unit.bucket),
                                  user_prompt(unit), ctx.max_steps)
        except (ModelError, VaultlinkError) as exc:
            outcome = SessionOutcome("error", error=str(exc))
        tokens += outcome.prompt_tokens
        for warning in outcome.warnings:
            log.warning("%s: %s", unit.name, warning)
        if outcome.status == "done" and outcome.receipt is not None:
            return _record_done(ctx, run_id, unit, toolbox, outcome, tokens)
        if outcome.status == "unchanged" and outcome.receipt is not None:
            return _record(ctx, run_id, unit, toolbox, "SKIP", outcome.receipt.target_path,
                           "already integrated: the node cites this source", "skipped",
                           tokens, error="already integrated",
                           classification=outcome.receipt.classification)
        toolbox.rollback()
        if outcome.status == "unusable":
            unusable += 1
        errors.append(f"attempt {attempt}: {outcome.error}")
        log.warning("unit %s, attempt %d: %s", unit.name, attempt, outcome.error)
    message = "; ".join(errors)
    if unusable == ATTEMPTS:
        return _record(ctx, run_id, unit, None, "SKIP", "", message, "skipped", tokens,
                       error=message)
    if not ctx.dry_run:
        ctx.state.record_failure(run_id, unit.to_dict(), message, ATTEMPTS)
    return _record(ctx, run_id, unit, None, "FAILED", "", message, "failed", tokens,
                   error=message)


def _record_done(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox,
                 outcome: SessionOutcome, tokens: list[int]) -> UnitResult:
    receipt = outcome.receipt
    assert receipt is not None
    target = receipt.target_path
    before, after = toolbox.before.get(target), toolbox.current.get(target)
    if not ctx.dry_run:
        try:
            ctx.index.upsert([target])
        except VaultlinkError as exc:  # the file is written; a later sync indexes it
            log.warning("could not index %s now: %s", target, exc)
    result = _record(ctx, run_id, unit, toolbox, receipt.action, target, receipt.note,
                     "integrated", tokens, before=before, after=after,
                     classification=receipt.classification)
    return result


def _record(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox | None, action: str,
            target: str, note: str, status: str, tokens: list[int], error: str = "",
            before: str | None = None, after: str | None = None,
            classification: dict[str, str] | None = None) -> UnitResult:
    diff = diff_of(target, before, after) if status == "integrated" else ""
    result = UnitResult(unit, status, action, target, note, diff, error, None, tokens)
    if ctx.dry_run:
        return result
    queries = toolbox.queries if toolbox is not None else []
    candidates = _candidates(queries, classification or {})
    result.journal_id = ctx.state.journal_add(
        run_id, unit.to_dict(), action, target, note, diff, queries, candidates,
        before_text=before, after_text=after)
    return result


def _candidates(queries: list[dict[str, object]],
                classification: dict[str, str]) -> list[dict[str, object]]:
    """Every recalled node once, with its best score and its classification."""
    best: dict[str, dict[str, object]] = {}
    for q in queries:
        hits = q.get("hits")
        for hit in hits if isinstance(hits, list) else []:
            path = str(hit["path"])
            if path not in best or float(hit["score"]) > float(str(best[path]["score"])):
                best[path] = {"path": path, "score": hit["score"],
                              "similarity": hit.get("similarity", 0.0),
                              "class": classification.get(path, "unclassified")}
    return sorted(best.values(), key=lambda c: -float(str(c["score"])))
