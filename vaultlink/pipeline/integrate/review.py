"""Review before write: an uncertain decision waits for the owner instead of landing.

With ``review.mode: uncertain`` (the default) or ``all``, integrate decides each unit
in a session whose writes wait in its overlay (``Toolbox.hold``). :func:`hold` then
asks :func:`uncertain` about the decision: a sure one lands as it always did; an
uncertain one becomes a *proposal* in ``state.sqlite`` (``vault/proposals.py``): the
exact change (the hash of the node it was made against, its text before and after),
the unit, the action and target, why vaultlink would do it and why it waits. Its
notes are neither extracted again nor checkpointed while it waits.

The owner settles it (``vaultlink review``, ``POST /proposals/{id}/...``, the plugin;
``settle.py`` does the writing):

* approve: the change is written through the guard, compare-and-swap against the hash
  in the proposal, journaled and undoable as any decision. A node changed since (or a
  change the guard refuses now) makes the proposal *stale*: the unit goes back to the
  pending units and the next run decides it again;
* reject: nothing is written, the journal records the unit as skipped with the
  reason, and the unit (its name and notes) is never proposed again;
* new: the unit is written as a new node (a CREATE) instead.

Settling a unit's last proposal checkpoints its notes as the run read them.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultlink.errors import NoteNotFound
from vaultlink.markdown.sections import cited_sources, without_sources
from vaultlink.pipeline.context import DreamContext, ReviewMode, RunState, UnitResult
from vaultlink.pipeline.events import UnitStatus
from vaultlink.pipeline.stored import is_unit, propose, stored_name
from vaultlink.prose.shared_subject import names_node, same_facts
from vaultlink.prose.units import Receipt, Unit
from vaultlink.vault.actions import UPDATE_ACTIONS, Action
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault, parse_note
from vaultlink.vault.proposals import Proposal, ProposalState
from vaultlink.vault.state import State, diff_of

if TYPE_CHECKING:  # a type only: the tools (and the guard below them) load with integrate
    from vaultlink.pipeline.integrate.tools import Toolbox

log = logging.getLogger(__name__)

EVERY = "review.mode is all: every decision waits for review"


@dataclass(frozen=True)
class Decided:
    """A decision carried out in a held session and not written yet: what
    :func:`uncertain` judges. ``before`` is None for a new node."""

    unit: Unit
    action: Action
    target: str
    before: str | None
    after: str
    resource: str = "resource"  # the vault's folder of kept pages


def uncertain(d: Decided) -> str | None:
    """Why the decision should wait for the owner, or None when vaultlink is sure of it.

    The rules, in order (add new ones here, each with the words the owner reads):

    1. Any CORRECT: it changes what a node says (the old claim stays visible, struck
       through, but which claim is right is the owner's to say).
    2. An update (CORROBORATE, REFINE, CORRECT) with weak subject evidence: the unit
       neither names the node's subject (its name, an alias, the subject phrase its
       description opens with) nor states the node's facts (``subject.shared_subject``).
       Both integrators turn such an update into a CREATE already; this catches what
       reaches the write anyway (a model driving the tools).
    3. A merge of two pages on facts alone: a unit of a ``resource/`` page updating a
       node whose Sources cite another page of ``resource/``, where the unit does not
       name the node's subject and only shares some of its facts (a page saved twice
       corroborates by its text, and a page that names the node's subject updates it).

    A node whose Sources cite the unit's own note already (another unit of that note, an
    earlier attempt at this one) shares its subject by that note: 2 and 3 pass.

    A REFINE or CORROBORATE that rewrites or removes a sentence never gets here: the
    guard refuses it outright (only a CORRECT may change a sentence).
    """
    if d.action == Action.CORRECT:
        return "a correction: it changes what the node says"
    if d.action not in UPDATE_ACTIONS or d.before is None:
        return None
    if d.unit.corroborates:  # a page saved twice: its twin's nodes, by its very text
        return None
    note = parse_note(d.target, d.before.encode("utf-8"))
    cited = cited_sources(note.body)
    if cited & set(d.unit.paths):  # the node holds this note already (an earlier unit)
        return None
    text = f"{d.unit.title or d.unit.name.replace('-', ' ')}\n{d.unit.summary}"
    if names_node(text, note.frontmatter):
        return None
    if not same_facts(d.unit.summary, without_sources(note.body)):
        name = str(note.frontmatter.get("name") or d.target)
        return (f"weak subject evidence: the unit neither names {name!r} nor states "
                "its facts")
    pages = [p for p in d.unit.paths if p.startswith(f"{d.resource}/")]
    others = sorted(p for p in cited if p.startswith(f"{d.resource}/"))
    if pages and others:
        return (f"a merge of two pages on shared facts alone: {pages[0]} into a node "
                f"made from {others[0]}, which the unit does not name")
    return None


def why_held(mode: ReviewMode, d: Decided) -> str | None:
    """The reason a decision waits under ``mode``, or None when it is written now."""
    if mode is ReviewMode.OFF:
        return None
    reason = uncertain(d)
    return reason if reason is not None or mode is ReviewMode.UNCERTAIN else EVERY


def hold(ctx: DreamContext, run_id: int, unit: Unit, toolbox: Toolbox, receipt: Receipt,
         integrator: str) -> UnitResult | None:
    """Hold the decision ``receipt`` names as a proposal (the held result), or land the
    session's writes (None): what ``review.mode`` and :func:`uncertain` say. A node that
    changed while the unit was decided raises ``VaultError`` and nothing is written."""
    target = receipt.target_path
    before, after = toolbox.before.get(target), toolbox.current.get(target)
    reason = None
    if toolbox.hold and after is not None:
        reason = why_held(ctx.review, Decided(unit, receipt.action, target, before, after,
                                              ctx.vault.resource))
    if reason is None or after is None:
        toolbox.land()
        return None
    pid = propose(ctx.state, run_id, unit, receipt.action, target, toolbox.read_hash(target),
                  before, after, reason, receipt.note, integrator)
    toolbox.rollback()  # nothing landed: the overlay goes
    log.info("unit %s: %s %s held for review as proposal #%d (%s)", unit.name,
             receipt.action, target, pid, reason)
    return UnitResult(unit, UnitStatus.HELD, receipt.action, target,
                      f"held for review as proposal #{pid}: {reason}",
                      diff_of(target, before, after), proposal_id=pid)


def mark(ctx: DreamContext, run: RunState, result: UnitResult) -> None:
    """Remember, with a held unit's proposal, its notes as the run read them (hash and
    section fingerprints): settling the proposal checkpoints them so."""
    if result.proposal_id is None or ctx.dry_run:
        return
    marks = {p: [run.extraction.changed[p], list(run.extraction.sections.get(p, ()))]
             for p in result.unit.paths if p in run.extraction.changed}
    ctx.state.proposal_mark(result.proposal_id, marks)


def waiting_or_rejected(ctx: DreamContext, unit: Unit) -> UnitResult | None:
    """This unit's own proposal, still open (a run killed before the unit left the
    pending units: it is not proposed twice), or the owner's rejection of it (never
    proposed again: skipped, with why); else None."""
    if ctx.dry_run:
        return None
    for p in ctx.state.proposals():
        if is_unit(p.unit, unit, any_order=True):
            return UnitResult(unit, UnitStatus.HELD, p.action, p.target,
                              f"waits for review as proposal #{p.id}: {p.reason}",
                              proposal_id=p.id)
    rejected = ctx.state.rejected_proposal(unit.name, unit.paths)
    if rejected is None:
        return None
    why = (f"rejected in review (proposal #{rejected.id}: {rejected.action} "
           f"{rejected.target}); not proposed again")
    return UnitResult(unit, UnitStatus.SKIPPED, Action.SKIP, rejected.target, why, error=why)


def requeue_stale(vault: Vault, state: State) -> list[Proposal]:
    """Open proposals whose node changed since they were made: stale, each unit back
    in the pending units to be decided again (the start of every run)."""
    stale = []
    for p in state.proposals():
        if hash_now(vault, p.target) != p.old_hash:
            stale.append(mark_stale(state, p, "its node changed since"))
    return [p for p in stale if p is not None]


@dataclass(frozen=True)
class Settled:
    """How a proposal was settled: the proposal as it stands now, the journal row that
    records it (None for a stale one), the digest files written, and what happened in
    words for the owner."""

    proposal: Proposal
    journal_id: int | None
    paths: list[str]
    message: str

    @property
    def stale(self) -> bool:
        """The node changed since: nothing was written, the unit is decided again."""
        return self.proposal.state is ProposalState.STALE


# -- what the owner sees ----------------------------------------------------------------


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def proposal_view(p: Proposal, vault: Vault | None = None) -> dict[str, Any]:
    """A proposal as ``vaultlink review --json``, the status API and MCP show it. With
    ``vault``, an open one whose node changed since says ``stale: true`` (approving it
    has the next run decide the unit again)."""
    stale = p.state is ProposalState.STALE or (
        p.state is ProposalState.OPEN and vault is not None
        and hash_now(vault, p.target) != p.old_hash)
    unit = p.unit
    return {"id": p.id, "at": _iso(p.at), "state": p.state.value, "stale": stale,
            "action": p.action, "target": p.target, "reason": p.reason, "why": p.note,
            "unit": {"name": str(unit.get("name", "")), "bucket": str(unit.get("bucket", "")),
                     "summary": str(unit.get("summary", "")), "paths": p.paths},
            "diff": diff_of(p.target, p.before_text, p.after_text),
            "integrator": p.integrator, "run_id": p.run_id,
            "decided_at": _iso(p.decided_at), "journal_id": p.journal_id}


def settled_view(s: Settled, vault: Vault | None = None) -> dict[str, Any]:
    """What approving, rejecting or creating answers: the proposal as it stands now,
    the journal row's id, and what happened in words."""
    return {"proposal": proposal_view(s.proposal, vault), "journal_id": s.journal_id,
            "stale": s.stale, "message": s.message}


def mark_stale(state: State, p: Proposal, why: str) -> Proposal | None:
    """Mark ``p`` stale and put its unit back in the pending units (None: settled
    meanwhile by another hand)."""
    if not state.proposal_settle(p.id, ProposalState.STALE):
        return None
    state.add_pending([p.unit])
    log.info("proposal #%d is stale (%s): unit %s is decided again by the next run", p.id,
             why, stored_name(p.unit))
    return state.proposal_get(p.id)


def hash_now(vault: Vault, rel: str) -> str | None:
    try:
        return content_hash(vault.read_bytes(rel))
    except NoteNotFound:
        return None
