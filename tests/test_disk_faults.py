"""A disk that refuses writes: full (ENOSPC), broken (EIO), read-only (EROFS).

Where the test runs as root, the faults are real: ``digest/`` is a tiny tmpfs filled to
the brim, or the vault is a tmpfs remounted read-only. Elsewhere the fault seam
(``vaultlink/vault/faults.py``) raises the same ``OSError`` where the write happens.
Every case keeps the same promises: the run says what is wrong and what to do, no
note is half-written or lost, no temp file is left, the units are not checkpointed,
and once the disk is fixed the next run integrates everything (``crashkit.settled``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.crashkit import BASE_NODE, add_note, make_vault, nodes, settled
from vaultlink.cli import app
from vaultlink.errors import VaultlinkError
from vaultlink.vault import faults


def _mount(target: Path, options: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
                          capture_output=True).returncode == 0


def _umount(target: Path) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True)


def _remount_read_only(target: Path) -> None:
    """Remount ``target`` read-only. The kernel refuses (busy) while a file on it is open
    for writing, and the first dream ran in this process: a SQLite or Chroma handle it
    dropped may wait for the garbage collector, so collect and try again for 5 s."""
    for _ in range(50):
        gc.collect()
        done = subprocess.run(["mount", "-o", "remount,ro", str(target)],
                              capture_output=True, text=True)
        if done.returncode == 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"remount read-only failed: {done.stderr.strip()}")


def dream(root: Path) -> tuple[int, str]:
    """``vaultlink dream``: its exit code and what it said. An error must be one of
    vaultlink's (printed as a message by ``cli.main``), never a traceback."""
    result = CliRunner().invoke(app, ["dream", "--vault", str(root), "--llm", "offline"])
    error = result.exception
    assert error is None or isinstance(error, SystemExit | VaultlinkError), repr(error)
    code = error.exit_code if isinstance(error, VaultlinkError) else result.exit_code
    return code, result.output + str(error or "")


@pytest.fixture()
def full_digest(tmp_path: Path) -> Iterator[tuple[Path, Path | None]]:
    """A vault whose digest/ is a 1 MiB tmpfs, and the filler that fills it (None: the
    seam stands in for the full disk)."""
    root = tmp_path / "vault"
    (root / "digest").mkdir(parents=True)
    mounted = _mount(root / "digest", "size=1m")
    try:
        make_vault_in(root)
        filler = None
        if mounted:
            filler = root / "digest" / ".filler"
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                with contextlib.suppress(OSError):  # until the disk is full
                    while os.write(fd, b"\0" * 4096):
                        pass
            finally:
                os.close(fd)
        else:
            faults.arm("enospc:after_temp@1+")
        yield root, filler
    finally:
        faults.arm("")
        if mounted:
            _umount(root / "digest")


def make_vault_in(root: Path) -> None:
    """crashkit's vault and one added note, in a ``root`` that exists already (a tmpfs
    may be mounted on it or on its ``digest``)."""
    tmp = root.parent / "seed"
    make_vault(tmp)
    for src in tmp.rglob("*"):
        dest = root / src.relative_to(tmp)
        if src.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        else:
            dest.write_bytes(src.read_bytes())
    add_note(root, 1)


def test_a_full_disk_fails_the_units_and_the_next_run_after_freeing_space_does_all(
        full_digest: tuple[Path, Path | None]) -> None:
    root, filler = full_digest
    before = nodes(root)
    code, out = dream(root)
    assert code == 4, out  # finished; the units failed and wait for a retry
    assert "the disk is full: free some space" in out, out
    assert nodes(root) == before  # nothing new, nothing half-written, nothing lost
    assert [p.name for p in (root / "digest").rglob(".*.vaultlink.*")] == []
    if filler is not None:
        filler.unlink()
    faults.arm("")
    code, out = dream(root)
    assert code == 0, out
    assert settled(root, "offline") == []


def test_an_io_error_on_write_fails_the_units_loudly_and_changes_nothing(
        tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault")
    add_note(root, 1)
    before = nodes(root)
    faults.arm("eio:after_temp@1+")
    try:
        code, out = dream(root)
    finally:
        faults.arm("")
    assert code == 4 and "I/O error: check the disk" in out, out
    assert nodes(root) == before
    assert [p.name for p in (root / "digest").rglob(".*.vaultlink.*")] == []
    code, out = dream(root)
    assert code == 0, out
    assert settled(root, "offline") == []


@pytest.fixture()
def tmpfs_vault(tmp_path: Path) -> Iterator[tuple[Path, bool]]:
    """A vault on its own tmpfs (remountable read-only), or on the disk (seam)."""
    root = tmp_path / "vault"
    root.mkdir()
    mounted = _mount(root, "size=64m")
    try:
        make_vault_in(root)
        yield root, mounted
    finally:
        faults.arm("")
        if mounted:
            _umount(root)


def test_a_read_only_vault_is_refused_with_what_to_do_and_left_as_it_is(
        tmpfs_vault: tuple[Path, bool]) -> None:
    root, mounted = tmpfs_vault
    code, out = dream(root)  # a first run: state, index, nodes
    assert code == 0, out
    add_note(root, 2)
    before = nodes(root)
    if mounted:
        _remount_read_only(root)
    else:
        faults.arm("erofs:after_temp@1+")
    code, out = dream(root)
    assert code != 0, out
    assert "read-only" in out, out
    assert nodes(root) == before
    if mounted:
        subprocess.run(["mount", "-o", "remount,rw", str(root)], check=True)
    faults.arm("")
    code, out = dream(root)
    assert code == 0, out
    assert settled(root, "offline") == []
    assert (root / BASE_NODE).exists()
