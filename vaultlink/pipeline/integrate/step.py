"""dream_integrate_step: auto_link, one session per unit.

A unit gets two attempts per run: a tool session (``session.py``) or a one-shot decision
(``oneshot.py``), as ``DreamContext.integrate_mode`` says; the second attempt is told
why the first failed, so it is never the identical request. A failed attempt is rolled
back, so nothing half-done stays in the vault.

No unit is lost. A unit that is not integrated (an error, no usable answer, nothing
written, a receipt that does not match the files) is a failure: it stays in
``failed_units``, its notes are not checkpointed, and a later run retries it, starting
with the other mode; after ``park_after`` runs it is parked until the user asks again.
The only unit that ends without a write is a replay the vault already holds (the node
cites the unit's sources and either the journal shows the unit went there, or the node
holds most of its words). Every outcome is journaled, with what the model spent.
"""

from __future__ import annotations

import json
import logging

from vaultlink.errors import (
    IndexServerUnavailable,
    ModelError,
    ModelOutputError,
    ModelUnavailable,
    VaultlinkError,
    unexpected,
)
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.sections import append_source_sentence, cited_sources
from vaultlink.pipeline.context import (
    DreamContext,
    Retry,
    ReviewMode,
    RunState,
    UnitResult,
    UnitStatus,
)
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.oneshot import HOLDS, run_oneshot
from vaultlink.pipeline.integrate.review import hold, mark, waiting_or_rejected
from vaultlink.pipeline.integrate.session import Ending, SessionOutcome, Usage, run_session
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.pipeline.prompts import prompt
from vaultlink.prose.node_names import carried_unit
from vaultlink.prose.node_text import coverage
from vaultlink.prose.units import Receipt, Unit
from vaultlink.prose.wording import wording_of
from vaultlink.prose.writing import source_sentence
from vaultlink.vault.actions import DECISIONS, Action
from vaultlink.vault.journal import JournalEntry
from vaultlink.vault.names import owner_aliases, owner_links
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import diff_of

log = logging.getLogger(__name__)

ATTEMPTS = 2
MODES = ("tools", "oneshot")


def system_prompt(bucket: str) -> str:
    """The tool session's instructions: the same for every unit, so a server that
    caches the prompt's start (Ollama, llama.cpp) reads them once per run, not per unit."""
    del bucket  # the bucket's focus is in the user message
    return prompt("integrate")


def user_prompt(unit: Unit, hint: str = "") -> str:
    """The unit, as JSON the model (and the offline policy) can read back exactly."""
    text = ("Integrate this memory unit.\n\n```json\n"
            + json.dumps(unit.to_dict(), ensure_ascii=False) + "\n```\n"
            + prompt(unit.bucket).strip() + "\n"
            "Its source notes, to cite under ## Sources: "
            + ", ".join(f"[[{p}]]" for p in unit.paths))
    return text + (f"\n\nAn earlier attempt failed ({hint}); avoid that." if hint else "")


def integrate_step(ctx: DreamContext, run: RunState) -> None:
    """Integrate every unit of the run, each in its own session."""
    for i, unit in enumerate(run.units, start=1):
        if ctx.should_stop is not None and ctx.should_stop():
            # Stopping: the units not started stay in pending_units (or failed_units)
            # for the next run, and their notes are not checkpointed.
            rest = run.units[i - 1:]
            run.deferred_paths.update(p for u in rest for p in u.paths)
            ctx.report("stopped", remaining=len(rest))
            break
        ctx.report("unit_started", index=i, total=len(run.units), unit=unit.name,
                   paths=unit.paths)
        retry = run.retries.get(i - 1)
        result = integrate_unit(ctx, run.run_id, unit, retry)
        pending = run.pending_ids[i - 1] if i <= len(run.pending_ids) else None
        if not ctx.dry_run and pending is not None:
            ctx.state.remove_pending([pending])  # decided: journaled, or in failed_units
        run.results.append(result)
        mark(ctx, run, result)  # held for review: its notes as read, for its checkpoint
        match result.status:
            case UnitStatus.FAILED:
                run.failed_units.append(unit)
                (run.parked_paths if result.parked else run.failed_paths).update(unit.paths)
            case UnitStatus.SKIPPED:
                run.skipped[unit.name] = result.error
            case UnitStatus.INTEGRATED if result.action:
                run.changes.append({"target": result.target, "action": result.action,
                                    "note": result.note})
        spent = result.usage
        ctx.report("unit_finished", index=i, total=len(run.units), unit=unit.name,
                   status=result.status, action=result.action or "", target=result.target,
                   note=result.note, error=result.error, parked=result.parked,
                   tokens=[sum(spent.prompt_tokens), spent.answer_tokens] if spent else None,
                   seconds=spent.seconds if spent else 0.0)


