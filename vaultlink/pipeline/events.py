"""What a run tells its watcher as it goes: one frozen dataclass per event.

``DreamContext.report`` takes one of these; the CLI's progress lines (``cli/report.py``)
and the daemon's status (``daemon/progress.py``) dispatch on the class with ``match``.
``event`` names each kind as the logs do; ``detail`` gives its fields as a dict.
``UnitStatus`` is here as what ``UnitFinished`` says (``context.py`` imports it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, ClassVar


class UnitStatus(StrEnum):
    """What became of a unit in a run: a closed set (compares equal to its value)."""

    INTEGRATED = "integrated"
    UNCHANGED = "unchanged"
    SKIPPED = "skipped"
    FAILED = "failed"
    HELD = "held"  # decided, not written: a proposal waits for the owner's review


@dataclass(frozen=True)
class RunEvent:
    """The base of every event: its name, and its fields as a dict."""

    event: ClassVar[str] = ""

    def detail(self) -> dict[str, Any]:
        """The event's fields by name (what a log line or a JSON view shows)."""
        return asdict(self)


@dataclass(frozen=True)
class RunStarted(RunEvent):
    event: ClassVar[str] = "run_started"
    run_id: int
    provider: str
    dry_run: bool


@dataclass(frozen=True)
class StepStarted(RunEvent):
    event: ClassVar[str] = "step"
    name: str  # the step's name in auto_dream.steps


@dataclass(frozen=True)
class RunFinished(RunEvent):
    event: ClassVar[str] = "run_finished"
    counts: dict[str, int]
    changes: list[dict[str, str]]


@dataclass(frozen=True)
class ProposalStale(RunEvent):
    """A held proposal whose node changed since: its unit is decided again."""

    event: ClassVar[str] = "proposal_stale"
    id: int
    unit: str
    target: str


@dataclass(frozen=True)
class BacklogHeld(RunEvent):
    """A first start held back ``count`` notes unchanged for ``days`` days or more."""

    event: ClassVar[str] = "backlog_held"
    count: int
    days: int | None


@dataclass(frozen=True)
class NoteSkipped(RunEvent):
    event: ClassVar[str] = "note_skipped"
    path: str
    reason: str | None


@dataclass(frozen=True)
class Extracted(RunEvent):
    """Extraction is done: the run's units (by name), changed notes, units retried."""

    event: ClassVar[str] = "extracted"
    units: tuple[str, ...]
    changed: int
    retried: int


@dataclass(frozen=True)
class UnitsDeferred(RunEvent):
    event: ClassVar[str] = "units_deferred"
    count: int


@dataclass(frozen=True)
class NotesDeferred(RunEvent):
    event: ClassVar[str] = "notes_deferred"
    count: int


@dataclass(frozen=True)
class Stopped(RunEvent):
    """The run was asked to stop: ``remaining`` notes or units wait for the next one."""

    event: ClassVar[str] = "stopped"
    remaining: int


@dataclass(frozen=True)
class NoteStarted(RunEvent):
    event: ClassVar[str] = "note_started"
    index: int
    total: int
    path: str


@dataclass(frozen=True)
class NoteFinished(RunEvent):
    event: ClassVar[str] = "note_finished"
    path: str
    units: int
    tokens: tuple[int, int]  # prompt, answer
    seconds: float


@dataclass(frozen=True)
class NoteWithoutUnits(RunEvent):
    event: ClassVar[str] = "note_without_units"
    path: str
    reason: str


@dataclass(frozen=True)
class NoteFailed(RunEvent):
    event: ClassVar[str] = "note_failed"
    path: str
    error: str
    parked: bool


@dataclass(frozen=True)
class UnitStarted(RunEvent):
    event: ClassVar[str] = "unit_started"
    index: int
    total: int
    unit: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class UnitFinished(RunEvent):
    event: ClassVar[str] = "unit_finished"
    index: int
    total: int
    unit: str
    status: UnitStatus
    action: str  # the Action's value, "" for no decision
    target: str
    note: str
    error: str
    parked: bool
    tokens: tuple[int, int] | None  # prompt, answer; None: no model was asked
    seconds: float


@dataclass(frozen=True)
class ModelProgress(RunEvent):
    """The model's answer so far: tokens written, seconds since the call began."""

    event: ClassVar[str] = "model_progress"
    tokens: int
    seconds: float


Progress = Callable[[RunEvent], None]
