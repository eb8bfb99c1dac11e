"""The vectors on a real Chroma server (``chroma run``, started here) through HttpClient.

In http mode the server is the vectors' one home: node_search and search ask it (with
``where`` filters), state.sqlite keeps none, and what the server should hold is
journaled, so a server that lost vectors (or holds stale ones) is healed with only the
missing texts embedded. A server that is down, stops mid-run or hangs is a clear error.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.embedders import CountingEmbedder
from tests.fakes.ports import HeldPort, hold_port
from tests.vaults import copy_sample_vault
from vaultlink.cli.serverchecks import server_checks
from vaultlink.cli.settings import load_settings
from vaultlink.errors import IndexServerUnavailable
from vaultlink.index import chroma_vectors, store, tables
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.recall import Indexes, open_indexes
from vaultlink.index.store import open_server
from vaultlink.pipeline.compose import open_parts
from vaultlink.vault.notes import Vault

pytestmark = pytest.mark.slow

CHROMA = Path(sys.executable).parent / "chroma"


class ChromaServer:
    """A ``chroma run`` on a port of its own, stopped and started again at will."""

    def __init__(self, data: Path, port: int) -> None:
        self.data, self.port = data, port
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = (self.data / "server.log").open("ab")
        self.proc = subprocess.Popen([str(CHROMA), "run", "--path", str(self.data / "db"),
                                      "--host", "127.0.0.1", "--port", str(self.port)],
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{self.port}/api/v2/heartbeat", timeout=1) as r:
                    if r.status == 200:
                        return
            except (OSError, http.client.HTTPException):  # not up yet, or half up
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("chroma server did not start: " +
                            (self.data / "server.log").read_text(errors="replace")[-2000:])
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def started(data: Path) -> ChromaServer:
    if not CHROMA.exists():
        pytest.skip(f"{CHROMA} is not installed")
    with hold_port() as held:  # released just before the server binds: it may not reuse it
        port = held.port
    data.mkdir(parents=True, exist_ok=True)
    server = ChromaServer(data, port)
    server.start()
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """One server the tests of this module share (each vault has its collections)."""
    chroma = started(tmp_path_factory.mktemp("chroma-server"))
    try:
        yield chroma.port
    finally:
        chroma.stop()


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[ChromaServer]:
    """A server this test may stop, empty and start again."""
    chroma = started(tmp_path / "chroma-own")
    try:
        yield chroma
    finally:
        chroma.stop()


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chroma_vectors, "RETRY_WAITS", (0.05, 0.05))


def on_server(vault: Vault, embedder: Any, port: int) -> Indexes:
    return open_indexes(vault, embedder, chroma_mode="http", chroma_host="127.0.0.1",
                        chroma_port=port)


QUERIES = ["keyword and vector ranking", "deploy the service to staging",
           "autovacuum falls behind", "how do I rebuild the search index",
           "code review", "quiet hours for deep work"]


def test_node_search_and_search_ask_the_server_and_match_the_embedded_mode(
        server: int, sample_vault: Path, tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    embedded = open_indexes(Vault(copy_sample_vault(tmp_path / "e")), minilm)
    vault = Vault(sample_vault)
    served_ix = on_server(vault, minilm, server)
    try:
        for ix in (embedded, served_ix):
            ix.nodes.sync()
            ix.chunks.sync()
        # the process keeps no copy: no vector in state.sqlite, none loaded
        for index in (served_ix.nodes, served_ix.chunks):
            assert index._count(index._vec_t) == 0 and index._vectors is None
            assert index.served is not None and index.served.count() == index._count(
                index._docs_t) > 0
        assert served_ix.nodes.collection_name.startswith("nodes-minilm-l6-v2-int8-v1-")
        assert not (vault.state_dir / "chroma").exists()  # nothing embedded on disk
        for q in QUERIES:
            mine = [(h.path, round(h.similarity, 3)) for h in served_ix.nodes.node_search(q, 8)]
            exact = [(h.path, round(h.similarity, 3)) for h in embedded.nodes.node_search(q, 8)]
            assert mine == exact, q
            assert [h.path for h in served_ix.chunks.search(q, 5)] == \
                [h.path for h in embedded.chunks.search(q, 5)], q
        # the filters are the server's where: only the bucket, only the digest
        for q in QUERIES:
            hits = served_ix.nodes.node_search(q, 8, bucket="procedure")
            assert hits and all(h.path.startswith("digest/procedure/") for h in hits)
            assert [h.path for h in hits] == [
                h.path for h in embedded.nodes.node_search(q, 8, bucket="procedure")]
            sections = served_ix.chunks.search(q, 5, digest_only=True)
            assert sections and all(h.path.startswith("digest/") for h in sections)
            assert [h.path for h in sections] == [
                h.path for h in embedded.chunks.search(q, 5, digest_only=True)]
        assert not served_ix.nodes.sync().changed
    finally:
        embedded.close()
        served_ix.close()


def test_nearest_sends_the_bucket_as_a_where_filter(server: int, sample_vault: Path,
                                                   minilm: MiniLMEmbedder) -> None:
    ix = on_server(Vault(sample_vault), minilm, server)
    try:
        ix.nodes.sync()
        assert ix.nodes.served is not None
        vector = minilm.embed(["deploy the service to staging"])[0]
        found = ix.nodes.served.nearest(vector, 50, {"bucket": "personal"})
        paths = {r[0] for i, _ in found for r in ix.nodes._db.execute(
            "SELECT path FROM idx_nodes_docs WHERE id = ?", (i,))}
        assert paths == {"digest/personal/code-review-preferences.md",
                         "digest/personal/focus-time.md"}
    finally:
        ix.close()


def test_moving_to_the_server_sends_the_vectors_without_embedding(
        own_server: ChromaServer, sample_vault: Path, minilm: MiniLMEmbedder,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "MOVE_PAGE", 3)  # several pages, as a large index moves
    vault = Vault(sample_vault)
    counting = CountingEmbedder(minilm)
    embedded = open_indexes(vault, counting)  # type: ignore[arg-type]
    embedded.nodes.sync()
    docs = embedded.nodes._count(embedded.nodes._docs_t)
    embedded.close()
    counting.texts.clear()
    ix = on_server(vault, counting, own_server.port)
    try:
        assert not ix.nodes.sync().changed and counting.texts == []
        assert ix.nodes.served is not None and ix.nodes.served.count() == docs
        assert ix.nodes._count(ix.nodes._vec_t) == 0  # one home: the server now
        assert ix.nodes.node_search("autovacuum", 1)[0].path == \
            "digest/wiki/postgres-autovacuum.md"
    finally:
        ix.close()


def test_a_server_that_lost_vectors_is_healed_embedding_only_those(
        own_server: ChromaServer, sample_vault: Path, minilm: MiniLMEmbedder,
        caplog: pytest.LogCaptureFixture) -> None:
    vault = Vault(sample_vault)
    counting = CountingEmbedder(minilm)
    ix = on_server(vault, counting, own_server.port)
    try:
        ix.nodes.sync()
        total = len(counting.texts)
        coll = ix.nodes.served.collection  # type: ignore[union-attr]
        held = coll.get(include=[])["ids"]
        coll.delete(ids=held[:2])  # lost behind our back
        import numpy as np
        coll.add(ids=["999999"], embeddings=np.ones((1, 384), dtype=np.float32),
                 metadatas=[{"h": "x", "bucket": "wiki"}])  # a crash left one no doc wants
        counting.texts.clear()
        report = ix.nodes.sync()
        assert len(counting.texts) == 2 and report.embedded == 2  # only what it lacked
        assert "healing it" in caplog.text
        assert sorted(int(i) for i in coll.get(include=[])["ids"]) == sorted(
            r[0] for r in ix.nodes._db.execute("SELECT id FROM idx_nodes_docs"))
        # restarted empty: everything again, and found as before
        ix.close()
        own_server.stop()
        shutil.rmtree(own_server.data / "db")
        own_server.start()
        counting.texts.clear()
        ix = on_server(vault, counting, own_server.port)
        assert ix.nodes.sync().embedded == total == len(counting.texts)
        assert ix.nodes.node_search("autovacuum", 1)[0].path == \
            "digest/wiki/postgres-autovacuum.md"
    finally:
        ix.close()


def test_a_server_that_stops_mid_run_is_retried_then_a_clear_error(
        own_server: ChromaServer, sample_vault: Path, minilm: MiniLMEmbedder,
        fast_retries: None, caplog: pytest.LogCaptureFixture) -> None:
    ix = on_server(Vault(sample_vault), minilm, own_server.port)
    try:
        ix.nodes.sync()
        own_server.stop()
        with pytest.raises(IndexServerUnavailable, match=r"stopped answering.*start it again"):
            ix.nodes.node_search("autovacuum", 3)
        assert caplog.text.count("trying again") == 2
        own_server.start()  # the same client answers again once it is back
        assert ix.nodes.node_search("autovacuum", 1)[0].path == \
            "digest/wiki/postgres-autovacuum.md"
    finally:
        ix.close()


def test_a_server_that_hangs_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             held_port: HeldPort) -> None:
    monkeypatch.setattr(store, "REQUEST_SECONDS", 0.5)
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(8)  # accepts connections (in the backlog) and never answers
    try:
        start = time.monotonic()
        with pytest.raises(IndexServerUnavailable, match="no Chroma server answers"):
            open_server("127.0.0.1", hung.getsockname()[1])
        assert time.monotonic() - start < 10
    finally:
        hung.close()


def test_no_server_is_a_clear_error(tmp_path: Path, held_port: HeldPort) -> None:
    with pytest.raises(IndexServerUnavailable, match=r"no Chroma server answers.*chroma run"):
        open_server("127.0.0.1", held_port.port)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "vaultlink", *args, "--vault", str(root)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_cli_node_search_says_the_server_is_down_and_exits_non_zero(
        own_server: ChromaServer, sample_vault: Path, tmp_path: Path) -> None:
    embedded = Vault(copy_sample_vault(tmp_path / "e"))
    (sample_vault / ".vaultlink").mkdir(exist_ok=True)
    (sample_vault / ".vaultlink/config.yaml").write_text(
        f"index:\n  chroma:\n    mode: http\n    port: {own_server.port}\n")
    up = cli(sample_vault, "node-search", "rebuild the search index", "--json")
    assert up.returncode == 0, up.stderr
    exact = cli(embedded.root, "node-search", "rebuild the search index", "--json")
    def seen(out: str) -> list[tuple[str, float, int]]:  # cosines: float32 on the server
        return [(h["path"], round(h["similarity"], 4), h["keyword_rank"])
                for h in json.loads(out)["hits"]]

    assert seen(up.stdout) == seen(exact.stdout) and seen(up.stdout)
    own_server.stop()
    down = cli(sample_vault, "node-search", "rebuild the search index")
    assert down.returncode != 0
    assert f"no Chroma server answers at 127.0.0.1:{own_server.port}" in down.stderr + down.stdout
    assert "Traceback" not in down.stderr


def test_a_dream_with_the_server_down_checkpoints_nothing(
        own_server: ChromaServer, sample_vault: Path) -> None:
    (sample_vault / ".vaultlink").mkdir(exist_ok=True)
    (sample_vault / ".vaultlink/config.yaml").write_text(
        f"llm:\n  provider: offline\nindex:\n  chroma:\n    mode: http\n"
        f"    port: {own_server.port}\n")
    own_server.stop()
    down = cli(sample_vault, "dream")
    assert down.returncode != 0 and "no Chroma server answers" in down.stderr + down.stdout
    db = sample_vault / ".vaultlink/state.sqlite"
    if db.exists():
        import sqlite3
        con = sqlite3.connect(db)
        try:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            assert "checkpoint" not in tables or con.execute(
                "SELECT count(*) FROM checkpoint").fetchone()[0] == 0
        finally:
            con.close()
    own_server.start()
    up = cli(sample_vault, "dream")
    assert up.returncode == 0, up.stderr


def test_doctor_checks_the_server_its_version_and_collections(
        own_server: ChromaServer, sample_vault: Path, minilm: MiniLMEmbedder) -> None:
    vault = Vault(sample_vault)
    options = load_settings(sample_vault, environ={}).with_overrides(
        {"index.chroma.mode": "http", "index.chroma.port": own_server.port}).pipeline()
    db = vault.state_dir / "state.sqlite"
    ix = on_server(vault, minilm, own_server.port)
    try:
        ix.nodes.sync()
    finally:
        ix.close()
    checks = {c.name: c for c in server_checks(options, db)}
    assert checks["chroma"].ok and checks["chroma_version"].ok
    assert checks["chroma_collections"].ok, checks["chroma_collections"].detail
    assert "nodes: nodes-minilm" in checks["chroma_collections"].detail
    own_server.stop()
    checks = {c.name: c for c in server_checks(options, db)}
    assert not checks["chroma"].ok and "chroma run" in checks["chroma"].fix


def test_dream_and_search_share_the_vaults_collection(server: int, tmp_path: Path) -> None:
    # `vaultlink dream` (compose.open_parts) and `vaultlink node-search` (open_indexes)
    # must read the same collection of a vault on a shared server.
    root = tmp_path / "vault"
    (root / "digest").mkdir(parents=True)
    vault = Vault(root)
    settings = load_settings(root, environ={}).with_overrides(
        {"index.chroma.mode": "http", "index.chroma.port": server})
    parts = open_parts(vault, settings.pipeline())
    ix = open_indexes(vault, MiniLMEmbedder(), chroma_mode="http", chroma_host="127.0.0.1",
                      chroma_port=server)
    try:
        assert parts.index.collection_name == ix.nodes.collection_name
    finally:
        parts.close()
        ix.close()


def test_the_daemon_heals_the_node_index_of_a_server_restarted_empty(
        own_server: ChromaServer, sample_vault: Path, minilm: MiniLMEmbedder) -> None:
    from types import SimpleNamespace

    from vaultlink.daemon.indexes import heal_index

    vault = Vault(sample_vault)
    options = load_settings(sample_vault, environ={}).with_overrides(
        {"index.chroma.mode": "http", "index.chroma.port": own_server.port}).pipeline()
    ix = on_server(vault, minilm, own_server.port)
    parts: Any = SimpleNamespace(indexes=ix)
    try:
        ix.nodes.sync()
        assert not heal_index(parts, options)  # in step: nothing to do
        own_server.stop()
        shutil.rmtree(own_server.data / "db")
        own_server.start()
        assert heal_index(parts, options)  # before the run recalls from it
        assert ix.nodes.node_search("autovacuum", 1)[0].path == \
            "digest/wiki/postgres-autovacuum.md"
        assert not heal_index(parts, options)
    finally:
        ix.close()
