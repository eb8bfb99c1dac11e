"""The node index: fusion, query sanitising, incremental sync, and recovery from damage.

Real Chroma (PersistentClient in tmp_path), real SQLite, the real MiniLM model; a
counting wrapper records every text sent to the model.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.fakes.embedders import CountingEmbedder
from tests.vaults import node_text, write_note, write_notes
from vaultlink.errors import DaemonError, SearchIndexError
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.fts import FTS_TOKENIZE
from vaultlink.index.fusion import fts_match, fuse_ranks, rrf_fuse
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.recall import open_indexes
from vaultlink.index.words import CUT_VERSION
from vaultlink.vault.notes import Vault

NODES = {
    "digest/wiki/hybrid-search.md": node_text(
        "Hybrid search", "Combine BM25 keyword recall with vector recall using rank fusion.",
        "Reciprocal rank fusion merges two ranked lists."),
    "digest/wiki/postgres-autovacuum.md": node_text(
        "Postgres autovacuum", "When autovacuum runs and why it falls behind on big tables.",
        "Dead tuples pile up after updates."),
    "digest/procedure/deploy-staging.md": node_text(
        "Deploy to staging", "Steps to ship the service to the staging cluster.",
        "Run the pipeline, then flip the feature flag."),
    "digest/personal/focus-time.md": node_text(
        "Morning focus time", "Mara keeps mornings free of meetings for deep work.",
        "No Slack before eleven."),
}


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    """The nodes, beside notes the node index must pass over (a day note, a topics page, a
    page nested too deep), in a vault that skips notes over 5,000 bytes."""
    root = tmp_path / "vault"
    write_notes(root, NODES)
    write_note(root, "daily/2026-06-20.md", "# A day\n\nNot a digest node: hybrid search.\n")
    write_note(root, "digest/topics/2026-06-20.md",
               node_text("Topics", "Topics of the day.", "x"))
    write_note(root, "digest/wiki/deeper/nested.md",
               node_text("Nested", "Not <bucket>/<slug>.", "x"))
    return Vault(root, max_note_bytes=5_000)


class Opened:
    """A NodeIndex (vectors in state.sqlite), reopened at will like a new process would."""

    def __init__(self, vault: Vault, embedder: CountingEmbedder) -> None:
        self.vault, self.embedder = vault, embedder
        self.index: NodeIndex | None = None
        self.open()

    def open(self, embedder: CountingEmbedder | None = None) -> NodeIndex:
        self.close()
        self.embedder = embedder or self.embedder
        self.index = NodeIndex(self.vault, self.vault.state_dir / "state.sqlite", None,
                               self.embedder, body_chars=200)  # type: ignore[arg-type]
        return self.index

    def close(self) -> None:
        if self.index is not None:
            self.index.close()
            self.index = None


@pytest.fixture
def opened(vault: Vault, minilm: MiniLMEmbedder) -> Iterator[Opened]:
    o = Opened(vault, CountingEmbedder(minilm))
    yield o
    o.close()


# -- pure parts -----------------------------------------------------------------


def test_rrf_order_and_scores_pinned() -> None:
    fused = rrf_fuse(["a", "b", "c"], ["c", "d", "a"])
    assert [k for k, _ in fused] == ["a", "c", "b", "d"]
    scores = dict(fused)
    assert scores["a"] == pytest.approx(0.7 / 61 + 0.3 / 63)
    assert scores["c"] == pytest.approx(0.7 / 63 + 0.3 / 61)
    assert scores["b"] == pytest.approx(0.7 / 62)  # missing from BM25: nothing from it
    assert scores["d"] == pytest.approx(0.3 / 62)


def test_rrf_keyword_rank_one_beats_vector_rank_far_down() -> None:
    fused = rrf_fuse([f"v{i}" for i in range(40)] + ["x"], ["x"])
    # 0.7/101 + 0.3/61 = 0.01185 beats the vector winner's 0.7/61 = 0.01148
    assert [k for k, _ in fused][:2] == ["x", "v0"]
    assert dict(fused)["x"] == pytest.approx(0.7 / 101 + 0.3 / 61)


def test_fuse_ranks_sums_every_list_by_its_weight() -> None:
    fused = fuse_ranks([(["a", "b"], 1.0), (["b"], 1.0), (["c", "a"], 0.5)])
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 0.5 / 62)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["c"] == pytest.approx(0.5 / 61)
    assert [k for k, _ in fused] == ["b", "a", "c"]


def test_rrf_repeated_key_counts_once() -> None:
    assert dict(rrf_fuse(["a", "a"], []))["a"] == pytest.approx(0.7 / 61)


def test_fts_match_quotes_every_term() -> None:
    assert fts_match('"foo" AND bar* NEAR(x:y) -z') == \
        '"foo" OR "and" OR "bar" OR "near" OR "x" OR "y" OR "z"'
    assert fts_match("*** () \"'") is None
    assert fts_match("Größe größe") == '"größe"'
    # no list of one language's stop words: which terms weigh is the index's call
    # (``informative_terms``, tests/test_keyword_budget.py)
    assert fts_match("how much is the index?") == '"how" OR "much" OR "is" OR "the" OR "index"'
    assert fts_match("to be or not to be") == '"to" OR "be" OR "or" OR "not"'
    assert fts_match(" ".join(f"w{i}" for i in range(1000))).count(" OR ") == 63  # type: ignore[union-attr]


# -- search ---------------------------------------------------------------------


def test_node_search_ranks_by_meaning_and_keywords(opened: Opened) -> None:
    index = opened.index
    assert index is not None
    index.sync()
    hits = index.node_search("how do I combine keyword and semantic retrieval?", limit=3)
    assert hits[0].path == "digest/wiki/hybrid-search.md"
    assert hits[0].name == "Hybrid search" and "BM25" in hits[0].description
    assert 0.0 < hits[0].similarity <= 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert index.node_search("autovacuum", limit=1)[0].path == \
        "digest/wiki/postgres-autovacuum.md"


def test_only_bucket_nodes_are_indexed(opened: Opened) -> None:
    assert opened.index is not None
    report = opened.index.sync()
    assert sorted(report.added) == sorted(NODES)
    paths = {h.path for h in opened.index.node_search("topics nested day", limit=50)}
    assert paths == set(NODES)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_an_error(opened: Opened, query: str) -> None:
    assert opened.index is not None
    with pytest.raises(SearchIndexError, match="empty"):
        opened.index.node_search(query)


WEIRD = ['"', '""', "'", "*", "-", "NEAR", "NEAR(a b, 2)", "a:b", "col:value", "AND OR NOT",
         "(((", "^x", "{a b}", "\x00", "日本語の検索", "emoji 🙂🙂", "é" * 300,
         "x" * 100_000, "hybrid " * 20_000, "%_\\", "a\u200bb"]


@pytest.mark.parametrize("query", WEIRD)
def test_weird_queries_do_not_raise(opened: Opened, query: str) -> None:
    assert opened.index is not None
    opened.index.sync()
    hits = opened.index.node_search(query, limit=5)
    assert len(hits) <= 5


class KeywordWorld:
    """Vectors by rule: texts mentioning 'stripes' point one way, all others the other.

    Filler N sits at a small angle N/1000 from the query, so the fillers are distinct
    points in a known order: HNSW search over many identical vectors is not exact (its
    neighbour lists cannot link them all), and let the orthogonal zebra into the top 270.
    """

    model_id = "rule-2d"
    dimension = 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.0, 1.0] if "stripes" in t else [1.0, self._filler(t) / 1000] for t in texts]

    @staticmethod
    def _filler(text: str) -> int:
        found = re.search(r"Filler (\d+)", text)
        return 0 if found is None else int(found.group(1))


def test_keyword_only_hit_has_zero_similarity(tmp_path: Path) -> None:
    root = tmp_path / "v"
    for i in range(300):  # more than the 270 vector candidates a limit of 90 takes
        write_note(root, f"digest/wiki/filler-{i}.md",
                   node_text(f"Filler {i}", "Plain filler.", "x"))
    write_note(root, "digest/wiki/zebra.md", node_text("Zebra", "An animal with stripes.", "y"))
    v = Vault(root)
    index = NodeIndex(v, v.state_dir / "state.sqlite", None, KeywordWorld())
    index.sync()
    hits = index.node_search("zebra", limit=90)
    zebra = [h for h in hits if h.path == "digest/wiki/zebra.md"]
    assert zebra, "BM25 must recall a node that the vector side ranks last"
    assert zebra[0].similarity == 0.0
    # rank 1 of BM25 and of the subject phrase ("zebra" is its name), so it is the best
    # match and leads the named list too: three lists at 0.5 each, against the vector's
    # rank 1 at 0.5 alone
    assert zebra[0].score == pytest.approx(3 * 0.5 / 61)
    assert hits.index(zebra[0]) == 0
    index.close()


# -- sync -----------------------------------------------------------------------


def test_sync_reembeds_exactly_what_changed(opened: Opened, vault: Vault) -> None:
    index, emb = opened.index, opened.embedder
    assert index is not None
    first = index.sync()
    assert first.embedded == 4 and len(emb.texts) == 4

    emb.reset()
    again = index.sync()
    assert (again.added, again.updated, again.removed, again.moved) == ([], [], [], [])
    assert emb.calls == 0 and again.unchanged == 4

    p = "digest/wiki/hybrid-search.md"
    os.utime(vault.root / p, (1, 1))  # new mtime, same bytes: nothing to redo
    assert not index.sync().changed and emb.calls == 0

    write_note(vault.root, p, NODES[p].replace("rank fusion.", "RRF, k = 60."))
    report = index.sync()
    assert report.updated == [p] and report.embedded == 1
    assert len(emb.texts) == 1 and "k = 60" in emb.texts[0]

    long = NODES[p] + "Padding words. " * 20  # the body now runs past body_chars (200)
    write_note(vault.root, p, long + "First tail.\n")
    assert index.sync().embedded == 1
    emb.reset()  # a change past body_chars leaves the embedded text as it was
    write_note(vault.root, p, long + "Second, different tail.\n")
    report = index.sync()
    assert report.updated == [p] and report.embedded == 0 and emb.calls == 0

    new = "digest/wiki/hybrid-retrieval.md"
    os.rename(vault.root / p, vault.root / new)
    report = index.sync()
    assert report.moved == [(p, new)] and report.embedded == 0 and emb.calls == 0
    paths = [h.path for h in index.node_search("hybrid search rank fusion", limit=10)]
    assert new in paths and p not in paths

    gone = "digest/personal/focus-time.md"
    emb.reset()  # the query above was embedded too
    (vault.root / gone).unlink()
    report = index.sync()
    assert report.removed == [gone] and emb.calls == 0
    assert gone not in [h.path for h in index.node_search("focus time mornings", limit=10)]

    added = "digest/procedure/rebuild-index.md"
    write_note(vault.root, added,
               node_text("Rebuild the index", "Full rebuild from Postgres.", "Go."))
    report = index.sync()
    assert report.added == [added] and report.embedded == 1


def test_a_new_source_sentence_costs_no_embedding(opened: Opened, vault: Vault) -> None:
    """CORROBORATE only adds to ``## Sources``; recall does not depend on it."""
    index, emb = opened.index, opened.embedder
    assert index is not None
    p = "digest/wiki/hybrid-search.md"
    write_note(vault.root, p, NODES[p] + "\n## Sources\n\n- First seen in [[2026-06-20]].\n")
    index.sync()
    emb.reset()
    write_note(vault.root, p, NODES[p] + "\n## Sources\n\n- First seen in [[2026-06-20]].\n"
               "- Seen again in [[2026-06-21]].\n")
    report = index.upsert([p])
    assert report.updated == [p] and report.embedded == 0 and emb.calls == 0
    write_note(vault.root, p, NODES[p].replace("rank fusion.", "RRF.") + "\n## Sources\n\n- x\n")
    assert index.upsert([p]).embedded == 1
    assert "Sources" not in emb.texts[0] and "RRF" in emb.texts[0]


