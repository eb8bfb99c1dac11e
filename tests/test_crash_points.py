"""SIGKILL at the worst moments: a real ``vaultlink dream`` and a real daemon, killed at
each fault point (``vaultlink/vault/faults.py``), with both integrators.

Each test runs a chain: add a note, start the process with ``VAULTLINK_FAULTS=kill:<point>``,
require that it died by SIGKILL (a point never reached fails the test), check that no
file is torn or lost; the next process recovers what the last one left and is killed at
the next point. A last clean run must then settle everything: ``check`` clean, nothing
in flight, the journal matching the files, no duplicate node, every unit decided and
every note checkpointed (``tests/crashkit.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crashkit import CrashModel, add_note, make_vault, settled, stable_nodes, whole
from tests.fakes.ollama_server import FakeOllama
from vaultlink.daemon.client import live_status
from vaultlink.daemon.process import read_info

REPO = Path(__file__).resolve().parent.parent
# Every point, in an order each run can reach: the @n picks a later hit where the
# first one would always be the same (the start-up sync, the first write).
CHAIN = ["after_temp", "after_node_write", "after_aside@2", "after_rename@2",
         "mid_index_sync@2", "between_units", "mid_checkpoint"]
KILLED = -signal.SIGKILL


@pytest.fixture(params=["offline", "ollama"])
def provider(request: pytest.FixtureRequest) -> Iterator[tuple[str, list[str]]]:
    if request.param == "offline":
        yield "offline", ["--llm", "offline"]
        return
    with FakeOllama(model=CrashModel()) as server:
        yield "ollama", ["--llm", "ollama", "--ollama-host", server.url]


def env(fault: str = "") -> dict[str, str]:
    e = {**os.environ, "PYTHONPATH": str(REPO), "VAULTLINK_API__PORT": "0",
         "VAULTLINK_LLM__RETRIES": "0", "VAULTLINK_LLM__TIMEOUT_SECONDS": "30"}
    e.pop("VAULTLINK_FAULTS", None)
    if fault:
        e["VAULTLINK_FAULTS"] = f"kill:{fault}"
    return e


def vaultlink(*args: str) -> list[str]:
    return [sys.executable, "-m", "vaultlink", *args]


@pytest.mark.slow
def test_dream_killed_at_every_point_loses_nothing(
        tmp_path: Path, provider: tuple[str, list[str]]) -> None:
    name, flags = provider
    root = make_vault(tmp_path / "vault")
    for n, point in enumerate(CHAIN, start=1):
        add_note(root, n)
        before = stable_nodes(root)
        proc = subprocess.run(vaultlink("dream", "--vault", str(root), *flags),
                              env=env(point), capture_output=True, timeout=300)
        assert proc.returncode == KILLED, (point, proc.returncode, proc.stderr[-2000:])
        assert whole(root, before) == [], point
    done = subprocess.run(vaultlink("dream", "--vault", str(root), "--max-units", "50",
                                    *flags), env=env(), capture_output=True, timeout=300)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert settled(root, name) == []


def wait_for(pred: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def idle(root: Path, pid: int) -> bool:
    info = read_info(root / ".vaultlink")
    if info is None or info.get("pid") != pid:
        return False
    status = live_status(root / ".vaultlink", timeout=5)[0]
    return bool(status) and status["state"] == "idle" and not status["queue"]


@pytest.mark.slow
def test_daemon_killed_at_every_point_loses_nothing(
        tmp_path: Path, provider: tuple[str, list[str]]) -> None:
    name, flags = provider
    root = make_vault(tmp_path / "vault")
    log = tmp_path / "daemon.out"
    watch = vaultlink("watch", "--foreground", "--vault", str(root), "--quiet-seconds",
                      "0.2", *flags)
    for n, point in enumerate(CHAIN, start=1):
        before = stable_nodes(root)
        with open(log, "ab") as out:
            proc = subprocess.Popen(watch, env=env(point), stdout=out, stderr=out)
        try:
            add_note(root, n)
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert code == KILLED, (point, code, log.read_text()[-3000:])
        assert whole(root, before) == [], point
    with open(log, "ab") as out:
        proc = subprocess.Popen(watch, env=env(), stdout=out, stderr=out)
    try:
        assert wait_for(lambda: idle(root, proc.pid), 240), log.read_text()[-3000:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert settled(root, name) == []
