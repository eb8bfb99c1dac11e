"""Ollama's generic tool-call parser, ported from Go (``tools/tools.go`` in ollama/ollama).

Ollama runs this parser on the generated text of models without a built-in parser,
such as the Qwen2.5 family pulled from its library, whenever the request has
``tools``. Its behaviour is reproduced as is, quirks included, because the point of
the bench is to show the client what a real server sends back:

- text before the tag (``<tool_call>`` for Qwen2.5) is content;
- after the tag, a call is a known tool's name followed by a JSON object holding
  ``arguments`` (or ``parameters``); an unknown name is never a call;
- everything after the tag that is not a call is dropped (``content()`` is empty
  once the tag was seen), unless the tag is ``{`` or ``[`` (templates without one);
- fenced JSON without the tag is plain content.
"""

from __future__ import annotations

import json
from typing import Any

_LOOKING, _CALLING, _DONE = range(3)


def tag_for_template(template: str) -> str:
    """The tool-call tag Ollama would use: ``<tool_call>`` if the template has it, else ``{``."""
    return "<tool_call>" if "<tool_call>" in template else "{"


def _find_map(name: str, obj: dict[str, Any]) -> dict[str, Any] | None:
    value = obj.get(name)
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        if isinstance(parsed, dict):
            return parsed
    return None


def _find_object(tool_name: str, obj: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The arguments inside ``obj``: (args, found); (None, True) is a call without them."""
    if "name" in obj:
        for key in ("arguments", "parameters"):
            if (args := _find_map(key, obj)) is not None:
                return args, True
        return None, True
    if (args := _find_map(tool_name, obj)) is not None:
        return args, True
    for value in obj.values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, dict):
                result, found = _find_object(tool_name, child)
                if found:
                    return result, True
    return None, False


def _find_arguments(tool_name: str, buf: str) -> tuple[dict[str, Any] | None, int]:
    """The first JSON object in ``buf`` that looks like arguments, and where it ends."""
    start, braces, in_string, escaped = -1, 0, False, False
    for i, c in enumerate(buf):
        if escaped:
            escaped = False
            continue
        if c == "\\":
            escaped = True
            continue
        if c == '"':
            in_string = not in_string
            continue
        if in_string:
            continue
        if c == "{":
            if braces == 0:
                start = i
            braces += 1
        elif c == "}":
            braces -= 1
            if braces == 0 and start != -1:
                try:
                    data = json.loads(buf[start : i + 1])
                except ValueError:
                    start = -1
                    continue
                if not isinstance(data, dict):
                    start = -1
                    continue
                args, found = _find_object(tool_name, data)
                return (args if found else data), i
            braces = max(braces, 0)
    return None, 0


class ToolCallParser:
    """Incremental parser: feed generated text with :meth:`add`, in chunks as they come."""

    def __init__(self, tools: list[dict[str, Any]], tag: str) -> None:
        self.tag = tag
        self.names = [str((t.get("function") or {}).get("name", "")) for t in tools]
        self.names = [n for n in self.names if n]
        self.state = _LOOKING
        self.buffer = ""
        self.n = 0

    def add(self, s: str) -> tuple[list[dict[str, Any]], str]:
        """Add generated text; return the tool calls completed and the content to pass on."""
        if self.state == _DONE:
            return [], s
        self.buffer += s
        content = ""
        if self.state == _LOOKING:
            i, found = self._find_tag()
            if i == -1:
                content, self.buffer = self.buffer, ""
            else:
                content, self.buffer = self.buffer[:i], self.buffer[i:]
            if self.tag in ("{", "[") and content.strip():
                self.state = _DONE
                return [], content + self.buffer
            if not found:
                return [], content
            self.state = _CALLING
        calls = []
        while (call := self._parse_call()) is not None:
            calls.append(call)
        if self._done():
            self.state = _DONE
            content, self.buffer = self.buffer, ""
        return calls, content

    def content(self) -> str:
        """What is left to send as content when generation ends."""
        if self.n > 0:
            return ""
        return self.buffer if self.tag in ("{", "[") else ""

    def _find_tag(self) -> tuple[int, bool]:
        if (i := self.buffer.find(self.tag)) > -1:
            return i, True
        for k in range(min(len(self.buffer), len(self.tag)), 0, -1):
            if self.buffer.endswith(self.tag[:k]):
                return len(self.buffer) - k, False
        return -1, False

    def _find_tool(self) -> tuple[str | None, int]:
        buf = self.buffer
        if not buf or not self.names:
            return None, 0
        longest = max(len(n) for n in self.names)
        for k in range(1, min(len(buf), longest) + 1):
            tail = buf[-k:]
            if any(len(tail) < len(n) and n.startswith(tail) for n in self.names):
                return None, 0  # wait for more text: "get" may become "get_weather"
        found, start, end = None, -1, -1
        for name in self.names:
            pos = buf.find(name)
            if pos == -1:
                continue
            if found is not None and (pos > start or (pos == start and len(name) <= len(found))):
                continue
            found, start, end = name, pos, pos + len(name)
        return (found, end) if found is not None else (None, 0)

    def _parse_call(self) -> dict[str, Any] | None:
        name, end = self._find_tool()
        if name is None:
            return None
        args, i = _find_arguments(name, self.buffer)
        if args is None:
            return None
        call = {"function": {"index": self.n, "name": name, "arguments": args}}
        self.n += 1
        self.buffer = self.buffer[max(end, i) :]
        return call

    def _done(self) -> bool:
        pairs = {"{": ("{", "}"), "[": ("[", "]")}
        if self.tag not in pairs:
            return False
        open_, close = pairs[self.tag]
        count, in_string, escaped = 0, False, False
        for c in self.buffer:
            if escaped:
                escaped = False
                continue
            if c == "\\":
                escaped = True
                continue
            if c == '"':
                in_string = not in_string
                continue
            if in_string:
                continue
            if c == open_:
                count += 1
            elif c == close:
                count -= 1
                if count == 0:
                    return True
        return False