def test_an_updated_node_gets_a_new_vector_id_and_leaves_no_orphan(
        opened: Opened, vault: Vault) -> None:
    """A changed text is deleted and added under a new id, never updated in place."""
    index = opened.index
    assert index is not None
    index.sync()
    p = "digest/wiki/postgres-autovacuum.md"
    before = index._doc_ids(p)
    write_note(vault.root, p, NODES[p].replace("Dead tuples", "Bloat and dead tuples"))
    assert index.upsert([p]).embedded == 1
    after = index._doc_ids(p)
    assert len(after) == len(before) and not set(after) & set(before)
    assert index._count(index._vec_t) == len(NODES)
    marks = ",".join("?" * len(before))
    assert index._db.execute(f"SELECT id FROM idx_nodes_vec WHERE id IN ({marks})",
                             before).fetchall() == []
    assert index.node_search("bloat dead tuples", limit=1)[0].path == p


class Clustered:
    """Vectors from a text's hash, near one of four centres: a vault's few subjects."""

    model_id = "clustered-384"
    dimension = 384

    def __init__(self) -> None:
        self.centres = np.random.default_rng(7).normal(size=(4, self.dimension))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            rng = np.random.default_rng(int(hashlib.sha256(text.encode()).hexdigest()[:8], 16))
            v = self.centres[rng.integers(4)] + 0.6 * rng.normal(size=self.dimension)
            out.append((v / np.linalg.norm(v)).tolist())
        return out


