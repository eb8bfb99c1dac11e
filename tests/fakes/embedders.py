"""Embedders for tests that wrap a real one: the vectors stay the real model's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vaultlink.index.embed import Embedder


class CountingEmbedder:
    """Delegates to ``inner`` and records every text it was sent (``texts``) and every
    call (``calls``); ``model_id`` may name another space than the inner model's. What
    it lacks (``calibrate``, ``threads``...) is the inner model's."""

    def __init__(self, inner: Embedder, model_id: str | None = None) -> None:
        self.inner = inner
        self.model_id: str = model_id or inner.model_id
        self.dimension: int = inner.dimension
        self.texts: list[str] = []
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += list(texts)
        return self.inner.embed(texts)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def reset(self) -> None:
        self.texts, self.calls = [], 0


class RememberingEmbedder:
    """The real embedder, asked once per distinct text: a text's vector is what the real
    model gave the first time."""

    def __init__(self, real: Embedder) -> None:
        self.real = real
        self.model_id, self.dimension = real.model_id, real.dimension
        self.known: dict[str, list[float]] = {}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors from memory, the new texts from the model in one call."""
        new = list(dict.fromkeys(t for t in texts if t not in self.known))
        if new:
            self.known.update(zip(new, self.real.embed(new), strict=True))
        return [self.known[t] for t in texts]
