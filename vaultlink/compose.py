"""Building the pipeline's parts from settings: the composition root's toolkit.

Called only by ``cli.py`` and ``daemon.py``, which read the configuration and pass the
``Settings`` in; everything built here receives plain values.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from vaultlink.config import Settings
from vaultlink.dream.extract import ModelExtractor
from vaultlink.dream.pipeline import DreamContext, Extractor, Progress
from vaultlink.embed import Embedder, make_embedder
from vaultlink.index import NodeIndex
from vaultlink.index_store import collection_namespace, open_chroma
from vaultlink.llm import OllamaChat, is_reachable
from vaultlink.state import State
from vaultlink.vault import Vault

log = logging.getLogger(__name__)

OFFLINE_NOTICE = (
    "no Ollama server answers at {host}: using the offline integrator (no LLM). "
    "For model-written digests: install Ollama, run `ollama pull {model}`, and keep "
    "`ollama serve` running (or set llm.provider: offline to silence this)."
)


@dataclass
class Parts:
    """The long-lived parts of one vault: state, embedder, node index."""

    vault: Vault
    state: State
    embedder: Embedder
    index: NodeIndex

    def close(self) -> None:
        """Release the database connections."""
        self.index.close()
        self.state.close()


def open_parts(vault: Vault, settings: Settings) -> Parts:
    """Open state.sqlite, the embedder and the node index of a vault."""
    db = vault.state_dir / "state.sqlite"
    state = State(db)
    embedder = make_embedder(settings.get("embedding.provider"), settings.get("embedding.model"),
                             settings.get("llm.host"), float(settings.get("llm.timeout_seconds")))
    client = open_chroma(settings.get("index.chroma.mode"), vault.state_dir / "chroma",
                         settings.get("index.chroma.host"), settings.get("index.chroma.port"))
    index = NodeIndex(vault, db, client, embedder, body_chars=settings.get("index.body_chars"),
                      namespace=collection_namespace(vault, settings.get("index.chroma.mode")))
    return Parts(vault, state, embedder, index)


def choose_provider(settings: Settings) -> str:
    """``ollama`` or ``offline``: ``auto`` asks the server once, cheaply."""
    provider = str(settings.get("llm.provider"))
    if provider != "auto":
        return provider
    host = str(settings.get("llm.host"))
    if is_reachable(host):
        return "ollama"
    log.warning(OFFLINE_NOTICE.format(host=host, model=settings.get("llm.model")))
    return "offline"


def models_for(provider: str, settings: Settings, index: NodeIndex) -> tuple[Extractor, Any]:
    """The extractor and the integrating chat model for a provider."""
    if provider == "offline":
        from vaultlink.offline import OfflineExtractor, OfflinePolicy

        return OfflineExtractor(), OfflinePolicy(
            same_threshold=float(settings.get("integrate.same_threshold")),
            related_threshold=float(settings.get("integrate.related_threshold")),
            digest=str(settings.get("folders.digest")))
    chat = OllamaChat(str(settings.get("llm.host")), str(settings.get("llm.model")),
                      int(settings.get("llm.num_ctx")), float(settings.get("llm.timeout_seconds")),
                      int(settings.get("llm.retries")))
    return ModelExtractor(chat, int(settings.get("llm.num_ctx"))), chat


def dream_context(parts: Parts, settings: Settings, provider: str, *, dry_run: bool = False,
                  only: frozenset[str] | None = None,
                  progress: Progress | None = None) -> DreamContext:
    """A ready DreamContext for one run."""
    extractor, integrator = models_for(provider, settings, parts.index)
    return DreamContext(
        vault=parts.vault, state=parts.state, index=parts.index, extractor=extractor,
        integrator=integrator, provider=provider,
        max_units=int(settings.get("auto_dream.max_units")),
        max_steps=int(settings.get("llm.max_steps")), dry_run=dry_run,
        max_topics=int(settings.get("topics.max_topics")),
        lookback_days=int(settings.get("topics.lookback_days")), only=only, progress=progress)
