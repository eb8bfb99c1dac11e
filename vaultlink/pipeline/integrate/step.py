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
from dataclasses import dataclass, field

from vaultlink.errors import (
    IndexServerUnavailable,
    ModelError,
    ModelOutputError,
    ModelUnavailable,
    VaultlinkError,
    unexpected,
)
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.sections import append_source_sentence, cites_all
from vaultlink.options import Provider
from vaultlink.pipeline.context import (
    DreamContext,
    IntegrateMode,
    Retry,
    ReviewMode,
    RunState,
    UnitResult,
)
from vaultlink.pipeline.events import Stopped, UnitFinished, UnitStarted, UnitStatus
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.holds import decided_before, holds_words, journaled_to
from vaultlink.pipeline.integrate.oneshot import run_oneshot
from vaultlink.pipeline.integrate.review import hold, mark, waiting_or_rejected
from vaultlink.pipeline.integrate.session import Ending, SessionOutcome, run_session
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.pipeline.prompts import prompt
from vaultlink.pipeline.stored import journal_unit, record_unit_failure
from vaultlink.pipeline.usage import Usage
from vaultlink.prose.node_names import carried_unit
from vaultlink.prose.units import Receipt, Unit
from vaultlink.prose.wording import wording_of
from vaultlink.prose.writing import source_sentence
from vaultlink.vault.actions import Action
from vaultlink.vault.names import owner_aliases, owner_links
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import diff_of

log = logging.getLogger(__name__)

ATTEMPTS = 2
MODES = (IntegrateMode.TOOLS, IntegrateMode.ONESHOT)
ALREADY = "already integrated: the node cites this source"


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
    found, report = run.extraction, run.report
    for i, unit in enumerate(found.units, start=1):
        if ctx.should_stop is not None and ctx.should_stop():
            # Stopping: the units not started stay in pending_units (or failed_units)
            # for the next run, and their notes are not checkpointed.
            rest = found.units[i - 1:]
            found.deferred_paths.update(p for u in rest for p in u.paths)
            ctx.report(Stopped(len(rest)))
            break
        ctx.report(UnitStarted(i, len(found.units), unit.name, tuple(unit.paths)))
        retry = found.retries.get(i - 1)
        result = integrate_unit(ctx, run.run_id, unit, retry)
        pending = found.pending_ids[i - 1] if i <= len(found.pending_ids) else None
        if not ctx.dry_run and pending is not None:
            ctx.state.remove_pending([pending])  # decided: journaled, or in failed_units
        report.results.append(result)
        mark(ctx, run, result)  # held for review: its notes as read, for its checkpoint
        match result.status:
            case UnitStatus.FAILED:
                report.failed_units.append(unit)
                (report.parked_paths if result.parked else report.failed_paths).update(unit.paths)
            case UnitStatus.SKIPPED:
                report.skipped[unit.name] = result.error
        spent = result.usage
        ctx.report(UnitFinished(
            i, len(found.units), unit.name, result.status, result.action or "",
            target=result.target, note=result.note, error=result.error, parked=result.parked,
            tokens=(sum(spent.prompt_tokens), spent.answer_tokens) if spent else None,
            seconds=spent.seconds if spent else 0.0))


def vault_files(vault: Vault) -> frozenset[str]:
    """Every file of the vault, digest/ walked on its own: the whole-vault walk does not
    enter a symlinked folder, and a symlinked digest/ must still hold its nodes."""
    files = frozenset(vault.iter_files())
    if (vault.root / vault.digest).is_symlink():  # otherwise the first walk covered it
        files |= frozenset(vault.iter_files([vault.digest]))
    return files


def modes_for(ctx: DreamContext, tries: int) -> list[IntegrateMode]:
    """The mode of each attempt: the configured one first, the other one first on
    every other retry run (a retry is never the request that failed)."""
    if ctx.provider != Provider.OLLAMA or (mode := ctx.mode()) not in MODES:
        return [IntegrateMode.TOOLS] * ATTEMPTS
    other = MODES[1 - MODES.index(mode)]
    return [mode, mode] if tries % 2 == 0 else [other, mode]


def integrate_unit(ctx: DreamContext, run_id: int, unit: Unit,
                   retry: Retry | None = None) -> UnitResult:
    """Up to two attempts at one unit; the outcome is journaled either way."""
    settled = _settled_before(ctx, run_id, unit)
    if settled is not None:
        return settled
    if unit.corroborates:
        return _confirm_repeat(ctx, run_id, unit, retry)
    errors: list[str] = []
    served_badly = 0
    usage = Usage()
    hint = retry.error[:200] if retry is not None else ""
    modes = modes_for(ctx, retry.tries if retry is not None else 0)
    for attempt, mode in enumerate(modes, start=1):
        toolbox = _toolbox(ctx, unit)
        outcome, badly = _attempt(ctx, unit, toolbox, mode, hint, attempt)
        served_badly += badly
        if mode != IntegrateMode.ONESHOT:
            outcome.usage.refusals += toolbox.refusals
        usage.merge(outcome.usage)
        for warning in outcome.warnings:
            log.warning("%s: %s", unit.name, warning)
        name = f"{ctx.integrator_name} {mode}".strip() if ctx.provider == Provider.OLLAMA \
            else ctx.integrator_name
        result = _landed(ctx, run_id, unit, toolbox, outcome, Spent(usage, name), retry)
        if result is not None:
            return result
        toolbox.rollback()
        errors.append(f"attempt {attempt} ({mode}): {outcome.error}")
        hint = outcome.error[:200]
        log.warning("unit %s, attempt %d (%s): %s", unit.name, attempt, mode, outcome.error)
    return _failed(ctx, run_id, unit, "; ".join(errors), Spent(usage, ctx.integrator_name),
                   retry, counts=served_badly < len(modes))


