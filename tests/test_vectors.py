"""Exact vector search from state.sqlite: the matrix, the migration of an index built
before it, and a CLI query that never imports chromadb."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.fakes.embedders import CountingEmbedder
from tests.test_index import NODES, Opened
from tests.vaults import write_notes
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.sqlite_vectors import VectorMatrix
from vaultlink.vault.notes import Vault


def unit(*xs: float) -> list[float]:
    v = np.asarray(xs, dtype=np.float32)
    return (v / np.linalg.norm(v)).tolist()


def test_the_matrix_finds_the_exact_nearest_and_forgets_removed_ids() -> None:
    m = VectorMatrix()
    assert m.search(unit(1, 0), 3) == []
    m.add([1, 2, 3], [unit(1, 0), unit(1, 1), unit(0, 1)])
    assert [i for i, _ in m.search(unit(1, 0.1), 3)] == [1, 2, 3]
    assert m.search(unit(1, 0), 1)[0] == (1, pytest.approx(1.0))
    m.remove([1])
    assert [i for i, _ in m.search(unit(1, 0.1), 3)] == [2, 3]
    m.add([4], [unit(1, 0)])  # compacted past a quarter dead, ids stay right
    m.remove([3])
    assert [i for i, _ in m.search(unit(1, 0), 5)] == [4, 2] and len(m) == 2
    m.add([2], [unit(0, 1)])  # an id added again replaces its vector
    assert [i for i, _ in m.search(unit(0, 1), 1)] == [2] and len(m) == 2


def test_the_matrix_searches_only_the_allowed_ids() -> None:
    """A scope (a bucket, the digest only) is the nearest within it, not the nearest
    overall filtered afterwards: k hits from the scope even when others are nearer."""
    m = VectorMatrix()
    m.add([1, 2, 3, 4], [unit(1, 0), unit(1, 0.1), unit(0.2, 1), unit(0, 1)])
    m.remove([4])
    assert [i for i, _ in m.search(unit(1, 0), 2, allowed=[3, 4, 9])] == [3]
    assert [i for i, _ in m.search(unit(1, 0), 2, allowed=[2, 3])] == [2, 3]
    assert m.search(unit(1, 0), 2, allowed=[]) == []


def test_an_index_built_before_the_vector_table_is_rebuilt(
        tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    """Its vectors were in the embedded Chroma, which is gone: it is embedded again,
    once, and found as before."""
    root = tmp_path / "vault"
    write_notes(root, NODES)
    vault = Vault(root)
    opened = Opened(vault, CountingEmbedder(minilm))
    assert opened.index is not None
    opened.index.sync()
    opened.close()
    db = sqlite3.connect(vault.state_dir / "state.sqlite")
    db.execute("DROP TABLE idx_nodes_vec")  # as an older vaultlink left it
    db.commit()
    db.close()
    opened.embedder.reset()
    index = opened.open()
    report = index.sync()
    assert (len(report.added), report.embedded) == (4, 4)
    assert index.node_search("autovacuum dead tuples", limit=1)[0].path == \
        "digest/wiki/postgres-autovacuum.md"
    assert (index.sync().unchanged, index.sync().embedded) == (4, 0)
    opened.close()


@pytest.mark.slow
def test_a_cli_query_with_nothing_changed_never_imports_chromadb(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_notes(root, NODES)
    (root / "daily").mkdir()
    probe = (
        "import sys, json\n"
        "from typer.testing import CliRunner\n"
        "from vaultlink.cli import app\n"
        "r = CliRunner().invoke(app, ['node-search', 'autovacuum', '--json', '--vault', "
        f"{str(root)!r}])\n"
        "print(json.dumps({'out': r.output, 'chromadb': 'chromadb' in sys.modules}))\n")
    first = json.loads(subprocess.run([sys.executable, "-c", probe], check=True,
                                      capture_output=True, text=True).stdout)
    assert not first["chromadb"]  # embedded: the vectors go to state.sqlite, not Chroma
    again = json.loads(subprocess.run([sys.executable, "-c", probe], check=True,
                                      capture_output=True, text=True).stdout)
    assert not again["chromadb"]
    assert json.loads(again["out"])["hits"][0]["path"] == "digest/wiki/postgres-autovacuum.md"
    assert json.loads(again["out"]) == json.loads(first["out"])


def test_the_cached_optimised_model_gives_the_same_vectors(tmp_path: Path,
                                                           minilm: MiniLMEmbedder) -> None:
    texts = ["rebuild the search index", "Postgres autovacuum falls behind on big tables."]
    expected = minilm.embed(texts)  # a session without a cache is loaded in this process
    first = MiniLMEmbedder(cache_dir=tmp_path)  # still optimises and keeps the graph
    assert first.embed(texts) == expected
    [kept] = list(tmp_path.glob("minilm-*.onnx"))
    again = MiniLMEmbedder(cache_dir=tmp_path)  # loads it, optimising nothing
    assert again.embed(texts) == expected
    # The process loads a cached graph once: later embedders share its session.
    assert MiniLMEmbedder(cache_dir=tmp_path)._load()[0] is again._load()[0]
    kept.write_bytes(b"torn")  # a broken cache is rebuilt, never trusted
    assert MiniLMEmbedder(cache_dir=tmp_path).embed(texts) == expected
    assert kept.stat().st_size > 1000


def test_a_process_that_optimises_the_model_serves_from_the_graph_it_wrote(
        tmp_path: Path, minilm: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session that optimised held ~40 MB more than one of the written graph, for
    the same vectors: it is dropped, and the written graph loaded as later processes do."""
    from vaultlink.index import minilm_graph

    texts = ["rebuild the search index", "Postgres autovacuum falls behind on big tables."]
    expected = minilm.embed(texts)
    monkeypatch.setattr(minilm_graph, "_LOADED", {})  # as a new process finds it
    for cache in (None, tmp_path):  # without a cache folder, and the first with one
        fresh = MiniLMEmbedder(cache_dir=cache)
        session = fresh._load()[0]
        assert Path(session._model_path) != minilm_graph.minilm_files()[0]
        assert fresh.embed(texts) == expected
