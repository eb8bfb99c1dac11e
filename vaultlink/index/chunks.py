"""Memory search: sections of every note, hybrid recall, then link expansion.

:class:`ChunkIndex` indexes every note of ``daily/``, ``resource/`` and ``digest/`` as
chunks along its heading tree (``markdown.chunk_note``: a section per chunk, with its
breadcrumb), in the same vectors + FTS5 + RRF machinery as the node index. Each hit is
expanded with up to 10 outlinks and 10 inlinks of its file, named and described.

Links are kept in SQLite (``idx_links``: source, raw target, lookup key), updated as
notes are synced, so a query never re-parses the vault. Targets are resolved at query
time with Obsidian's rules against the vault's current file list, so a note created
later makes older links resolve without re-indexing the notes that hold them.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vaultlink.index.base import IndexBase, Scope, SyncReport, _Change
from vaultlink.index.embed import Embedder
from vaultlink.index.fusion import KEYWORD_WEIGHT, VECTOR_WEIGHT
from vaultlink.index.tables import Doc
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import LinkResolver, find_wikilinks, link_key
from vaultlink.markdown.obsidian import CONTENT_RULES, content_text
from vaultlink.markdown.sections import chunk_note, find_sources_section
from vaultlink.vault.notes import Note, Vault, walk_notes

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

log = logging.getLogger(__name__)

MAX_LINKS = 10


@dataclass(frozen=True)
class LinkRef:
    """A note linked from or to a hit: its path, name and description."""

    path: str
    name: str
    description: str


@dataclass(frozen=True)
class SearchHit:
    """A chunk found by ``search``: where it is, its text, and its file's neighbours."""

    path: str
    score: float
    breadcrumb: str
    text: str
    line: int
    similarity: float
    outlinks: list[LinkRef] = field(default_factory=list)
    inlinks: list[LinkRef] = field(default_factory=list)
    keyword_rank: int = 0  # its rank in the BM25 list (0: no keyword matched it)


def _name_key(target: str) -> str:
    """What a raw link target and the file it may resolve to have in common: the name."""
    return link_key(target).rsplit("/", 1)[-1]


