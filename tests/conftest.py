"""Fixtures shared by the suite, and one rule every test keeps: it leaves no thread and
no child process running behind it (a daemon not stopped, a server not shut down).

The vault fixtures build on ``tests/vaults.py``; a test file whose vault differs keeps
its own fixture, with a line saying why."""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.ports import HeldPort, hold_port
from tests.vaults import copy_sample_vault
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.recall import Indexes, open_indexes
from vaultlink.vault.notes import Vault

# How long a thread or process a test stopped may take to be gone.
LEFTOVER_GRACE_SECONDS = 10.0


@pytest.fixture
def sample_vault(tmp_path: Path) -> Path:
    """A fresh copy of ``sample_vault/`` (without any ``.vaultlink/`` state)."""
    return copy_sample_vault(tmp_path / "vault")


@pytest.fixture
def empty_vault(tmp_path: Path) -> Path:
    """An empty vault folder, for tests that write the notes they need."""
    root = tmp_path / "vault"
    root.mkdir()
    return root


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The bundled MiniLM model, loaded once per test process: it keeps no state
    between calls but its loaded graph."""
    return MiniLMEmbedder()


@pytest.fixture
def vault(empty_vault: Path) -> Vault:
    """The empty vault, opened: a search test writes its notes with ``write_note``."""
    return Vault(empty_vault)


@pytest.fixture
def indexes(vault: Vault, minilm: MiniLMEmbedder) -> Iterator[Indexes]:
    """The vault's node and section indexes, with MiniLM, closed after the test."""
    ix = open_indexes(vault, minilm)
    yield ix
    ix.close()


@pytest.fixture
def held_port() -> Iterator[HeldPort]:
    """A port on 127.0.0.1 nobody else gets until the test releases or ends it."""
    with hold_port() as held:
        yield held


def child_processes() -> set[int]:
    """Live (not zombie) processes whose parent is this one, from ``/proc``."""
    me, found = os.getpid(), set()
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def _leftovers(threads_before: set[int], children_before: set[int]) -> list[str]:
    threads = [t for t in threading.enumerate()
               if t.ident not in threads_before and t.is_alive()]
    children = child_processes() - children_before
    return [f"thread {t.name!r}" for t in threads] + [f"child process {p}" for p in children]


@pytest.fixture(autouse=True)
def no_leftover_threads_or_processes() -> Iterator[None]:
    """Fails a test that leaves a thread or a child process running (after a grace
    period for ones it asked to stop)."""
    threads_before = {t.ident for t in threading.enumerate() if t.ident is not None}
    children_before = child_processes()
    yield
    left = _leftovers(threads_before, children_before)
    if left:
        # A client the test dropped but Python has not collected yet still holds its
        # keep-alive connection, and so a server thread: collecting closes it.
        gc.collect()
    deadline = time.monotonic() + LEFTOVER_GRACE_SECONDS
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _leftovers(threads_before, children_before)
    if left:
        pytest.fail("the test left running: " + ", ".join(left), pytrace=False)
