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
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from vaultlink.index.base import IndexBase, SyncReport, _Change
from vaultlink.index.dates import (
    DATE_WEIGHT,
    DateSpan,
    DayRange,
    date_spans,
    note_date,
    relative_ranges,
    within,
)
from vaultlink.index.embed import Embedder
from vaultlink.index.fusion import (
    COVERAGE_WEIGHT,
    SEARCH_KEYWORD_WEIGHT,
    SEARCH_VECTOR_WEIGHT,
    by_coverage,
    fuse_ranks,
    window_weight,
)
from vaultlink.index.queries import IndexQueries, Scope
from vaultlink.index.rerank import Reranker, reranked
from vaultlink.index.tables import Doc
from vaultlink.index.words import has_cjk, words_of
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import STOP_WORDS
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
    # digest nodes whose matched lines this passage backs: the node's section was the hit,
    # this section of a note it cites holds what those lines say (``ChunkIndex.search``)
    via: list[str] = field(default_factory=list)


def _name_key(target: str) -> str:
    """What a raw link target and the file it may resolve to have in common: the name."""
    return link_key(target).rsplit("/", 1)[-1]


class ChunkIndex(IndexBase, IndexQueries):
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
        # what "yesterday" or "last week" in a question is relative to (a test sets a day)
        self.today: Callable[[], date] = date.today
        self.reranker: Reranker | None = None  # index.reranker: the first notes read again
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
        """Notes for ``query``, best first, one entry per note: its best section, with
        the note's outlinks and inlinks; only digest nodes with ``digest_only``.

        Sections are ranked by vectors and BM25 fused (``SEARCH_*_WEIGHT``), then each
        note keeps its best one. A digest node's section stands for the note it was
        distilled from: its best-matching paragraph is looked up among the sections of
        the notes the node cites, and the section that holds it (``BACKING_SHARE`` of its
        words) takes the node's place, with the node in ``via``; a node whose lines no
        cited note backs is an entry of its own. No fixed preference for either. The
        notes that hold most of the query's rare words within a few sections in a row
        (``_by_coverage``), and day notes of a date it names (``_by_date``), are ranked
        lists beside that one. A ``reranker`` reads the first notes' sections again.

        Raises SearchIndexError for an empty query; any other text is a valid query.
        """
        scope = Scope({"digest": True}, f"{self.vault.digest}/") if digest_only else None
        crumb, text = self._fts_shown("breadcrumb", "t"), self._fts_shown("text", "t")
        found = self._hit_rows(query, max(limit * SECTIONS_PER_NOTE, 40), self.bm25_weights,
                               (SEARCH_VECTOR_WEIGHT, SEARCH_KEYWORD_WEIGHT),
                               f"SELECT d.id, d.path, d.line, {crumb}, {text} "
                               f"FROM {self._docs_t} d JOIN {self._fts_t} t ON t.rowid = d.id "
                               "WHERE d.id IN ({marks})", scope)
        # A section of open tasks ("- [ ] ...") says what is to be done, not what is
        # known, however well its words match.
        weighed = sorted(((row, score * (TASKS_PRIOR if _only_tasks(row[3]) else 1.0),
                           sim, kw) for row, score, sim, kw in found), key=lambda h: -h[1])
        digest = f"{self.vault.digest}/"
        terms = _word_set(query) - STOP_WORDS
        entries: dict[str, _Entry] = {}
        # a node's lines are looked up among the sections this query found: the section
        # that holds them holds the query's words too, and reading every cited note's
        # sections cost a query too much (docs/performance.md, "Figures behind rules")
        candidates: dict[str, list[tuple[str, int, str, str]]] = {}
        for row, _, _, _ in weighed:
            if not row[0].startswith(digest):
                candidates.setdefault(row[0], []).append(row)
        words: dict[tuple[str, int], frozenset[str]] = {}
        spans: list[DateSpan | DayRange] = [*date_spans(query),
                                            *relative_ranges(query, self.today())]
        for row, score, sim, kw in weighed:  # all: the lists below may lift a later note
            path, via = row[0], ""
            if not digest_only and path.startswith(digest):
                backing = self._backing(path, row[3], terms, candidates, words)
                if backing is not None:
                    via, row, path = path, backing, backing[0]
            if path in entries:
                if via and via not in entries[path][4]:
                    entries[path][4].append(via)
                continue
            entries[path] = (row, score, sim, kw, [via] if via else [])
        ranked = _by_coverage(list(entries.values()), *self._terms_held(query, entries))
        if spans:  # the question names a date: the notes of that date are a ranked list too
            ranked = _by_date(ranked, spans)
        if self.reranker is not None and not digest_only:
            ranked = reranked(query, ranked, lambda e: e[0][3], self.reranker)
        return self._linked_hits(ranked[:limit])

    def _linked_hits(self, ranked: list[_Entry]) -> list[SearchHit]:
        """The entries as hits, each with its note's outlinks and inlinks."""
        links: dict[str, tuple[list[LinkRef], list[LinkRef]]] = {}
        hits = []
        for (path, line, crumb, text), score, sim, kw, vias in ranked:
            if path not in links:
                links[path] = self.links_of(path)
            hits.append(SearchHit(path, score, crumb, text, line, sim, *links[path],
                                  keyword_rank=kw, via=vias))
        return hits

    def _cited(self, node: str) -> list[str]:
        """The notes of daily/ and resource/ a digest node links to, in its order."""
        out: list[str] = []
        with self._lock:
            for (target,) in self._db.execute(
                    "SELECT target FROM idx_links WHERE source = ? ORDER BY rowid", (node,)):
                resolved = self._resolve(target, node)
                if (resolved and resolved not in out and self.wants(resolved)
                        and self.vault.folder_of(resolved) != "digest"):
                    out.append(resolved)
        return out

    def _backing(self, node: str, text: str, terms: frozenset[str],
                 candidates: dict[str, list[tuple[str, int, str, str]]],
                 words: dict[tuple[str, int], frozenset[str]]
                 ) -> tuple[str, int, str, str] | None:
        """The section (path, line, breadcrumb, text) of a note ``node`` cites that holds
        the paragraph of the node's section ``text`` that matches the query ``terms``
        best, among the query's ``candidates`` (by path; their words cached in
        ``words``); None when none holds ``BACKING_SHARE`` of the paragraph's words."""
        cited = [p for p in self._cited(node) if p in candidates]
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        if not cited or not paragraphs:
            return None
        best = max(paragraphs, key=lambda p: len(terms.intersection(_word_set(p))))
        wanted = _word_set(best) - STOP_WORDS
        if not wanted:
            return None
        found, share = None, 0.0
        for path in cited:
            for row in candidates[path]:
                key = (row[0], row[1])
                if key not in words:
                    words[key] = _word_set(row[3])
                held = len(wanted & words[key]) / len(wanted)
                if held > share:
                    found, share = row, held
        return found if share >= BACKING_SHARE else None


