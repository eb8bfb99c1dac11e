"""MiniLM with int8 arithmetic (``embedding.sections: fast``): its own vector space, close
to the exact model's, made once from the installed model and kept in the cache folder,
and used by the section index only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vaultlink.cli.settings import config_path, load_settings
from vaultlink.index import minilm_graph
from vaultlink.index.embed import MINILM_FAST_MODEL_ID, MINILM_MODEL_ID, MiniLMEmbedder
from vaultlink.index.recall import open_recall
from vaultlink.vault.notes import Vault

TEXTS = ["How do I rebuild the search index?", "Steps to reindex the search service",
         "My cat likes tuna",
         "Postgres autovacuum falls behind on big tables; lower the scale factor.",
         "The registration hook adds a plugin to the build."]


@pytest.fixture(scope="module")
def fast() -> MiniLMEmbedder:
    return MiniLMEmbedder(fast=True)


def test_the_fast_model_is_another_space_close_to_the_exact_one(fast: MiniLMEmbedder) -> None:
    exact = MiniLMEmbedder()
    assert (fast.model_id, exact.model_id) == (MINILM_FAST_MODEL_ID, MINILM_MODEL_ID)
    a, b = np.asarray(fast.embed(TEXTS)), np.asarray(exact.embed(TEXTS))
    assert not np.array_equal(a, b)  # int8 products: not the same numbers...
    assert (a * b).sum(axis=1).min() > 0.95  # ...but nearly the same directions
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert a[0] @ a[1] > a[0] @ a[2] + 0.3  # it still tells close from far


def test_the_quantised_graph_is_kept_and_a_new_process_loads_it_as_it_is(
        tmp_path: Path, fast: MiniLMEmbedder) -> None:
    expected = fast.embed(TEXTS)  # quantised in this process, no cache folder
    assert MiniLMEmbedder(fast=True, cache_dir=tmp_path).embed(TEXTS) == expected
    [kept] = list(tmp_path.glob("minilm-q8-*.onnx"))
    assert not list(tmp_path.glob("minilm-[0-9]*.onnx"))  # the exact graph went to a temp dir
    probe = ("import json, sys; from pathlib import Path\n"
             "from vaultlink.index.embed import MiniLMEmbedder\n"
             f"v = MiniLMEmbedder(fast=True, cache_dir=Path({str(tmp_path)!r})).embed({TEXTS!r})\n"
             "print(json.dumps({'v': v, 'onnx': 'onnx' in sys.modules}))")
    out = json.loads(subprocess.run([sys.executable, "-c", probe], check=True,
                                    capture_output=True, text=True).stdout)
    assert not out["onnx"]  # loaded from the cache: nothing was quantised again
    assert out["v"] == expected  # quantising is deterministic: one space everywhere
    assert [p.name for p in tmp_path.iterdir()] == [kept.name]  # no work file left


def test_a_torn_quantised_graph_is_made_again(tmp_path: Path, fast: MiniLMEmbedder,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    expected = fast.embed(TEXTS[:2])
    MiniLMEmbedder(fast=True, cache_dir=tmp_path).embed(TEXTS[:2])
    [kept] = list(tmp_path.glob("minilm-q8-*.onnx"))
    kept.write_bytes(b"torn")
    monkeypatch.setattr(minilm_graph, "_LOADED", {})  # as a new process finds it
    assert MiniLMEmbedder(fast=True, cache_dir=tmp_path).embed(TEXTS[:2]) == expected
    assert kept.stat().st_size > 1_000_000


def test_sections_are_embedded_fast_and_nodes_exact_unless_told_same(sample_vault: Path) -> None:
    indexes = open_recall(Vault(sample_vault), load_settings(sample_vault, environ={}).pipeline())
    try:
        assert indexes.chunks.embedder.model_id == MINILM_FAST_MODEL_ID
        assert indexes.nodes.embedder.model_id == MINILM_MODEL_ID
    finally:
        indexes.close()
    config_path(sample_vault).parent.mkdir(exist_ok=True)
    config_path(sample_vault).write_text("embedding:\n  sections: same\n")
    indexes = open_recall(Vault(sample_vault), load_settings(sample_vault, environ={}).pipeline())
    try:
        assert indexes.chunks.embedder.model_id == MINILM_MODEL_ID
    finally:
        indexes.close()


def test_making_the_quantised_graph_prints_nothing(tmp_path: Path) -> None:
    """onnxruntime's quantiser advises "pre-processing" on the root logger: a user's
    first `search` printed it."""
    probe = ("from pathlib import Path\nfrom vaultlink.index.embed import MiniLMEmbedder\n"
             f"MiniLMEmbedder(fast=True, cache_dir=Path({str(tmp_path)!r})).embed(['a b c'])")
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                          text=True)
    assert list(tmp_path.glob("minilm-q8-*.onnx"))  # it was made in this process
    assert done.stderr == "" and done.stdout == ""


def test_a_call_of_long_texts_gives_its_arena_back_and_the_same_vectors() -> None:
    # onnxruntime's CPU arena kept the largest buffers any batch needed for the life of
    # the process: +72 MB here, and the daemon's RSS rose a tenth to a quarter over its
    # first days. Measured in a process of its own: RSS is the whole process's.
    probe = """if True:
        import json
        from vaultlink.index.embed import MiniLMEmbedder
        from vaultlink.index.heap import hold_heap_steady
        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        hold_heap_steady()
        e = MiniLMEmbedder()
        query = e.embed(["How do I rebuild the search index?"])
        before = rss()
        long = [" ".join(f"word{j} of section {i}" for j in range(80)) for i in range(40)]
        first = e.embed(long)
        for _ in range(2):
            again = e.embed(long)
        print(json.dumps({"grew": rss() - before, "same": first == again,
                          "query": query == e.embed(["How do I rebuild the search index?"])}))
    """
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/status")
    out = json.loads(subprocess.run([sys.executable, "-c", probe], check=True,
                                    capture_output=True, text=True).stdout)
    assert out["same"] and out["query"]
    assert out["grew"] < 20, out  # without the shrink: 72 MB
