"""The digest-node index behind ``node_search``: what integration recalls from."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultlink.errors import BrokenFrontmatter
from vaultlink.index.base import IndexBase
from vaultlink.index.embed import Embedder
from vaultlink.index.fusion import fuse_ranks
from vaultlink.index.mentions import NameTable, name_phrase, subject_of
from vaultlink.index.queries import IndexQueries, Scope
from vaultlink.index.tables import Doc
from vaultlink.markdown.sections import without_sources
from vaultlink.vault.notes import Note, Vault, body_only_note, parse_note, walk_notes

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

log = logging.getLogger(__name__)

# Vector and keyword ranks count alike in node_search (the origin weighs them 0.7 /
# 0.3): on the real-document benchmark, with the body read by BM25, equal weights took
# recall@20 from 0.922 to 0.949, @5 from 0.471 to 0.523; the sample vault's stayed 0.99.
NODE_FUSION = (0.5, 0.5)
# The weights of the two name lists (``mentions``): the nodes whose name or text names
# the query's subject, and the nodes the best match names. Counted like the other two, they
# took linkdocs' recall@20 from 0.671 to 0.815 (half as much: 0.761); see
# docs/performance.md for the weights tried.
NAME_FUSION = (0.5, 0.5)


@dataclass(frozen=True)
class NodeHit:
    """A digest node found by ``node_search``; ``similarity`` is 0.0 for keyword-only hits,
    ``keyword_rank`` its rank in the BM25 list (0: no keyword matched it)."""

    path: str
    score: float
    name: str
    description: str
    similarity: float
    keyword_rank: int = 0


class NodeIndex(IndexBase, IndexQueries):
    """Digest nodes (``digest/<bucket>/*.md``, not ``digest/topics/``) by name, description
    and the opening ``body_chars`` characters of the body without its ``## Sources``;
    answers ``node_search``."""

    kind = "nodes"
    fts_columns = ("name", "description", "body")
    bm25_weights = (3.0, 2.0, 1.0)  # a word in the name says more than one in the body
    # Keyword recall and recall by name read this much of the body; the vector,
    # ``body_chars`` of it. On realdocs the whole body for BM25 took recall@20 from 0.903
    # to 0.922 (@10 0.660 to 0.741); on linkdocs, whose pages end in "See also" lists
    # past 10,000 characters, going from 10,000 to all of it took 0.649 to 0.671.
    keyword_body_chars = 100_000

    def __init__(self, vault: Vault, db_path: Path,
                 server: ClientAPI | Callable[[], ClientAPI] | None,
                 embedder: Embedder, body_chars: int = 1000, namespace: str = "") -> None:
        """``server``: None to keep the vectors in state.sqlite, or a Chroma server's
        client (see ``tables.IndexTables``)."""
        self.body_chars = body_chars
        self._name_table: NameTable | None = None  # built by the first query after a write
        super().__init__(vault, db_path, server, embedder, namespace)

    def wants(self, path: str) -> bool:
        """Exactly ``digest/<bucket>/<slug>.md`` with a bucket other than ``topics``."""
        parts = path.split("/")
        return (len(parts) == 3 and parts[0] == self.vault.digest and parts[1] != "topics"
                and parts[2].endswith(".md"))

    def _scan(self) -> dict[str, os.stat_result]:
        return walk_notes(self.vault, [self.vault.digest], self.wants)

    def params(self) -> str:
        """What shapes every embedded text; an index built otherwise is rebuilt."""
        return (f"body_chars={self.body_chars} keyword_body_chars={self.keyword_body_chars} "
                "without sources (broken YAML by body)")

    def parse(self, path: str, data: bytes) -> Note:
        """A node whose YAML broke is still recalled by its body: dropped from recall, it
        would be created again as a duplicate by the next unit on its subject. Writes to
        it go through the tools, which read it strictly and report the broken block."""
        try:
            return parse_note(path, data)
        except BrokenFrontmatter as exc:
            log.warning("recalling %s by its body only: %s", path, exc.reason)
            return body_only_note(path, data)

    def docs_of(self, note: Note) -> list[Doc]:
        """One text: name, description and the opening of the body (keyword recall reads
        more of the body than the vector).

        The ``## Sources`` list says where a claim came from, not what it is: it would
        only blur recall, and without it a CORROBORATE (a new source sentence) keeps
        the stored vector instead of costing an embedding.
        """
        body = without_sources(note.body).strip()
        opening = body[:self.body_chars]
        text = f"{note.name}\n{note.description}\n{opening}".strip()
        return [Doc(text, (note.name, note.description, body[:self.keyword_body_chars]))]

    # Any write may add, rename or drop a name: the table is read again at the next query.
    def _indexed(self, db: sqlite3.Connection, change: Any) -> None:
        self._name_table = None

    def _removed(self, db: sqlite3.Connection, path: str) -> None:
        self._name_table = None

    def _names(self) -> NameTable:
        """Every node's name, read once after each change (under the lock)."""
        if self._name_table is None:
            self._name_table = NameTable(self._db.execute(
                f"SELECT d.id, f.name FROM {self._docs_t} d "
                f"JOIN {self._files_t} f ON f.path = d.path"))
        return self._name_table

    def _more_lists(self, text: str, lists: list[tuple[list[int], float]], depth: int,
                    prefix: str = "") -> list[tuple[list[int], float]]:
        """Recall by name (``mentions``): the nodes whose name or text names the query's
        subject as a phrase (the node of that name first), and the nodes named in the
        text of the node of the subject's name, or of the best match so far if none."""
        more: list[tuple[list[int], float]] = []
        subject = subject_of(text)
        if subject and self._terms.phrase_too_common(subject):
            # a large index, and every word of the subject a stop word at its size:
            # scoring the phrase costs a query's time, and BM25 left those words out
            # too. The node of that name is still found, by its name; the nodes that
            # mention it are not.
            more.append((self._names().of_name(subject)[:depth], NAME_FUSION[0]))
        elif subject:  # quoted words only (``name_phrase``): cannot be an FTS5 error
            more.append((self._keyword_ids(name_phrase(subject), self.bm25_weights, depth,
                                           prefix),
                         NAME_FUSION[0]))
        fused = [doc for doc, _ in fuse_ranks(lists + more)]
        # The node the subject names is the one the query is about, wherever meaning and
        # words rank it: its links lead to the neighbours. Otherwise the best match is.
        # (A title whose words are shared by its set, "Hook API 索引: Hook 是 React 16.8
        # 的新增特性" among the Hook pages, ranks a sibling first in the vector and BM25
        # lists, and the sibling's links are not the page's.)
        own = self._names().of_name(subject) if subject else []
        if prefix and own:
            allowed = self._ids_under(prefix)
            own = [doc for doc in own if doc in allowed]
        top = next((doc for doc in fused if doc in own), own[0] if own else
                   fused[0] if fused else None)
        if top is not None:
            row = self._db.execute(f"SELECT description, body FROM {self._fts_t} "
                                   "WHERE rowid = ?", (top,)).fetchone()
            if row is not None:
                # led by that node itself, so that a node it names never passes it
                named = self._names().named_in(f"{row[0]}\n{row[1]}", skip={top},
                                               limit=depth - 1)
                more.append(([top, *named][:depth], NAME_FUSION[1]))
        return more

    def metadata(self, path: str, text_hash: str) -> dict[str, str | bool]:
        """On a Chroma server a node's vector carries its bucket, for ``bucket=``."""
        return {"h": text_hash, "bucket": path.split("/")[1]}

    def node_search(self, query: str, limit: int = 20,
                    bucket: str | None = None) -> list[NodeHit]:
        """Digest nodes for ``query``, best first, fused from vector, BM25 and name recall;
        only the nodes of ``bucket`` (``digest/<bucket>/``) when given.

        Raises SearchIndexError for an empty query; any other text is a valid query.
        """
        scope = None
        if bucket:
            scope = Scope({"bucket": bucket}, f"{self.vault.digest}/{bucket}/")
        found = self._hit_rows(query, limit, self.bm25_weights, NODE_FUSION,
                               f"SELECT d.id, d.path, f.name, f.description FROM {self._docs_t} d "
                               f"JOIN {self._files_t} f ON f.path = d.path "
                               "WHERE d.id IN ({marks})", scope)
        return [NodeHit(path, score, name, description, sim, kw)
                for (path, name, description), score, sim, kw in found]
