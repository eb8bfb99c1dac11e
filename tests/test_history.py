"""Undo and redo on a journal made by hand: refusals, cascades, redo, all-or-nothing.

The vault and journal are real (files, ``State``); the decisions are written the way
integrate writes them (``Vault.write`` then ``journal_add``), so each case is exact.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultlink.errors import StateError, UndoConflict, UndoNeedsCascade
from vaultlink.pipeline import history
from vaultlink.pipeline.recovery import recover
from vaultlink.pipeline.topics import write_topics
from vaultlink.vault import faults
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State, diff_of

SRC = "daily/2026-07-01.md"
A, B, C = "digest/wiki/a.md", "digest/wiki/b.md", "digest/wiki/c.md"
TOPICS = "digest/topics/2026-07-01-topics.md"


def node(name: str, extra: str = "") -> str:
    return (f"---\nname: {name}\ndescription: The {name} node.\n---\nAbout {name}.{extra}\n\n"
            f"## Sources\n\n- It was decided in [[{SRC}]], at the standup.\n")


class Kit:
    def __init__(self, root: Path) -> None:
        (root / "daily").mkdir(parents=True)
        (root / SRC).write_text("## Standup\n\nWe decided things.\n")
        self.vault = Vault(root)
        self.vault.write(C, node("c"), None)  # the user's own node, before any decision
        self.state = State(self.vault.state_dir / "state.sqlite")

    def decide(self, action: str, path: str, text: str) -> int:
        old = None if action == "CREATE" else self.vault.read_bytes(path).decode()
        self.vault.write(path, text, None if old is None else content_hash(old.encode()))
        return self.state.journal_add(1, {"name": path, "paths": [SRC]}, action, path, "",
                                      diff_of(path, old, text), before_text=old,
                                      after_text=text)

    def files(self) -> dict[str, bytes]:
        return {p.relative_to(self.vault.root).as_posix(): p.read_bytes()
                for p in (self.vault.root / "digest").rglob("*.md")}

    def errors(self) -> list[str]:
        return [str(p) for p in check_vault(self.vault) if p.level == "error"]


@pytest.fixture()
def kit(tmp_path: Path) -> Kit:
    k = Kit(tmp_path / "vault")
    k.decide("CREATE", A, node("a"))
    k.decide("CREATE", B, node("b", f" It builds on [[{A}]]."))
    k.decide("REFINE", C, node("c", f" See also [[{A}]]."))
    day = dt.date(2026, 7, 1)
    write_topics(k.vault, TOPICS, day, [
        {"title": "A and B", "reason": "Both came up.", "evidence": [SRC], "paths": [A, B]},
        {"title": "C", "reason": "It came up.", "evidence": [SRC], "paths": [C]}],
        3, set(), dry_run=False)
    assert k.errors() == []
    return k


def test_undoing_a_create_others_link_to_is_refused_naming_them(kit: Kit) -> None:
    before = kit.files()
    with pytest.raises(UndoNeedsCascade) as refused:
        history.undo(kit.vault, kit.state, 1)
    assert {n["id"] for n in refused.value.needs} == {2, 3}
    assert "--cascade" in str(refused.value)
    assert kit.files() == before


def test_cascade_undoes_the_linking_decisions_as_one_group_and_redo_restores_all(
        kit: Kit) -> None:
    before = kit.files()
    out = history.undo(kit.vault, kit.state, 1, cascade=True)
    files = kit.files()
    assert A not in files and B not in files
    assert files[C].decode() == node("c")  # back to the user's text
    assert A not in files[TOPICS].decode() and "title: C" in files[TOPICS].decode()
    assert kit.errors() == []
    rows = [kit.state.journal_get(i) for i in out.ids]
    assert {r.group_id for r in rows if r} == {out.ids[0]}
    assert {kit.state.journal_get(i).undone_by for i in (1, 2, 3)} <= set(out.ids)  # type: ignore[union-attr]
    history.redo(kit.vault, kit.state, 1)
    assert kit.files() == before
    assert kit.errors() == []
    assert kit.state.journal_get(1).undone_by is None  # type: ignore[union-attr]
    with pytest.raises(StateError, match="already redone"):
        history.redo(kit.vault, kit.state, out.ids[0])


def test_a_users_own_link_refuses_even_with_cascade(kit: Kit) -> None:
    (kit.vault.root / "daily/2026-07-02.md").write_text(f"Read [[{A}]] again.\n")
    before = kit.files()
    with pytest.raises(UndoConflict, match=r"daily/2026-07-02\.md \(your note\)"):
        history.undo(kit.vault, kit.state, 1, cascade=True)
    assert kit.files() == before


def test_a_node_changed_by_hand_is_never_reverted(kit: Kit) -> None:
    path = kit.vault.root / C
    path.write_text(path.read_text() + "\nMine.\n")
    before = kit.files()
    with pytest.raises(UndoConflict, match="changed since #3"):
        history.undo(kit.vault, kit.state, 3, cascade=True)
    assert kit.files() == before


def test_a_write_failing_half_way_puts_back_what_the_group_had_written(kit: Kit) -> None:
    before = kit.files()
    faults.arm("eio:after_temp@2")  # the group's second write fails, once
    try:
        with pytest.raises(UndoConflict, match="nothing was changed"):
            history.undo(kit.vault, kit.state, 1, cascade=True)
    finally:
        faults.arm("")
    assert kit.files() == before
    assert kit.state.intents() == []
    assert kit.state.journal_get(1).undone_by is None  # type: ignore[union-attr]


def test_a_disk_that_stays_broken_half_way_is_put_back_by_the_next_command(
        kit: Kit) -> None:
    before = kit.files()
    faults.arm("eio:after_temp@2+")  # the second write and every one after it fail
    try:
        with pytest.raises(UndoConflict, match="the next vaultlink command puts it back"):
            history.undo(kit.vault, kit.state, 1, cascade=True)
    finally:
        faults.arm("")
    assert kit.files() != before and kit.state.intents()
    recover(kit.vault, kit.state)  # the next writer, with the disk fixed
    assert kit.files() == before
    assert kit.state.intents() == []
    assert kit.errors() == []


def test_recover_rolls_back_unjournaled_writes_and_keeps_the_users(kit: Kit) -> None:
    old = (kit.vault.root / B).read_text()
    ours, theirs = old + "\nHalf a decision.\n", node("c", " The user's own words.")
    kit.state.intend(B, old, content_hash(ours.encode()))
    kit.vault.write(B, ours, content_hash(old.encode()))  # then the process was killed
    new = "digest/wiki/new.md"
    kit.state.intend(new, None, content_hash(node("new").encode()))
    kit.vault.write(new, node("new"), None)
    kit.state.intend(C, node("c"), content_hash(b"never landed"))
    (kit.vault.root / C).write_text(theirs)  # the user's edit since: stays
    assert sorted(recover(kit.vault, kit.state)) == [B, new]
    assert (kit.vault.root / B).read_text() == old
    assert not (kit.vault.root / new).exists()
    assert (kit.vault.root / C).read_text() == theirs
    assert kit.state.intents() == []


def test_an_undo_killed_half_way_is_put_back_whole_by_the_next_command(kit: Kit) -> None:
    """SIGKILL between two writes of a cascade: the next command that writes rolls the
    group back, so the vault and the journal are as before the undo."""
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo), "VAULTLINK_FAULTS": "kill:mid_undo@2"}
    before, rows = kit.files(), len(kit.state.journal(limit=1000))
    kit.state.close()
    killed = subprocess.run([sys.executable, "-m", "vaultlink", "undo", "1", "--cascade",
                             "--vault", str(kit.vault.root)], env=env, capture_output=True)
    assert killed.returncode == -9, killed.stderr
    assert kit.files() != before  # half of the group had landed
    env.pop("VAULTLINK_FAULTS")
    done = subprocess.run([sys.executable, "-m", "vaultlink", "undo", "1", "--cascade",
                           "--vault", str(kit.vault.root)], env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "rolled back" in done.stderr  # the next writer put the half-done group back
    kit.state = State(kit.vault.state_dir / "state.sqlite")
    assert kit.errors() == [] and kit.state.intents() == []
    assert len(kit.state.journal(limit=1000)) > rows  # the second undo, journaled whole
    recover(kit.vault, kit.state)
    history.redo(kit.vault, kit.state, 1)
    assert kit.files() == before
