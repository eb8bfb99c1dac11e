"""Keeping an index in line with the vault: notes added, updated, moved and removed.

:class:`IndexBase` is the sync both indexes share (``nodes.NodeIndex``: one entry per
digest node; ``chunks.ChunkIndex``: one per section of every note); ``queries`` answers
their queries; ``tables`` holds their stores. A note whose size, mtime and inode are
unchanged is not read again; everything else is decided by content hash, unreadable
notes kept with the reason. A text whose hash is stored keeps its vector, a changed text
gets a new vector id, and a renamed note moves by updating a path, never by re-embedding.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from vaultlink.errors import NoteNotFound, NoteUnreadable, PathRefused
from vaultlink.index.chroma_vectors import Metadata
from vaultlink.index.tables import Doc, IndexTables
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.faults import crash_point
from vaultlink.vault.notes import Note, parse_note
from vaultlink.vault.paths import normalize_rel

log = logging.getLogger(__name__)

# Texts per embedder call: large enough that length-sorted batching pads little.
EMBED_BATCH = 512

Progress = Callable[[int, int], None]
# path -> (size, mtime_ns, inode, content hash, skip reason) as stored in idx_<kind>_files
_Stored = dict[str, tuple[int, int, int, str, str | None]]


@dataclass
class SyncReport:
    """What one sync changed: vault paths, ``moved`` as (old, new), skipped with reasons."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    embedded: int = 0
    unchanged: int = 0

    @property
    def changed(self) -> bool:
        """True if the index differs from before the sync."""
        return bool(self.added or self.updated or self.removed or self.moved)


@dataclass
class _Change:
    path: str
    stat: os.stat_result
    hash: str
    note: Note
    docs: list[Doc]
    reuse: list[int | None]
    drop: list[int]
    old_path: str | None = None


