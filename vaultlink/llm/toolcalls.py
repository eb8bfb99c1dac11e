"""Tool calls a model wrote as text, and how each call arrived.

Small local models often answer a tool turn with the call in the message text instead
of ``message.tool_calls``: bare JSON, JSON in a code fence, inside ``<tool_call>`` tags,
several calls at once, the arguments as a JSON *string*, prose around it. Ollama's own
parser only catches some of these. ``calls_from_text`` finds the rest, so a call is
not lost for its wrapping; what it cannot read stays text for the caller to judge.

Pure functions; the caller says which tool names exist.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from vaultlink.llm.chat import MALFORMED, TEXT, ToolCall, json_values, parse_arguments

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def _as_call(obj: Any, names: Collection[str]) -> ToolCall | None:
    """A call from one JSON object: ``{"name", "arguments"|"parameters"}``, possibly
    wrapped as ``{"function": {...}}`` the way the chat API nests it."""
    if not isinstance(obj, Mapping):
        return None
    if isinstance(obj.get("function"), Mapping):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or name not in names:
        return None
    raw = obj.get("arguments", obj.get("parameters", {}))
    args, form = parse_arguments(raw)
    return ToolCall(name, args, TEXT if form != MALFORMED else MALFORMED)


def calls_from_text(text: str, names: Collection[str]) -> list[ToolCall]:
    """The tool calls written in ``text``, in order; empty when there are none.

    Only objects naming one of ``names`` count, so a receipt or a copy of the unit is
    never mistaken for a call.
    """
    if not text or not names:
        return []
    tagged = _TAGGED.findall(text)
    sources = tagged if tagged else [text]  # fences need no special case: their JSON is found
    calls: list[ToolCall] = []
    for source in sources:
        for value in json_values(source):
            items = value if isinstance(value, list) else [value]
            for item in items:
                call = _as_call(item, names)
                if call is not None:
                    calls.append(call)
    return calls