def vault_files(vault: Vault) -> frozenset[str]:
    """Every file of the vault, digest/ walked on its own: the whole-vault walk does not
    enter a symlinked folder, and a symlinked digest/ must still hold its nodes."""
    files = frozenset(vault.iter_files())
    if (vault.root / vault.digest).is_symlink():  # otherwise the first walk covered it
        files |= frozenset(vault.iter_files([vault.digest]))
    return files


def decided_before(ctx: DreamContext, unit: Unit) -> JournalEntry | None:
    """The live journal row of this very unit (name, sources and summary), if a run
    decided it already; never in a dry run."""
    if ctx.dry_run or not unit.paths:
        return None
    for e in ctx.state.journal(limit=50, path=unit.paths[0]):
        if (e.action in DECISIONS and e.undone_by is None and e.unit.get("name") == unit.name
                and e.unit.get("paths") == unit.paths
                and e.unit.get("summary") == unit.summary):
            return e
    return None


def modes_for(ctx: DreamContext, tries: int) -> list[str]:
    """The mode of each attempt: the configured one first, the other one first on
    every other retry run (a retry is never the request that failed)."""
    if ctx.provider != "ollama" or (mode := ctx.mode()) not in MODES:
        return ["tools"] * ATTEMPTS
    other = MODES[1 - MODES.index(mode)]
    return [mode, mode] if tries % 2 == 0 else [other, mode]


