"""Opening recall: both indexes of a vault (digest nodes for integration, sections for
``search``), their vectors in state.sqlite or on one Chroma server, built from the typed
options. The one way the CLI, the daemon and the dream open them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vaultlink.errors import SearchIndexError
from vaultlink.index.chunks import ChunkIndex
from vaultlink.index.embed import MINILM_FAST_MODEL_ID, Embedder, make_embedder
from vaultlink.index.multilingual import E5_MODEL_ID
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.rerank import make_reranker
from vaultlink.index.store import collection_namespace, drop_old_mirror, open_server
from vaultlink.llm.arbiter import ArbitratedEmbedder
from vaultlink.options import PipelineOptions
from vaultlink.vault.notes import Vault

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

log = logging.getLogger(__name__)


class LazyChroma:
    """One Chroma server client for both indexes, opened the first time either needs it
    (http mode; unused when embedded)."""

    def __init__(self, opener: Callable[[], ClientAPI]) -> None:
        self._opener = opener
        self.client: ClientAPI | None = None

    def __call__(self) -> ClientAPI:
        """The client, opened now if it was not yet."""
        if self.client is None:
            self.client = self._opener()
        return self.client


@dataclass
class Indexes:
    """The node and chunk indexes of one vault; in http mode over one Chroma client,
    opened when an index first needs the server."""

    nodes: NodeIndex
    chunks: ChunkIndex
    chroma: LazyChroma

    def close(self) -> None:
        """Close both SQLite connections and release the Chroma client if it was opened."""
        self.nodes.close()
        self.chunks.close()
        if self.chroma.client is None:
            return
        close = getattr(self.chroma.client, "close", None)  # not in every chromadb version
        if close is not None:
            try:
                close()
            except Exception as exc:  # an HTTP client has nothing to release
                log.debug("closing the Chroma client: %s", exc)


def open_indexes(vault: Vault, embedder: Embedder, *, chroma_mode: str = "embedded",
                 chroma_host: str = "127.0.0.1", chroma_port: int = 8000,
                 body_chars: int = 1000, section_embedder: Embedder | None = None) -> Indexes:
    """Both indexes of ``vault`` in ``.vaultlink/state.sqlite``, from config values; their
    vectors there too (``chroma_mode="embedded"``), or on the Chroma server at
    ``chroma_host:chroma_port`` (``"http"``).

    ``section_embedder`` embeds the section index (None: ``embedder``, as the nodes).

    With a Chroma server collection names carry a key of the vault's path, so several
    vaults can share one server.
    """
    if chroma_mode not in ("embedded", "http"):
        raise SearchIndexError(f"unknown Chroma mode {chroma_mode!r}; use 'embedded' or "
                               "'http'")
    state = vault.state_dir
    client = LazyChroma(lambda: open_server(chroma_host, chroma_port))
    server = client if chroma_mode == "http" else None
    if server is None:
        drop_old_mirror(state)
    namespace = collection_namespace(vault, chroma_mode)
    db_path = state / "state.sqlite"
    nodes = NodeIndex(vault, db_path, server, embedder, body_chars=body_chars,
                      namespace=namespace)
    chunks = ChunkIndex(vault, db_path, server, section_embedder or embedder,
                        namespace=namespace)
    return Indexes(nodes, chunks, client)


def fast_sections(options: PipelineOptions) -> bool:
    """Whether the section index runs MiniLM with int8 arithmetic: with ``section_embedding``
    "fast", unless the nodes' model is the local multilingual one, which is 4-bit
    already and which a vault not in English needs for its sections too."""
    multilingual = (options.embedding_provider.strip().lower() == "local"
                    and options.embedding_model == E5_MODEL_ID)
    return options.section_embedding == "fast" and not multilingual


def recall_embedders(options: PipelineOptions) -> tuple[Embedder, Embedder | None]:
    """The embedders the options name: the nodes' and (None: the same) the sections'.

    A long-lived reader (``vaultlink mcp`` without a daemon) keeps them across the
    indexes it opens, so the model loads once, not per query.
    """
    cache = Path(options.model_cache) if options.model_cache else None
    embedder = make_embedder(options.embedding_provider, options.embedding_model,
                             options.llm_host, options.timeout, cache)
    sections = None
    if fast_sections(options):
        sections = make_embedder("local", MINILM_FAST_MODEL_ID, None, options.timeout, cache)
    # Every batch takes its turn with the model's calls: one heavy job at a time.
    return (ArbitratedEmbedder(embedder),
            None if sections is None else ArbitratedEmbedder(sections))


def open_recall(vault: Vault, options: PipelineOptions,
                embedders: tuple[Embedder, Embedder | None] | None = None) -> Indexes:
    """Both search indexes of a vault, with the embedders the options name (or
    ``embedders``, from ``recall_embedders`` earlier).

    The section index holds every section of every note (46,000 in a vault of 10,000
    notes), so its first build is the embedder's work: with ``section_embedding``
    "fast" it runs MiniLM with int8 arithmetic, twice as fast on a CPU, and the node
    index, which integration's recall reads, keeps its model; the local multilingual
    model embeds both (see :func:`fast_sections`).
    """
    embedder, sections = embedders or recall_embedders(options)
    indexes = open_indexes(vault, embedder, chroma_mode=options.chroma_mode,
                           chroma_host=options.chroma_host, chroma_port=options.chroma_port,
                           body_chars=options.body_chars, section_embedder=sections)
    indexes.chunks.reranker = make_reranker(options.reranker)
    return indexes
