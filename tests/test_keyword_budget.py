"""Which query terms keyword recall asks FTS5 for, and when.

BM25 reads and scores every row a term is in; at a million sections one common word
cost most of a query (docs/scale.md). These pin down which terms are kept: in a large
index the rarest within the budget; in any other, the terms in fewer than half of the
texts first (BM25 gives the rest no weight), and every term when those fill fewer places
than the list holds. No list of one language's stop words decides. A term is counted as
the table's tokenizer reads it (stemmed), not as typed. Real SQLite FTS5; a rule-based
embedder, since only the keyword side is under test.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from vaultlink.index import keywords
from vaultlink.index.fusion import informative_terms, rarest_terms
from vaultlink.index.nodes import NodeIndex
from vaultlink.vault.notes import Vault


class Flat:
    """Every text the same vector: the vector side ranks nothing above anything."""

    model_id = "flat-2d"
    dimension = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def test_the_rarest_terms_are_kept_within_the_budget_in_query_order() -> None:
    rows = {"common": 1000, "rare": 3, "mid": 50, "absent": 0}
    terms = ["common", "mid", "absent", "rare"]
    assert rarest_terms(terms, rows, budget=60) == ["mid", "rare"]
    assert rarest_terms(terms, rows, budget=2000) == ["common", "mid", "rare"]


def test_a_term_in_more_rows_than_the_budget_is_left_out_even_alone() -> None:
    assert rarest_terms(["a", "b"], {"a": 500, "b": 900}, budget=10) == []
    assert rarest_terms(["a", "b"], {"a": 500, "b": 4}, budget=10) == ["b"]


def test_terms_in_no_row_are_left_out() -> None:
    assert rarest_terms(["x", "y"], {"x": 0}, budget=10) == []


def _index(tmp_path: Path) -> NodeIndex:
    root = tmp_path / "v"
    for i in range(30):
        text = "Mane of a horse." if i < 5 else "Plain filler."
        (root / "digest" / "wiki").mkdir(parents=True, exist_ok=True)
        (root / f"digest/wiki/filler-{i}.md").write_text(
            f"---\nname: Filler {i}\ndescription: {text}\n---\nfiller text\n", encoding="utf-8")
    (root / "digest/wiki/zebra.md").write_text(
        "---\nname: Zebra\ndescription: Stripes, and a short mane.\n---\nfiller too\n",
        encoding="utf-8")
    vault = Vault(root)
    index = NodeIndex(vault, vault.state_dir / "state.sqlite", None, Flat())
    index.sync()
    return index


def test_terms_in_half_the_rows_or_more_carry_no_weight() -> None:
    rows = {"und": 40, "half": 30, "much": 9, "rare": 1}
    assert informative_terms(["und", "half", "much", "rare", "absent"], rows, 60) == \
        ["much", "rare", "absent"]


def test_an_index_within_the_budget_asks_the_terms_that_weigh_first(tmp_path: Path) -> None:
    index = _index(tmp_path)
    with index._lock:
        # "filler" is in all 31 nodes (BM25 weight floored), "manes" in 6, "zebra" in 1;
        # "much" is in the English stop-word list and in no node: no list decides
        assert index._keyword_match("filler zebra manes") == '"zebra" OR "manes"'
        assert index._keyword_match("much zebra") == '"much" OR "zebra"'
        assert index._keyword_match("filler") is None
    index.close()


def test_few_weighty_matches_are_followed_by_the_rows_common_words_find(
        tmp_path: Path) -> None:
    index = _index(tmp_path)
    hits = {h.path: h.keyword_rank for h in index.node_search("filler zebra manes", 40)}
    assert hits["digest/wiki/zebra.md"] == 1
    assert 1 < hits["digest/wiki/filler-0.md"] <= 6  # "mane" (a horse's), then "filler"
    assert hits["digest/wiki/filler-20.md"] > 6  # found by the common word alone
    index.close()


def test_a_word_on_an_english_stop_list_still_finds_its_node(tmp_path: Path) -> None:
    index = _index(tmp_path)
    (index.vault.root / "digest/wiki/first.md").write_text(
        "---\nname: Order\ndescription: Which step comes first.\n---\nfiller\n",
        encoding="utf-8")
    index.sync()
    hits = {h.path: h.keyword_rank for h in index.node_search("first zebra", 40)}
    assert hits["digest/wiki/first.md"] in (1, 2)  # asked for "first", not only "zebra"
    index.close()


def test_a_large_index_is_asked_its_rarest_terms_counted_as_indexed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _index(tmp_path)
    monkeypatch.setattr(keywords, "LARGE_INDEX_TEXTS", 10)  # 31 nodes: "large"
    monkeypatch.setattr(keywords, "KEYWORD_ROW_BUDGET", 10)
    with index._lock:
        # "filler" is in all 31 nodes and goes; "manes" is stemmed to "mane" (6 nodes)
        # as the table reads it, so it counts and stays beside "zebra" (1)
        assert index._keyword_match("filler zebra manes") == '"zebra" OR "manes"'
        # alone it goes too: no keyword list, the vector and name lists rank alone
        assert index._keyword_match("filler") is None
    hits = {h.path: h.keyword_rank for h in index.node_search("filler zebra manes", 40)}
    assert hits["digest/wiki/zebra.md"] == 1  # both kept terms
    assert hits["digest/wiki/filler-20.md"] == 0  # matched only by the term left out
    index.close()


def test_counts_are_kept_until_the_database_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon asks the same words query after query: they are counted once, and again
    after any write, this process's or another's."""
    index = _index(tmp_path)
    monkeypatch.setattr(keywords, "LARGE_INDEX_TEXTS", 10)  # 31 nodes: "large"
    counted: list[str] = []
    index._db.set_trace_callback(lambda sql: counted.append(sql) if "count(*)" in sql else None)
    with index._lock:
        assert index._terms.large() and index._terms.rows("zebra") == 1
        first = len(counted)
        assert index._keyword_match("zebra filler") == index._keyword_match("zebra filler")
        assert len(counted) == first + 1  # only "filler" was new; nothing counted twice
    wiki = index.vault.root / "digest" / "wiki"
    (wiki / "zebra-2.md").write_text("---\nname: Zebra two\ndescription: More.\n---\nx\n",
                                     encoding="utf-8")
    other = NodeIndex(index.vault, index.db_path, None, Flat())  # another process's write
    other.sync()
    other.close()
    with index._lock:
        assert index._terms.rows("zebra") == 1  # as counted: rows() trusts the caller
        assert index._terms.large() and index._terms.rows("zebra") == 2
    (wiki / "zebra-3.md").write_text("---\nname: Zebra three\ndescription: Yes.\n---\nx\n",
                                     encoding="utf-8")
    index.sync()  # this connection's own write
    with index._lock:
        assert index._terms.large() and index._terms.rows("zebra") == 3
    index._db.set_trace_callback(None)
    index.close()


