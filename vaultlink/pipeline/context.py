"""What the dream's steps share: the run's context (vault, state, models), the run state
they fill in step by step, and the protocols of the parts they call.

Kept apart from ``pipeline.py`` so each step imports the types and the pipeline imports
the steps, with no import going back up.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from vaultlink.llm.chat import ChatModel
from vaultlink.options import Provider
from vaultlink.pipeline.events import Progress, RunEvent, UnitFinished, UnitStatus
from vaultlink.pipeline.usage import NoteSpend, Usage
from vaultlink.prose.units import Unit
from vaultlink.vault.actions import Action
from vaultlink.vault.faults import crash_point
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

log = logging.getLogger(__name__)


class Hit(Protocol):
    """What node_search returns per node (see ``vaultlink.index.nodes.NodeHit``)."""

    @property
    def path(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def similarity(self) -> float: ...


class NodeSearch(Protocol):
    """The one method of the node index the tools need."""

    def node_search(self, query: str, limit: int = 20) -> Sequence[Hit]:
        """Digest nodes ranked for ``query``."""
        ...


class NodeIndexLike(NodeSearch, Protocol):
    """The node index as the pipeline uses it: search, and re-index what it wrote."""

    def upsert(self, paths: Sequence[str]) -> Any:
        """Index (or re-index) these digest nodes now."""
        ...


@dataclass(frozen=True)
class SourceNote:
    """A changed daily/resource note as extract sees it: sections marked new or known."""

    path: str
    title: str
    sections: list[tuple[str, str, bool]]  # (heading breadcrumb, text, is_new)
    text: str = ""  # the whole note as read, frontmatter included (for file line numbers)

    def new_text(self) -> str:
        """The text of the new sections only."""
        return "\n\n".join(text for _, text, new in self.sections if new)


@dataclass(frozen=True)
class PassedOver:
    """A paragraph of a note that feeds no unit, and why (shown to the user, never silent)."""

    path: str
    line: int  # first and last line in the note's file, 1-based
    end_line: int
    excerpt: str
    reason: str


class Extractor(Protocol):
    """Turns changed notes into memory units (the model, or the offline extractor)."""

    #: Why a note can give no unit, in words for the person reading the run.
    passes_over: str
    #: The version of the rules that decide what a note gives: a note that gave nothing
    #: is read again when it changes.
    rules: str
    #: What the last ``extract`` call passed over, paragraph by paragraph.
    passed: list[PassedOver]
    @property
    def usage(self) -> Usage | None:
        """What a model extractor's calls spent so far (None: it calls no model)."""
        ...

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        """Units found in ``notes``; each unit's paths are among the notes' paths."""
        ...


class TopicPicker(Protocol):
    """Chooses the day's topics among candidates (one per integrated unit)."""

    def pick(self, candidates: list[dict[str, Any]], described: list[str],
             recent: set[str], max_topics: int) -> list[dict[str, Any]]:
        """Topics in the shape of :func:`topic_of`, best first, grouping ``candidates``
        (each described to the model by the line of the same place in ``described``)."""
        ...


class IntegrateMode(StrEnum):
    """How a model integrates a unit (``llm.integrate_mode``, ``auto`` resolved)."""

    TOOLS = "tools"  # a tool-calling session (``pipeline/integrate/session.py``)
    ONESHOT = "oneshot"  # one structured decision (``pipeline/integrate/oneshot.py``)


class ReviewMode(StrEnum):
    """``review.mode``: which decisions wait for the owner (``pipeline/integrate/review.py``)."""

    OFF = "off"  # every decision is written
    UNCERTAIN = "uncertain"  # what ``review.uncertain`` names is held as a proposal
    ALL = "all"  # every decision is held


@dataclass
class DreamContext:
    """Everything a run needs, built by the CLI or the daemon from configuration."""

    vault: Vault
    state: State
    index: NodeIndexLike
    extractor: Extractor
    integrator: ChatModel
    provider: Provider
    # the configured values (cli/settings.py holds each default, once)
    max_units: int
    park_after: int  # runs a failed unit or note is tried before it waits for the user
    same_threshold: float  # similarity: a node "very close" to a unit (one-shot)
    related_threshold: float  # similarity: a node related to a unit
    max_steps: int
    max_topics: int
    topic_min_units: int  # a day's units before the model groups them
    lookback_days: int
    integrate_mode: IntegrateMode = IntegrateMode.TOOLS
    # When set, gives integrate_mode at the first unit (it may ask the server for the
    # model's size): a run with nothing to integrate never asks.
    mode_of: Callable[[], IntegrateMode] | None = None
    integrator_name: str = ""  # as the journal records it: "offline", "ollama <model>"
    dry_run: bool = False
    topic_picker: TopicPicker | None = None  # None: one topic per unit
    only: frozenset[str] | None = None
    today: dt.date = field(default_factory=dt.date.today)
    progress: Progress | None = None
    # Checked between units: True asks the run to stop early (the daemon's shutdown).
    should_stop: Callable[[], bool] | None = None
    # backfill.days: a first start holds back notes unchanged this long (None: none).
    backfill_days: int | None = None
    # review.mode: what is held for the owner instead of written (off for a context a
    # test or a bench builds by hand; the CLI and the daemon pass the configured one)
    review: ReviewMode = ReviewMode.OFF
    # The offline rules, for a note the model gives no usable answer for run after run:
    # read by them on the run that would park it (None: such a note is parked).
    rules: Extractor | None = None

    def mode(self) -> IntegrateMode:
        """``integrate_mode``, found out now if it was left to the first unit."""
        if self.mode_of is not None:
            self.integrate_mode, self.mode_of = self.mode_of(), None
        return self.integrate_mode

    def report(self, event: RunEvent) -> None:
        """Tell the CLI or daemon what is happening (progress display, status API)."""
        if self.progress is not None:
            self.progress(event)
        if isinstance(event, UnitFinished):
            crash_point("between_units")  # the crash tests aim here


