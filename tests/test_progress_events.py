"""The run's progress events as their two readers show them: the daemon's status
``current`` and the CLI's progress lines (the shapes the status API and the terminal
had when events were names and dicts)."""

from __future__ import annotations

from typing import Any

from vaultlink.cli.report import ProgressPrinter
from vaultlink.daemon.progress import RunProgress
from vaultlink.pipeline.events import (
    BacklogHeld,
    Extracted,
    ModelProgress,
    NoteFailed,
    NoteFinished,
    NoteSkipped,
    NoteStarted,
    RunStarted,
    UnitFinished,
    UnitStarted,
    UnitStatus,
)
from vaultlink.vault.actions import Action


def finished(status: UnitStatus, **fields: Any) -> UnitFinished:
    given: dict[str, Any] = {"action": "", "target": "", "note": "", "error": "",
                             "parked": False, "tokens": None, "seconds": 0.0, **fields}
    return UnitFinished(1, 2, "deploy-steps", status, **given)


def test_the_status_current_follows_the_note_and_the_unit_under_way() -> None:
    progress = RunProgress()
    progress(NoteStarted(1, 3, "daily/a.md"))
    assert progress.current == {"unit": "", "paths": ["daily/a.md"], "stage": "extract",
                                "tokens": None, "seconds": None}
    progress(ModelProgress(120, 3.5))
    assert progress.current["tokens"] == 120 and progress.current["seconds"] == 3.5
    progress(NoteFailed("daily/a.md", "timeout", parked=False))
    assert progress.current is None
    progress(ModelProgress(5, 0.1))  # between units: nothing to update
    assert progress.current is None
    progress(UnitStarted(1, 2, "deploy-steps", ("daily/a.md", "daily/b.md")))
    assert progress.current == {"unit": "deploy-steps", "paths": ["daily/a.md", "daily/b.md"],
                                "stage": "integrate", "tokens": None, "seconds": None}
    progress(finished(UnitStatus.INTEGRATED, action=Action.CREATE, target="digest/x.md"))
    assert progress.current is None


def test_the_progress_lines_say_each_event_once() -> None:
    lines: list[str] = []

    def echo(text: str, nl: bool = True) -> None:
        lines.append(text + ("\n" if nl else ""))

    printer = ProgressPrinter(echo)
    printer(RunStarted(7, "offline", dry_run=True))
    printer(BacklogHeld(1200, 14))
    printer(NoteSkipped("daily/bad.md", "not UTF-8"))
    printer(NoteStarted(1, 1, "daily/a.md"))
    printer(NoteFinished("daily/a.md", 2, (1234, 210), 52.0))
    printer(Extracted(("a", "b"), changed=1, retried=1))
    printer(UnitStarted(1, 2, "deploy-steps", ("daily/a.md",)))
    printer(finished(UnitStatus.INTEGRATED, action=Action.REFINE, target="digest/x.md",
                     note="more steps"))
    printer(UnitStarted(2, 2, "other", ("daily/a.md",)))
    printer(finished(UnitStatus.FAILED, error="no receipt", parked=True))
    assert "".join(lines) == (
        "dreaming with the offline integrator (dry run: nothing is written)\n"
        "  first start: 1,200 older note(s), unchanged for 14 day(s) or more, wait in the "
        "backlog (indexed for search, not integrated); `vaultlink backfill --all` or "
        "--since YYYY-MM-DD takes them, after an estimate\n"
        "  extract [1/1] daily/a.md ... 2 unit(s) (52 s, 1,234+210 tokens)\n"
        "  1 changed note(s), 2 unit(s) to integrate, 1 of them failed before\n"
        "  [1/2] deploy-steps ... REFINE digest/x.md: more steps\n"
        "  [2/2] other ... PARKED: no receipt\n")