def _subject_list(index: NodeIndex, query: str) -> list[str]:
    with index._lock:
        ids = index._more_lists(query, [], 60)[0][0]
        return [index._db.execute(f"SELECT path FROM {index._docs_t} WHERE id = ?",
                                  (i,)).fetchone()[0] for i in ids]


def test_a_subject_of_common_words_finds_its_node_by_name_in_a_large_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _index(tmp_path)
    (index.vault.root / "digest/wiki/filler-text.md").write_text(
        "---\nname: Filler text\ndescription: The node of that name.\n---\nx\n",
        encoding="utf-8")
    index.sync()
    # within the size, the phrase: its node and every node whose text holds it
    small = _subject_list(index, "filler text")
    assert small[0] == "digest/wiki/filler-text.md" and len(small) == 31
    monkeypatch.setattr(keywords, "LARGE_INDEX_TEXTS", 10)
    monkeypatch.setattr(keywords, "KEYWORD_ROW_BUDGET", 10)
    # large, and both words in more rows than the budget: no phrase, its node by name
    assert _subject_list(index, "filler text") == ["digest/wiki/filler-text.md"]
    # a subject with a rare word is still asked as a phrase
    assert _subject_list(index, "zebra") == ["digest/wiki/zebra.md"]
    assert _subject_list(index, "short mane") == ["digest/wiki/zebra.md"]
    index.close()