def _settled_before(ctx: DreamContext, run_id: int, unit: Unit) -> UnitResult | None:
    """The unit's result when an earlier run settled it: decided and journaled, held for
    review, or rejected there; else None."""
    earlier = None if ctx.dry_run else decided_before(ctx.state, unit)
    if earlier is not None:
        # A run killed after the decision was journaled but before the note was
        # checkpointed: deciding again would write the node twice ("-2", "-3" copies).
        log.info("unit %s was decided by #%d before a stop; not again", unit.name, earlier.id)
        return UnitResult(unit, UnitStatus.INTEGRATED, earlier.action, earlier.target,
                          note=f"decided by #{earlier.id} before the last run stopped",
                          journal_id=earlier.id)
    waits = waiting_or_rejected(ctx, unit)  # review: open or rejected
    if waits is None or waits.status == UnitStatus.HELD:
        return waits
    return _record(ctx, run_id, unit, None, Verdict(
        Action.SKIP, UnitStatus.SKIPPED, waits.target, waits.note, waits.error,
        Spent(Usage(), ctx.integrator_name)))


def _attempt(ctx: DreamContext, unit: Unit, toolbox: Toolbox, mode: IntegrateMode, hint: str,
             attempt: int) -> tuple[SessionOutcome, bool]:
    """One attempt in ``mode``, and whether the server (not the model) failed it."""
    # the owner's links as full paths, each naming what it named in the owner's note
    told = carried_unit(unit, toolbox.guard.files or vault_files(ctx.vault),
                        toolbox.guard.read_source)
    try:
        if mode == IntegrateMode.ONESHOT:
            # no bucket focus: the one-shot answer is a decision, the text the summary
            return run_oneshot(ctx.integrator, toolbox, prompt("oneshot"), told, "", hint,
                               ctx.same_threshold, ctx.related_threshold), False
        return run_session(ctx.integrator, toolbox, system_prompt(unit.bucket),
                           user_prompt(told, hint), ctx.max_steps), False
    except (ModelUnavailable, IndexServerUnavailable):
        toolbox.rollback()
        raise  # the server is gone: the run stops, nothing of this unit is lost
    except (ModelError, VaultlinkError) as exc:
        # the server failed or timed out: not the model's answer, not a try
        badly = isinstance(exc, ModelError) and not isinstance(exc, ModelOutputError)
        return SessionOutcome(Ending.ERROR, error=str(exc)), badly
    except Exception as exc:  # a unit vaultlink cannot handle fails alone
        log.exception("unit %s, attempt %d (%s): unexpected error", unit.name, attempt, mode)
        return SessionOutcome(Ending.ERROR, error=unexpected(exc)), False


def _landed(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox,
            outcome: SessionOutcome, spent: Spent, retry: Retry | None) -> UnitResult | None:
    """The unit's result when the attempt stands (written, held for review, or a replay
    the node holds); else None, with ``outcome.error`` saying why not."""
    match outcome.status:
        case Ending.DONE if outcome.receipt is not None:
            try:  # review.mode: an uncertain decision is held, a sure one lands now
                held = hold(ctx, run_id, unit, toolbox, outcome.receipt, spent.integrator)
            except VaultlinkError as exc:  # the node changed while the unit was decided
                outcome.status, outcome.error = Ending.ERROR, str(exc)
                return None
            _resolve(ctx, retry)
            return held or _record_done(ctx, run_id, unit, toolbox, outcome.receipt, spent)
        case Ending.UNCHANGED if outcome.receipt is not None:
            target = outcome.receipt.target_path
            if _replay(ctx, unit, toolbox, target):
                _resolve(ctx, retry)
                return _record(ctx, run_id, unit, toolbox, Verdict(
                    Action.SKIP, UnitStatus.SKIPPED, target, ALREADY, "already integrated",
                    spent, classification=outcome.receipt.classification))
            outcome.error = (f"the integrator took {target} to hold the unit already, but it "
                             "does not: nothing was written")
    return None


def _resolve(ctx: DreamContext, retry: Retry | None) -> None:
    """The unit's earlier failure is over: it was integrated (or found held) now."""
    if retry is not None and not ctx.dry_run:
        ctx.state.resolve_failure([retry.id])