@dataclass
class UnitResult:
    """What happened to one unit."""

    unit: Unit
    status: UnitStatus
    action: Action | None = None  # None: no decision (a failed unit)
    target: str = ""
    note: str = ""
    diff: str = ""
    error: str = ""
    journal_id: int | None = None
    prompt_tokens: list[int] = field(default_factory=list)
    usage: Usage | None = None  # tokens, seconds, tool calls, refusals
    parked: bool = False  # failed for the last allowed time: waits for the user
    proposal_id: int | None = None  # held: the proposal that waits for review


@dataclass(frozen=True)
class Retry:
    """A unit taken up again from ``failed_units``: its row, runs tried, last error."""

    id: int
    tries: int
    error: str


@dataclass
class Extraction:
    """What the extract step found: the notes read and the units the run takes up."""

    scanned: int = 0
    changed: dict[str, str] = field(default_factory=dict)  # path -> hash read
    sections: dict[str, tuple[str, ...]] = field(default_factory=dict)
    units: list[Unit] = field(default_factory=list)
    pending_ids: list[int | None] = field(default_factory=list)  # pending_units id, if any
    retries: dict[int, Retry] = field(default_factory=dict)  # unit index -> its failure
    deferred_paths: set[str] = field(default_factory=set)  # wait, unchecked, for next run
    unread: dict[str, str] = field(default_factory=dict)  # note path -> why not read
    gone: list[str] = field(default_factory=list)  # known notes no longer in the vault
    readable: list[str] = field(default_factory=list)  # unread before, checkpointed as is
    failed_notes: dict[str, str] = field(default_factory=dict)  # extraction failed: why
    extract_usage: dict[str, NoteSpend] = field(default_factory=dict)  # per note
    held_paths: set[str] = field(default_factory=set)  # notes of earlier open failures
    passed_over: list[PassedOver] = field(default_factory=list)  # paragraphs no unit took
    yields: dict[str, int] = field(default_factory=dict)  # note path -> units extracted
    extracted: tuple[int, int, int] = (0, 0, 0)  # notes sent to the extractor, bytes, units


@dataclass
class RunReport:
    """What became of the run's units and notes: what the summary and the journal say."""

    results: list[UnitResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # path or unit -> reason
    failed_units: list[Unit] = field(default_factory=list)
    failed_paths: set[str] = field(default_factory=set)
    parked_paths: set[str] = field(default_factory=set)  # notes of units that now wait
    checkpointed: list[str] = field(default_factory=list)
    topics_written: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def changes(self) -> list[dict[str, str]]:
        """What the run wrote, one ``{target, action, note}`` per decision written, as
        the runs table, ``--json`` and the last run's status keep it."""
        return [{"target": r.target, "action": r.action, "note": r.note}
                for r in self.results if r.status == UnitStatus.INTEGRATED and r.action]


@dataclass
class RunState:
    """The shared state of one run, filled in step by step: what extract found, and
    what the run reports."""

    run_id: int = 0
    extraction: Extraction = field(default_factory=Extraction)
    report: RunReport = field(default_factory=RunReport)

    def counts(self) -> dict[str, int]:
        """The run summary's numbers."""
        found, report = self.extraction, self.report
        return {
            "scanned": found.scanned,
            "changed": len(found.changed),
            "extracted": len(found.units),
            UnitStatus.INTEGRATED: sum(r.status == UnitStatus.INTEGRATED
                                       for r in report.results),
            UnitStatus.SKIPPED: len(report.skipped),
            UnitStatus.FAILED: len(report.failed_units) + len(found.failed_notes),
            "checkpointed": len(report.checkpointed),
            UnitStatus.HELD: sum(r.status == UnitStatus.HELD for r in report.results),
        }


Step = Callable[[DreamContext, RunState], None]