def integrate_unit(ctx: DreamContext, run_id: int, unit: Unit,
                   retry: Retry | None = None) -> UnitResult:
    """Up to two attempts at one unit; the outcome is journaled either way."""
    earlier = decided_before(ctx, unit)
    if earlier is not None:
        # A run killed after the decision was journaled but before the note was
        # checkpointed: deciding again would write the node twice (the crash loop's
        # offline daemon made "-2" and "-3" copies at mid_checkpoint kills).
        log.info("unit %s was decided by #%d before a stop; not again", unit.name, earlier.id)
        return UnitResult(unit, UnitStatus.INTEGRATED, earlier.action, earlier.target,
                          note=f"decided by #{earlier.id} before the last run stopped",
                          journal_id=earlier.id)
    if (waits := waiting_or_rejected(ctx, unit)) is not None:  # review: open or rejected
        return waits if waits.status == UnitStatus.HELD else _record(
            ctx, run_id, unit, None, Action.SKIP, waits.target, waits.note,
            UnitStatus.SKIPPED, Usage(), ctx.integrator_name, error=waits.error)
    if unit.corroborates:
        return _confirm_repeat(ctx, run_id, unit, retry)
    errors: list[str] = []
    served_badly = 0
    usage = Usage()
    hint = retry.error[:200] if retry is not None else ""
    modes = modes_for(ctx, retry.tries if retry is not None else 0)
    for attempt, mode in enumerate(modes, start=1):
        toolbox = _toolbox(ctx, unit)
        # the owner's links as full paths, each naming what it named in the owner's note
        told = carried_unit(unit, toolbox.guard.files or vault_files(ctx.vault),
                            toolbox.guard.read_source)
        try:
            if mode == "oneshot":
                # no bucket focus: the one-shot answer is a decision, the text the summary
                outcome = run_oneshot(ctx.integrator, toolbox, prompt("oneshot"), told, "",
                                      hint, ctx.same_threshold, ctx.related_threshold)
            else:
                outcome = run_session(ctx.integrator, toolbox, system_prompt(unit.bucket),
                                      user_prompt(told, hint), ctx.max_steps)
        except (ModelUnavailable, IndexServerUnavailable):
            toolbox.rollback()
            raise  # the server is gone: the run stops, nothing of this unit is lost
        except (ModelError, VaultlinkError) as exc:
            outcome = SessionOutcome(Ending.ERROR, error=str(exc))
            # the server failed or timed out: not the model's answer, not a try
            served_badly += isinstance(exc, ModelError) and not isinstance(exc,
                                                                          ModelOutputError)
        except Exception as exc:  # a unit vaultlink cannot handle fails alone
            log.exception("unit %s, attempt %d (%s): unexpected error", unit.name, attempt,
                          mode)
            outcome = SessionOutcome(Ending.ERROR, error=unexpected(exc))
        if mode != "oneshot":
            outcome.usage.refusals += toolbox.refusals
        usage.merge(outcome.usage)
        for warning in outcome.warnings:
            log.warning("%s: %s", unit.name, warning)
        name = f"{ctx.integrator_name} {mode}".strip() if ctx.provider == "ollama" \
            else ctx.integrator_name
        if outcome.status == Ending.DONE and outcome.receipt is not None:
            try:  # review.mode: an uncertain decision is held, a sure one lands now
                held = hold(ctx, run_id, unit, toolbox, outcome.receipt, name)
            except VaultlinkError as exc:  # the node changed while the unit was decided
                held, outcome = None, SessionOutcome(Ending.ERROR, error=str(exc))
            if outcome.status == Ending.DONE:
                if retry is not None and not ctx.dry_run:
                    ctx.state.resolve_failure([retry.id])
                return held or _record_done(ctx, run_id, unit, toolbox, outcome, usage, name)
        if outcome.status == Ending.UNCHANGED and outcome.receipt is not None:
            target = outcome.receipt.target_path
            if _replay(ctx, unit, toolbox, target):
                if retry is not None and not ctx.dry_run:
                    ctx.state.resolve_failure([retry.id])
                return _record(ctx, run_id, unit, toolbox, Action.SKIP, target,
                               "already integrated: the node cites this source",
                               UnitStatus.SKIPPED,
                               usage, name, error="already integrated",
                               classification=outcome.receipt.classification)
            outcome.error = (f"the model says {target} already holds the unit, but it "
                             "does not: nothing was written")
        toolbox.rollback()
        errors.append(f"attempt {attempt} ({mode}): {outcome.error}")
        hint = outcome.error[:200]
        log.warning("unit %s, attempt %d (%s): %s", unit.name, attempt, mode, outcome.error)
    return _failed(ctx, run_id, unit, "; ".join(errors), usage, ctx.integrator_name, retry,
                   counts=served_badly < len(modes))


def _failed(ctx: DreamContext, run_id: int, unit: Unit, message: str, usage: Usage,
            integrator: str, retry: Retry | None, counts: bool) -> UnitResult:
    """A unit not integrated: kept in failed_units (retried, parked after ``park_after``
    failures that ``counts``) and journaled as FAILED."""
    parked = False
    if not ctx.dry_run:
        parked = ctx.state.record_failure(
            run_id, unit.to_dict(), message, attempts=int(counts), codes=usage.refusals,
            failure_id=retry.id if retry is not None else None, park_after=ctx.park_after)
    result = _record(ctx, run_id, unit, None, Action.FAILED, "", message, UnitStatus.FAILED, usage,
                     integrator, error=message)
    result.parked = parked
    return result


