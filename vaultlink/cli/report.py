"""What a person reads during and after ``vaultlink dream``: progress lines, the run's
summary, its changes, and the same as JSON for ``--json``.

Pure formatting: a run state in, text out.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.events import (
    BacklogHeld,
    Extracted,
    ModelProgress,
    NoteFailed,
    NoteFinished,
    NotesDeferred,
    NoteStarted,
    NoteWithoutUnits,
    RunEvent,
    RunStarted,
    UnitFinished,
    UnitsDeferred,
    UnitStarted,
    UnitStatus,
)
from vaultlink.pipeline.usage import Usage


class ProgressPrinter:
    """Turns pipeline progress events into one readable line each.

    While the model answers, ``inplace`` (a terminal) rewrites the open line with the
    tokens so far and the seconds waited; otherwise those ticks print nothing.
    """

    def __init__(self, echo: Any, inplace: bool = False) -> None:
        self.echo = echo
        self.inplace = inplace
        self._open = ""  # the line waiting for its outcome, if any

    def _start(self, text: str) -> None:
        self._open = text
        self.echo(text, nl=False)

    def _end(self, outcome: str) -> None:
        redo = "\r\x1b[K" + self._open if self.inplace and self._open else ""
        self.echo(f"{redo} {outcome}"[:300])
        self._open = ""

    def __call__(self, event: RunEvent) -> None:
        """The ``DreamContext.progress`` callback."""
        match event:
            case ModelProgress(tokens=tokens, seconds=seconds):
                if self.inplace and self._open:
                    self.echo(f"\r\x1b[K{self._open} {tokens} tokens, {seconds:.0f} s",
                              nl=False)
            case RunStarted(provider=provider, dry_run=dry_run):
                mode = " (dry run: nothing is written)" if dry_run else ""
                self.echo(f"dreaming with the {provider} integrator{mode}")
            case BacklogHeld(count=count, days=days):
                self.echo(f"  first start: {count:,} older note(s), unchanged for {days} "
                          "day(s) or more, wait in the backlog (indexed for search, not "
                          "integrated); `vaultlink backfill --all` or --since YYYY-MM-DD "
                          "takes them, after an estimate")
            case NoteStarted(index=index, total=total, path=path):
                self._start(f"  extract [{index}/{total}] {path} ...")
            case NoteFinished(units=units, tokens=tokens, seconds=seconds):
                self._end(f"{units} unit(s)" + _spent(tokens, seconds))
            case NoteFailed(error=error, parked=parked):
                self._end(("PARKED" if parked else "FAILED (retried next run)") + f": {error}")
            case Extracted(units=units, changed=changed, retried=retried):
                again = f", {retried} of them failed before" if retried else ""
                self.echo(f"  {changed} changed note(s), {len(units)} unit(s) to "
                          f"integrate{again}")
            case NoteWithoutUnits(path=path, reason=reason):
                self.echo(f"  nothing to keep in {path}: {reason}")
            case NotesDeferred(count=count):
                self.echo(f"  {count} more changed note(s) wait for the next run: this run "
                          "has enough units (auto_dream.max_units, or pass --max-units N)")
            case UnitsDeferred(count=count):
                self.echo(f"  {count} more unit(s) wait for the next run (at most "
                          "auto_dream.max_units per run: run again, or pass --max-units N)")
            case UnitStarted(index=index, total=total, unit=unit):
                self._start(f"  [{index}/{total}] {unit} ...")
            case UnitFinished():
                self._end(_finished(event))
            # NoteSkipped: said once, in the summary's "not read" list


def _finished(event: UnitFinished) -> str:
    """The end of a unit's progress line: what became of it."""
    match event.status:
        case UnitStatus.INTEGRATED:
            note = f": {event.note}" if event.note else ""
            return f"{event.action} {event.target}{note}" + _spent(event.tokens, event.seconds)
        case UnitStatus.HELD:
            return f"HELD {event.action} {event.target}: {event.note}"
        case UnitStatus.FAILED:
            return (("PARKED" if event.parked else "FAILED (retried next run)")
                    + f": {event.error}")
        case _:
            return f"{event.status.upper()}: {event.error}"


def _spent(tokens: tuple[int, int] | None, seconds: float) -> str:
    """`` (52 s, 1,234+210 tokens)`` when the model was used."""
    if not seconds and not tokens:
        return ""
    prompt, answer = tokens or (0, 0)
    return f" ({seconds or 0:.0f} s, {prompt:,}+{answer:,} tokens)"


