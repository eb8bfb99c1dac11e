"""The fake Ollama server answers the way the real ollama.Client expects."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator

import httpx
import ollama
import pytest

from tests.fakes import (
    EMBED_DIM,
    FakeOllama,
    Hang,
    HTTPError,
    Malformed,
    ModelSpec,
    Scripted,
    down_url,
    fake_embedding,
    reply,
    wait_for,
)

USER = [{"role": "user", "content": "hello there"}]


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama(models=["qwen3:4b", ModelSpec("all-minilm", ("embedding",), 512, "bert")]) as s:
        yield s


@pytest.fixture
def client(server: FakeOllama) -> Iterator[ollama.Client]:
    with ollama.Client(host=server.url, timeout=5) as c:
        yield c


def test_version_tags_and_show(server: FakeOllama, client: ollama.Client) -> None:
    assert httpx.get(server.url + "/api/version").json() == {"version": server.version}
    assert [m.model for m in client.list().models] == ["qwen3:4b", "all-minilm"]
    info = client.show("qwen3:4b")
    assert info.capabilities == ["completion", "tools"]
    assert info.modelinfo is not None and info.modelinfo["qwen3.context_length"] == 40960
    assert client.show("all-minilm:latest").capabilities == ["embedding"]


def test_show_unknown_model_is_404(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as info:
        client.show("nope")
    assert info.value.status_code == 404


def test_embed_is_deterministic_unit_length_and_word_sensitive(client: ollama.Client) -> None:
    texts = ["hybrid search with bm25", "hybrid search with vectors", "baking bread"]
    vecs = client.embed(model="all-minilm", input=texts).embeddings
    again = client.embed(model="all-minilm", input=texts[0]).embeddings
    assert [len(v) for v in vecs] == [EMBED_DIM] * 3 and list(again[0]) == list(vecs[0])
    assert all(math.isclose(sum(x * x for x in v), 1.0) for v in vecs)

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(fake_embedding(texts[0]), fake_embedding(texts[1])) > cos(
        fake_embedding(texts[0]), fake_embedding(texts[2]))


def test_default_model_echoes_and_envelope_parses(client: ollama.Client) -> None:
    resp = client.chat(model="qwen3:4b", messages=USER, options={"num_ctx": 2048})
    assert resp.message.content == "echo: hello there"
    assert resp.done and resp.done_reason == "stop" and resp.model == "qwen3:4b"
    assert resp.prompt_eval_count == len("hello there") // 4 and resp.eval_count
    assert resp.created_at and resp.created_at.endswith("Z")


def test_requests_are_recorded(server: FakeOllama, client: ollama.Client) -> None:
    tools = [{"type": "function", "function": {"name": "read", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}]
    client.chat(model="qwen3:4b", messages=USER, tools=tools, format={"type": "object"},
                options={"num_ctx": 1024, "temperature": 0})
    body = server.chat_requests()[0]
    assert body["options"] == {"num_ctx": 1024, "temperature": 0}
    assert body["format"] == {"type": "object"}
    assert body["tools"][0]["function"]["name"] == "read"
    assert [(r.method, r.path) for r in server.requests] == [("POST", "/api/chat")]


def test_prompt_longer_than_num_ctx_is_marked_truncated(server: FakeOllama,
                                                        client: ollama.Client) -> None:
    resp = client.chat(model="qwen3:4b", messages=[{"role": "user", "content": "x" * 400}],
                       options={"num_ctx": 50})
    assert server.requests[0].truncated and resp.prompt_eval_count == 50


def test_scripted_plays_in_order_then_fails_loudly(server: FakeOllama,
                                                   client: ollama.Client) -> None:
    script = Scripted([reply("one"), reply("", [("read", {"path": "a.md"})])])
    server.model = script
    assert client.chat(model="qwen3:4b", messages=USER).message.content == "one"
    calls = client.chat(model="qwen3:4b", messages=USER).message.tool_calls or []
    assert calls[0].function.name == "read" and calls[0].function.arguments == {"path": "a.md"}
    with pytest.raises(ollama.ResponseError, match="no reply for call 3"):
        client.chat(model="qwen3:4b", messages=USER)
    assert script.exhausted == 1 and len(script.calls) == 3


def test_unknown_model_chat_is_404_like_ollama(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="llama9", messages=USER)
    assert info.value.status_code == 404
    assert info.value.error == 'model "llama9" not found, try pulling it first'


def test_http_error_and_malformed_actions(server: FakeOllama, client: ollama.Client) -> None:
    server.model = Scripted([HTTPError(500, {"error": "boom"}), HTTPError(502, "bad gateway"),
                             Malformed()])
    with pytest.raises(ollama.ResponseError) as info:
        client.chat(model="qwen3:4b", messages=USER)
    assert (info.value.status_code, info.value.error) == (500, "boom")
    with pytest.raises(ollama.ResponseError, match="bad gateway"):
        client.chat(model="qwen3:4b", messages=USER)
    with pytest.raises(json.JSONDecodeError):
        client.chat(model="qwen3:4b", messages=USER)


def test_scripted_model_bug_surfaces(server: FakeOllama, client: ollama.Client) -> None:
    def broken(request: dict[str, object]) -> dict[str, object]:
        raise KeyError("oops")

    server.model = broken
    with pytest.raises(ollama.ResponseError, match="oops"):
        client.chat(model="qwen3:4b", messages=USER)
    assert isinstance(server.errors[0], KeyError)


def test_hang_then_answer(server: FakeOllama, client: ollama.Client) -> None:
    server.model = Scripted([Hang(0.05, then=reply("late"))])
    assert client.chat(model="qwen3:4b", messages=USER).message.content == "late"


def test_hang_does_not_block_stop() -> None:
    server = FakeOllama(model=Scripted([Hang(60)])).start()
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            ollama.Client(host=server.url, timeout=30).chat(model="qwen3:4b", messages=USER)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    assert wait_for(lambda: len(server.chat_requests()) == 1)
    server.stop()
    worker.join(timeout=10)
    assert not worker.is_alive()  # stop() let the hung call go (10 s is its deadline)
    assert outcome, "the hanging call should fail once the server stops"


def test_down_url_refuses_connections() -> None:
    with pytest.raises(ConnectionError):
        ollama.Client(host=down_url(), timeout=2).list()


def test_stopped_server_is_down() -> None:
    with FakeOllama() as server:
        url = server.url
    with pytest.raises(ConnectionError):
        ollama.Client(host=url, timeout=2).list()