class ChunkIndex(IndexBase):
    """Sections of every note in daily/, resource/ and digest/; answers ``search``."""

    kind = "chunks"
    fts_columns = ("breadcrumb", "text")
    fts_shown = True  # a hit shows its section as written, not its CJK search form
    bm25_weights = (1.0, 1.0)

    def __init__(self, vault: Vault, db_path: Path,
                 server: ClientAPI | Callable[[], ClientAPI] | None,
                 embedder: Embedder, max_chars: int = 1200, namespace: str = "") -> None:
        """``server``: None to keep the vectors in state.sqlite, or a Chroma server's
        client (see ``tables.IndexTables``)."""
        self.max_chars = max_chars
        self._all_files: frozenset[str] | None = None
        self._resolver: LinkResolver | None = None
        super().__init__(vault, db_path, server, embedder, namespace)

    def _create_tables(self) -> None:
        super()._create_tables()
        self._db.executescript("""
            CREATE TABLE IF NOT EXISTS idx_links (source TEXT NOT NULL, target TEXT NOT NULL,
                key TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS idx_links_source ON idx_links(source);
            CREATE INDEX IF NOT EXISTS idx_links_key ON idx_links(key);
        """)

    def _tables(self) -> list[str]:
        return [*super()._tables(), "idx_links"]

    def params(self) -> str:
        """The chunk size and what a chunk holds decide every chunk: an index built
        before empty headings, Sources lines and Obsidian's machinery were left out is
        rebuilt."""
        return f"max_chars={self.max_chars} content-only obsidian={CONTENT_RULES}"

    def wants(self, path: str) -> bool:
        """Markdown notes below the daily, resource and digest folders, except the day's
        topics: their sentences quote the notes and, short, outranked the originals."""
        return (path.endswith(".md") and self.vault.folder_of(path) is not None
                and not path.startswith(f"{self.vault.digest}/topics/"))

    def _scan(self) -> dict[str, os.stat_result]:
        seen: set[str] = set()  # link targets may be any file of the vault
        stats = walk_notes(self.vault, None, self.wants, seen)
        files = frozenset(seen)
        if files != self._all_files:
            self._all_files, self._resolver = files, None
        return stats

    def docs_of(self, note: Note) -> list[Doc]:
        """A doc per chunk; its line is the chunk's first line in the file."""
        _, body, offset = split_frontmatter(indexed_text(note.text))
        if self.vault.folder_of(note.path) == "digest":
            # a node's Sources lines repeat the notes it cites: the notes answer, not them
            sources = find_sources_section(body)
            body = "\n".join(body.split("\n")[:sources.start]) if sources else body
        return [Doc(f"{c.breadcrumb}\n\n{c.text}", (c.breadcrumb, c.text), c.line + offset)
                for c in chunk_note(body, note.name, self.max_chars)]

    def _indexed(self, db: sqlite3.Connection, change: _Change) -> None:
        db.execute("DELETE FROM idx_links WHERE source = ?", (change.path,))
        db.executemany("INSERT INTO idx_links VALUES (?, ?, ?)",
                       [(change.path, link.target, _name_key(link.target))
                        for link in find_wikilinks(change.note.text) if link.target])
        if self._all_files is not None and change.path not in self._all_files:
            self._all_files, self._resolver = self._all_files | {change.path}, None

    def _removed(self, db: sqlite3.Connection, path: str) -> None:
        db.execute("DELETE FROM idx_links WHERE source = ?", (path,))
        if self._all_files is not None and path in self._all_files:
            self._all_files, self._resolver = self._all_files - {path}, None

    # -- query -------------------------------------------------------------------

    def _resolve(self, target: str, source: str) -> str | None:
        if self._resolver is None:
            if self._all_files is None:  # searched before any sync: what the index knows
                self._all_files = frozenset(r[0] for r in self._db.execute(
                    f"SELECT path FROM {self._files_t}"))
            self._resolver = LinkResolver(self._all_files)
        return self._resolver.resolve(target, source).path

    def _refs(self, paths: list[str]) -> list[LinkRef]:
        marks = ",".join("?" * len(paths))
        known = {r[0]: (r[1], r[2]) for r in self._db.execute(
            f"SELECT path, name, description FROM {self._files_t} WHERE path IN ({marks})",
            paths)}
        return [LinkRef(p, *(known.get(p) or (p.rsplit("/", 1)[-1].removesuffix(".md"), "")))
                for p in paths]

    def links_of(self, path: str) -> tuple[list[LinkRef], list[LinkRef]]:
        """Up to 10 outlinks (in note order) and 10 inlinks (by path) of a note."""
        with self._lock:
            out: list[str] = []
            for (target,) in self._db.execute(
                    "SELECT target FROM idx_links WHERE source = ? ORDER BY rowid", (path,)):
                resolved = self._resolve(target, path)
                if resolved and resolved != path and resolved not in out:
                    out.append(resolved)
                    if len(out) == MAX_LINKS:
                        break
            key = _name_key(path)
            sources = sorted({source for source, target in self._db.execute(
                "SELECT source, target FROM idx_links WHERE key = ?", (key,))
                if source != path and self._resolve(target, source) == path})
            return self._refs(out), self._refs(sources[:MAX_LINKS])

    def metadata(self, path: str, text_hash: str) -> dict[str, str | bool]:
        """On a Chroma server a section's vector says whether it is of a digest node,
        for ``digest_only``."""
        return {"h": text_hash, "digest": path.startswith(f"{self.vault.digest}/")}

    def search(self, query: str, limit: int = 10, digest_only: bool = False
               ) -> list[SearchHit]:
        """Chunks for ``query``, best first, each with its file's outlinks and inlinks;
        only sections of digest nodes with ``digest_only``.

        Raises SearchIndexError for an empty query; any other text is a valid query.
        """
        scope = Scope({"digest": True}, f"{self.vault.digest}/") if digest_only else None
        crumb, text = self._fts_shown("breadcrumb", "t"), self._fts_shown("text", "t")
        found = self._hit_rows(query, max(limit * 2, 20), self.bm25_weights,
                               (VECTOR_WEIGHT, KEYWORD_WEIGHT),
                               f"SELECT d.id, d.path, d.line, {crumb}, {text} "
                               f"FROM {self._docs_t} d JOIN {self._fts_t} t ON t.rowid = d.id "
                               "WHERE d.id IN ({marks})", scope)
        # Two priors on top of the fused rank, for questions: a digest node holds what
        # was distilled from the notes, with its sources, so on a near tie it answers
        # better than a raw note; a section of open tasks ("- [ ] ...") says what is to
        # be done, not what is known, however well its words match.
        digest = f"{self.vault.digest}/"
        weighed = sorted(((row, score * (DIGEST_PRIOR if row[0].startswith(digest) else 1.0)
                           * (TASKS_PRIOR if _only_tasks(row[3]) else 1.0), sim, kw)
                          for row, score, sim, kw in found), key=lambda h: -h[1])[:limit]
        links: dict[str, tuple[list[LinkRef], list[LinkRef]]] = {}
        hits = []
        for (path, line, crumb, text), score, sim, kw in weighed:
            if path not in links:
                links[path] = self.links_of(path)
            hits.append(SearchHit(path, score, crumb, text, line, sim, *links[path],
                                  keyword_rank=kw))
        return hits


def indexed_text(text: str) -> str:
    """A note's text as its sections are indexed and shown: Obsidian's machinery (inline
    fields, navigation lines, query blocks, comments, Templater tags, embeds, block ids)
    left out and callouts unwrapped, line for line (``markdown.obsidian``)."""
    return content_text(text)


DIGEST_PRIOR = 1.1
TASKS_PRIOR = 0.6
_TASK = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s")


def _only_tasks(text: str) -> bool:
    """True for a section whose lines (its heading aside) are all task items."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and all(_TASK.match(ln) for ln in lines)


__all__ = ["ChunkIndex", "LinkRef", "SearchHit", "SyncReport"]
