"""Opening the index's stores: folders, the Chroma server's client.

The stores are derived data: a state database that cannot be opened is moved aside
(``*.corrupt-<time>``) and rebuilt from the vault. The vectors live in state.sqlite
(``index.chroma.mode: embedded``) or on a Chroma server (``http``, ``chroma_vectors.py``).
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vaultlink.errors import IndexServerUnavailable
from vaultlink.options import redact_url

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


# How long a request to the Chroma server may take (chromadb's client waits forever):
# connecting, and a search or a batch written. A slow server past these is retried
# (``served.RETRY_WAITS``), then reported.
CONNECT_SECONDS = 5.0
REQUEST_SECONDS = 60.0


def open_server(host: str = "127.0.0.1", port: int = 8000) -> ClientAPI:
    """A client of the Chroma server that holds the vectors (``index.chroma.mode: http``).

    A server that does not answer is an ``IndexServerUnavailable`` that says what to do.
    """
    # chromadb: 0.8 s of CPU at import, paid only in http mode
    import chromadb
    import httpx
    from chromadb.config import Settings

    timeout = httpx.Timeout(REQUEST_SECONDS, connect=CONNECT_SECONDS)
    try:
        # asked first with a timeout: HttpClient's constructor makes requests that wait
        # forever on a server that accepts connections and never answers
        httpx.get(f"http://{host}:{port}/api/v2/heartbeat", timeout=timeout).raise_for_status()
        client = chromadb.HttpClient(host=host, port=port,
                                     settings=Settings(anonymized_telemetry=False))
        session = getattr(getattr(client, "_server", None), "_session", None)
        if isinstance(session, httpx.Client):  # the one place chromadb keeps its timeout
            session.timeout = timeout
        client.heartbeat()
    except Exception as exc:
        # httpx quotes the URL it asked, user info and all: the message says it redacted,
        # and the cause is dropped so that a logged traceback cannot quote it either
        raise IndexServerUnavailable(
            f"no Chroma server answers at {redact_url(host)}:{port} ({redact_url(str(exc))}); "
            f"start it (`chroma run --path <folder> --port {port}`), or set "
            "index.chroma.mode: embedded") from None
    return client


def server_report(client: ClientAPI) -> dict[str, object]:
    """What ``doctor`` shows of a server: its version and its collections with counts."""
    collections = {c.name: c.count() for c in client.list_collections()}
    return {"version": client.get_version(), "collections": collections}


def collection_namespace(vault: Vault, chroma_mode: str) -> str:
    """What sets this vault's collections apart on a shared Chroma server ('' when embedded).

    Every opener of an index must use it, or two commands would read different
    collections of the same vault.
    """
    if chroma_mode != "http":
        return ""
    return hashlib.sha256(str(vault.root).encode("utf-8")).hexdigest()[:10]


def drop_old_mirror(state_dir: Path) -> None:
    """Remove ``.vaultlink/chroma``: the embedded Chroma copy of the vectors that earlier
    versions wrote beside state.sqlite and no query read (derived data, a few hundred
    MB in a large vault)."""
    old = state_dir / "chroma"
    if old.is_dir():
        import shutil  # once per vault that had the old folder, not at every open

        log.info("removing %s: the vectors live in state.sqlite", old)
        shutil.rmtree(old, ignore_errors=True)