def run_summary(run: RunState, dry_run: bool, progress_shown: bool = True) -> list[str]:
    """The run summary, each thing said once: the counts; the changes (one
    ``target [ACTION]: note`` line each) unless the progress lines already said them;
    failed and skipped units; topics; warnings; notes not read; a dry run's diffs."""
    found, report = run.extraction, run.report
    counts = run.counts()
    if dry_run:  # nothing was recorded
        counts["would checkpoint"] = counts.pop("checkpointed")
    lines = ["", "summary: " + ", ".join(f"{k} {v}" for k, v in counts.items())]
    results = [r for r in report.results if r.status == UnitStatus.INTEGRATED]
    if results and not progress_shown:
        lines.append("changes:" if not dry_run else "would change:")
        lines += [f"  {r.target} [{r.action}]: {r.note}" for r in results]
    for r in report.results:
        if r.status in (UnitStatus.FAILED, UnitStatus.SKIPPED):
            state = "PARKED" if r.parked else r.status.upper()
            lines.append(f"  {r.unit.name} [{state}]: {r.error}")
    for path, error in found.failed_notes.items():
        state = "PARKED" if path in report.parked_paths else "FAILED"
        lines.append(f"  {path} [EXTRACT {state}]: {error}")
    held = [r for r in report.results if r.status == UnitStatus.HELD]
    if held and not dry_run:
        lines.append(f"{len(held)} held for review (review.mode): nothing of them is written "
                     "until you say; `vaultlink review list` shows them, `vaultlink review "
                     "show ID` the change")
    waiting = len(report.failed_units) + len(found.failed_notes)
    if waiting and not dry_run:
        parked = sum(r.parked for r in report.results) + len(
            [p for p in found.failed_notes if p in report.parked_paths])
        lines.append(f"{waiting} failed ({parked} parked): their notes are not checkpointed; "
                     "the next run retries them" + (", `vaultlink dream --retry-parked` the "
                                                    "parked ones" if parked else ""))
    for path in report.topics_written:
        lines.append(f"  {path} [TOPICS]")
    lines += passed_lines(run)
    lines += [f"warning: {w}" for w in report.warnings]
    if found.unread:
        lines.append(f"not read ({len(found.unread)}; `vaultlink status` lists them until fixed):")
        lines += [f"  {path}: {reason}" for path, reason in sorted(found.unread.items())]
    diffs = [r.diff for r in results if r.diff]
    if dry_run and diffs:
        lines += ["", "diffs:", *diffs]
    return lines


def passed_lines(run: RunState) -> list[str]:
    """What the run's notes held that no unit took: notes that gave nothing, by name, and
    a count of the paragraphs passed over beside units (``vaultlink status`` lists all)."""
    found = run.extraction
    if not found.passed_over:
        return []
    out = []
    for path, units in sorted(found.yields.items()):
        mine = [p for p in found.passed_over if p.path == path]
        if not units and mine:
            reasons = ", ".join(dict.fromkeys(p.reason for p in mine))
            out.append(f"  {path} [NOTHING TO KEEP]: {reasons}")
    notes = len({p.path for p in found.passed_over})
    out.append(f"passed over {len(found.passed_over)} paragraph(s) of {notes} note(s), each "
               "with its reason: `vaultlink status` lists them, `vaultlink log --note NOTE` "
               "shows a note's")
    return out


def run_json(run: RunState, dry_run: bool) -> dict[str, Any]:
    """The run as ``vaultlink dream --json`` prints it."""
    found, report = run.extraction, run.report
    return {
        "run_id": run.run_id, "dry_run": dry_run, "counts": run.counts(),
        "changes": report.changes(), "topics": report.topics_written, "warnings": report.warnings,
        UnitStatus.SKIPPED: report.skipped,
        "passed_over": [asdict(p) for p in found.passed_over], "yields": found.yields,
        "results": [{"unit": r.unit.to_dict(), "status": r.status, "action": r.action or "",
                     "target": r.target, "note": r.note, "error": r.error, "diff": r.diff,
                     "journal_id": r.journal_id, "prompt_tokens": r.prompt_tokens,
                     "parked": r.parked, "proposal_id": r.proposal_id,
                     **_usage_json(r.usage)}
                    for r in report.results],
        "extract": {path: asdict(spend) for path, spend in found.extract_usage.items()},
        "failed_notes": [{"path": p, "error": e, "parked": p in report.parked_paths}
                         for p, e in found.failed_notes.items()],
    }


def _usage_json(usage: Usage | None) -> dict[str, Any]:
    """What the model spent on a unit, as ``--json`` shows it."""
    if usage is None:
        return {}
    return {"answer_tokens": usage.answer_tokens, "model_seconds": round(usage.seconds, 2),
            "calls": dict(usage.calls), "refusals": list(usage.refusals),
            "corrections": usage.corrections}