def indexed_text(text: str) -> str:
    """A note's text as its sections are indexed and shown: Obsidian's machinery (inline
    fields, navigation lines, query blocks, comments, Templater tags, embeds, block ids)
    left out and callouts unwrapped, line for line (``markdown.obsidian``)."""
    return content_text(text)


# Sections asked for per note wanted: a note of the LoCoMo bench has ~4 sections, and
# one entry per note must still fill the list asked for.
SECTIONS_PER_NOTE = 4
# A cited note's section backs a node's paragraph when it holds this share of the
# paragraph's words (stop words aside). On LoCoMo's tuning half after the offline dream,
# 0.3, 0.5 and 0.7 ranked alike (R@5 0.838-0.839): the offline integrator copies
# sentences; a model's paraphrase keeps its names and nouns.
BACKING_SHARE = 0.5
# No prior for digest nodes over notes (it was 1.1): with a node's section standing for
# the note that backs it, the digest no longer fills the top places (issue 39).
TASKS_PRIOR = 0.6
_TASK = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s")


_WORD = re.compile(r"[^\W_]+")


# Texts whose word sets are kept between queries (a daemon asks query after query of the
# same sections): ~10 KB each at most.
WORD_SETS_KEPT = 2048
_word_sets: dict[str, frozenset[str]] = {}


def _word_set(text: str) -> frozenset[str]:
    """The distinct lower-cased words of ``text``, to tell which passage holds which
    lines: the index's own cut (``words_of``) for CJK, a plain split otherwise (3x
    faster, and only compared with itself); the last ``WORD_SETS_KEPT`` texts' kept."""
    found = _word_sets.get(text)
    if found is None:
        found = frozenset(words_of(text) if has_cjk(text) else _WORD.findall(text.lower()))
        if len(_word_sets) >= WORD_SETS_KEPT:
            _word_sets.clear()
        _word_sets[text] = found
    return found


_Entry = tuple[tuple[str, int, str, str], float, float, int, list[str]]


def _by_coverage(entries: list[_Entry], held: dict[str, list[set[str]]],
                 weights: dict[str, float]) -> list[_Entry]:
    """``entries`` (best first) fused by rank with those of them whose note holds the
    query's rare words within a few sections in a row (``held``: path -> each section's
    terms), most of their weight first, that list weighing ``COVERAGE_WEIGHT``."""
    weight = {i: window_weight(held.get(e[0][0], []), weights) for i, e in enumerate(entries)}
    order = by_coverage(range(len(entries)), weight)
    if not order:
        return entries
    lists = [(list(range(len(entries))), 1.0), (order, COVERAGE_WEIGHT)]
    return [entries[i] for i, _ in fuse_ranks(lists)]


def _by_date(entries: list[_Entry], spans: list[DateSpan | DayRange]) -> list[_Entry]:
    """``entries`` (best first) fused by rank with those of them whose note's date is in
    ``spans`` (``dates.within``), that list weighing ``DATE_WEIGHT``; each keeps its
    score. On LoCoMo's tuning half (12% of the questions name a month, a day or a year)
    R@5 rose 0.834 -> 0.853, temporal questions 0.904 -> 0.942."""
    dated = [i for i, e in enumerate(entries)
             if (day := note_date(e[0][0])) is not None and within(day, spans)]
    if not dated:
        return entries
    lists = [(list(range(len(entries))), 1.0), (dated, DATE_WEIGHT)]
    return [entries[i] for i, _ in fuse_ranks(lists)]


def _only_tasks(text: str) -> bool:
    """True for a section whose lines (its heading aside) are all task items."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and all(_TASK.match(ln) for ln in lines)


__all__ = ["ChunkIndex", "LinkRef", "SearchHit", "SyncReport"]