def _confirm_repeat(ctx: DreamContext, run_id: int, unit: Unit,
                    retry: Retry | None) -> UnitResult:
    """A note that repeats one the node holds: one Sources line, no model, no new text."""
    toolbox = _toolbox(ctx, unit)
    target = unit.corroborates
    note = f"the same text as {unit.repeats}, saved again as {unit.paths[0]}"
    try:
        body = split_frontmatter(toolbox.text_of(target))[1]
        cited = set(unit.paths) <= cited_sources(body)
        if not cited:
            title = toolbox.guard.without_remote(unit.title)  # a clipped page's title
            line = source_sentence(Action.CORROBORATE, title or unit.name, unit.paths,
                                   words=wording_of(body), as_written=True)
            answer = json.loads(toolbox.call("edit", {
                "path": target, "old": body, "new": append_source_sentence(body, line)}))
            if "error" in answer:
                raise VaultlinkError(str(answer["error"]))
        receipt = Receipt(Action.CORROBORATE, target, note)
        held = None if cited else hold(ctx, run_id, unit, toolbox, receipt, "repeat")
    except VaultlinkError as exc:
        toolbox.rollback()
        return _failed(ctx, run_id, unit, f"could not add {unit.paths[0]} to {target}: {exc}",
                       Usage(), "repeat", retry, counts=True)
    if retry is not None and not ctx.dry_run:
        ctx.state.resolve_failure([retry.id])
    if held is not None:
        return held
    if cited:
        return _record(ctx, run_id, unit, toolbox, Action.SKIP, target,
                       "already integrated: the node cites this source", UnitStatus.SKIPPED,
                       Usage(), "repeat", error="already integrated")
    outcome = SessionOutcome(Ending.DONE, receipt)
    return _record_done(ctx, run_id, unit, toolbox, outcome, Usage(), "repeat")


def _toolbox(ctx: DreamContext, unit: Unit) -> Toolbox:
    files = vault_files(ctx.vault)  # link targets, until a write lands
    existed = frozenset(p for p in files
                        if p.startswith(f"{ctx.vault.digest}/") and p.endswith(".md"))
    guard = Guard(unit, existed, lambda: vault_files(ctx.vault), digest=ctx.vault.digest,
                  files=files, read_source=lambda rel: ctx.vault.read_bytes(rel).decode(
                      "utf-8", errors="replace"),
                  aliases=lambda: owner_aliases(ctx.vault, vault_files(ctx.vault)),
                  links=lambda: owner_links(ctx.vault, vault_files(ctx.vault)))
    model = ctx.provider == "ollama"
    return Toolbox(ctx.vault, ctx.index, guard, dry_run=ctx.dry_run,
                   intents=None if ctx.dry_run else ctx.state, scores=not model,
                   hit_limit=10 if model else 50, hold=ctx.review is not ReviewMode.OFF)


def _replay(ctx: DreamContext, unit: Unit, toolbox: Toolbox, target: str) -> bool:
    """Whether ``target`` really holds the unit already: the journal says this unit went
    there, or the node holds most of the unit's words (a replay after state was lost)."""
    if not ctx.dry_run:
        for entry in ctx.state.journal(50, target):
            if (entry.target == target and entry.action in DECISIONS
                    and entry.undone_by is None and entry.unit.get("name") == unit.name):
                return True
    return coverage(unit.summary, toolbox.text_of(target)) >= HOLDS


def _record_done(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox,
                 outcome: SessionOutcome, usage: Usage, integrator: str) -> UnitResult:
    receipt = outcome.receipt
    assert receipt is not None
    target = receipt.target_path
    before, after = toolbox.before.get(target), toolbox.current.get(target)
    if not ctx.dry_run:
        try:
            ctx.index.upsert([target])
        except VaultlinkError as exc:  # the file is written; a later sync indexes it
            log.warning("could not index %s now: %s", target, exc)
    return _record(ctx, run_id, unit, toolbox, receipt.action, target, receipt.note,
                   UnitStatus.INTEGRATED, usage, integrator, before=before, after=after,
                   classification=receipt.classification)


def _record(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox | None,
            action: Action, target: str, note: str, status: UnitStatus, usage: Usage,
            integrator: str,
            error: str = "", before: str | None = None, after: str | None = None,
            classification: dict[str, str] | None = None) -> UnitResult:
    diff = diff_of(target, before, after) if status == UnitStatus.INTEGRATED else ""
    result = UnitResult(unit, status, action, target, note, diff, error, None,
                        usage.prompt_tokens, usage=usage)
    if ctx.dry_run:
        return result
    queries = toolbox.queries if toolbox is not None else []
    candidates = _candidates(queries, classification or {})
    result.journal_id = ctx.state.journal_add(
        run_id, unit.to_dict(), action, target, note, diff, queries, candidates,
        before_text=before, after_text=after, integrator=integrator,
        prompt_tokens=sum(usage.prompt_tokens), answer_tokens=usage.answer_tokens,
        model_seconds=usage.seconds, refusals=usage.refusals, calls=dict(usage.calls))
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
