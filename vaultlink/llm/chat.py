"""The chat protocol the dream speaks: a reply, its tool calls, and the prompt budget.

Callers (extract, the tool session, topics) depend on ``ChatModel`` only, so tests and
the offline integrator can stand in for a model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from vaultlink.errors import ModelOutputError

MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators the chat template adds

# How a call arrived, as the journal and the bench count them.
NATIVE = "native"  # message.tool_calls with a JSON object of arguments
STRING_ARGS = "string_args"  # message.tool_calls, arguments a JSON string: parsed
TEXT = "text"  # written in the message text (bare, fenced or tagged): parsed
MALFORMED = "malformed"  # arguments that are no JSON object at all
FORMS = (NATIVE, STRING_ARGS, TEXT, MALFORMED)
REPAIRED = (STRING_ARGS, TEXT)


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for; ``arguments`` is always a dict.

    Arguments that were not a JSON object arrive as ``{"_raw": text}`` so the agent
    loop can tell the model what was wrong instead of crashing.
    """

    name: str
    arguments: dict[str, Any]
    form: str = "native"  # how it arrived: see ``llm.toolcalls.FORMS``


@dataclass(frozen=True)
class ChatReply:
    """The assistant's answer: text, tool calls, and the token counts the server reported."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    eval_tokens: int = 0
    done_reason: str = "stop"  # "length": the answer was cut at its length cap
    seconds: float = 0.0  # wall time of the call, waiting for the first token included
    wait_seconds: float = 0.0  # until the first token: the model reading the prompt


class ChatModel(Protocol):
    """Anything that answers a chat: ``OllamaChat``, or a scripted model in tests."""

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             schema: dict[str, Any] | None = None) -> ChatReply:
        """Answer ``messages``; offer ``tools``; with ``schema``, answer JSON matching it."""
        ...


def estimate_tokens(text: str) -> int:
    """A conservative token count: UTF-8 bytes / 3 (real tokenisers average ~4 for English)."""
    return len(text.encode("utf-8")) // 3 + 1


def prompt_tokens(messages: Sequence[Mapping[str, Any]],
                  tools: Sequence[Mapping[str, Any]] | None = None) -> int:
    """Estimated tokens of a chat prompt: every message plus the tool schemas."""
    total = 0
    for msg in messages:
        total += MESSAGE_OVERHEAD_TOKENS + estimate_tokens(str(msg.get("content") or ""))
        if msg.get("tool_calls"):
            total += estimate_tokens(json.dumps(msg["tool_calls"], default=str))
    if tools:
        total += estimate_tokens(json.dumps(list(tools), default=str))
    return total


def budget_tokens(num_ctx: int) -> int:
    """Tokens a prompt may use: ``num_ctx`` minus a quarter kept for the answer."""
    return num_ctx - num_ctx // 4


def fits(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None,
         num_ctx: int) -> bool:
    """Whether the prompt leaves room for an answer within ``num_ctx``."""
    return prompt_tokens(messages, tools) <= budget_tokens(num_ctx)


def parse_arguments(value: Any) -> tuple[dict[str, Any], str]:
    """Arguments as a dict and the form they came in (``NATIVE``, ``STRING_ARGS`` or
    ``MALFORMED``, the last kept as ``{"_raw": text}`` for the model to be told)."""
    if value is None:
        return {}, NATIVE
    if isinstance(value, Mapping):
        return dict(value), NATIVE
    if isinstance(value, str):
        if not value.strip():
            return {}, STRING_ARGS
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"_raw": value}, MALFORMED
        if isinstance(parsed, dict):
            return parsed, STRING_ARGS
        return {"_raw": value}, MALFORMED
    return {"_raw": json.dumps(value, default=str)}, MALFORMED


def normalise_arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: a mapping as is, a JSON object string parsed.

    Anything else (bad JSON, a list, a number) is kept as ``{"_raw": text}``.
    """
    return parse_arguments(value)[0]


_DECODER = json.JSONDecoder()


def json_values(text: str) -> Iterator[Any]:
    """Every top-level JSON object or array in ``text``, in order: bare, fenced, or
    among prose (a model's answer is untrusted text, not a JSON document)."""
    i = 0
    while i < len(text):
        if text[i] in "{[":
            try:
                value, end = _DECODER.raw_decode(text, i)
            except ValueError:
                i += 1
                continue
            yield value
            i = end
        else:
            i += 1


def extract_json(text: str) -> Any:
    """The first JSON object in a model's text (fenced, bare or among prose), or None."""
    return next((v for v in json_values(text or "") if isinstance(v, dict)), None)


def require_content(reply: Any) -> str:
    """The text of a reply that must be text (structured output)."""
    content = getattr(reply, "content", "")
    if not isinstance(content, str) or not content.strip():
        raise ModelOutputError("the model answered with no content")
    return content
