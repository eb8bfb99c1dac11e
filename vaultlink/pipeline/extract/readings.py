"""What each reading of a note gave: units, and the paragraphs passed over with why.

Nothing a user wrote disappears silently: every paragraph of a note read in a run either
feeds a unit or is recorded here (``state.sqlite`` ``passed_over``, shown by ``vaultlink
status``), journaled once as a SKIP decision of that note when what was passed over
changed, and counted in the run summary. A note that gave nothing is remembered with the
rules that read it, so a change of rules (or a model) reads it again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict

from vaultlink.pipeline.context import DreamContext, PassedOver, RunState, SourceNote
from vaultlink.prose.units import slugify
from vaultlink.vault.actions import Action


def reasons_text(passed: Sequence[PassedOver]) -> str:
    """"code block (3), status update (who is doing what) (1)": the reasons, counted."""
    counts = Counter(p.reason for p in passed)
    return ", ".join(f"{reason} ({n})" for reason, n in counts.items())


def record_readings(ctx: DreamContext, run: RunState, notes: Sequence[SourceNote]) -> None:
    """Store what each note read in this run gave; journal what was newly passed over."""
    found = run.extraction
    if ctx.dry_run:
        return
    for note in notes:
        passed = [p for p in found.passed_over if p.path == note.path]
        before = {(p["excerpt"], p["reason"]) for p in ctx.state.passed_over(note.path)}
        ctx.state.record_reading(note.path, found.yields.get(note.path, 0), ctx.extractor.rules,
                                 [asdict(p) for p in passed])
        if not passed or {(p.excerpt, p.reason) for p in passed} == before:
            continue
        units = found.yields.get(note.path, 0)
        head = (f"gave no unit; passed over {len(passed)} paragraph(s)" if not units else
                f"passed over {len(passed)} paragraph(s) beside its {units} unit(s)")
        detail = "\n".join(f"line {p.line}: {p.reason}: {p.excerpt}" for p in passed)
        stem = note.path.rsplit("/", 1)[-1].removesuffix(".md")
        ctx.state.journal_add(run.run_id, {"name": slugify(stem), "bucket": "", "summary": detail,
                                           "paths": [note.path]}, Action.SKIP, "",
                              f"{head}: {reasons_text(passed)}")
