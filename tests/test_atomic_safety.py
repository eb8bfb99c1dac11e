"""The atomic write's own promises, at the level of system calls and real processes.

* The new text is on disk (fsync) before it takes the note's name, and the directory
  entry is synced after: otherwise a power cut after the rename can leave an empty
  note where a whole one was.
* A process killed while the old node is set aside leaves it whole beside its name,
  and the next writer puts it back; a temp file of a killed process is removed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultlink.vault.atomic import content_hash, recover_work_files, replace_file

REPO = Path(__file__).resolve().parent.parent


def test_the_text_is_synced_before_it_takes_the_name_and_the_folder_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "node.md"
    target.write_text("old\n")
    calls: list[tuple[str, str]] = []
    real_fsync, real_link = os.fsync, os.link

    def fsync(fd: int) -> None:  # records what was synced, then syncs it for real
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def link(src: object, dst: object, **kw: object) -> None:
        calls.append(("link", str(dst)))
        real_link(src, dst, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    replace_file(target, "node.md", b"new\n", content_hash(b"old\n"))
    assert target.read_text() == "new\n"
    named = calls.index(("link", str(target)))
    synced = [i for i, (op, what) in enumerate(calls)
              if op == "fsync" and what.endswith(".vaultlink.tmp")]
    assert synced and synced[0] < named, calls
    assert ("fsync", str(tmp_path)) in calls[named:], calls


KILL_ASIDE = """
import sys
from vaultlink.vault import faults
from vaultlink.vault.notes import Vault
from vaultlink.vault.atomic import content_hash
faults.arm(sys.argv[2])
v = Vault(sys.argv[1])
old = (v.root / "digest/wiki/n.md").read_bytes()
v.write("digest/wiki/n.md", "new text\\n", content_hash(old))
"""


@pytest.mark.parametrize("point, left", [("kill:after_aside", "old"),
                                         ("kill:after_temp", "tmp")])
def test_a_write_killed_half_way_leaves_the_node_whole_and_the_next_writer_tidies(
        tmp_path: Path, point: str, left: str) -> None:
    node = tmp_path / "digest/wiki/n.md"
    node.parent.mkdir(parents=True)
    node.write_text("the old text\n")
    proc = subprocess.run([sys.executable, "-c", KILL_ASIDE, str(tmp_path), point],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True)
    assert proc.returncode == -9, proc.stderr
    work = list(node.parent.glob(f".n.md.*.vaultlink.{left}"))
    assert len(work) == 1
    if left == "old":  # the name is empty for now; the text is whole, set aside
        assert not node.exists() and work[0].read_text() == "the old text\n"
    recover_work_files(tmp_path, ["digest"])
    assert node.read_text() == "the old text\n"
    assert list(node.parent.glob(".*")) == []
