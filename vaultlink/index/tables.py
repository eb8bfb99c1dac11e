"""The stores of one index: four SQLite tables and a Chroma collection, kept in step.

``idx_<kind>_files`` (every tracked note with size, mtime, inode and content hash, or
the reason it is skipped), ``idx_<kind>_docs`` (one row per indexed text; its integer
id is also its id in Chroma), ``idx_<kind>_fts`` (FTS5 over the same texts) and
``idx_<kind>_vec`` (its vector, which queries search: ``vectors.py``). The collection
is named by kind, embedding model id and schema version, so a model change builds a
new collection instead of mixing vector spaces. Whatever does not describe the
collection (a lost Chroma folder, a counted mismatch, other ``params``) is reset with a
warning: the index is derived data, rebuilt from the vault.

Chroma is opened only when the index changes (or must be checked): a query, and a sync
that finds nothing changed, never import it. An index built before the vector table
existed takes its vectors from Chroma once, without embedding anything again.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from vaultlink.errors import SearchIndexError
from vaultlink.index.embed import Embedder
from vaultlink.index.store import ensure_dir
from vaultlink.index.words import CUT_VERSION, search_text
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State, immediate_transaction

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

    from vaultlink.index.vectors import VectorMatrix

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
T = TypeVar("T")


def open_state_db(path: Path) -> sqlite3.Connection:
    """A connection to state.sqlite in WAL mode; a file that is not a database is moved aside."""
    ensure_dir(path.parent)
    for attempt in (1, 2):
        db = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.DatabaseError as exc:
            db.close()
            if attempt == 2:
                raise SearchIndexError(f"cannot open {path}: {exc}") from exc
            log.warning("state database %s is corrupt (%s)", path, exc)
            # The journal in it is not derived data: State sets the file aside and
            # keeps every row it can read, instead of this index dropping it.
            State(path).close()
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Doc:
    """One text of a note to index: embedded as ``embed_text``, FTS columns ``fts``."""

    embed_text: str
    fts: tuple[str, ...]
    line: int = 1

    @property
    def text_hash(self) -> str:
        """What decides whether a stored vector can be reused."""
        return content_hash(self.embed_text.encode("utf-8"))


class IndexTables:
    """The tables and the collection of one index (``kind``), and the writes that keep
    them in step; :class:`vaultlink.index.base.IndexBase` builds sync and query on top."""

    kind: ClassVar[str]
    fts_columns: ClassVar[tuple[str, ...]]
    # The FTS columns hold each text's search form (``words.search_text``: CJK runs as
    # pairs of characters); an index that shows its texts keeps them as written too.
    fts_shown: ClassVar[bool] = False

    def __init__(self, vault: Vault, db_path: Path,
                 chroma_client: ClientAPI | Callable[[], ClientAPI], embedder: Embedder,
                 namespace: str = "") -> None:
        """``chroma_client``: the client, or a function that opens it when first needed."""
        self.vault, self.db_path, self.embedder = vault, db_path, embedder
        self._client_of: Callable[[], ClientAPI] = (
            chroma_client if callable(chroma_client) else lambda: chroma_client)
        self._client: ClientAPI | None = None
        self._coll: Collection | None = None
        self._chroma_checked = False
        self.collection_name = f"{self.kind}-{embedder.model_id}-v{SCHEMA_VERSION}"
        if namespace:  # one Chroma server may serve several vaults
            self.collection_name += f"-{namespace}"
        self._lock = threading.RLock()
        self._db = open_state_db(db_path)
        self._files_t, self._docs_t, self._fts_t, self._vec_t = (
            f"idx_{self.kind}_{t}" for t in ("files", "docs", "fts", "vec"))
        self._vectors: VectorMatrix | None = None  # loaded by the first query
        try:
            self._create_tables()
        except sqlite3.DatabaseError as exc:
            raise SearchIndexError(f"{db_path} is damaged ({exc}); delete it and run "
                                   "`vaultlink reindex`") from exc
        self._check_tables()

    @property
    def client(self) -> ClientAPI:
        """The Chroma client, opened on first use."""
        if self._client is None:
            self._client = self._client_of()
        return self._client

    @property
    def chroma_open(self) -> bool:
        """True once this index has opened its Chroma collection."""
        return self._coll is not None

    @property
    def _collection(self) -> Collection:
        if self._coll is None:
            self._coll = self._open_collection()
        return self._coll

    def _fts_ddl(self) -> str:
        """The FTS5 table: the columns searched, then (``fts_shown``) one unindexed column
        each for its text as written, kept only where the indexed form differs."""
        cols = list(self.fts_columns)
        if self.fts_shown:
            cols += [f"{c}_shown UNINDEXED" for c in self.fts_columns]
        return (f"CREATE VIRTUAL TABLE IF NOT EXISTS {self._fts_t} USING fts5("
                f"{', '.join(cols)}, tokenize='{FTS_TOKENIZE}')")

    def _create_tables(self) -> None:
        self._db.executescript(f"""
            CREATE TABLE IF NOT EXISTS idx_meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE IF NOT EXISTS {self._files_t} (path TEXT PRIMARY KEY, size INTEGER,
                mtime_ns INTEGER, ino INTEGER, hash TEXT, skip TEXT, name TEXT,
                description TEXT);
            CREATE TABLE IF NOT EXISTS {self._docs_t} (id INTEGER PRIMARY KEY AUTOINCREMENT,
                path TEXT NOT NULL, ord INTEGER, line INTEGER, text_hash TEXT);
            CREATE INDEX IF NOT EXISTS {self._docs_t}_path ON {self._docs_t}(path);
            {self._fts_ddl()};
            CREATE TABLE IF NOT EXISTS {self._vec_t} (id INTEGER PRIMARY KEY, vec BLOB NOT NULL);
        """)

    def _tables(self) -> list[str]:
        return [self._files_t, self._docs_t, self._fts_t, self._vec_t]

    def _tx(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate_transaction(self._db)

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM idx_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _open_collection(self) -> Collection:
        try:
            return self.client.get_or_create_collection(
                self.collection_name, configuration={"hnsw": {"space": "cosine"}},
                embedding_function=None)
        except Exception as exc:
            raise SearchIndexError(f"cannot open the Chroma collection {self.collection_name}: "
                                   f"{exc}; run `vaultlink reindex`") from exc

    def _count(self, table: str) -> int:
        return int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def _check_tables(self) -> None:
        """At open, from SQLite alone: the index describes this model and these params,
        and its docs have vectors; otherwise check (and reset) with Chroma now.

        Docs and their vectors are written in one transaction (and an older index's are
        copied in one), so the vectors are all there or, in an index built before the
        table, none: asking whether the table has a row costs nothing, where counting
        it read every page (46,000 section vectors: 70 ms at every open). Only a hand
        edit of the database could leave some docs without a vector."""
        if (self._meta(f"{self.kind}.collection") != self.collection_name
                or self._meta(f"{self.kind}.params") != self._params()):
            self._check_consistent()
        elif self._has_rows(self._docs_t) and not self._has_rows(self._vec_t):
            self._vectors_from_chroma()

    def _has_rows(self, table: str) -> bool:
        return self._db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None

    def _vectors_from_chroma(self) -> None:
        """An index built before ``idx_<kind>_vec``: copy its vectors out of Chroma once
        (nothing is embedded again), or rebuild when Chroma does not hold them all."""
        self._check_consistent()
        from vaultlink.index.vectors import to_blob  # numpy: 0.1 s, paid with chromadb's

        ids = [r[0] for r in self._db.execute(
            f"SELECT id FROM {self._docs_t} WHERE id NOT IN (SELECT id FROM {self._vec_t})")]
        step = self.client.get_max_batch_size()
        with self._tx() as db:
            for start in range(0, len(ids), step):
                got = self._collection.get(ids=[str(i) for i in ids[start:start + step]],
                                           include=["embeddings"])
                vectors = got["embeddings"]
                db.executemany(f"INSERT OR REPLACE INTO {self._vec_t} VALUES (?, ?)",
                               [(int(i), to_blob(v)) for i, v in zip(
                                   got["ids"], [] if vectors is None else vectors, strict=True)])
        if self._count(self._vec_t) != self._count(self._docs_t):
            log.warning("the %s index's vectors are incomplete; rebuilding it", self.kind)
            self.reset()

    def _check_consistent(self) -> None:
        """Reset when the stored state does not describe this collection's vectors."""
        stored = self._meta(f"{self.kind}.collection")
        rows = self._count(self._docs_t)
        try:
            vectors = self._collection.count()
        except Exception as exc:
            raise SearchIndexError(f"the Chroma collection {self.collection_name} does not "
                                   f"answer: {exc}") from exc
        params = self._meta(f"{self.kind}.params")
        self._chroma_checked = True
        if stored == self.collection_name and rows == vectors and params == self._params():
            return
        if stored is not None and stored != self.collection_name:
            log.warning("the %s index was built with %s; building %s", self.kind, stored,
                        self.collection_name)
            self._drop_collection(stored)
        elif stored is not None and params != self._params():
            log.warning("the %s index was built with %s, now %s; rebuilding it", self.kind,
                        params, self._params())
        elif stored is not None and self._count(self._vec_t) == rows:
            log.warning("the %s index's Chroma collection is out of step (%d rows, %d "
                        "vectors); restoring it from state.sqlite", self.kind, rows, vectors)
            self._mirror_to_chroma()
            return
        elif stored is not None:
            log.warning("the %s index is out of step (%d rows, %d vectors); rebuilding it "
                        "from the vault", self.kind, rows, vectors)
        self.reset()

    def _mirror_to_chroma(self) -> None:
        """Refill the collection from the vectors SQLite holds (nothing is embedded)."""
        import numpy as np  # 0.1 s of CPU, paid with chromadb's 0.8 s

        self._drop_collection(self.collection_name)
        self._coll = self._open_collection()
        rows = self._db.execute(f"SELECT id, vec FROM {self._vec_t}").fetchall()
        self._chroma_upsert([str(r[0]) for r in rows],
                            [np.frombuffer(r[1], dtype=np.float32).tolist() for r in rows])

    def _drop_collection(self, name: str) -> None:
        try:
            self.client.delete_collection(name)
        except Exception as exc:  # already gone is fine
            log.debug("deleting collection %s: %s", name, exc)

    def reset(self) -> None:
        """Forget everything indexed; the next sync rebuilds from the vault."""
        with self._lock:
            self._drop_collection(self.collection_name)
            self._coll = self._open_collection()
            self._chroma_checked = True
            if self._vectors is not None:
                self._vectors.clear()
            with self._tx() as db:
                for table in self._tables():
                    db.execute(f"DELETE FROM {table}")
                # made anew, so that its columns and tokenizer are the ones the code
                # writes (an index built before ``fts_shown`` or another tokenizer)
                db.execute(f"DROP TABLE {self._fts_t}")
                db.execute(self._fts_ddl())
                db.executemany("INSERT OR REPLACE INTO idx_meta VALUES (?, ?)",
                               [(f"{self.kind}.collection", self.collection_name),
                                (f"{self.kind}.params", self._params())])

    def close(self) -> None:
        """Close the SQLite connection (the Chroma client belongs to the caller)."""
        self._vectors = None
        with self._lock:
            self._db.close()

    def params(self) -> str:
        """The settings the stored texts depend on; a change rebuilds the index."""
        return ""

    def _params(self) -> str:
        """``params`` and how keyword search cuts words: what the stored index was built
        with (the cut and the tokenizer changing rebuild it too)."""
        return f"{self.params()} fts={FTS_TOKENIZE} words={CUT_VERSION}".strip()

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            raise SearchIndexError(f"the search index in {self.db_path} failed: {exc}; run "
                                   "`vaultlink reindex`") from exc
        except Exception as exc:
            if not _chroma_failure(exc):
                raise
            raise SearchIndexError(f"the Chroma collection {self.collection_name} failed: "
                                   f"{exc}; run `vaultlink reindex`") from exc

    def _doc_ids(self, path: str) -> list[int]:
        return [r[0] for r in self._db.execute(
            f"SELECT id FROM {self._docs_t} WHERE path = ? ORDER BY ord", (path,))]

    def _fts_write(self, db: sqlite3.Connection, doc_id: int, doc: Doc,
                   replace: bool = False) -> None:
        if replace:
            db.execute(f"DELETE FROM {self._fts_t} WHERE rowid = ?", (doc_id,))
        values: list[str | None] = [search_text(text) for text in doc.fts]
        cols = list(self.fts_columns)
        if self.fts_shown:
            cols += [f"{c}_shown" for c in self.fts_columns]
            values += [None if shown == indexed else shown
                       for shown, indexed in zip(doc.fts, values, strict=True)]
        marks = ",".join("?" * (len(cols) + 1))
        db.execute(f"INSERT INTO {self._fts_t} (rowid, {', '.join(cols)}) "
                   f"VALUES ({marks})", (doc_id, *values))

    def _fts_shown(self, column: str, alias: str) -> str:
        """SQL for an FTS column's text as written (``fts_shown``), read as ``alias``."""
        return f"coalesce({alias}.{column}_shown, {alias}.{column})"

    def _delete_docs(self, db: sqlite3.Connection, ids: list[int]) -> None:
        db.executemany(f"DELETE FROM {self._docs_t} WHERE id = ?", [(i,) for i in ids])
        db.executemany(f"DELETE FROM {self._fts_t} WHERE rowid = ?", [(i,) for i in ids])
        db.executemany(f"DELETE FROM {self._vec_t} WHERE id = ?", [(i,) for i in ids])
        if self._vectors is not None:
            self._vectors.remove(ids)

    def _store_vectors(self, db: sqlite3.Connection, ids: list[str],
                       vectors: list[list[float]]) -> None:
        """Keep new vectors beside their docs (in the caller's transaction) and in the
        loaded matrix."""
        # numpy: 0.1 s of CPU, which a start with nothing to embed or search never pays
        from vaultlink.index.vectors import to_blob

        db.executemany(f"INSERT OR REPLACE INTO {self._vec_t} VALUES (?, ?)",
                       [(int(i), to_blob(v)) for i, v in zip(ids, vectors, strict=True)])
        if self._vectors is not None:
            self._vectors.add([int(i) for i in ids], vectors)

    def _matrix(self) -> VectorMatrix:
        """Every vector of the index, loaded from SQLite on first use (under the lock)."""
        if self._vectors is None:
            # numpy: 0.1 s of CPU, paid by the first query, not by every start
            from vaultlink.index.vectors import VectorMatrix

            matrix = VectorMatrix()
            matrix.load(self._db, self._vec_t)
            self._vectors = matrix
        return self._vectors

    def _chroma_delete(self, ids: list[int]) -> None:
        step = self.client.get_max_batch_size()
        for start in range(0, len(ids), step):
            self._collection.delete(ids=[str(i) for i in ids[start:start + step]])

    def _chroma_upsert(self, ids: list[str], vectors: list[list[float]]) -> None:
        import numpy as np  # 0.1 s of CPU, paid with chromadb's 0.8 s

        step = self.client.get_max_batch_size()
        for start in range(0, len(ids), step):
            self._collection.upsert(ids=ids[start:start + step], embeddings=np.asarray(
                vectors[start:start + step], dtype=np.float32))


def _chroma_failure(exc: Exception) -> bool:
    """A Chroma error, or an HTTP error from a Chroma server that went away.

    Judged without importing chromadb or httpx: when they are not loaded, nothing of
    theirs can have raised.
    """
    chroma, httpx = sys.modules.get("chromadb.errors"), sys.modules.get("httpx")
    kinds = tuple(k for k in (getattr(chroma, "ChromaError", None),
                              getattr(httpx, "HTTPError", None)) if isinstance(k, type))
    return bool(kinds) and isinstance(exc, kinds)
