"""Watching: the pure event normaliser, own-write recognition, and a real observer.

The normaliser is fed the exact event shapes watchdog 7 produces on Linux (inotify):
an editor's atomic save is ``moved tmp -> note`` with no ``modified``; vim renames the
note to ``note~`` and writes a new one; a move out of the vault arrives as a late
``deleted``; opened/closed events come with every read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultlink.daemon.watch import (
    Change,
    Layout,
    OwnWrites,
    RawEvent,
    RecordingVault,
    Watcher,
    normalise,
)

ROOT = "/v"
LAYOUT = Layout(ROOT)


def ev(kind: str, src: str, dest: str = "", is_dir: bool = False) -> RawEvent:
    return RawEvent(kind, f"{ROOT}/{src}" if src else "", f"{ROOT}/{dest}" if dest else "",
                    is_dir)


def paths(changes: list[Change]) -> list[tuple[str, bool]]:
    return [(c.path, c.gone) for c in changes]


def test_created_and_modified_collapse_to_one_change() -> None:
    out = normalise([ev("created", "daily/2026-07-01.md"), ev("modified", "daily/2026-07-01.md"),
                     ev("modified", "daily/2026-07-01.md"), ev("closed", "daily/2026-07-01.md")],
                    LAYOUT)
    assert out == [Change("daily/2026-07-01.md", "daily")]


def test_atomic_save_is_a_change_of_the_note() -> None:
    # Obsidian, VS Code, JetBrains: write a temp file beside the note, rename it over
    out = normalise([ev("created", "daily/.2026-07-01.md.tmp"),
                     ev("modified", "daily/.2026-07-01.md.tmp"),
                     ev("moved", "daily/.2026-07-01.md.tmp", "daily/2026-07-01.md")], LAYOUT)
    assert out == [Change("daily/2026-07-01.md", "daily")]
    # the temp file came from outside our names: not a rename, so no checkpoint to carry
    assert out[0].moved_from is None


def test_vim_save_ends_as_a_change() -> None:
    events = [ev("created", "daily/4913"), ev("deleted", "daily/4913"),
              ev("moved", "daily/n.md", "daily/n.md~"), ev("created", "daily/n.md"),
              ev("modified", "daily/n.md"), ev("closed", "daily/n.md"),
              ev("deleted", "daily/n.md~"), ev("created", "daily/.n.md.swp"),
              ev("modified", "daily/.n.md.swx")]
    assert paths(normalise(events, LAYOUT)) == [("daily/n.md", False)]


def test_vim_backup_rename_alone_reads_as_gone_until_the_new_file_lands() -> None:
    assert paths(normalise([ev("moved", "daily/n.md", "daily/n.md~")], LAYOUT)) == [
        ("daily/n.md", True)]


def test_move_in_out_and_rename() -> None:
    # in: from outside the vault, inotify gives the daemon a created event
    assert paths(normalise([ev("created", "resource/paper.md")], LAYOUT)) == [
        ("resource/paper.md", False)]
    # out: a late deleted
    assert paths(normalise([ev("deleted", "resource/paper.md")], LAYOUT)) == [
        ("resource/paper.md", True)]
    # rename inside: old gone, new changed and carrying where it came from
    out = normalise([ev("moved", "daily/a.md", "resource/b.md")], LAYOUT)
    assert out == [Change("daily/a.md", "daily", gone=True),
                   Change("resource/b.md", "resource", moved_from="daily/a.md")]
    # renamed to a non-note: only the old one is gone
    assert paths(normalise([ev("moved", "daily/a.md", "daily/a.txt")], LAYOUT)) == [
        ("daily/a.md", True)]


def test_latest_change_of_a_path_wins() -> None:
    out = normalise([ev("created", "daily/a.md"), ev("deleted", "daily/a.md")], LAYOUT)
    assert paths(out) == [("daily/a.md", True)]
    out = normalise([ev("deleted", "daily/a.md"), ev("created", "daily/b.md"),
                     ev("created", "daily/a.md")], LAYOUT)
    assert paths(out) == [("daily/b.md", False), ("daily/a.md", False)]


@pytest.mark.parametrize("kind", ["opened", "closed_no_write", "attrib", "weird"])
def test_noise_events_are_ignored(kind: str) -> None:
    assert normalise([ev(kind, "daily/a.md")], LAYOUT) == []


@pytest.mark.parametrize("src", [
    "daily/a.txt", "daily/image.png", "daily/a.md~", "daily/.a.md.swp", "daily/.#a.md",
    "daily/a.sync-conflict-20260701-101010-ABCDEF.md",
    "daily/a (conflicted copy 2026-07-01).md", "daily/a (conflict 2026-07-01).md",
    "daily/.hidden.md", "daily/.obsidian/a.md", "daily/.trash/a.md", ".vaultlink/state.md",
    ".obsidian/workspace.md", ".trash/daily/a.md", "notes/a.md", "a.md", "daily",
])
def test_irrelevant_paths_are_ignored(src: str) -> None:
    assert normalise([ev("created", src), ev("modified", src), ev("deleted", src)], LAYOUT) == []


def test_paths_outside_the_vault_are_ignored() -> None:
    assert normalise([RawEvent("created", "/elsewhere/daily/a.md")], LAYOUT) == []
    assert normalise([RawEvent("created", "/v2/daily/a.md")], LAYOUT) == []


def test_folders_and_digest() -> None:
    out = normalise([ev("created", "daily/2026-07-01", is_dir=True),
                     ev("modified", "daily/2026-07-01", is_dir=True),
                     ev("deleted", "resource/old", is_dir=True),
                     ev("modified", "digest/wiki/a.md")], LAYOUT)
    assert out == [Change("daily/2026-07-01", "daily", is_dir=True),
                   Change("resource/old", "resource", gone=True, is_dir=True),
                   Change("digest/wiki/a.md", "digest")]
    # a digest node never carries a checkpoint: only source notes have one
    moved = normalise([ev("moved", "digest/wiki/a.md", "digest/wiki/b.md")], LAYOUT)
    assert moved[-1].moved_from is None


def test_configured_folder_names_and_nfc() -> None:
    layout = Layout(ROOT, daily="Journal", resource="Library", digest="Memory")
    out = normalise([ev("created", "Journal/cafe\u0301.md"), ev("created", "daily/x.md")],
                    layout)
    assert out == [Change("Journal/caf\u00e9.md", "daily")]


def test_own_writes_are_recognised_by_hash(tmp_path: Path) -> None:
    own = OwnWrites(size=2)
    vault = RecordingVault(tmp_path, own=own)
    new_hash = vault.write("digest/wiki/a.md", "hello\n", None)
    assert own.is_own("digest/wiki/a.md", new_hash)
    assert not own.is_own("digest/wiki/a.md", "something else")  # the user's later edit
    vault.delete("digest/wiki/a.md", new_hash)
    assert own.is_own("digest/wiki/a.md", None)
    own.expect("x", "1")
    own.expect("y", "2")
    assert not own.is_own("digest/wiki/a.md", None)  # bounded: the oldest is forgotten


def test_a_failed_write_is_not_remembered_as_own(tmp_path: Path) -> None:
    vault = RecordingVault(tmp_path)
    first = vault.write("digest/wiki/a.md", "one\n", None)
    with pytest.raises(Exception, match="changed on disk"):
        vault.write("digest/wiki/a.md", "two\n", "not-the-hash")
    assert vault.own.is_own("digest/wiki/a.md", first)


# -- a real observer ------------------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.lock = threading.Lock()

    def __call__(self, changes: list[Change]) -> None:
        with self.lock:
            self.changes.extend(changes)

    def wait_for(self, pred: Callable[[list[Change]], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if pred(list(self.changes)):
                    return
            time.sleep(0.02)
        raise AssertionError(f"not seen in {timeout} s: {self.changes}")


@pytest.fixture()
def watched(tmp_path: Path):  # type: ignore[no-untyped-def]
    for folder in ("daily", "digest/wiki"):
        (tmp_path / folder).mkdir(parents=True)
    sink = Sink()
    watcher = Watcher(RecordingVault(tmp_path), sink)
    watcher.start()
    yield tmp_path, sink
    watcher.stop()


@pytest.mark.slow
def test_real_observer_sees_atomic_saves_moves_and_new_folders(watched) -> None:  # type: ignore[no-untyped-def]
    root, sink = watched
    tmp = root / "daily" / ".note.md.tmp"
    tmp.write_text("v1\n")
    tmp.rename(root / "daily" / "note.md")
    sink.wait_for(lambda cs: ("daily/note.md", False) in paths(cs))
    outside = root.parent / f"{root.name}-outside.md"
    (root / "daily" / "note.md").rename(outside)
    sink.wait_for(lambda cs: ("daily/note.md", True) in paths(cs))
    (root / "resource").mkdir()  # created after start: picked up through the root watch
    sink.wait_for(lambda cs: ("resource", False) in paths(cs))
    (root / "resource" / "paper.md").write_text("paper\n")
    sink.wait_for(lambda cs: ("resource/paper.md", False) in paths(cs))
    (root / ".vaultlink").mkdir()
    (root / ".vaultlink" / "x.md").write_text("ours\n")
    (root / "daily" / "scratch.txt").write_text("not a note\n")
    (root / "daily" / "last.md").write_text("x\n")
    sink.wait_for(lambda cs: ("daily/last.md", False) in paths(cs))
    assert not [c for c in sink.changes if c.path.startswith(".vaultlink")
                or c.path.endswith(".txt")]


def test_work_files_of_a_killed_writer_are_recovered(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from vaultlink.daemon.watch import recover_work_files

    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)
    wiki = tmp_path / "digest/wiki"
    wiki.mkdir(parents=True)
    (wiki / f".lost.md.{dead}-0a1b2c3d.vaultlink.old").write_text("the node\n")
    (wiki / "kept.md").write_text("newer\n")
    (wiki / f".kept.md.{dead}-0a1b2c3d.vaultlink.old").write_text("older\n")
    (wiki / f".new.md.{dead}-0a1b2c3d.vaultlink.tmp").write_text("half\n")
    live = wiki / f".busy.md.{os.getppid()}-0a1b2c3d.vaultlink.tmp"
    live.write_text("in flight\n")
    assert recover_work_files(RecordingVault(tmp_path)) == ["digest/wiki/lost.md"]
    assert (wiki / "lost.md").read_text() == "the node\n"
    assert (wiki / "kept.md").read_text() == "newer\n"
    assert sorted(p.name for p in wiki.iterdir()) == [live.name, "kept.md", "lost.md"]


@pytest.mark.slow
def test_a_folder_deleted_and_made_again_is_watched_again(watched) -> None:  # type: ignore[no-untyped-def]
    import shutil

    root, sink = watched
    shutil.rmtree(root / "daily")
    (root / "daily").mkdir()
    sink.wait_for(lambda cs: ("daily", False) in paths(cs))
    (root / "daily" / "again.md").write_text("back\n")
    sink.wait_for(lambda cs: ("daily/again.md", False) in paths(cs))
