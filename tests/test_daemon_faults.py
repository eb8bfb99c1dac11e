"""The daemon under what a laptop does: a note edited or renamed while its run is in
progress, the clock jumping back, two daemons started at once. Real watchdog, State,
files; the fake Ollama server as model. (A Chroma server lost under it: see
tests/test_chroma_server.py.)
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.ollama_server import FakeOllama
from tests.fakes.sample_vault_model import unit_of
from tests.test_daemon import make_vault, note_model, settings_for
from tests.waiting import wait_for
from vaultlink.daemon.service import Daemon
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.graph import check_vault

NOTE = "daily/2026-07-01.md"
FIRST = "## Plan\n\nWe rebuild the index online now, so the service stays up.\n"
SECOND = FIRST + "\n## Later\n\nThe rebuild also compacts the index when it is done.\n"


class EditsDuringTheRun:
    """The note model, but while integrating ``path`` the first time it does ``act``
    (the user's edit) and answers only once the daemon has queued that change."""

    def __init__(self, root: Path, act: Callable[[], None], queued: Callable[[], bool]) -> None:
        self.root, self.act, self.queued = root, act, queued
        self.done = threading.Event()

    def __call__(self, request: dict[str, Any]) -> Any:
        if (not request.get("format") and not self.done.is_set()
                and NOTE in unit_of(request["messages"])["paths"]):
            self.done.set()
            self.act()
            wait_for(self.queued, what="the daemon to queue the edit made during the run")
        return note_model(request)


def save_atomically(path: Path, text: str) -> None:
    """Write ``text`` beside the vault and rename it onto ``path`` (one watchdog event)."""
    tmp = path.parents[2] / f"{path.name}.saving"
    tmp.write_text(text)
    os.replace(tmp, path)


@pytest.fixture()
def daemons() -> Iterator[list[Daemon]]:
    running: list[Daemon] = []
    yield running
    for d in running:
        d.stop()


def start(root: Path, url: str, running: list[Daemon], **overrides: Any) -> Daemon:
    d = Daemon(root, settings_for(root, url, **overrides))
    running.append(d)
    d.start()
    return d


def test_a_note_edited_while_its_run_is_in_progress_is_run_again(
        tmp_path: Path, daemons: list[Daemon]) -> None:
    root = make_vault(tmp_path)
    holder: dict[str, Daemon] = {}

    edited: list[float] = []

    def edit() -> None:  # an editor's atomic save: exactly one event, so no later one
        edited.append(time.time())  # can requeue the note by chance
        save_atomically(root / NOTE, SECOND)

    def queued_again() -> bool:
        return any(i.path == NOTE and i.changed_at >= edited[0]
                   for i in holder["d"].state.queue())

    model = EditsDuringTheRun(root, edit, queued_again)
    with FakeOllama(model=model) as server:
        holder["d"] = d = start(root, server.url, daemons)
        (root / NOTE).write_text(FIRST)
        wait_for(lambda: model.done.is_set(), what="the run to reach the model")
        final = content_hash(SECOND.encode())
        wait_for(lambda: (cp := d.state.checkpoints().get(NOTE)) is not None
                 and cp.hash == final and not d.state.queue(), timeout=60,
                 what="the edited note to be integrated at its new text")
        journal = d.state.journal(limit=50, path=NOTE)
    bodies = [json.dumps(e.unit) for e in journal if e.action in ("CREATE", "REFINE")]
    assert any("compacts the index" in b for b in bodies), bodies
    assert [p for p in check_vault(d.vault) if p.level == "error"] == []


@pytest.mark.slow
def test_a_note_renamed_while_its_run_writes_is_followed_by_the_digest_links(
        tmp_path: Path, daemons: list[Daemon]) -> None:
    """The node is written citing the note's old name, then the note is renamed (with
    ``mv``, not in Obsidian) before the run ends: the daemon rewrites the link."""
    root = make_vault(tmp_path)
    new = "daily/2026-07-01-renamed.md"
    holder: dict[str, Daemon] = {}
    renamed = threading.Event()

    def model(request: dict[str, Any]) -> Any:
        wrote = any(m["role"] == "tool" for m in request.get("messages", []))
        if (not request.get("format") and wrote and not renamed.is_set()
                and NOTE in unit_of(request["messages"])["paths"]):
            renamed.set()
            os.replace(root / NOTE, root / new)
            wait_for(lambda: any(i.path == new for i in holder["d"].state.queue()),
                     what="the daemon to see the rename")
        return note_model(request)

    with FakeOllama(model=model) as server:
        holder["d"] = d = start(root, server.url, daemons)
        (root / NOTE).write_text(FIRST)
        node = root / "digest/wiki/sift-20260701.md"
        wait_for(lambda: renamed.is_set() and node.exists()
                 and f"[[{new}]]" in node.read_text() and not d.state.queue()
                 and new in d.state.checkpoints(), timeout=60,
                 what="the node to cite the note by its new name")
        relinks = [e for e in d.state.journal(limit=50) if e.action == "RELINK"]
    assert f"[[{NOTE}]]" not in node.read_text()
    assert {e.target for e in relinks} == {"digest/wiki/sift-20260701.md",
                                           "digest/topics/2026-07-01-topics.md"}
    assert NOTE not in (root / "digest/topics/2026-07-01-topics.md").read_text()
    assert NOTE not in d.state.checkpoints()
    assert [p for p in check_vault(d.vault) if p.level == "error"] == []


@pytest.mark.slow
def test_a_clock_jumped_back_does_not_hold_the_queue_until_the_old_time(
        tmp_path: Path, daemons: list[Daemon]) -> None:
    """The queue holds times from before the clock went back a day: the note must not
    wait a day. (The row is what the durable queue holds after such a jump.)"""
    root = make_vault(tmp_path)
    with FakeOllama(model=note_model) as server:
        d = start(root, server.url, daemons)
        wait_for(lambda: not d.state.queue() and d.status()["state"] == "idle",
                 what="the daemon to settle")
        (root / NOTE).write_text(FIRST)  # its event is replaced by the jumped row below
        wait_for(lambda: d.state.queue(), what="the note to be queued")
        later = time.time() + 86_400
        with d.state.transaction() as db:
            db.execute("UPDATE queue SET changed_at=?, ready_at=? WHERE path=?",
                       (later, later + 0.3, NOTE))
        (root / "daily/2026-07-02.md").write_text(FIRST.replace("online", "offline"))
        wait_for(lambda: NOTE in d.state.checkpoints() and not d.state.queue(), timeout=30,
                 what="the note queued before the jump to be integrated")