@pytest.mark.slow  # end to end on a whole vault: the fast tier stays under 60 s
def test_nodes_updated_again_and_again_stay_reachable_by_vector(tmp_path: Path) -> None:
    """Chroma's HNSW, updating a vector in place (upsert of an existing id) over and
    over, left some nodes unreachable: node_search then recalled them by keywords only
    and the integrator created duplicates. Every node must stay its own best hit."""
    root = tmp_path / "v"
    for i in range(35):
        write_note(root, f"digest/wiki/n{i}.md", node_text(f"N{i}", "d", "v0"))
    v = Vault(root)
    index = NodeIndex(v, v.state_dir / "state.sqlite", None, Clustered())
    index.sync()
    rng = np.random.default_rng(6)  # lost node 12 when vectors were updated in place
    for round_ in range(150):  # a few hot nodes, rewritten as units refine them
        i = int(rng.integers(8))
        write_note(root, f"digest/wiki/n{i}.md", node_text(f"N{i}", "d", f"v{round_ + 1}"))
        index.upsert([f"digest/wiki/n{i}.md"])
    unreachable = []
    for i in range(35):
        text = Vault(root).read_note(f"digest/wiki/n{i}.md")
        query = index.docs_of(text)[0].embed_text
        hits = index.node_search(query, limit=35)
        if not hits or hits[0].path != f"digest/wiki/n{i}.md" or hits[0].similarity < 0.99:
            unreachable.append(i)
    index.close()
    assert unreachable == []


