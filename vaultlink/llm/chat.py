"""The chat protocol the dream speaks: a reply, its tool calls, and the prompt budget.

Callers (extract, the tool session, topics) depend on ``ChatModel`` only, so tests and
the offline integrator can stand in for a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from vaultlink.errors import ModelOutputError

MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators the chat template adds


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for; ``arguments`` is always a dict.

    Arguments that were not a JSON object arrive as ``{"_raw": text}`` so the agent
    loop can tell the model what was wrong instead of crashing.
    """

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ChatReply:
    """The assistant's answer: text, tool calls, and the token counts the server reported."""

    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    eval_tokens: int = 0


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


def normalise_arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: a mapping as is, a JSON object string parsed.

    Anything else (bad JSON, a list, a number) is kept as ``{"_raw": text}``.
    """
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"_raw": value}
        return dict(parsed) if isinstance(parsed, dict) else {"_raw": value}
    return {"_raw": json.dumps(value, default=str)}


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON object in a model's text (fenced or bare), or None."""
    m = _JSON_OBJECT.search(text or "")
    if not m:
        return None
    try:
        return json.loads(m.group(0))
    except json.JSONDecodeError:
        return None


def require_content(reply: Any) -> str:
    """The text of a reply that must be text (structured output)."""
    content = getattr(reply, "content", "")
    if not isinstance(content, str) or not content.strip():
        raise ModelOutputError("the model answered with no content")
    return content
