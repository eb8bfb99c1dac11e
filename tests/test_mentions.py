"""Recall by name: the subject a query names, the nodes a text names, and how
``node_search`` fuses both with vector and keyword recall.

Pure parts first; then a real NodeIndex (MiniLM, SQLite FTS5, Chroma in tmp_path).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.vaults import node_text
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.mentions import NameTable, name_phrase, name_words, subject_of
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.words import words_of
from vaultlink.vault.notes import Vault

# -- pure parts -----------------------------------------------------------------


@pytest.mark.parametrize(("query", "subject"), [
    ("npm ci: Clean install a project", ("npm", "ci")),
    ("hybrid search. Fuse BM25 with vectors.", ("hybrid", "search")),
    ("Postgres autovacuum", ("postgres", "autovacuum")),
    ("pyproject.toml settings: the build table", ("pyproject", "toml", "settings")),
    ("Deploy to staging\nRun the pipeline", ("deploy", "to", "staging")),
])
def test_the_subject_is_the_words_before_the_first_colon_full_stop_or_line(
        query: str, subject: tuple[str, ...]) -> None:
    assert subject_of(query) == subject


@pytest.mark.parametrize("query", [
    "how do I combine keyword and semantic retrieval across many notes in the vault",
    "the: a lone stop word names nothing",
    ": nothing before the colon",
])
def test_a_sentence_or_a_stop_word_is_no_subject(query: str) -> None:
    assert subject_of(query) == ()


def test_named_in_finds_whole_word_names_in_order_of_first_mention() -> None:
    table = NameTable([(1, "Hybrid search"), (2, "Postgres autovacuum"), (3, "Search"),
                       (4, "About"), (5, "Rank fusion"), (6, "Postgres autovacuum")])
    text = "Tune postgres AUTOVACUUM first; hybrid-search uses rank fusion. Research it."
    # 2 and 6 share a name; "search" inside "research" is no mention; "About" is a
    # stop word alone and is never found; 3 is named inside "hybrid-search".
    assert table.named_in(text) == [2, 6, 1, 3, 5]
    assert table.named_in(text, skip={2, 1}) == [6, 3, 5]
    assert table.named_in("nothing here") == []
    assert len(table) == 5
    # the first ``limit`` of the same list (node_search reads no more than its depth)
    assert table.named_in(text, limit=3) == [2, 6, 1]
    assert table.named_in(text, skip={2}, limit=1) == [6]


def test_a_wikilink_names_its_node_by_its_slug() -> None:
    table = NameTable([(7, "Hybrid search")])
    assert table.named_in("See [[digest/wiki/hybrid-search|the fusion note]].") == [7]


def test_words_of_split_on_punctuation_and_fold_case() -> None:
    assert words_of("Node.js `fs/promises` API_v2") == ("node", "js", "fs", "promises",
                                                         "api", "v2")


# -- node_search ------------------------------------------------------------------


# A node the query's words and meaning do not reach, named in the body of the node
# that the query is about, and distractors that share the query's words.
NODES = {
    "digest/wiki/table-bloat.md": node_text(
        "Table bloat", "Dead rows pile up in busy tables and slow every scan.",
        "The cure is Fillfactor tuning, and a nightly run of pg repack."),
    "digest/wiki/fillfactor-tuning.md": node_text(
        "Fillfactor tuning", "Leave free space in each page so updates stay local.",
        "Seventy percent suits tables that change all day."),
    "digest/wiki/pg-repack.md": node_text(
        "pg repack", "Rewrites a relation online without an exclusive lock.",
        "It needs twice the space of the relation while it works."),
    **{f"digest/wiki/busy-{i}.md": node_text(
        f"Busy tables {i}", f"Rows in busy tables number {i}, and scans of dead rows.",
        "Rows, tables, scans and rows again.") for i in range(6)},
}


@pytest.fixture
def index(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[NodeIndex]:
    root = tmp_path / "vault"
    for rel, text in NODES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    vault = Vault(root)
    idx = NodeIndex(vault, vault.state_dir / "state.sqlite", None, minilm)
    idx.sync()
    yield idx
    idx.close()


QUERY = "Table bloat: dead rows pile up in busy tables"


def test_node_search_recalls_the_nodes_its_best_match_names(index: NodeIndex) -> None:
    paths = [h.path for h in index.node_search(QUERY, limit=len(NODES))]
    # Neither named node shares a word with the query, and six nodes do; by meaning
    # and words alone pg-repack (similarity 0.08) comes last.
    assert paths[:2] == ["digest/wiki/table-bloat.md", "digest/wiki/fillfactor-tuning.md"]
    assert paths.index("digest/wiki/pg-repack.md") < len(NODES) - 1


def test_a_node_written_after_a_search_is_named_at_the_next(index: NodeIndex) -> None:
    index.node_search(QUERY, limit=4)  # the name table is built here
    named, other = "digest/wiki/nightly-run.md", "digest/wiki/vacuum-cost.md"
    # the body of table-bloat names "nightly run"; the other node is closer in words
    texts = {named: node_text("Nightly run", "Cron at three.", "Quiet hours only."),
             other: node_text("Vacuum cost", "Dead rows cost a scan.", "Rows in busy tables.")}
    for rel, text in texts.items():
        index.vault.abs(rel).write_text(text, encoding="utf-8")
    index.upsert(list(texts))
    paths = [h.path for h in index.node_search(QUERY, limit=20)]
    assert paths.index(named) < paths.index(other)
    index.vault.abs(named).unlink()
    index.upsert([named])
    assert named not in [h.path for h in index.node_search(QUERY, limit=20)]


def test_the_subject_as_a_phrase_puts_its_node_first_then_the_nodes_naming_it(
        tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    root = tmp_path / "vault"
    texts = {
        "digest/wiki/rank-fusion.md": node_text("Rank fusion", "Merging ranked lists.", "x"),
        "digest/wiki/scattered.md": node_text(
            "Merging ranked result lists", "Fusion of rankings, so every rank list becomes one.",
            "Rank lists merge by fusion; each rank counts."),
        "digest/wiki/cites-it.md": node_text(
            "Hybrid search", "Two retrievers, one list.",
            "It merges the lists with rank fusion, as the paper describes."),
    }
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    vault = Vault(root)
    idx = NodeIndex(vault, vault.state_dir / "state.sqlite",
                    None, minilm)
    try:
        idx.sync()
        paths = [h.path for h in idx.node_search("rank fusion: merge ranked lists", limit=3)]
    finally:
        idx.close()
    # the node of that name first, then the one that names it, though the scattered
    # words are closer in meaning (0.82 against 0.64) and in BM25
    assert paths == ["digest/wiki/rank-fusion.md", "digest/wiki/cites-it.md",
                     "digest/wiki/scattered.md"]


def test_of_name_gives_the_nodes_of_exactly_that_name() -> None:
    table = NameTable([(1, "Hook API 索引"), (2, "Hook"), (3, "About"), (4, "Hook")])
    assert table.of_name(subject_of("Hook API 索引: Hook 是 React 16.8 的新增特性。")) == [1]
    assert table.of_name(("hook",)) == [2, 4]
    assert table.of_name(("hook", "api")) == []  # a part of a name is not the name
    assert table.of_name(("about",)) == []  # a stop word alone names nothing


def test_the_links_followed_are_the_named_nodes_though_a_sibling_ranks_first(
        index: NodeIndex) -> None:
    ids = {path: doc for doc, path in index._db.execute(
        f"SELECT id, path FROM {index._docs_t}")}
    sibling = ids["digest/wiki/busy-0.md"]
    # As when a title's words and description are shared by its set ("Hook API 索引:
    # Hook 是 React 16.8 的新增特性" among the Hook pages): meaning and words rank a
    # sibling first. The query is still about the node its subject names, and the
    # nodes that node names are its neighbours; the sibling names none.
    lists = [([sibling], 0.5), ([sibling], 0.5)]
    with index._lock:
        more = index._more_lists(QUERY, lists, 50)
    assert more[-1][0] == [ids["digest/wiki/table-bloat.md"],
                           ids["digest/wiki/fillfactor-tuning.md"],
                           ids["digest/wiki/pg-repack.md"]]


# -- names in their other forms ---------------------------------------------------


def test_a_russian_name_is_found_in_its_inflected_forms() -> None:
    table = NameTable([(1, "Компоненты высшего порядка"), (2, "Контекст"), (3, "Формы")])
    # genitive plural, genitive singular; "формат" shares letters, not the stem
    text = "Обёртка из компонентов высшего порядка читает значение контекста и формат."
    assert table.named_in(text) == [1, 2]
    subject = subject_of("Компоненты высшего порядка: это функция")
    assert subject == ("компонент", "высш", "порядк")
    assert name_phrase(subject) == '"компонент" * + "высш" * + "порядк" *'


def test_words_of_other_scripts_are_compared_as_written() -> None:
    # English is stemmed by FTS5's porter as it is indexed; Latin does not tell its
    # language, and CJK words are pairs of characters or UniDic's words
    for text in ("Rendering Elements", "Hook API 索引", "フックのルール", "Hook의 규칙"):
        assert name_words(text) == words_of(text)
    assert name_phrase(("hook", "api", "索引")) == '"hook" + "api" + "索引"'


def test_the_subject_phrase_finds_the_nodes_that_name_it_inflected(
        tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    root = tmp_path / "vault"
    texts = {
        "digest/wiki/kontekst.md": node_text("Контекст", "Передаёт данные через дерево.", "x"),
        "digest/wiki/formy.md": node_text(
            "Формы", "Поля ввода и их состояние.",
            "Значение темы приходит из контекста, а не через пропсы."),
        "digest/wiki/drugoe.md": node_text("Списки", "Ключи элементов.", "Ничего общего."),
    }
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    vault = Vault(root)
    idx = NodeIndex(vault, vault.state_dir / "state.sqlite", None, minilm)
    try:
        idx.sync()
        ids = {path: doc for doc, path in idx._db.execute(
            f"SELECT id, path FROM {idx._docs_t}")}
        with idx._lock:
            more = idx._more_lists("Контекст: передаёт данные", [([], 0.5)], 50)
    finally:
        idx.close()
    # the node of that name, then the one whose text says "контекста"
    assert more[0][0] == [ids["digest/wiki/kontekst.md"], ids["digest/wiki/formy.md"]]