def _failed(ctx: DreamContext, run_id: int, unit: Unit, message: str, spent: Spent,
            retry: Retry | None, counts: bool) -> UnitResult:
    """A unit not integrated: kept in failed_units (retried, parked after ``park_after``
    failures that ``counts``) and journaled as FAILED."""
    parked = False
    if not ctx.dry_run:
        parked = record_unit_failure(
            ctx.state, run_id, unit, message, attempts=int(counts), codes=spent.usage.refusals,
            failure_id=retry.id if retry is not None else None, park_after=ctx.park_after)
    result = _record(ctx, run_id, unit, None, Verdict(
        Action.FAILED, UnitStatus.FAILED, "", message, message, spent))
    result.parked = parked
    return result


def _confirm_repeat(ctx: DreamContext, run_id: int, unit: Unit,
                    retry: Retry | None) -> UnitResult:
    """A note that repeats one the node holds: one Sources line, no model, no new text."""
    toolbox = _toolbox(ctx, unit)
    target = unit.corroborates
    note = f"the same text as {unit.repeats}, saved again as {unit.paths[0]}"
    spent = Spent(Usage(), "repeat")
    try:
        body = split_frontmatter(toolbox.text_of(target))[1]
        cited = cites_all(body, unit.paths)
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
                       spent, retry, counts=True)
    _resolve(ctx, retry)
    if held is not None:
        return held
    if cited:
        return _record(ctx, run_id, unit, toolbox, Verdict(
            Action.SKIP, UnitStatus.SKIPPED, target, ALREADY, "already integrated", spent))
    return _record_done(ctx, run_id, unit, toolbox, receipt, spent)


def _toolbox(ctx: DreamContext, unit: Unit) -> Toolbox:
    files = vault_files(ctx.vault)  # link targets, until a write lands
    existed = frozenset(p for p in files
                        if p.startswith(f"{ctx.vault.digest}/") and p.endswith(".md"))
    guard = Guard(unit, existed, lambda: vault_files(ctx.vault), digest=ctx.vault.digest,
                  files=files, read_source=lambda rel: ctx.vault.read_bytes(rel).decode(
                      "utf-8", errors="replace"),
                  aliases=lambda: owner_aliases(ctx.vault, vault_files(ctx.vault)),
                  links=lambda: owner_links(ctx.vault, vault_files(ctx.vault)))
    model = ctx.provider == Provider.OLLAMA
    return Toolbox(ctx.vault, ctx.index, guard, dry_run=ctx.dry_run,
                   intents=None if ctx.dry_run else ctx.state, scores=not model,
                   hit_limit=10 if model else 50, hold=ctx.review is not ReviewMode.OFF)


def _replay(ctx: DreamContext, unit: Unit, toolbox: Toolbox, target: str) -> bool:
    """Whether ``target`` really holds the unit already: the journal says this unit went
    there, or the node holds most of the unit's words (a replay after state was lost)."""
    if not ctx.dry_run and journaled_to(ctx.state, unit, target):
        return True
    return holds_words(unit.summary, toolbox.text_of(target))


@dataclass(frozen=True)
class Spent:
    """What a unit's attempts cost, and who made them (as the journal names them)."""

    usage: Usage
    integrator: str


@dataclass(frozen=True)
class Verdict:
    """What became of a unit, as its journal row records it."""

    action: Action
    status: UnitStatus
    target: str
    note: str
    error: str
    spent: Spent
    before: str | None = None  # the node's text before and after (an integrated unit)
    after: str | None = None
    classification: dict[str, str] = field(default_factory=dict)


def _record_done(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox,
                 receipt: Receipt, spent: Spent) -> UnitResult:
    target = receipt.target_path
    before, after = toolbox.before.get(target), toolbox.current.get(target)
    if not ctx.dry_run:
        try:
            ctx.index.upsert([target])
        except VaultlinkError as exc:  # the file is written; a later sync indexes it
            log.warning("could not index %s now: %s", target, exc)
    return _record(ctx, run_id, unit, toolbox, Verdict(
        receipt.action, UnitStatus.INTEGRATED, target, receipt.note, "", spent, before, after,
        receipt.classification))


def _record(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox | None,
            v: Verdict) -> UnitResult:
    """The unit's result, journaled (not in a dry run) with what its attempts spent."""
    usage = v.spent.usage
    diff = diff_of(v.target, v.before, v.after) if v.status == UnitStatus.INTEGRATED else ""
    result = UnitResult(unit, v.status, v.action, v.target, v.note, diff, v.error, None,
                        usage.prompt_tokens, usage=usage)
    if ctx.dry_run:
        return result
    queries = toolbox.queries if toolbox is not None else []
    candidates = _candidates(queries, v.classification)
    result.journal_id = journal_unit(
        ctx.state, run_id, unit, v.action, v.target, v.note, diff, queries, candidates,
        before_text=v.before, after_text=v.after, integrator=v.spent.integrator,
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
