"""What a journal row did: the closed set of actions, as the ``action`` column stores them.

Below the integrators and the journal alike, so both name the same members; a member
compares and serialises as its string, so stored rows read back unchanged.
"""

from __future__ import annotations

from enum import StrEnum


class Action(StrEnum):
    """One journal row's action: a decision on a unit, or what followed one."""

    CREATE = "CREATE"
    CORROBORATE = "CORROBORATE"
    REFINE = "REFINE"
    CORRECT = "CORRECT"
    SKIP = "SKIP"  # a unit the node holds already, or one the owner rejected
    FAILED = "FAILED"  # a unit not integrated this run (kept in failed_units)
    UNDO = "UNDO"
    REDO = "REDO"
    RELINK = "RELINK"  # links following a renamed source note (``pipeline/renames.py``)
    RENAME = "RENAME"  # a node that shadowed an owner's name moved


# What an integrator may decide, in the order a model's schema lists them.
DECISIONS: tuple[Action, ...] = (Action.CREATE, Action.CORROBORATE, Action.REFINE,
                                 Action.CORRECT)
UPDATE_ACTIONS = frozenset({Action.CORROBORATE, Action.REFINE, Action.CORRECT})
# Rows that change a file besides decisions (their rows hold the text before and after).
REVERSALS = (Action.UNDO, Action.REDO)
FOLLOW_UPS = (Action.RELINK, Action.RENAME)


def decision_of(text: object) -> Action | None:
    """The decision a model or a stored row names (any case), or None."""
    word = str(text or "").strip().upper()
    return Action(word) if word in DECISIONS else None
