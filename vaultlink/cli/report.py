"""What a person reads during and after ``vaultlink dream``: progress lines, the run's
summary, its changes, and the same as JSON for ``--json``.

Pure formatting: a run state in, text out.
"""

from __future__ import annotations

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
            self.echo(f"  skipped {detail['path']}: {detail['reason']}")
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
                self.echo(f" {detail['action']} {detail['target']}")
            else:
                self.echo(f" {detail['status'].upper()}: {detail.get('error', '')}"[:300])


def run_summary(run: RunState, dry_run: bool) -> list[str]:
    """The run summary: counts, then one ``target [ACTION]: note`` line per change."""
    counts = run.counts()
    if dry_run:  # nothing was recorded
        counts["would checkpoint"] = counts.pop("checkpointed")
    lines = ["", "summary: " + ", ".join(f"{k} {v}" for k, v in counts.items())]
    results = [r for r in run.results if r.status == "integrated"]
    if results:
        lines.append("changes:" if not dry_run else "would change:")
        lines += [f"  {r.target} [{r.action}]: {r.note}" for r in results]
    for r in run.results:
        if r.status in ("failed", "skipped"):
            lines.append(f"  {r.unit.name} [{r.status.upper()}]: {r.error}")
    for path in run.topics_written:
        lines.append(f"  {path} [TOPICS]")
    lines += [f"warning: {w}" for w in run.warnings]
    if dry_run:
        lines += ["", "diffs:"] + [r.diff for r in results]
    return lines


def run_json(run: RunState, dry_run: bool) -> dict[str, Any]:
    """The run as ``vaultlink dream --json`` prints it."""
    return {
        "run_id": run.run_id, "dry_run": dry_run, "counts": run.counts(),
        "changes": run.changes, "topics": run.topics_written, "warnings": run.warnings,
        "skipped": run.skipped,
        "results": [{"unit": r.unit.to_dict(), "status": r.status, "action": r.action,
                     "target": r.target, "note": r.note, "error": r.error, "diff": r.diff,
                     "journal_id": r.journal_id, "prompt_tokens": r.prompt_tokens}
                    for r in run.results],
    }
