"""Shared plumbing: a real NodeIndex (MiniLM + Chroma) over a folder, small statistics."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from vaultlink.index.embed import Embedder
from vaultlink.index.nodes import NodeIndex
from vaultlink.vault.notes import Vault

DATA = Path(__file__).parent / "data"


@contextmanager
def node_index(root: Path, embedder: Embedder) -> Iterator[NodeIndex]:
    """A synced node index of the vault at ``root``, stored in its ``.vaultlink/``."""
    vault = Vault(root)
    state = vault.state_dir
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    index = NodeIndex(vault, state / "state.sqlite", None, embedder)
    try:
        index.sync()
        yield index
    finally:
        index.close()


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 of a binary call."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        """Share of positive calls that were right (1.0 when nothing was called)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        """Share of true positives that were called."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def prf(pairs: list[tuple[bool, bool]]) -> PRF:
    """From (truth, called) pairs."""
    return PRF(sum(t and c for t, c in pairs), sum(c and not t for t, c in pairs),
               sum(t and not c for t, c in pairs))
