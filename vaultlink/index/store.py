"""Opening the index's stores.

The stores are derived data: a Chroma folder or a state database that cannot be
opened is moved aside (``*.corrupt-<time>``) and rebuilt from the vault.
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vaultlink.errors import SearchIndexError

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

    from vaultlink.vault.notes import Vault

log = logging.getLogger(__name__)


def _move_aside(path: Path, what: str) -> None:
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    log.warning("%s at %s is unusable; moved it to %s and rebuilding", what, path, target.name)
    path.rename(target)


def ensure_dir(path: Path) -> None:
    """``path`` as a folder: a file in the way (of it or its parent) is moved aside."""
    for folder in (path.parent, path):
        if folder.exists() and not folder.is_dir():
            _move_aside(folder, "a file where a folder belongs")
    path.mkdir(parents=True, exist_ok=True)


def open_chroma(mode: str, path: Path, host: str = "127.0.0.1", port: int = 8000) -> ClientAPI:
    """A Chroma client: embedded in ``path`` (the vault's ``.vaultlink/chroma``) or HTTP.

    An embedded store that cannot be opened is moved aside and started afresh (the
    index syncs itself back from the vault). An HTTP server that does not answer is a
    ``SearchIndexError``.
    """
    # chromadb: 0.8 s of CPU at import, paid only by a process that changes an index
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if mode == "http":
        try:
            client = chromadb.HttpClient(host=host, port=port, settings=settings)
            client.heartbeat()
        except Exception as exc:
            raise SearchIndexError(f"no Chroma server answers at {host}:{port} ({exc}); start "
                                   "it, or set index.chroma.mode: embedded") from exc
        return client
    if mode != "embedded":
        raise SearchIndexError(f"unknown Chroma mode {mode!r}; use 'embedded' or 'http'")
    ensure_dir(path)
    try:
        client = chromadb.PersistentClient(path=str(path), settings=settings)
        client.list_collections()
        return client
    except Exception as exc:
        log.warning("cannot open the Chroma store: %s", exc)
    # chromadb keeps one System per path, and a failed open leaves a broken one behind
    # that the next client for the path would reuse: forget it before starting afresh.
    SharedSystemClient._identifier_to_system.pop(str(path), None)
    SharedSystemClient._identifier_to_refcount.pop(str(path), None)
    _move_aside(path, "the Chroma store")
    path.mkdir(parents=True)
    return chromadb.PersistentClient(path=str(path), settings=settings)


def collection_namespace(vault: Vault, chroma_mode: str) -> str:
    """What sets this vault's collections apart on a shared Chroma server ('' when embedded).

    Every opener of an index must use it, or two commands would read different
    collections of the same vault.
    """
    if chroma_mode != "http":
        return ""
    return hashlib.sha256(str(vault.root).encode("utf-8")).hexdigest()[:10]
