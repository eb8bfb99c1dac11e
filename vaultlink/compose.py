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
from vaultlink.dream.topics import ModelTopicPicker
from vaultlink.embed import Embedder, make_embedder
from vaultlink.llm import OllamaChat, is_reachable
from vaultlink.node_index import NodeIndex
from vaultlink.search import Indexes, open_indexes
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
    """The long-lived parts of one vault: state, embedder, and both search indexes
    (the pipeline uses the node index; the section index answers ``search``)."""

    vault: Vault
    state: State
    embedder: Embedder
    indexes: Indexes

    @property
    def index(self) -> NodeIndex:
        """The node index, which the pipeline recalls from and writes to."""
        return self.indexes.nodes

    def close(self) -> None:
        """Release the database connections and the Chroma client."""
        self.indexes.close()
        self.state.close()


def open_recall(vault: Vault, settings: Settings) -> Indexes:
    """Both search indexes of a vault, with the embedder the settings name."""
    embedder = make_embedder(settings.get("embedding.provider"), settings.get("embedding.model"),
                             settings.get("llm.host"), float(settings.get("llm.timeout_seconds")))
    return open_indexes(vault, embedder, chroma_mode=settings.get("index.chroma.mode"),
                        chroma_host=settings.get("index.chroma.host"),
                        chroma_port=settings.get("index.chroma.port"),
                        body_chars=settings.get("index.body_chars"))


def open_parts(vault: Vault, settings: Settings) -> Parts:
    """Open state.sqlite, the embedder and the search indexes of a vault."""
    state = State(vault.state_dir / "state.sqlite")
    try:
        indexes = open_recall(vault, settings)
    except BaseException:
        state.close()
        raise
    return Parts(vault, state, indexes.nodes.embedder, indexes)


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
            digest=str(settings.get("folders.digest")),
            max_steps=int(settings.get("llm.max_steps")))
    chat = OllamaChat(str(settings.get("llm.host")), str(settings.get("llm.model")),
                      int(settings.get("llm.num_ctx")), float(settings.get("llm.timeout_seconds")),
                      int(settings.get("llm.retries")))
    return ModelExtractor(chat, int(settings.get("llm.num_ctx"))), chat


def dream_context(parts: Parts, settings: Settings, provider: str, *, dry_run: bool = False,
                  only: frozenset[str] | None = None,
                  progress: Progress | None = None) -> DreamContext:
    """A ready DreamContext for one run."""
    extractor, integrator = models_for(provider, settings, parts.index)
    picker = (ModelTopicPicker(integrator, int(settings.get("llm.num_ctx")))
              if provider == "ollama" else None)
    return DreamContext(
        vault=parts.vault, state=parts.state, index=parts.index, extractor=extractor,
        integrator=integrator, provider=provider,
        max_units=int(settings.get("auto_dream.max_units")),
        max_steps=int(settings.get("llm.max_steps")), dry_run=dry_run,
        max_topics=int(settings.get("topics.max_topics")),
        lookback_days=int(settings.get("topics.lookback_days")), topic_picker=picker,
        only=only, progress=progress)
