"""Embedders for tests that wrap a real one: the vectors stay the real model's."""

from __future__ import annotations

from collections.abc import Sequence

from vaultlink.index.embed import Embedder


class CountingEmbedder:
    """Delegates to ``inner`` and records every text it was sent (``texts``) and every
    call (``calls``); ``model_id`` may name another space than the inner model's."""

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

    def reset(self) -> None:
        self.texts, self.calls = [], 0
