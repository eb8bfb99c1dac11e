"""Keyword search and recall by name in Chinese, Japanese and Korean.

FTS5's unicode61 tokenizer kept a whole run of CJK letters as one token, so a word
inside a sentence was found neither by BM25 nor by the subject phrase. ``words`` cuts
such runs into pairs of characters for the index, the query, the phrase and the name
table alike. Pure parts first; then real NodeIndex and ChunkIndex (SQLite FTS5, Chroma
in tmp_path) with a rule embedder, so that only keywords and names can find the node.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.vaults import node_text, write_note
from vaultlink.index.chunks import ChunkIndex
from vaultlink.index.fusion import fts_match
from vaultlink.index.mentions import NameTable, subject_of
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.words import search_text, words_of
from vaultlink.vault.notes import Vault

# -- pure parts -----------------------------------------------------------------


def test_a_cjk_run_is_cut_into_overlapping_pairs() -> None:
    assert words_of("使用数据库索引") == ("使用", "用数", "数据", "据库", "库索", "索引")
    # Han alone is pairs even when a Japanese reader sees one word: a Han query is cut
    # alike in a Chinese and a Japanese vault
    assert words_of("東京都庁") == ("東京", "京都", "都庁")
    # Korean words stand apart; each is cut, so a word is found without its particle
    assert words_of("데이터베이스를 씁니다") == ("데이", "이터", "터베", "베이", "이스", "스를",
                                              "씁니", "니다")
    assert words_of("锁") == ("锁",)
    # Latin letters touching CJK ones are their own word, as in "API接口"
    assert words_of("用Node.js的API接口") == ("用", "node", "js", "的", "api", "接口")
    # punctuation inside the CJK blocks separates, as in unicode61
    assert words_of("ア・イ。ウ") == ("ア", "イ", "ウ")


def test_a_run_with_kana_is_cut_into_its_words_without_particles() -> None:
    """Japanese glues particles and endings onto words, so pairs straddle every word's
    end; UniDic's words, less the grammar words every text has, are what a query asks."""
    assert words_of("データベースを") == ("データベース",)
    assert words_of("この機能はデータベースの索引を使います") == (
        "この", "機能", "データベース", "索引", "使い")
    assert words_of("useStateフックを使う") == ("usestate", "フック", "使う")
    assert words_of("のを") == ("の",)  # nothing but grammar: kept rather than lost


def test_text_without_cjk_is_indexed_and_cut_exactly_as_before() -> None:
    text = "Größe: Node.js `fs/promises` API_v2 — café"
    assert search_text(text) is text
    assert words_of(text) == ("größe", "node", "js", "fs", "promises", "api", "v2", "café")


