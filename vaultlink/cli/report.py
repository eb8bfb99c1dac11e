"""What a person reads during and after ``vaultlink dream``: progress lines, the run's
summary, its changes, and the same as JSON for ``--json``.

Pure formatting: a run state in, text out.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from vaultlink.dream.context import RunState


class ProgressPrinter:
    """Turns pipeline progress events into one readable line each."""

    def __init__(self, echo: Any) -> None:
        self.echo = echo

    def __call__(self, event: str, detail: dict[str, Any]) -> None:
        """The ``DreamContext.progress`` callback."""
        if event == "run_started":
            mode = " (dry run: nothing is written)" if detail.get("dry_run") else ""
            self.echo(f"dreaming with the {detail.get('provider')} integrator{mode}")
        elif event == "backlog_held":
            self.echo(f"  first start: {detail['count']:,} older note(s), unchanged for "
                      f"{detail['days']} day(s) or more, wait in the backlog (indexed for "
                      "search, not integrated); `vaultlink backfill --all` or --since "
                      "YYYY-MM-DD takes them, after an estimate")
        elif event == "note_skipped":
            pass  # said once, in the summary's "not read" list
        elif event == "extracted":
            units = detail.get("units", [])
            self.echo(f"  {detail.get('changed', 0)} changed note(s), {len(units)} unit(s) "
                      "to integrate")
        elif event == "note_without_units":
            self.echo(f"  nothing to keep in {detail['path']}: {detail['reason']}")
        elif event == "units_deferred":
            self.echo(f"  {detail['count']} more unit(s) wait for the next run (at most "
                      "auto_dream.max_units per run: run again, or pass --max-units N)")
        elif event == "unit_started":
            self.echo(f"  [{detail['index']}/{detail['total']}] {detail['unit']} ...", nl=False)
        elif event == "unit_finished":
            if detail.get("status") == "integrated":
                note = f": {detail['note']}" if detail.get("note") else ""
                self.echo(f" {detail['action']} {detail['target']}{note}")
            else:
                self.echo(f" {detail['status'].upper()}: {detail.get('error', '')}"[:300])


def run_summary(run: RunState, dry_run: bool, progress_shown: bool = True) -> list[str]:
    """The run summary, each thing said once: the counts; the changes (one
    ``target [ACTION]: note`` line each) unless the progress lines already said them;
    failed and skipped units; topics; warnings; notes not read; a dry run's diffs."""
    counts = run.counts()
    if dry_run:  # nothing was recorded
        counts["would checkpoint"] = counts.pop("checkpointed")
    lines = ["", "summary: " + ", ".join(f"{k} {v}" for k, v in counts.items())]
    results = [r for r in run.results if r.status == "integrated"]
    if results and not progress_shown:
        lines.append("changes:" if not dry_run else "would change:")
        lines += [f"  {r.target} [{r.action}]: {r.note}" for r in results]
    for r in run.results:
        if r.status in ("failed", "skipped"):
            lines.append(f"  {r.unit.name} [{r.status.upper()}]: {r.error}")
    for path in run.topics_written:
        lines.append(f"  {path} [TOPICS]")
    lines += passed_lines(run)
    lines += [f"warning: {w}" for w in run.warnings]
    if run.unread:
        lines.append(f"not read ({len(run.unread)}; `vaultlink status` lists them until fixed):")
        lines += [f"  {path}: {reason}" for path, reason in sorted(run.unread.items())]
    diffs = [r.diff for r in results if r.diff]
    if dry_run and diffs:
        lines += ["", "diffs:", *diffs]
    return lines


def passed_lines(run: RunState) -> list[str]:
    """What the run's notes held that no unit took: notes that gave nothing, by name, and
    a count of the paragraphs passed over beside units (``vaultlink status`` lists all)."""
    if not run.passed_over:
        return []
    out = []
    for path, units in sorted(run.yields.items()):
        mine = [p for p in run.passed_over if p.path == path]
        if not units and mine:
            reasons = ", ".join(dict.fromkeys(p.reason for p in mine))
            out.append(f"  {path} [NOTHING TO KEEP]: {reasons}")
    notes = len({p.path for p in run.passed_over})
    out.append(f"passed over {len(run.passed_over)} paragraph(s) of {notes} note(s), each "
               "with its reason: `vaultlink status` lists them, `vaultlink log --note NOTE` "
               "shows a note's")
    return out


def run_json(run: RunState, dry_run: bool) -> dict[str, Any]:
    """The run as ``vaultlink dream --json`` prints it."""
    return {
        "run_id": run.run_id, "dry_run": dry_run, "counts": run.counts(),
        "changes": run.changes, "topics": run.topics_written, "warnings": run.warnings,
        "skipped": run.skipped,
        "passed_over": [asdict(p) for p in run.passed_over], "yields": run.yields,
        "results": [{"unit": r.unit.to_dict(), "status": r.status, "action": r.action,
                     "target": r.target, "note": r.note, "error": r.error, "diff": r.diff,
                     "journal_id": r.journal_id, "prompt_tokens": r.prompt_tokens}
                    for r in run.results],
    }
