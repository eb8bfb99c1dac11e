"""node_search against a real Chroma server (``chroma run``) through HttpClient."""

from __future__ import annotations

import http.client
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.ports import HeldPort, hold_port
from vaultlink.cli.settings import load_settings
from vaultlink.dream.compose import open_parts
from vaultlink.errors import SearchIndexError
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.recall import open_indexes
from vaultlink.index.store import open_chroma
from vaultlink.vault.notes import Vault

pytestmark = pytest.mark.slow

CHROMA = Path(sys.executable).parent / "chroma"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    if not CHROMA.exists():
        pytest.skip(f"{CHROMA} is not installed")
    with hold_port() as held:  # released just before the server binds: it may not reuse it
        port = held.port
    data = tmp_path_factory.mktemp("chroma-server")
    log = (data / "server.log").open("wb")
    proc = subprocess.Popen([str(CHROMA), "run", "--path", str(data / "db"), "--host",
                             "127.0.0.1", "--port", str(port)], stdout=log,
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1) as r:
                    if r.status == 200:
                        break
            except (OSError, http.client.HTTPException):  # not up yet, or half up
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("chroma server did not start: " +
                            (data / "server.log").read_text(errors="replace")[-2000:])
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_node_search_through_a_chroma_server(server: int, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for slug, name, desc in [("hybrid", "Hybrid search", "BM25 and vectors fused by rank."),
                             ("deploy", "Deploy to staging", "Ship the service to staging.")]:
        path = root / "digest" / "wiki" / f"{slug}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: {name}\ndescription: {desc}\n---\nBody.\n")
    vault = Vault(root)
    ix = open_indexes(vault, MiniLMEmbedder(), chroma_mode="http", chroma_host="127.0.0.1",
                      chroma_port=server)
    try:
        assert ix.nodes.collection_name.startswith("nodes-minilm-l6-v2-int8-v1-")
        assert len(ix.nodes.sync().added) == 2
        hits = ix.nodes.node_search("keyword and vector ranking", limit=2)
        assert hits[0].path == "digest/wiki/hybrid.md" and hits[0].similarity > 0
        assert not (vault.state_dir / "chroma").exists()  # nothing embedded on disk
        assert not ix.nodes.sync().changed
    finally:
        ix.close()


def test_no_server_is_a_clear_error(tmp_path: Path, held_port: HeldPort) -> None:
    with pytest.raises(SearchIndexError, match="no Chroma server answers"):
        open_chroma("http", tmp_path, "127.0.0.1", held_port.port)


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
