"""A start with nothing changed loads none of the heavy libraries: ``vaultlink dream``
and the daemon's start-up (issue #17: under a second on a 10,000-note vault). Each
costs 0.1-0.9 s of CPU to import (numpy, onnxruntime, chromadb, ollama with httpx and
pydantic), and only a change (something to embed, index or ask a model) needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.ollama_server import FakeOllama, down_url
from tests.test_index import NODES
from tests.vaults import write_note, write_notes

HEAVY = ("numpy", "onnxruntime", "tokenizers", "chromadb", "ollama", "httpx")

# Runs in a fresh interpreter: what it imported is what the command needed.
DREAM = """
import json, sys
from typer.testing import CliRunner
from vaultlink.cli import app
r = CliRunner().invoke(app, ["dream", "--json", "--max-units", "1000", "--vault", sys.argv[1]])
assert r.exit_code == 0, r.output
print(json.dumps({"counts": json.loads(r.stdout)["counts"],
                  "loaded": sorted(m for m in sys.argv[2:] if m in sys.modules)}))
"""

DAEMON = """
import json, sys
from pathlib import Path
from typing import Any
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.service import Daemon
root = Path(sys.argv[1])
d = Daemon(root, load_settings(root, environ={}).daemon())
d.start()
try:
    queued = [i.path for i in d.state.queue()]  # nothing changed: nothing for the worker
finally:
    d.stop()
print(json.dumps({"queued": queued, "loaded": sorted(m for m in sys.argv[2:] if m in sys.modules)}))
"""


def probe(script: str, root: Path) -> Any:
    """What ``script`` printed last, run on the vault in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", script, str(root), *HEAVY], check=True,
                          capture_output=True, text=True, timeout=600)
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_a_start_with_nothing_changed_imports_no_heavy_library(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_notes(root, NODES)
    write_note(root, "daily/2026-06-08.md", "## Backups\n\nWe decided to rotate the backup disks "
               "every Friday, because the old schedule left a gap of nine days after the outage. "
               "Team B owns the rotation and reviews it monthly.\n")
    write_note(root, ".vaultlink/config.yaml", "llm:\n  provider: offline\napi:\n  port: 0\n")

    first = probe(DREAM, root)
    assert first["counts"]["changed"] == 1
    # The note was read, its unit recalled nodes and written one: that took numpy and more.
    assert {"numpy", "onnxruntime"} <= set(first["loaded"])

    again = probe(DREAM, root)
    assert again["counts"]["changed"] == 0
    assert again["loaded"] == []
    # llm.provider auto asks the server first: nobody answers, the offline integrator runs
    write_note(root, ".vaultlink/config.yaml", f"llm:\n  provider: auto\n  host: {down_url()}\n"
               "api:\n  port: 0\n")
    auto = probe(DREAM, root)
    assert auto["counts"]["changed"] == 0
    assert auto["loaded"] == []
    # An Ollama that answers: a run with nothing to integrate neither makes the client
    # nor asks the model's size (/api/show).
    with FakeOllama() as server:
        write_note(root, ".vaultlink/config.yaml", f"llm:\n  provider: ollama\n  host: "
                   f"{server.url}\napi:\n  port: 0\n")
        model = probe(DREAM, root)
        assert model["counts"]["changed"] == 0
        assert model["loaded"] == []
        assert [r.path for r in server.requests] == []

    started = probe(DAEMON, root)
    assert started["queued"] == []
    assert started["loaded"] == []
