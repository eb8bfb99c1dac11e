"""Settling a proposal held for review (``review.py``): approve, reject, or new.

* approve writes the proposal's change through the guard, compare-and-swap against the
  hash in the proposal, and journals it as its decision (``vaultlink undo`` reverts it);
  a node changed since, or a change the guard refuses now, makes the proposal stale: the
  unit goes back to the pending units and the next run decides it again;
* reject writes nothing: the journal records the unit as skipped, with why, and the unit
  is never proposed again;
* new writes the unit as a node of its own (a CREATE, as the one-shot path words it).

Settling a unit's last proposal checkpoints its notes as the run read them, so they are
not extracted again. Used by ``vaultlink review`` and the daemon's API.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from vaultlink.errors import GuardRefusal, StateError, VaultlinkError
from vaultlink.pipeline.context import Hit
from vaultlink.pipeline.integrate.decision import Decision
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.oneshot import carry_out
from vaultlink.pipeline.integrate.review import Settled, hash_now, mark_stale
from vaultlink.pipeline.integrate.session import Ending, SessionOutcome
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.pipeline.stored import proposal_unit, stored_name
from vaultlink.prose.units import Receipt, Unit
from vaultlink.vault.actions import Action
from vaultlink.vault.checkpoints import waiting_paths
from vaultlink.vault.names import owner_aliases, owner_links
from vaultlink.vault.notes import Vault
from vaultlink.vault.proposals import Proposal, ProposalState
from vaultlink.vault.state import Checkpoint, State, diff_of

log = logging.getLogger(__name__)


def approve(vault: Vault, state: State, proposal_id: int) -> Settled:
    """Write the proposal's change as its decision would have been written: the guard,
    compare-and-swap against the proposal's hash, the journal (undoable). A node that
    changed since, or a change the guard refuses now, makes it stale instead."""
    p = _open(state, proposal_id)
    if hash_now(vault, p.target) != p.old_hash:
        return _settled_stale(state, p, f"{p.target} changed since the proposal was made")
    unit = proposal_unit(p)
    box = _toolbox(vault, state, unit)
    try:
        box.put(p.target, p.after_text)
        box.guard.check_result(Receipt(p.action, p.target, p.note), p.before_text,
                               p.after_text)
    except (GuardRefusal, VaultlinkError) as exc:
        box.rollback()
        return _settled_stale(state, p, f"it cannot be written as it is now ({exc})")
    note = f"approved in review (proposal #{p.id}): {p.note}".rstrip(": ")
    jid = state.journal_add(None, p.unit, p.action, p.target, note,
                            diff_of(p.target, p.before_text, p.after_text),
                            before_text=p.before_text, after_text=p.after_text,
                            integrator=p.integrator)
    return _settle(state, p, ProposalState.APPROVED, jid, [p.target],
                   f"{p.action} {p.target} written (journal #{jid}; `vaultlink undo {jid}` "
                   "reverts it)")


def reject(vault: Vault, state: State, proposal_id: int) -> Settled:
    """Write nothing; journal the unit as skipped with why, and never propose it again."""
    del vault  # nothing of the vault changes
    p = _open(state, proposal_id)
    why = (f"rejected in review (proposal #{p.id}): it would have made {p.action} of "
           f"{p.target} ({p.reason})")
    jid = state.journal_add(None, p.unit, Action.SKIP, p.target, why, integrator=p.integrator)
    return _settle(state, p, ProposalState.REJECTED, jid, [],
                   f"rejected: nothing written; unit {stored_name(p.unit)} is not "
                   "proposed again")


def create_new(vault: Vault, state: State, proposal_id: int) -> Settled:
    """Write the unit as a new node of its own (a CREATE) instead of the proposed
    change, through the guard and the journal."""
    p = _open(state, proposal_id)
    unit = proposal_unit(p)
    box = _toolbox(vault, state, unit)
    outcome = SessionOutcome(Ending.ERROR)
    try:
        problem = carry_out(box, unit, Decision(Action.CREATE, "", unit.title, unit.description,
                                                "", "", [], ""), [], outcome)
    except VaultlinkError as exc:
        problem = str(exc)
    if problem or outcome.receipt is None:
        box.rollback()
        raise StateError(f"proposal #{p.id}: the unit cannot be written as a new node: "
                         f"{problem or 'nothing was written'}")
    path = outcome.receipt.target_path
    after = box.current[path]
    note = f"created in review (proposal #{p.id}) instead of {p.action} {p.target}"
    jid = state.journal_add(None, p.unit, Action.CREATE, path, note, diff_of(path, None, after),
                            before_text=None, after_text=after, integrator=p.integrator)
    return _settle(state, p, ProposalState.CREATED, jid, [path],
                   f"CREATE {path} written (journal #{jid}; `vaultlink undo {jid}` reverts "
                   "it)")


def _open(state: State, proposal_id: int) -> Proposal:
    p = state.proposal_get(proposal_id)
    if p is None:
        raise StateError(f"no proposal #{proposal_id}: `vaultlink review list` shows the "
                         "open ones")
    if p.state is not ProposalState.OPEN:
        raise StateError(f"proposal #{proposal_id} is {p.state.value} already; "
                         "`vaultlink review list --all` shows how each was settled")
    return p


def _settle(state: State, p: Proposal, to: ProposalState, journal_id: int | None,
            paths: list[str], message: str) -> Settled:
    if not state.proposal_settle(p.id, to, journal_id):
        raise StateError(f"proposal #{p.id} was settled meanwhile")
    _checkpoint(state, p)
    now = state.proposal_get(p.id)
    assert now is not None
    log.info("proposal #%d: %s", p.id, message)
    return Settled(now, journal_id, paths, message)


def _settled_stale(state: State, p: Proposal, why: str) -> Settled:
    now = mark_stale(state, p, why)
    if now is None:
        raise StateError(f"proposal #{p.id} was settled meanwhile")
    return Settled(now, None, [], f"stale: {why}; nothing written, the next run decides "
                                  f"unit {stored_name(p.unit)} again")


def _checkpoint(state: State, p: Proposal) -> None:
    """Checkpoint the proposal's notes as its run read them, unless a unit of theirs
    still waits (another proposal, a pending or failed unit)."""
    waiting = waiting_paths(state)
    state.set_checkpoints(Checkpoint(path, str(m[0]), tuple(m[1]))
                          for path, m in p.marks.items() if path not in waiting)


def _files(vault: Vault) -> frozenset[str]:
    files = frozenset(vault.iter_files())
    if (vault.root / vault.digest).is_symlink():
        files |= frozenset(vault.iter_files([vault.digest]))
    return files


class _NoRecall:
    """Settling a proposal recalls nothing: the decision is made already."""

    def node_search(self, query: str, limit: int = 20) -> Sequence[Hit]:
        del query, limit
        return []


def _toolbox(vault: Vault, state: State, unit: Unit) -> Toolbox:
    """A session's tools for writing a settled proposal: the same guard as a run's."""
    files = _files(vault)
    existed = frozenset(p for p in files
                        if p.startswith(f"{vault.digest}/") and p.endswith(".md"))
    guard = Guard(unit, existed, lambda: _files(vault), digest=vault.digest, files=files,
                  read_source=lambda rel: vault.read_bytes(rel).decode("utf-8",
                                                                       errors="replace"),
                  aliases=lambda: owner_aliases(vault, _files(vault)),
                  links=lambda: owner_links(vault, _files(vault)))
    return Toolbox(vault, _NoRecall(), guard, intents=state)


