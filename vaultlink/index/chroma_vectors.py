"""An index's vectors on a Chroma server (``index.chroma.mode: http``).

In this mode the server is the one home of the vectors: a sync writes them there (in
the SQLite transaction of their docs, before it commits), a query asks the server's
HNSW index for the nearest ones with a ``where`` filter, and the process keeps no copy.
What the server should hold is journaled in ``idx_<kind>_docs`` (doc id and the hash
of its text); each vector carries its hash as metadata, so a server restarted empty,
or a crash between the server's write and SQLite's commit, is healed by comparing the
two: what the server lacks is embedded again, nothing it holds is.

Every call is retried on a transport failure (server down, restarting, too slow);
after the last try it is an ``IndexServerUnavailable`` that says what to do.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from vaultlink.errors import IndexServerUnavailable, SearchIndexError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

log = logging.getLogger(__name__)

T = TypeVar("T")
# Waits between tries of a call the server did not answer: 0.5 + 2 s, then the error.
RETRY_WAITS = (0.5, 2.0)
# Ids per request when the journal is compared with the server (a heal only).
PAGE = 5000

Metadata = Mapping[str, str | bool]


def transport_failure(exc: BaseException) -> bool:
    """An HTTP connection that failed or timed out (httpx, under chromadb's client).

    Judged without importing httpx: when it is not loaded, nothing of it can have raised.
    """
    httpx = sys.modules.get("httpx")
    kind = getattr(httpx, "TransportError", None)
    return isinstance(kind, type) and isinstance(exc, kind)


def chroma_failure(exc: BaseException) -> bool:
    """A Chroma error, or an HTTP error from a Chroma server that went away."""
    chroma, httpx = sys.modules.get("chromadb.errors"), sys.modules.get("httpx")
    kinds = tuple(k for k in (getattr(chroma, "ChromaError", None),
                              getattr(httpx, "HTTPError", None)) if isinstance(k, type))
    return bool(kinds) and isinstance(exc, kinds)


def not_found(exc: BaseException) -> bool:
    """The collection is gone from the server (restarted empty, deleted by hand)."""
    chroma = sys.modules.get("chromadb.errors")
    kind = getattr(chroma, "NotFoundError", None)
    return (isinstance(kind, type) and isinstance(exc, kind)) or (
        chroma_failure(exc) and "does not exist" in str(exc))


def where_of(scope: Metadata) -> dict[str, Any] | None:
    """A Chroma ``where`` filter: every key equal to its value (None: no filter)."""
    terms = [{key: value} for key, value in scope.items()]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else {"$and": terms}


class ServedVectors:
    """One index's collection on a Chroma server, reached through ``client_of``."""

    def __init__(self, client_of: Callable[[], ClientAPI], name: str) -> None:
        self._client_of = client_of
        self._client: ClientAPI | None = None
        self._coll: Collection | None = None
        self.name = name

    # -- connection ----------------------------------------------------------------

    @property
    def client(self) -> ClientAPI:
        """The client, opened on first use (``store.open_server``: a clear error if down)."""
        if self._client is None:
            self._client = self._client_of()
        return self._client

    @property
    def opened(self) -> bool:
        """True once the collection was opened in this process."""
        return self._coll is not None

    def where(self) -> str:
        """host:port of the server, for messages."""
        try:
            settings = self.client.get_settings()
            return f"{settings.chroma_server_host}:{settings.chroma_server_http_port}"
        except Exception:  # a message must not fail
            return "the Chroma server"

    def call(self, what: str, fn: Callable[[], T]) -> T:
        """``fn`` with retries while the server does not answer; Chroma's own errors are
        SearchIndexError (a collection gone from the server says how it heals)."""
        for attempt in range(len(RETRY_WAITS) + 1):
            try:
                return fn()
            except Exception as exc:
                if transport_failure(exc) and attempt < len(RETRY_WAITS):
                    log.warning("the Chroma server did not answer (%s: %s); trying again in "
                                "%.1f s", what, exc, RETRY_WAITS[attempt])
                    time.sleep(RETRY_WAITS[attempt])
                    continue
                if transport_failure(exc):
                    raise IndexServerUnavailable(
                        f"the Chroma server at {self.where()} stopped answering ({what}: "
                        f"{type(exc).__name__} {exc}); start it again, or set "
                        "index.chroma.mode: embedded. Nothing is lost: the notes wait, and "
                        "the index heals itself from state.sqlite when the server is "
                        "back") from exc
                if not_found(exc):
                    self._coll = None  # opened afresh (empty) by the next call
                    raise SearchIndexError(
                        f"the collection {self.name} is gone from the Chroma server at "
                        f"{self.where()} (restarted empty?); `vaultlink reindex` heals it, "
                        "embedding only what it lacks") from exc
                if chroma_failure(exc):
                    raise SearchIndexError(f"the Chroma collection {self.name} failed "
                                           f"({what}): {exc}; run `vaultlink reindex`") from exc
                raise
        raise AssertionError("unreachable")

    def _reopened(self, what: str, fn: Callable[[Collection], T]) -> T:
        """``fn`` on the collection; if the server lost it, once more on it made anew."""
        try:
            coll = self.collection
            return self.call(what, lambda: fn(coll))
        except IndexServerUnavailable:
            raise  # retried already: no second round of waits
        except SearchIndexError:
            if self._coll is not None:
                raise
            coll = self.collection
            return self.call(what, lambda: fn(coll))

    @property
    def collection(self) -> Collection:
        """The collection, created on the server if it is not there."""
        if self._coll is None:
            client = self.client
            self._coll = self.call("open the collection", lambda: client.get_or_create_collection(
                self.name, configuration={"hnsw": {"space": "cosine"}},
                embedding_function=None))
        return self._coll

    def collection_id(self) -> str:
        """The server's id of the collection: another one after the server lost it."""
        return str(self.collection.id)

    def count(self) -> int:
        """How many vectors the server holds for this index (0 for a collection the
        server lost: it is made anew, and its id tells the journal it is not the one)."""
        return self._reopened("count", lambda c: c.count())

    def drop(self, name: str | None = None) -> None:
        """Delete a collection (this one by default); already gone is fine."""
        target = name or self.name
        try:
            self.client.delete_collection(target)
        except Exception as exc:
            if transport_failure(exc):
                raise IndexServerUnavailable(f"the Chroma server at {self.where()} does not "
                                             f"answer: {exc}; start it again") from exc
            log.debug("deleting collection %s: %s", target, exc)
        if target == self.name:
            self._coll = None

    # -- writes --------------------------------------------------------------------

    def _step(self) -> int:
        return max(1, min(self.call("batch size", self.client.get_max_batch_size), PAGE))

    def put(self, ids: Sequence[int],
            vectors: Sequence[Sequence[float]] | npt.NDArray[np.float32],
            metadatas: Sequence[Metadata]) -> None:
        """Store vectors (an id already there is replaced)."""
        if not ids:
            return
        import numpy as np  # 0.1 s of CPU, paid with chromadb's 0.8 s

        coll, step = self.collection, self._step()
        for start in range(0, len(ids), step):
            end = start + step
            self.call("write vectors", lambda s=start, e=end: coll.upsert(  # type: ignore[misc]
                ids=[str(i) for i in ids[s:e]],
                embeddings=np.asarray(vectors[s:e], dtype=np.float32),
                metadatas=[dict(m) for m in metadatas[s:e]]))

    def relabel(self, ids: Sequence[int], metadatas: Sequence[Metadata]) -> None:
        """New metadata for vectors kept as they are (a note moved to another folder)."""
        if not ids:
            return
        coll, step = self.collection, self._step()
        for start in range(0, len(ids), step):
            end = start + step
            self.call("relabel vectors", lambda s=start, e=end: coll.update(  # type: ignore[misc]
                ids=[str(i) for i in ids[s:e]], metadatas=[dict(m) for m in metadatas[s:e]]))

    def delete(self, ids: Sequence[int]) -> None:
        """Forget vectors; ids the server does not hold are ignored."""
        if not ids:
            return
        coll, step = self.collection, self._step()
        for start in range(0, len(ids), step):
            end = start + step
            self.call("delete vectors", lambda s=start, e=end: coll.delete(  # type: ignore[misc]
                ids=[str(i) for i in ids[s:e]]))

    # -- reads ---------------------------------------------------------------------

    def nearest(self, vector: Sequence[float], k: int, scope: Metadata | None = None
                ) -> list[tuple[int, float]]:
        """The ``k`` nearest ids with their cosine similarity, best first, among the
        vectors whose metadata matches ``scope`` (a ``where`` filter on the server)."""
        if k <= 0:
            return []
        import numpy as np  # 0.1 s of CPU, paid with chromadb's 0.8 s

        coll = self.collection
        where = where_of(scope or {})
        got = self.call("search", lambda: coll.query(
            query_embeddings=np.asarray([vector], dtype=np.float32), n_results=k, where=where,
            include=["distances"]))
        ids, distances = got["ids"][0], (got.get("distances") or [[]])[0]
        # cosine space: distance = 1 - similarity
        return [(int(i), 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def held(self) -> dict[int, str]:
        """Every id the server holds with the text hash it was stored with (a heal
        reads this once, in pages)."""
        coll, found, offset = self.collection, {}, 0
        while True:
            page = self.call("list vectors", lambda o=offset: coll.get(  # type: ignore[misc]
                include=["metadatas"], limit=PAGE, offset=o))
            metas: list[Any] = list(page.get("metadatas") or [])
            metas += [None] * (len(page["ids"]) - len(metas))
            for i, meta in zip(page["ids"], metas, strict=True):
                found[int(i)] = str((meta or {}).get("h", ""))
            if len(page["ids"]) < PAGE:
                return found
            offset += PAGE

    def differences(self, journal: Mapping[int, str]) -> tuple[int, list[int], list[int]]:
        """Against the journal (doc id -> text hash): how many vectors the server holds,
        the ids no doc wants (stale), and the docs whose vector it lacks (missing)."""
        held = self.held()
        stale = [i for i, h in held.items() if journal.get(i) != h]
        missing = [i for i, h in journal.items() if held.get(i) != h]
        return len(held), stale, missing