class IndexBase(IndexTables):
    """The sync shared by the node and chunk indexes (each mixes in ``IndexQueries`` for
    its queries); subclasses say what to index."""

    # -- what to index (subclasses) ---------------------------------------------

    def wants(self, path: str) -> bool:
        """True for vault paths this index covers."""
        raise NotImplementedError

    def _scan(self) -> dict[str, os.stat_result]:
        """Vault paths this index covers, as found on disk now, with their stat."""
        raise NotImplementedError

    def docs_of(self, note: Note) -> list[Doc]:
        """The texts to index for one note."""
        raise NotImplementedError

    def parse(self, path: str, data: bytes) -> Note:
        """The note to index from its bytes; ``NoteUnreadable`` leaves it out."""
        return parse_note(path, data)

    def _indexed(self, db: sqlite3.Connection, change: _Change) -> None:
        """Hook inside the write transaction after a note's docs are stored."""

    def _removed(self, db: sqlite3.Connection, path: str) -> None:
        """Hook inside the write transaction after a note left the index."""

    # -- sync --------------------------------------------------------------------

    def sync(self, progress: Progress | None = None) -> SyncReport:
        """Bring the index in line with the vault: add, update, move and remove notes.

        When no note's stat moved and none vanished, nothing is read (a query's sync
        costs a walk of the folder and one SELECT); on a Chroma server, its count is
        checked against the journal, so a server that lost vectors is healed first."""
        with self._lock:
            stats, stored = self._scan(), self._stored()
            rows: _Stored | None = stored  # 10,000 of them: read once when nothing changed
            if self._served is not None or self._has_work(stats, stored):
                self._guard(self._check_consistent)
                rows = None  # the check may have rebuilt the index: read them again
            return self._guard(lambda: self._sync_paths(stats, None, progress, rows))

    @staticmethod
    def _has_work(stats: dict[str, os.stat_result], stored: _Stored) -> bool:
        return len(stored) != len(stats) or any(
            (old := stored.get(path)) is None or old[:3] != (
                st.st_size, st.st_mtime_ns, st.st_ino) for path, st in stats.items())

    def upsert(self, paths: Iterable[str]) -> SyncReport:
        """Index these notes now (a note just written); missing files are removed."""
        with self._lock:
            wanted = [p for p in (normalize_rel(x) for x in paths) if self.wants(p)]
            if not self._chroma_checked:
                self._guard(self._check_consistent)
            stats = {}
            for path in wanted:
                try:
                    stats[path] = os.stat(self.vault.abs(path))
                except OSError:
                    continue  # gone: removed below
            return self._guard(lambda: self._sync_paths(stats, wanted, None))

    def _stored(self) -> _Stored:
        rows = self._db.execute(
            f"SELECT path, size, mtime_ns, ino, hash, skip FROM {self._files_t}").fetchall()
        return {r[0]: (r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def _sync_paths(self, stats: dict[str, os.stat_result], only: list[str] | None,
                    progress: Progress | None, stored: _Stored | None = None) -> SyncReport:
        """Sync the notes in ``stats``; vanished are the stored ones missing from it
        (among ``only`` when given, else among all). ``stored``: the index's rows, when
        the caller has just read them."""
        report = SyncReport()
        stored = self._stored() if stored is None else stored
        complete = only is None
        vanished = [p for p in (stored if only is None else only)
                    if p in stored and p not in stats]
        candidates: list[str] = []
        for path, st in sorted(stats.items()):
            old = stored.get(path)
            if old is not None and old[:3] == (st.st_size, st.st_mtime_ns, st.st_ino):
                report.unchanged += 1
            else:
                candidates.append(path)
        # A vanished note whose bytes reappear under a new path was moved (renamed).
        by_hash: dict[str, list[str]] = {}
        for path in vanished:
            if stored[path][4] is None and stored[path][3]:
                by_hash.setdefault(stored[path][3], []).append(path)
        moved_from: set[str] = set()
        batch: list[_Change] = []
        pending = done = 0
        if progress:
            progress(0, len(candidates))
        # Streamed: at most one embedding batch of notes is held in memory at a time.
        for path, st, digest, note in self._load(candidates, stats, stored, report):
            twins = by_hash.get(digest) if path not in stored else None
            old_path = twins.pop(0) if twins else None
            if old_path:
                moved_from.add(old_path)
            batch.append(self._plan(path, st, digest, note, old_path))
            pending += sum(1 for r in batch[-1].reuse if r is None)
            if pending >= EMBED_BATCH:
                self._flush(batch, stored, report)
                done, batch, pending = done + len(batch), [], 0
                if progress:
                    progress(done, len(candidates))
        if batch:
            self._flush(batch, stored, report)
        if progress:
            progress(len(candidates), len(candidates))
        self._remove_paths([p for p in vanished if p not in moved_from], report)
        report.skipped.update({p: r for p, r in self._db.execute(
            f"SELECT path, skip FROM {self._files_t} WHERE skip IS NOT NULL")
            if complete or p in stats})
        if report.changed:
            log.info("%s index: %d added, %d updated, %d moved, %d removed, %d embedded",
                     self.kind, len(report.added), len(report.updated), len(report.moved),
                     len(report.removed), report.embedded)
        return report

    def _load(self, paths: list[str], stats: dict[str, os.stat_result], stored: _Stored,
              report: SyncReport) -> Iterator[tuple[str, os.stat_result, str, Note]]:
        """Read the candidates; touch the unchanged, record the unreadable, yield the rest."""
        for path in paths:
            st = stats[path]
            old = stored.get(path)
            digest = ""
            try:
                data = self.vault.read_bytes(path)
                digest = content_hash(data)
                if old is not None and old[3] == digest and old[4] is None:
                    self._touch(path, st)  # same bytes, new mtime: nothing to redo
                    report.unchanged += 1
                    continue
                if not data.strip():
                    raise NoteUnreadable(path, "the note is empty")
                note = self.parse(path, data)
            except NoteNotFound:
                continue  # vanished since the scan; the next sync removes it
            except (NoteUnreadable, PathRefused) as exc:
                reason = exc.reason
                if old is None or old[3] != digest or old[4] != reason:
                    log.info("not indexing %s: %s", path, reason)  # summary and status say it
                self._mark_skipped(path, st, digest, reason)
                continue
            yield path, st, digest, note

    def _touch(self, path: str, st: os.stat_result) -> None:
        self._db.execute(f"UPDATE {self._files_t} SET size=?, mtime_ns=?, ino=? WHERE path=?",
                         (st.st_size, st.st_mtime_ns, st.st_ino, path))

    def _mark_skipped(self, path: str, st: os.stat_result, digest: str, reason: str) -> None:
        with self._tx() as db:
            ids = self._doc_ids(path)
            self._delete_docs(db, ids)
            self._removed(db, path)
            db.execute(f"INSERT OR REPLACE INTO {self._files_t} VALUES (?,?,?,?,?,?,?,?)",
                       (path, st.st_size, st.st_mtime_ns, st.st_ino, digest, reason, "", ""))

    def _plan(self, path: str, st: os.stat_result, digest: str, note: Note,
              old_path: str | None) -> _Change:
        docs = self.docs_of(note)
        rows = self._db.execute(f"SELECT id, text_hash FROM {self._docs_t} WHERE path = ? "
                                "ORDER BY ord", (old_path or path,)).fetchall()
        reuse: list[int | None] = []
        if old_path is not None:  # same bytes under a new name: keep every vector by position
            reuse = [rows[i][0] if i < len(rows) else None for i in range(len(docs))]
        else:
            free: dict[str, list[int]] = {}
            for doc_id, text_hash in rows:
                free.setdefault(text_hash, []).append(doc_id)
            for doc in docs:
                ids = free.get(doc.text_hash)
                reuse.append(ids.pop(0) if ids else None)
        kept = {i for i in reuse if i is not None}
        # A changed text gets a new id, never its old one: Chroma updating a vector in
        # place (upsert of an existing id) left nodes unreachable by its HNSW search
        # (seen embedded; a Chroma server runs the same HNSW)
        # (a node recalled by keywords only, then duplicated); delete and add does not.
        drop = [r[0] for r in rows if r[0] not in kept]
        return _Change(path, st, digest, note, docs, reuse, drop, old_path)

    def _flush(self, batch: list[_Change], stored: _Stored, report: SyncReport) -> None:
        texts = [d.embed_text for c in batch for d, r in zip(c.docs, c.reuse, strict=True)
                 if r is None]
        vectors = iter(self.embedder.embed(texts) if texts else [])
        new_ids: list[int] = []
        new_vectors: list[list[float]] = []
        new_meta: list[Metadata] = []
        moved_ids: list[int] = []
        moved_meta: list[Metadata] = []
        with self._tx() as db:
            for c in batch:
                if c.old_path is not None:
                    db.execute(f"DELETE FROM {self._files_t} WHERE path = ?", (c.old_path,))
                    self._removed(db, c.old_path)
                self._delete_docs(db, c.drop)
                for ord_, doc in enumerate(c.docs):
                    reused = c.reuse[ord_]
                    if reused is not None:
                        db.execute(f"UPDATE {self._docs_t} SET path=?, ord=?, line=? WHERE id=?",
                                   (c.path, ord_, doc.line, reused))
                        if c.old_path is not None:  # breadcrumbs may name the file
                            self._fts_write(db, reused, doc, replace=True)
                            moved_ids.append(reused)
                            moved_meta.append(self.metadata(c.path, doc.text_hash))
                        continue
                    doc_id = int(db.execute(
                        f"INSERT INTO {self._docs_t} (path, ord, line, text_hash) "
                        "VALUES (?,?,?,?)", (c.path, ord_, doc.line, doc.text_hash)
                    ).lastrowid or 0)
                    self._fts_write(db, doc_id, doc)
                    new_ids.append(doc_id)
                    new_vectors.append(next(vectors))
                    new_meta.append(self.metadata(c.path, doc.text_hash))
                db.execute(f"INSERT OR REPLACE INTO {self._files_t} VALUES (?,?,?,?,?,?,?,?)",
                           (c.path, c.stat.st_size, c.stat.st_mtime_ns, c.stat.st_ino, c.hash,
                            None, c.note.name, c.note.description))
                self._indexed(db, c)
                if c.old_path is not None:
                    report.moved.append((c.old_path, c.path))
                elif c.path in stored and stored[c.path][4] is None:
                    report.updated.append(c.path)  # a note that was skipped is new to search
                else:
                    report.added.append(c.path)
            crash_point("mid_index_sync")  # the crash tests aim here: SQLite not committed
            # on a server, written before the commit: a failure rolls the docs back (the
            # notes are read again next time); a crash after it leaves vectors no doc
            # wants, which the next check finds by count and deletes (``_heal``)
            self._store_vectors(db, new_ids, new_vectors, new_meta)
            self._relabel(moved_ids, moved_meta)
        report.embedded += len(texts)

    def _remove_paths(self, paths: list[str], report: SyncReport) -> None:
        known = [p for p in paths if self._db.execute(
            f"SELECT 1 FROM {self._files_t} WHERE path = ?", (p,)).fetchone()]
        if not known:
            return
        with self._tx() as db:
            ids: list[int] = []
            for path in known:
                ids += self._doc_ids(path)
                db.execute(f"DELETE FROM {self._files_t} WHERE path = ?", (path,))
                self._removed(db, path)
            self._delete_docs(db, ids)
        report.removed += known