def test_upsert_and_remove_act_now(opened: Opened, vault: Vault) -> None:
    index, emb = opened.index, opened.embedder
    assert index is not None
    index.sync()
    emb.reset()
    p = "digest/wiki/chroma.md"
    write_note(vault.root, p, node_text("Chroma", "A vector database for embeddings.", "Local."))
    report = index.upsert([p, "daily/2026-06-20.md"])  # not a node: ignored
    assert report.added == [p] and emb.texts and len(emb.texts) == 1
    assert index.node_search("vector database", limit=1)[0].path == p
    assert index.upsert([p]).unchanged == 1
    (vault.root / p).unlink()
    assert index.upsert([p]).removed == [p]  # a path written as gone leaves at once
    assert p not in [h.path for h in index.node_search("vector database")]
    assert not index.sync().changed


def test_progress_reports_to_the_end(opened: Opened) -> None:
    seen: list[tuple[int, int]] = []
    assert opened.index is not None
    opened.index.sync(lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)


def test_a_sync_stopped_between_batches_leaves_a_whole_index(
        opened: Opened, monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon stops a long sync from its progress hook: what was flushed stays,
    the rest is indexed by the next sync, and rows and vectors stay in step."""
    index = opened.index
    assert index is not None
    monkeypatch.setattr("vaultlink.index.base.EMBED_BATCH", 1)  # one note per flush

    def stop_after_two(done: int, total: int) -> None:
        if done >= 2:
            raise DaemonError("stopping")  # what the daemon's hook raises

    with pytest.raises(DaemonError, match="stopping"):
        index.sync(stop_after_two)
    assert len(index._stored()) == 2 and index._count(index._vec_t) == 2
    report = index.sync()
    assert len(report.added) == 2 and report.unchanged == 2
    assert index._count(index._vec_t) == len(NODES)
    assert index.node_search("postgres autovacuum", limit=1)[0].path.endswith("autovacuum.md")


def test_bad_notes_are_skipped_with_reasons(opened: Opened, vault: Vault,
                                            caplog: pytest.LogCaptureFixture) -> None:
    bad = {
        "digest/wiki/empty.md": b"  \n",
        "digest/wiki/binary.md": b"---\nname: x\n---\n\x00\x01\x02",
        "digest/wiki/latin1.md": "---\nname: Caf\xe9\n---\nbody\n".encode("latin-1"),
        "digest/wiki/huge.md": node_text("Huge", "Too big.", "x" * 6_000).encode(),
    }
    for rel, data in bad.items():
        write_note(vault.root, rel, data)
    # broken YAML alone is recalled by its body (see the next test): not skipped
    broken = "digest/wiki/broken-yaml.md"
    write_note(vault.root, broken, b"---\nname: [unclosed\ndescription: x\n---\nbody\n")
    assert opened.index is not None
    # logged at INFO: the run's summary and `status` tell the user, once
    with caplog.at_level(logging.INFO, logger="vaultlink"):
        report = opened.index.sync()
    assert sorted(report.added) == sorted([*NODES, broken])
    assert set(report.skipped) == set(bad)
    assert "empty" in report.skipped["digest/wiki/empty.md"]
    assert "NUL" in report.skipped["digest/wiki/binary.md"]
    assert "UTF-8" in report.skipped["digest/wiki/latin1.md"]
    assert "limit" in report.skipped["digest/wiki/huge.md"]
    assert all(rel in caplog.text for rel in [*bad, broken])
    assert f"recalling {broken} by its body only: its YAML" in caplog.text

    caplog.clear()  # still skipped, but not logged again while unchanged
    with caplog.at_level(logging.INFO, logger="vaultlink"):
        assert set(opened.index.sync().skipped) == set(bad)
    assert caplog.text == ""

    write_note(vault.root, broken, node_text("Fixed", "Now it parses.", "ok"))
    report = opened.index.sync()
    assert report.updated == [broken]
    assert "digest/wiki/broken-yaml.md" not in report.skipped


def test_an_indexed_node_whose_yaml_breaks_is_still_recalled_by_its_body(
        opened: Opened, vault: Vault) -> None:
    """Dropped from recall, the node would be created again by the next unit on its
    subject; recalled, that unit's write to it fails with the fix to make."""
    assert opened.index is not None
    opened.index.sync()
    p = "digest/wiki/postgres-autovacuum.md"
    write_note(vault.root, p, b"---\nname: [oops\n---\nDead tuples pile up after updates.\n")
    report = opened.index.sync()
    assert report.updated == [p] and not report.skipped
    hits = opened.index.node_search("dead tuples pile up", limit=10)
    assert hits[0].path == p and hits[0].name == "postgres-autovacuum"


# -- versions and recovery ------------------------------------------------------


def test_a_new_embedding_model_gets_its_own_collection(opened: Opened, vault: Vault,
                                                       minilm: MiniLMEmbedder) -> None:
    assert opened.index is not None
    opened.index.sync()
    assert opened.index.collection_name == "nodes-minilm-l6-v2-int8-v1"
    other = CountingEmbedder(minilm, model_id="other-model")
    index = opened.open(other)
    assert index.collection_name == "nodes-other-model-v1"
    report = index.sync()
    assert len(report.added) == 4 and len(other.texts) == 4  # rebuilt, nothing mixed
    widths = {len(r[0]) for r in index._db.execute("SELECT vec FROM idx_nodes_vec")}
    assert len(widths) == 1  # the old model's vectors are gone, not mixed in


def test_the_old_embedded_chroma_mirror_is_removed_and_never_written(
        tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    """Embedded, the vectors live in state.sqlite only: the Chroma copy earlier versions
    wrote (and no query read) is removed at open, and nothing writes one again."""
    root = tmp_path / "vault"
    write_notes(root, NODES)
    vault = Vault(root)
    old = vault.state_dir / "chroma"
    old.mkdir(parents=True)
    (old / "chroma.sqlite3").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    ix = open_indexes(vault, CountingEmbedder(minilm))  # type: ignore[arg-type]
    try:
        assert not old.exists()
        assert ix.nodes.sync().added and ix.chunks.sync().added
        assert ix.nodes.node_search("autovacuum", limit=1)[0].path == \
            "digest/wiki/postgres-autovacuum.md"
        assert not old.exists() and ix.chroma.client is None and ix.nodes.served is None
    finally:
        ix.close()


def test_garbage_state_database_is_rebuilt(opened: Opened, vault: Vault,
                                           caplog: pytest.LogCaptureFixture) -> None:
    assert opened.index is not None
    opened.index.sync()
    opened.close()
    db = vault.state_dir / "state.sqlite"
    for extra in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        extra.unlink(missing_ok=True)
    db.write_bytes(os.urandom(8192))
    with caplog.at_level(logging.WARNING):
        index = opened.open()
    assert "corrupt" in caplog.text
    assert list(vault.state_dir.glob("state.sqlite.corrupt-*"))
    report = index.sync()
    assert len(report.added) == 4
    assert index.node_search("deploy staging", limit=1)[0].path == \
        "digest/procedure/deploy-staging.md"


def test_missing_state_folder_and_file_in_its_place(vault: Vault,
                                                    minilm: MiniLMEmbedder) -> None:
    vault.state_dir.write_text("not a folder")  # a stray file named .vaultlink
    o = Opened(vault, CountingEmbedder(minilm))
    assert o.index is not None
    assert len(o.index.sync().added) == 4
    o.close()


def test_unchanged_sync_reads_no_file(opened: Opened, vault: Vault,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert opened.index is not None
    opened.index.sync()
    reads: list[str] = []
    real = Vault.read_bytes

    def counting_read(self: Vault, raw: str) -> bytes:
        reads.append(raw)
        return real(self, raw)

    monkeypatch.setattr(Vault, "read_bytes", counting_read)
    assert opened.index.sync().unchanged == 4
    assert reads == []  # size, mtime and inode matched: hashes not recomputed
    p = "digest/wiki/hybrid-search.md"
    os.utime(vault.root / p, (5, 5))
    assert not opened.index.sync().changed
    assert reads == [p]  # mtime differs: read and hashed, found identical


def test_symlink_out_of_the_vault_is_not_indexed(opened: Opened, vault: Vault,
                                                 tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text(node_text("Secret", "Outside the vault.", "password"))
    (vault.root / "digest/wiki/escape.md").symlink_to(outside)
    assert opened.index is not None
    report = opened.index.sync()
    assert "digest/wiki/escape.md" not in report.added and len(report.added) == 4


def test_changing_body_chars_rebuilds(opened: Opened, vault: Vault,
                                      caplog: pytest.LogCaptureFixture) -> None:
    assert opened.index is not None
    opened.index.sync()
    opened.close()
    opened.embedder.reset()
    with caplog.at_level(logging.WARNING):
        index = NodeIndex(vault, vault.state_dir / "state.sqlite", None,
                          opened.embedder, body_chars=50)  # type: ignore[arg-type]
        assert len(index.sync().added) == 4
    assert ("body_chars=200 keyword_body_chars=100000 without sources (broken YAML by body) "
            f"fts={FTS_TOKENIZE} words={CUT_VERSION}, now body_chars=50 keyword_body_chars=100000 "
            "without") in caplog.text
    assert len(opened.embedder.texts) == 4
    index.close()
