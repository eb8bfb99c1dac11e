"""Undoing one decision of the journal, and explaining decisions to people.

Undo reverts exactly the diff a decision wrote, and only if the node still holds what
the decision left there: compare-and-swap against the journaled text, so a later
edit (the user's or another decision's) is never thrown away. The undo is itself
a journal entry.
"""

from __future__ import annotations

import datetime as dt
import logging

from vaultlink.dream.units import ACTIONS
from vaultlink.errors import NoteNotFound, StateError, UndoConflict, WriteConflict
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import JournalEntry, State, diff_of

log = logging.getLogger(__name__)


def undo_decision(vault: Vault, state: State, entry_id: int) -> int:
    """Revert decision ``entry_id``; returns the id of the UNDO journal entry."""
    entry = state.journal_get(entry_id)
    if entry is None:
        raise StateError(f"no decision #{entry_id}; `vaultlink log` lists them")
    if entry.undone_by is not None:
        raise StateError(f"decision #{entry_id} was already undone by #{entry.undone_by}")
    if entry.action not in ACTIONS or entry.after_text is None:
        raise StateError(f"decision #{entry_id} ({entry.action}) wrote nothing to undo")
    path = entry.target
    try:
        current = vault.read_bytes(path)
    except NoteNotFound:
        raise UndoConflict(f"{path} no longer exists, so decision #{entry_id} "
                           "cannot be undone") from None
    if current.decode("utf-8", "replace") != entry.after_text:
        raise UndoConflict(f"{path} changed since decision #{entry_id}; undo it by hand "
                           "or undo the later decisions first (`vaultlink log`)")
    expected = content_hash(current)
    try:
        if entry.before_text is None:
            vault.delete(path, expected)
        else:
            vault.write(path, entry.before_text, expected)
    except WriteConflict:
        raise UndoConflict(f"{path} changed while undoing; nothing was changed") from None
    diff = diff_of(path, entry.after_text, entry.before_text)
    undo_id = state.journal_add(entry.run_id, entry.unit, "UNDO", path,
                                f"undid #{entry_id} ({entry.action})", diff,
                                before_text=entry.after_text, after_text=entry.before_text,
                                undo_of=entry_id)
    log.info("undid decision #%d on %s as #%d", entry_id, path, undo_id)
    return undo_id


def describe(entry: JournalEntry) -> str:
    """One line per decision for ``vaultlink log``."""
    when = dt.datetime.fromtimestamp(entry.at).strftime("%Y-%m-%d %H:%M")
    unit = entry.unit.get("name", "?")
    mark = f" (undone by #{entry.undone_by})" if entry.undone_by else ""
    target = f" {entry.target}" if entry.target else ""
    note = f": {entry.note}" if entry.note else ""
    by = f" ({entry.integrator})" if entry.integrator else ""  # which integrator decided
    return f"#{entry.id} {when} {entry.action}{by}{target} [{unit}]{note}{mark}"
