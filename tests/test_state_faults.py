"""``state.sqlite`` damaged, and two daemons started at once.

The journal is the one thing in ``.vaultlink/`` the vault cannot give back, so a
damaged database is set aside with a message and every row that can still be read is
kept; the rest (checkpoints lost with a damaged page) is rebuilt by integrating again,
which must not duplicate a node. Two daemons racing for one vault: one serves, the
other says who holds the vault and exits; the vault is written once.
"""

from __future__ import annotations

import logging
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.crashkit import add_note, make_vault, settled
from tests.test_crash_points import env, idle, vaultlink, wait_for
from vaultlink.cli import app
from vaultlink.vault.state import State


def dream(root: Path) -> str:
    result = CliRunner().invoke(app, ["dream", "--vault", str(root), "--llm", "offline"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def page_of(db: Path, table: str) -> tuple[int, int]:
    """(page size, root page) of ``table``."""
    con = sqlite3.connect(db)
    try:
        size = con.execute("PRAGMA page_size").fetchone()[0]
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE name=?",
                           (table,)).fetchone()[0]
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return int(size), int(root)


def test_a_damaged_page_loses_no_journal_row_and_nothing_is_integrated_twice(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = make_vault(tmp_path / "vault")
    add_note(root, 1)
    dream(root)
    db = root / ".vaultlink/state.sqlite"
    state = State(db)
    journal = [(e.id, e.action, e.target) for e in state.journal(limit=1000)]
    state.close()
    assert len(journal) >= 3
    size, page = page_of(db, "checkpoint")
    with open(db, "r+b") as fh:  # the disk scrambles the checkpoint table's page
        fh.seek((page - 1) * size)
        fh.write(b"\xa5" * size)
    add_note(root, 2)
    with caplog.at_level(logging.WARNING, logger="vaultlink.vault.salvage"):
        dream(root)
    assert "state.sqlite was damaged" in caplog.text and "moved it to" in caplog.text
    assert list((root / ".vaultlink").glob("state.sqlite.corrupt-*"))
    state = State(db)
    kept = [(e.id, e.action, e.target) for e in state.journal(limit=1000)]
    state.close()
    assert kept[-len(journal):] == journal  # every old row, then the new run's
    assert settled(root, "offline") == []


def test_a_file_that_is_no_database_is_set_aside_with_a_message(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = make_vault(tmp_path / "vault")
    dream(root)
    db = root / ".vaultlink/state.sqlite"
    for extra in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        extra.unlink(missing_ok=True)
    db.write_bytes(b"this is not a database, it is a shopping list\n" * 100)
    with caplog.at_level(logging.WARNING):
        dream(root)
    assert "was damaged" in caplog.text and "moved it to" in caplog.text
    aside = list((root / ".vaultlink").glob("state.sqlite.corrupt-*"))
    assert aside and aside[0].read_bytes().startswith(b"this is not a database")
    assert settled(root, "offline") == []


@pytest.mark.slow
def test_two_daemons_started_at_once_one_serves_the_other_names_it(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault")
    watch = vaultlink("watch", "--foreground", "--vault", str(root), "--quiet-seconds",
                      "0.2", "--llm", "offline")
    procs = [subprocess.Popen(watch, env=env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    try:
        assert wait_for(lambda: any(p.poll() is not None for p in procs), 120)
        done = [p for p in procs if p.poll() is not None]
        serving = [p for p in procs if p.poll() is None]
        assert len(done) == 1 and len(serving) == 1
        _, err = done[0].communicate(timeout=30)
        assert done[0].returncode == 3, err
        assert f"pid {serving[0].pid}" in err.decode(), err
        add_note(root, 1)
        assert wait_for(lambda: idle(root, serving[0].pid), 240)
        serving[0].send_signal(signal.SIGTERM)
        assert serving[0].wait(timeout=60) == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()
    assert settled(root, "offline") == []
