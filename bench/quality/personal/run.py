"""Dream a personal vault until settled, offline or with a model, as ``vaultlink dream`` does.

The vault is copied to a temporary folder; ``dream`` runs through ``vaultlink.pipeline.compose``
and the configured steps (what ``vaultlink dream --llm offline`` runs, or ``--llm ollama``
with a host and a model) until a run extracts, integrates and fails nothing, at most
``MAX_RUNS`` times. Every
run's state is kept for the measures, with the owner's files as they were before.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.quality.digest_run import dream_once as dream_run
from bench.quality.digest_run import snapshot
from vaultlink.options import Provider
from vaultlink.pipeline.context import RunState

MAX_RUNS = 12


@dataclass
class Model:
    """Which integrator: ``offline``, or ``ollama`` at ``host`` with ``model``."""

    provider: str = "offline"
    host: str = ""
    model: str = ""

    def overrides(self) -> dict[str, object]:
        out: dict[str, object] = {"llm.provider": self.provider, "auto_dream.max_units": 1000}
        if self.provider == "ollama":
            out.update({"llm.host": self.host, "llm.model": self.model, "llm.fallback": "none"})
        return out


@dataclass
class Dreamed:
    """One vault after its dream."""

    name: str
    root: Path
    before: dict[str, bytes]  # every file but the state folder, before the first run
    runs: list[RunState] = field(default_factory=list)
    settled: bool = False
    seconds: float = 0.0


def dream_once(root: Path, model: Model) -> RunState:
    """One ``dream`` over the vault with ``model``, every unit in one go."""
    return dream_run(root, model.overrides(), Provider(model.provider))


def dream_vault(name: str, source: Path, work: Path, model: Model) -> Dreamed:
    """Copy ``source`` to ``work/name`` and dream it until a run integrates nothing."""
    root = work / name
    shutil.copytree(source, root)
    out = Dreamed(name, root, snapshot(root))
    started = time.monotonic()
    for _ in range(MAX_RUNS):
        run = dream_once(root, model)
        out.runs.append(run)
        if not run.report.results and not run.extraction.units \
                and not run.report.failed_paths:
            # a note parked after failing stays changed, and is not read again
            out.settled = True
            break
    out.seconds = time.monotonic() - started
    return out
