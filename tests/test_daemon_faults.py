"""The daemon under what a laptop does: a note edited or renamed while its run is in
progress, the clock jumping back, the index deleted or damaged under it, two daemons
started at once. Real watchdog, State, Chroma, files; the fake Ollama server as model.
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

from tests.fakes.competent import unit_of
from tests.fakes.ollama_server import FakeOllama
from tests.test_daemon import make_vault, note_model, settings_for, wait_for
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
