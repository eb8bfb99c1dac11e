"""The stores of one index: SQLite tables, and the vectors in their one home.

``idx_<kind>_files`` (every tracked note with size, mtime, inode and content hash, or
the reason it is skipped), ``idx_<kind>_docs`` (one row per indexed text with its hash:
the journal of which vectors must exist), ``idx_<kind>_fts`` (FTS5 over the same texts).
The vectors live, by ``index.chroma.mode``, in ``idx_<kind>_vec`` in state.sqlite,
written in their docs' transaction and searched exactly in memory (embedded, the
default: ``sqlite_vectors.py``), or on a Chroma server, written before that transaction
commits (http: ``chroma_vectors.py``). The stored index is named by kind, model id and
schema version (and the vault, on a server): a model change builds anew; a store that
does not match is reset or healed with a warning, since the index is derived data.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from vaultlink.errors import SearchIndexError
from vaultlink.index.chroma_vectors import Metadata, ServedVectors, chroma_failure
from vaultlink.index.embed import Embedder
from vaultlink.index.fts import FTS_TOKENIZE, fts_ddl, fts_write
from vaultlink.index.store import ensure_dir
from vaultlink.index.words import CUT_VERSION
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State, immediate_transaction

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

    from vaultlink.index.sqlite_vectors import VectorMatrix

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
MOVE_PAGE = 5000  # vectors per page when an embedded index moves to a Chroma server
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
                 server: ClientAPI | Callable[[], ClientAPI] | None, embedder: Embedder,
                 namespace: str = "") -> None:
        """``server``: None to keep the vectors in state.sqlite (embedded), or a Chroma
        server's client (or a function that opens it when first needed) to keep them
        there."""
        self.vault, self.db_path, self.embedder = vault, db_path, embedder
        self._chroma_checked = False
        self._base_name = f"{self.kind}-{embedder.model_id}-v{SCHEMA_VERSION}"
        self.collection_name = self._base_name
        if namespace:  # one Chroma server may serve several vaults
            self.collection_name += f"-{namespace}"
        self._served: ServedVectors | None = None
        if server is not None:
            self._served = ServedVectors(server if callable(server) else lambda: server,
                                         self.collection_name)
        self._lock = threading.RLock()
        self._db = open_state_db(db_path)
        self._files_t, self._docs_t, self._fts_t, self._vec_t = (
            f"idx_{self.kind}_{t}" for t in ("files", "docs", "fts", "vec"))
        self._vectors: VectorMatrix | None = None  # loaded by the first query (embedded)
        try:
            self._create_tables()
        except sqlite3.DatabaseError as exc:
            raise SearchIndexError(f"{db_path} is damaged ({exc}); delete it and run "
                                   "`vaultlink reindex`") from exc
        self._check_tables()

    @property
    def served(self) -> ServedVectors | None:
        """The Chroma server's collection, in http mode; None when embedded."""
        return self._served

    @property
    def chroma_open(self) -> bool:
        """True once this index has opened its collection on a Chroma server."""
        return self._served is not None and self._served.opened

    def _fts_ddl(self) -> str:
        return fts_ddl(self._fts_t, self.fts_columns, self.fts_shown)

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

    def _set_meta(self, db: sqlite3.Connection, **values: str) -> None:
        db.executemany("INSERT OR REPLACE INTO idx_meta VALUES (?, ?)",
                       [(f"{self.kind}.{k}", v) for k, v in values.items()])

    def _count(self, table: str) -> int:
        return int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def _check_tables(self) -> None:
        """At open, from SQLite alone: the index describes this model, these params and
        this home of its vectors; otherwise check (and reset) now. Docs and their vectors
        are written in one transaction, so embedded vectors are all there or none: one
        row is asked for, not counted (docs/performance.md, "Figures behind rules")."""
        if (self._meta(f"{self.kind}.collection") != self.collection_name
                or self._meta(f"{self.kind}.params") != self._params()):
            self._check_consistent()
        elif (self._served is None and self._has_rows(self._docs_t)
              and not self._has_rows(self._vec_t)):
            log.warning("the %s index keeps no vectors in state.sqlite; rebuilding it",
                        self.kind)
            self.reset()

    def _has_rows(self, table: str) -> bool:
        return self._db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None

    def _check_consistent(self) -> None:
        """Reset when the stored state does not describe this index's vectors; on a
        server, heal what the server lost or holds in excess (``_heal``)."""
        stored = self._meta(f"{self.kind}.collection")
        params = self._meta(f"{self.kind}.params")
        same = stored == self.collection_name and params == self._params()
        if self._served is None:
            self._chroma_checked = True
            if same:
                return
            self._say_rebuilt(stored, params)
            self.reset()
            return
        served = self._served
        if (stored == self._base_name and params == self._params()
                and self._count(self._vec_t) == self._count(self._docs_t)):
            self._move_to_server()  # from embedded: the vectors go, nothing is embedded
            return
        if not same:
            self._say_rebuilt(stored, params)
            if stored is not None and stored != self._base_name:
                served.drop(stored)
            self.reset()
            return
        rows, held = self._count(self._docs_t), served.count()
        self._chroma_checked = True
        if rows == held and self._meta(f"{self.kind}.collection_id") == served.collection_id():
            return
        self._heal()

    def _say_rebuilt(self, stored: str | None, params: str | None) -> None:
        if stored is not None and stored != self.collection_name:
            log.warning("the %s index was built with %s; building %s", self.kind, stored,
                        self.collection_name)
        elif stored is not None:
            log.warning("the %s index was built with %s, now %s; rebuilding it", self.kind,
                        params, self._params())

    def out_of_step(self) -> bool:
        """On a Chroma server: True when it holds another number of vectors than the
        journal's docs, or the collection was made anew (a server restarted empty). The
        next sync heals it. Always False embedded."""
        if self._served is None:
            return False
        with self._lock:
            served = self._served
            return (served.count() != self._count(self._docs_t) or served.collection_id()
                    != self._meta(f"{self.kind}.collection_id"))

    def _heal(self) -> None:
        """Bring the server in line with the journal (doc ids and text hashes): vectors
        it holds that no doc wants are deleted; docs whose vector it lacks are dropped
        and their notes marked for reading, so the next sync embeds those texts only."""
        served = self._served
        assert served is not None
        journal = {int(i): str(h) for i, h in self._db.execute(
            f"SELECT id, text_hash FROM {self._docs_t}")}
        held, stale, missing = served.differences(journal)
        log.warning("the Chroma server holds %d of the %d vectors of the %s index (%d "
                    "stale); healing it: %d texts will be embedded again", held - len(stale),
                    len(journal), self.kind, len(stale), len(missing))
        served.delete(stale)
        with self._tx() as db:
            paths = sorted({r[0] for i in missing for r in db.execute(
                f"SELECT path FROM {self._docs_t} WHERE id = ?", (i,))})
            self._delete_docs(db, missing)
            # a size and a hash no file has: the next sync reads these notes again and
            # embeds the texts that lost their docs (the others keep theirs, by text hash)
            db.executemany(f"UPDATE {self._files_t} SET size = -1, hash = '' WHERE path = ?",
                           [(p,) for p in paths])
            self._set_meta(db, collection_id=served.collection_id())

    def _move_to_server(self) -> None:
        """An index built embedded, now served: its vectors go to the server as they
        are (nothing is embedded again), then leave state.sqlite."""
        # numpy: 0.1 s of CPU, paid with chromadb's 0.8 s
        from vaultlink.index.sqlite_vectors import vector_pages

        served = self._served
        assert served is not None
        log.warning("moving the %s index's vectors from state.sqlite to the Chroma server",
                    self.kind)
        served.drop()
        for ids, vectors, labels in vector_pages(self._db, self._vec_t, self._docs_t, MOVE_PAGE):
            served.put(ids, vectors, [self.metadata(path, h) for path, h in labels])
        with self._tx() as db:
            db.execute(f"DELETE FROM {self._vec_t}")
            self._set_meta(db, collection=self.collection_name, params=self._params(),
                           collection_id=served.collection_id())
        self._chroma_checked = True

    def reset(self) -> None:
        """Forget everything indexed; the next sync rebuilds from the vault."""
        with self._lock:
            collection_id = ""
            if self._served is not None:
                self._served.drop()
                collection_id = self._served.collection_id()  # made anew, empty
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
                self._set_meta(db, collection=self.collection_name, params=self._params(),
                               collection_id=collection_id)

    def close(self) -> None:
        """Close the SQLite connection (a Chroma client belongs to the caller)."""
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
            if not chroma_failure(exc):
                raise
            raise SearchIndexError(f"the Chroma collection {self.collection_name} failed: "
                                   f"{exc}; run `vaultlink reindex`") from exc

    def _doc_ids(self, path: str) -> list[int]:
        return [r[0] for r in self._db.execute(
            f"SELECT id FROM {self._docs_t} WHERE path = ? ORDER BY ord", (path,))]

    def _fts_write(self, db: sqlite3.Connection, doc_id: int, doc: Doc,
                   replace: bool = False) -> None:
        fts_write(db, self._fts_t, self.fts_columns, self.fts_shown, doc_id, doc.fts, replace)

    def _fts_shown(self, column: str, alias: str) -> str:
        """SQL for an FTS column's text as written (``fts_shown``), read as ``alias``."""
        return f"coalesce({alias}.{column}_shown, {alias}.{column})"

    def _delete_docs(self, db: sqlite3.Connection, ids: list[int]) -> None:
        """Forget docs: their rows here, and their vectors wherever they live (on a
        server, before the caller's transaction commits)."""
        db.executemany(f"DELETE FROM {self._docs_t} WHERE id = ?", [(i,) for i in ids])
        db.executemany(f"DELETE FROM {self._fts_t} WHERE rowid = ?", [(i,) for i in ids])
        if self._served is not None:
            self._served.delete(ids)
            return
        db.executemany(f"DELETE FROM {self._vec_t} WHERE id = ?", [(i,) for i in ids])
        if self._vectors is not None:
            self._vectors.remove(ids)

    def metadata(self, path: str, text_hash: str) -> Metadata:
        """What a vector carries on a server: its text's hash (the journal's check) and
        what queries filter on (``scope``); subclasses add theirs."""
        return {"h": text_hash}

    def _store_vectors(self, db: sqlite3.Connection, ids: list[int],
                       vectors: list[list[float]], metadatas: list[Metadata]) -> None:
        """Keep new vectors: beside their docs (in the caller's transaction) and in the
        loaded matrix, or on the server before that transaction commits."""
        if self._served is not None:
            self._served.put(ids, vectors, metadatas)
            return
        # numpy: 0.1 s of CPU, which a start with nothing to embed or search never pays
        from vaultlink.index.sqlite_vectors import to_blob

        db.executemany(f"INSERT OR REPLACE INTO {self._vec_t} VALUES (?, ?)",
                       [(i, to_blob(v)) for i, v in zip(ids, vectors, strict=True)])
        if self._vectors is not None:
            self._vectors.add(ids, vectors)

    def _relabel(self, ids: list[int], metadatas: list[Metadata]) -> None:
        """Vectors kept under a moved note: their metadata follows it (on a server)."""
        if self._served is not None:
            self._served.relabel(ids, metadatas)

    def _matrix(self) -> VectorMatrix:
        """Every vector of the index, loaded from SQLite on first use (under the lock)."""
        if self._vectors is None:
            # numpy: 0.1 s of CPU, paid by the first query, not by every start
            from vaultlink.index.sqlite_vectors import VectorMatrix

            matrix = VectorMatrix()
            matrix.load(self._db, self._vec_t)
            self._vectors = matrix
        return self._vectors

    def _nearest(self, vector: list[float], k: int, scope: Metadata, prefix: str
                 ) -> list[tuple[int, float]]:
        """The ``k`` nearest doc ids with their cosine similarity: the server's search
        filtered by ``scope``, or the exact search over the docs under ``prefix``."""
        if self._served is not None:
            return self._served.nearest(vector, k, scope)
        allowed = None
        if prefix:
            allowed = [r[0] for r in self._db.execute(
                f"SELECT id FROM {self._docs_t} WHERE substr(path, 1, ?) = ?",
                (len(prefix), prefix))]
        return self._matrix().search(vector, k, allowed)