@pytest.mark.parametrize("text", [
    "我们在数据库里建立索引，查询就快了。",
    "この機能はデータベースの索引を使います。東京都庁",
    "우리는 데이터베이스를 매일 백업합니다.",
    "Mixed 混合テキスト with 한국어 and API接口, 々〆 ｶﾀｶﾅ ア・イ 𠀋𠀌",
    "Plain English, with hyphen-words and snake_case.",
])
def test_fts5_finds_in_the_indexed_text_the_words_the_query_is_cut_into(text: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 0')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t VALUES (?)", (search_text(text),))
    tokens = tuple(r[0] for r in db.execute("SELECT term FROM v ORDER BY offset"))
    assert tokens == words_of(text)
    assert words_of(search_text(text)) == words_of(text)  # the stored form cuts alike


def test_a_cjk_query_asks_for_its_pairs() -> None:
    assert fts_match("数据库") == '"数据" OR "据库"'
    assert fts_match("Redis 缓存") == '"redis" OR "缓存"'


@pytest.mark.parametrize(("query", "subject"), [
    ("数据库索引：加快查询的方法", ("数据", "据库", "库索", "索引")),
    ("数据库索引。加快查询", ("数据", "据库", "库索", "索引")),
    ("オリジン間リソース共有 (CORS): 仕組み", ("オリジン", "間", "リソース", "共有", "cors")),
    ("데이터베이스 백업: 매일", ("데이", "이터", "터베", "베이", "이스", "백업")),
])
def test_a_cjk_subject_ends_at_a_full_width_colon_or_full_stop(
        query: str, subject: tuple[str, ...]) -> None:
    assert subject_of(query) == subject


def test_a_long_cjk_sentence_is_no_subject() -> None:
    assert subject_of("我们每天晚上都在数据库里重新建立所有的索引以便第二天早上查询更快") == ()


def test_named_in_finds_a_cjk_name_inside_a_sentence() -> None:
    table = NameTable([(1, "数据库索引"), (2, "データベース"), (3, "데이터베이스"), (4, "索")])
    assert table.named_in("我们在数据库索引里查找") == [1]
    assert table.named_in("このデータベースは速い") == [2]
    assert table.named_in("우리는 데이터베이스를 백업합니다") == [3]
    assert table.named_in("数据库和索引") == []  # the name's characters, but apart


# -- a real index ------------------------------------------------------------------


class Rule:
    """Vectors by rule: a query (one line) and a decoy point one way, fillers near it,
    the node to find the other way: meaning alone ranks it last."""

    model_id = "rule-cjk"
    dimension = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    @staticmethod
    def _vector(text: str) -> list[float]:
        if "\n" not in text or "decoy" in text:
            return [1.0, 0.0]
        if "filler" in text:
            return [1.0, 0.2]
        return [0.0, 1.0]


# A word, a sentence with it inside, a decoy holding the word's pairs of characters
# but not the word, and another word of the sentence
LANGUAGES = {
    "zh": ("数据库", "我们每天晚上在数据库里重建索引。", "数据很多，证据库也在。", "索引"),
    "ja": ("データベース", "この機能は毎晩データベースの索引を作り直します。",
           "データを送り、ベースを決めます。", "索引"),
    "ko": ("데이터베이스", "우리는 매일 밤 데이터베이스를 다시 색인합니다.",
           "데이터와 베이스를 나눕니다.", "색인"),
}


@pytest.fixture(params=sorted(LANGUAGES))
def world(request: pytest.FixtureRequest, tmp_path: Path
          ) -> Iterator[tuple[NodeIndex, str, str, str]]:
    word, sentence, decoy, other = LANGUAGES[request.param]
    root = tmp_path / "vault"
    write_note(root, "digest/wiki/target.md", node_text("Nightly", "What runs at night.", sentence))
    write_note(root, "digest/wiki/decoy.md", node_text("Other", "decoy", decoy))
    for i in range(5):
        write_note(root, f"digest/wiki/filler-{i}.md", node_text(f"Filler {i}", "filler", "x"))
    vault = Vault(root)
    index = NodeIndex(vault, vault.state_dir / "state.sqlite", None, Rule())
    index.sync()
    yield index, word, other, "digest/wiki/target.md"
    index.close()


def test_keyword_search_finds_a_word_inside_a_cjk_sentence(
        world: tuple[NodeIndex, str, str, str]) -> None:
    index, word, other, target = world
    for query in (word, other):
        found = [h for h in index.node_search(query, limit=10) if h.path == target]
        assert found and found[0].similarity == 0.0  # meaning does not find it
        assert found[0].keyword_rank > 0
    # BM25's first when no other node holds its pairs of characters
    assert index.node_search(other, limit=10)[0].path == target


def test_the_subject_phrase_finds_a_cjk_word_inside_a_sentence(
        world: tuple[NodeIndex, str, str, str]) -> None:
    index, word, _, target = world
    # Meaning ranks the decoy first and the node last; BM25 finds both (the decoy holds
    # some of the word's pairs). Only the phrase, the pairs in a row, puts the node first.
    hits = index.node_search(f"{word}: nothing else matches", limit=10)
    assert hits[0].path == target


def test_a_cjk_section_is_found_and_shown_as_written(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_note(root, "resource/db.md", "# 数据库维护\n\n我们每天晚上在数据库里重建索引。\n")
    write_note(root, "resource/en.md", "# Maintenance\n\nWe rebuild the index every night.\n")
    vault = Vault(root)
    index = ChunkIndex(vault, vault.state_dir / "state.sqlite", None, Rule())
    try:
        index.sync()
        hits = {h.path: h for h in index.search("重建索引", limit=5)}
        assert hits["resource/db.md"].keyword_rank == 1
        assert hits["resource/db.md"].text == "# 数据库维护\n\n我们每天晚上在数据库里重建索引。"
        assert hits["resource/db.md"].breadcrumb == "db > 数据库维护"
        en = index.search("rebuild index", limit=5)[0]
        assert (en.path, en.keyword_rank, en.text, en.breadcrumb) == (
            "resource/en.md", 1, "# Maintenance\n\nWe rebuild the index every night.",
            "en > Maintenance")
    finally:
        index.close()


def test_an_index_built_with_the_old_cut_rebuilds_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "vault"
    write_note(root, "digest/wiki/target.md", node_text("Nightly", "Night.", LANGUAGES["zh"][1]))
    write_note(root, "digest/wiki/other.md", node_text("Other", "decoy", "x"))
    vault = Vault(root)
    db_path = vault.state_dir / "state.sqlite"

    def open_index() -> NodeIndex:
        return NodeIndex(vault, db_path, None, Rule())

    index = open_index()
    index.sync()
    params = index._meta("nodes.params")
    assert params is not None
    index.close()
    # As the index was before: the old params, the whole CJK run as one token
    old = params.split(" fts=")[0]
    db = sqlite3.connect(db_path)
    db.execute("UPDATE idx_meta SET value = ? WHERE key = 'nodes.params'", (old,))
    db.execute("DELETE FROM idx_nodes_fts")
    db.execute("INSERT INTO idx_nodes_fts (rowid, name, description, body) "
               "SELECT d.id, f.name, f.description, ? FROM idx_nodes_docs d JOIN idx_nodes_files f "
               "ON f.path = d.path WHERE d.path = 'digest/wiki/target.md'",
               (LANGUAGES["zh"][1],))
    db.commit()
    db.close()
    with caplog.at_level(logging.WARNING):
        index = open_index()
        assert len(index.sync().added) == 2
    assert "rebuilding it" in caplog.text
    assert index.node_search("数据库", limit=2)[0].keyword_rank == 1
    index.close()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        index = open_index()
        again = index.sync()
    assert (again.added, again.unchanged, caplog.text) == ([], 2, "")
    index.close()


def test_a_new_cut_rebuilds_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "vault"
    write_note(root, "digest/wiki/target.md", node_text("Nightly", "Night.", LANGUAGES["zh"][1]))
    vault = Vault(root)
    index = NodeIndex(vault, vault.state_dir / "state.sqlite", None, Rule())
    assert len(index.sync().added) == 1
    index.close()
    monkeypatch.setattr("vaultlink.index.tables.CUT_VERSION", "another-cut")
    index = NodeIndex(vault, vault.state_dir / "state.sqlite", None, Rule())
    assert len(index.sync().added) == 1
    index.close()


def test_a_chunk_index_of_the_old_shape_gets_its_new_columns(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_note(root, "resource/db.md", "# 数据库维护\n\n我们每天晚上在数据库里重建索引。\n")
    vault = Vault(root)
    vault.state_dir.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(vault.state_dir / "state.sqlite")
    # as an index built before: FTS columns without the text as written, older params
    db.executescript("""
        CREATE TABLE idx_meta (key TEXT PRIMARY KEY, value TEXT);
        INSERT INTO idx_meta VALUES ('chunks.params', 'max_chars=1200');
        CREATE VIRTUAL TABLE idx_chunks_fts USING fts5(breadcrumb, text,
            tokenize='porter unicode61 remove_diacritics 2');
    """)
    db.close()
    index = ChunkIndex(vault, vault.state_dir / "state.sqlite", None, Rule())
    try:
        assert index.sync().added == ["resource/db.md"]
        hit = index.search("数据库", limit=1)[0]
        assert (hit.keyword_rank, hit.breadcrumb) == (1, "db > 数据库维护")
    finally:
        index.close()
