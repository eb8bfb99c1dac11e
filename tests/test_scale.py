"""Work proportional to the change: scans trust a note's stat as git's index does, so a
vault where nothing changed is not read, and one changed note is the one note read."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.vaults import write_note
from vaultlink.cli.settings import load_settings
from vaultlink.options import Provider
from vaultlink.pipeline.compose import Parts, close_models, dream_context, open_parts
from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State
from vaultlink.vault.walk import RACY_NS


@dataclass
class CountingVault(Vault):
    """A vault that records every note it reads."""

    reads: list[str] = field(default_factory=list)

    def read_bytes(self, raw: str) -> bytes:
        """``Vault.read_bytes``, recorded."""
        self.reads.append(raw)
        return super().read_bytes(raw)


def age(state: State) -> None:
    """Make the stored hashes look taken well after the notes were written, as they are
    in use (a note hashed in the clock tick it was written is hashed again)."""
    entries = state.stat_entries()
    state.store_stat_entries({p: dataclasses.replace(e, hashed_ns=e.hashed_ns + 2 * RACY_NS)
                              for p, e in entries.items()}, [])


@pytest.fixture
def state(tmp_path: Path) -> Iterator[State]:
    st = State(tmp_path / "state.sqlite")
    yield st
    st.close()


@pytest.fixture
def vault(tmp_path: Path) -> CountingVault:
    """Six notes in a vault that records which notes it read."""
    root = tmp_path / "vault"
    for i in range(5):
        write_note(root, f"daily/2026-06-0{i + 1}.md", f"# Day {i}\n\nNote number {i}.\n")
    write_note(root, "resource/paper.md", "# Paper\n\nA paper.\n")
    return CountingVault(root)


def test_a_scan_with_a_cache_reads_only_the_notes_whose_stat_moved(
        vault: CountingVault, state: State) -> None:
    first = vault.scan(["daily", "resource"], cache=state)
    assert len(vault.reads) == 6
    age(state)
    vault.reads.clear()
    assert vault.scan(["daily", "resource"], cache=state) == first
    assert vault.reads == []
    write_note(vault.root, "daily/2026-06-02.md", "# Day 1\n\nEdited.\n")
    again = {i.path: i.hash for i in vault.scan(["daily", "resource"], cache=state)}
    assert vault.reads == ["daily/2026-06-02.md"]
    assert again["daily/2026-06-02.md"] == content_hash(b"# Day 1\n\nEdited.\n")


def test_a_note_hashed_in_the_tick_it_was_written_is_hashed_again(
        vault: CountingVault, state: State) -> None:
    vault.scan(["daily"], cache=state)
    vault.reads.clear()
    # Just written: a second write in the same tick would leave the same stat, so the
    # stored hash is not trusted yet.
    vault.scan(["daily"], cache=state)
    assert len(vault.reads) == 5


def test_new_bytes_behind_the_same_size_and_mtime_are_seen(
        vault: CountingVault, state: State) -> None:
    path = vault.root / "daily/2026-06-01.md"
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    vault.scan(["daily"], cache=state)
    age(state)
    before = path.stat()
    path.write_text("# Day 0\n\nNote NUMBER 0.\n", encoding="utf-8")  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as a sync tool would
    assert path.stat().st_size == before.st_size
    vault.reads.clear()
    [info] = [i for i in vault.scan(["daily"], cache=state) if i.path.endswith("06-01.md")]
    assert vault.reads == ["daily/2026-06-01.md"]  # the ctime moved
    assert info.hash == content_hash(b"# Day 0\n\nNote NUMBER 0.\n")


def test_deleted_notes_leave_the_cache_and_other_folders_stay(
        vault: CountingVault, state: State) -> None:
    vault.scan(["daily", "resource"], cache=state)
    (vault.root / "daily/2026-06-01.md").unlink()
    vault.scan(["daily"], cache=state)
    assert "daily/2026-06-01.md" not in state.stat_entries()
    assert "resource/paper.md" in state.stat_entries()


# -- the dream -----------------------------------------------------------------------


def one_run(parts: Parts, root: Path) -> RunState:
    settings = load_settings(root, environ={}).with_overrides({"llm.provider": "offline"})
    ctx = dream_context(parts, settings.pipeline(), Provider.OFFLINE)
    try:
        return run_dream(ctx, build_steps(settings.get("auto_dream.steps")))
    finally:
        close_models(ctx)


@pytest.mark.slow
def test_a_dream_with_nothing_changed_reads_no_note_and_one_change_reads_one(
        vault: CountingVault) -> None:
    settings = load_settings(vault.root, environ={})
    parts = open_parts(vault, settings.pipeline())
    try:
        first = one_run(parts, vault.root)
        assert first.counts()["changed"] == 6
        age(parts.state)
        vault.reads.clear()
        idle = one_run(parts, vault.root)
        assert (idle.counts()["scanned"], idle.counts()["changed"]) == (6, 0)
        assert [r for r in vault.reads if not r.startswith("digest/")] == []
        write_note(vault.root, "resource/paper.md", "# Paper\n\nA paper on hybrid search.\n")
        vault.reads.clear()
        one = one_run(parts, vault.root)
        assert one.counts()["changed"] == 1
        assert {r for r in vault.reads if not r.startswith("digest/")} == {
            "resource/paper.md"}
    finally:
        parts.close()
