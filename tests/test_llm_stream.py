"""Streaming, silence, progress and messy answers: the real ``ollama.Client`` against the
fake server, which streams like Ollama and plays what small local models really send
(calls written as text, in fences, with string arguments, several at once, prose
around them, an answer cut at its length cap, silence in the middle of an answer)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.fakes.ollama_server import FakeOllama, Hang, HTTPError, Scripted, Stall, reply
from vaultlink.errors import AnswerCut, ModelTimeout
from vaultlink.llm.chat import MALFORMED, NATIVE, STRING_ARGS, TEXT, ToolCall, extract_json
from vaultlink.llm.ollama import OllamaChat, parameter_count
from vaultlink.llm.toolcalls import calls_from_text

MODEL = "qwen2.5-coder:1.5b"
NAMES = {"node_search", "write", "read"}
TOOLS = [{"type": "function", "function": {"name": n, "description": n,
                                           "parameters": {"type": "object"}}} for n in NAMES]
USER = [{"role": "user", "content": "Integrate the unit."}]


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama() as s:
        yield s


def chat(server: FakeOllama, **kw: float) -> OllamaChat:
    kw = {"timeout_seconds": 0.0, "silence_seconds": 300.0, **kw}
    return OllamaChat(server.url, MODEL, num_ctx=2048, retries=0, **kw)  # type: ignore[arg-type]


# -- the parser, on the shapes real models wrote --------------------------------------


@pytest.mark.parametrize("text, expected", [
    ('{"name": "node_search", "arguments": {"query": "rrf"}}',
     [ToolCall("node_search", {"query": "rrf"}, TEXT)]),
    ('Let me search.\n```json\n{"name": "node_search", "arguments": {"query": "rrf"}}\n```',
     [ToolCall("node_search", {"query": "rrf"}, TEXT)]),
    ('<tool_call>\n{"name": "read", "arguments": "{\\"path\\": \\"digest/wiki/a.md\\"}"}\n'
     '</tool_call>', [ToolCall("read", {"path": "digest/wiki/a.md"}, TEXT)]),
    ('[{"name": "node_search", "parameters": {"query": "a"}}, '
     '{"function": {"name": "read", "arguments": {"path": "b.md"}}}]',
     [ToolCall("node_search", {"query": "a"}, TEXT), ToolCall("read", {"path": "b.md"}, TEXT)]),
    ('{"name": "write", "arguments": "not json"}',
     [ToolCall("write", {"_raw": "not json"}, MALFORMED)]),
])
def test_calls_written_as_text_are_found(text: str, expected: list[ToolCall]) -> None:
    assert calls_from_text(text, NAMES) == expected


@pytest.mark.parametrize("text", [
    '```json\n{"name": "online-rebuild", "bucket": "wiki", "summary": "s", "paths": []}\n```',
    '{"action": "CREATE", "target_path": "digest/wiki/a.md", "note": "n"}',
    '{"name": "delete_everything", "arguments": {}}',
    "I would search for RRF first.",
])
def test_a_copy_of_the_unit_a_receipt_or_prose_is_no_call(text: str) -> None:
    assert calls_from_text(text, NAMES) == []


def test_the_first_json_object_among_prose_is_extracted() -> None:
    text = 'Sure {not json} here: {"action": "REFINE", "x": {"y": 1}} and {"b": 2}'
    assert extract_json(text) == {"action": "REFINE", "x": {"y": 1}}


# -- through the client ---------------------------------------------------------------


def test_answers_are_streamed_and_progress_is_reported(server: FakeOllama) -> None:
    server.model = Scripted([reply("word " * 200)])
    ticks: list[tuple[int, float]] = []
    model = chat(server, progress_every=0.0)  # report every piece
    model.progress = lambda tokens, seconds: ticks.append((tokens, seconds))
    out = model.chat(USER)
    assert out.content == ("word " * 200).strip()
    assert server.chat_requests()[0]["stream"] is True
    assert ticks and [t for t, _ in ticks] == sorted(t for t, _ in ticks)
    assert ticks[-1][0] >= 200  # 1000 characters in pieces of 4


def test_silence_in_the_middle_of_an_answer_is_a_timeout(server: FakeOllama) -> None:
    server.model = Scripted([Stall(30, reply("a long answer " * 20), after=5)])
    with pytest.raises(ModelTimeout, match=r"sent nothing for 1 s \(5 token"):
        chat(server, silence_seconds=1.0).chat(USER)


def test_an_answer_past_the_total_limit_is_a_timeout(server: FakeOllama) -> None:
    server.model = Scripted([Stall(1.2, reply("slow " * 50), after=2)])
    with pytest.raises(ModelTimeout, match=r"still answering after 1 s"):
        chat(server, silence_seconds=10.0, timeout_seconds=1.0).chat(USER)


def test_a_server_silent_from_the_start_is_stopped_by_the_total_limit(
        server: FakeOllama) -> None:
    """The total limit holds before the first byte too: a server that sends nothing
    (not even headers) is given up at ``timeout_seconds`` when that is shorter than
    ``silence_seconds``, not waited for until it answers. Here it would answer a 500
    after 30 s: the error says which limit ended the call, not what came later."""
    server.model = Scripted([Hang(30.0, then=HTTPError(500))])
    with pytest.raises(ModelTimeout, match=r"still answering after 1 s \(0 tokens\)"):
        chat(server, silence_seconds=300.0, timeout_seconds=1.0).chat(USER)


@pytest.mark.parametrize("content, form", [
    ('{"name": "node_search", "arguments": {"query": "rrf"}}', TEXT),
    ('```json\n{"name": "node_search", "arguments": {"query": "rrf"}}\n```', TEXT),
])
def test_calls_in_the_text_become_tool_calls(server: FakeOllama, content: str,
                                             form: str) -> None:
    server.model = Scripted([reply(content)])
    out = chat(server).chat(USER, tools=TOOLS)
    assert out.tool_calls == [ToolCall("node_search", {"query": "rrf"}, form)]


def test_native_calls_keep_their_form(server: FakeOllama) -> None:
    server.model = Scripted([reply(tool_calls=[("read", {"path": "digest/wiki/a.md"}),
                                               ("node_search", {"query": "x"})])])
    out = chat(server).chat(USER, tools=TOOLS)
    assert [c.form for c in out.tool_calls] == [NATIVE, NATIVE]
    assert STRING_ARGS != NATIVE  # string arguments on the wire: see test_llm


def test_an_answer_cut_at_its_cap_is_answer_cut_when_json_was_asked(server: FakeOllama) -> None:
    cut = {**reply('{"units": [{"name": "a", "paths": ["x", "x", "x"'), "done_reason": "length"}
    server.model = Scripted([cut, cut])
    with pytest.raises(AnswerCut, match="length cap of 1024"):
        chat(server).chat(USER, schema={"type": "object"})
    out = chat(server).chat(USER)  # plain text: returned, marked
    assert out.done_reason == "length"


def test_counts_and_seconds_come_back(server: FakeOllama) -> None:
    server.model = Scripted([reply(json.dumps({"units": []}))])
    out = chat(server).chat(USER, schema={"type": "object"})
    assert out.prompt_tokens > 0 and out.eval_tokens > 0 and out.seconds > 0


def test_parameter_count_from_show(server: FakeOllama) -> None:
    assert parameter_count(server.url, MODEL) == 1_543_714_304
    assert parameter_count(server.url, "not-pulled") is None
