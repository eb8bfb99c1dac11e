"""A note's YAML frontmatter: the one place it is found, read and written.

``split_frontmatter`` finds the block as text (for rules that look at the body only);
``read_frontmatter`` parses it with python-frontmatter and says what is wrong with a
block that does not parse; ``render_frontmatter`` writes keys and body back as a note.

Note text is untrusted: the block is parsed within limits (its size, its nesting, and
what its YAML aliases expand to), so 424 bytes of anchors cannot become gigabytes when a
value is read as text. ``text_value`` reads a value as one bounded line.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import frontmatter
import yaml
from frontmatter.default_handlers import BaseHandler, YAMLHandler

from vaultlink.errors import FrontmatterError

# Obsidian's properties are a few lines; these leave a thousand times that room.
MAX_BLOCK_BYTES = 256_000
MAX_DEPTH = 40
# characters and values a block may come to with every alias written out
MAX_EXPANDED = 300_000
TEXT_VALUE_CHARS = 500

_BLOCK = re.compile(r"\A(\ufeff?---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z))", re.DOTALL)


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """``(frontmatter block, body, lines the block takes)``; none: ``("", text, 0)``."""
    m = _BLOCK.match(text)
    if not m:
        return "", text, 0
    head = m.group(1)
    return head, text[m.end():], head.count("\n")


def read_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The keys and the body of a note's text.

    Raises ``FrontmatterError`` (with the line of the note where YAML gave up) for a
    block that does not parse, or that is not a mapping of keys to values.
    """
    head, _, _ = split_frontmatter(text)
    if len(head.encode("utf-8")) > MAX_BLOCK_BYTES:
        raise FrontmatterError(f"its frontmatter is {len(head.encode('utf-8')):,} bytes, over "
                               f"the {MAX_BLOCK_BYTES:,} a note's properties may take; "
                               "move the long values into the note's body")
    try:
        post = frontmatter.loads(text, handler=_handler_of(text))
    except _TooLarge as exc:
        raise FrontmatterError(f"its frontmatter {exc}; write the values out "
                               "instead of repeating YAML anchors") from None
    except RecursionError:
        raise FrontmatterError(f"its frontmatter nests deeper than {MAX_DEPTH} levels; "
                               "flatten the block between the '---' lines") from None
    except yaml.YAMLError:
        line = yaml_error_line(text)
        at = f" at line {line}" if line else ""
        raise FrontmatterError(f"its YAML frontmatter does not parse{at}; "
                               "fix the block between the '---' lines") from None
    except ValueError as exc:
        raise FrontmatterError(f"its frontmatter is unusable ({exc})") from None
    meta = post.metadata
    if not meta and post.handler is not None:
        # python-frontmatter silently drops a block that is not a mapping (a list, a
        # bare string): that is a broken note, not a note without frontmatter.
        block = post.handler.load(post.handler.split(text.strip())[0])
        if block is not None and not isinstance(block, dict):
            raise FrontmatterError("its frontmatter is not a mapping of keys to values; "
                                   "write it as 'key: value' lines")
    return dict(meta), post.content


class _TooLarge(Exception):
    """A block past one of the limits; the message says which."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with a nesting limit, refusing a document whose aliases
    expand past ``MAX_EXPANDED`` before anything is built from it."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise RecursionError  # reported as too deep, as Python's own limit is
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        if expanded_size(node) > MAX_EXPANDED:
            raise _TooLarge(f"expands to over {MAX_EXPANDED:,} characters through its "
                            "YAML aliases")
        return self.construct_document(node)


def expanded_size(node: yaml.Node) -> int:
    """Values plus characters of ``node`` with every alias written out, counted over the
    shared graph (each node once), so a bomb is measured without being expanded."""
    sizes: dict[int, int] = {}
    order: list[yaml.Node] = []
    stack, seen = [node], set()
    while stack:  # children before parents, without recursion
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        order.append(item)
        stack.extend(_children(item))
    for item in reversed(order):
        if isinstance(item, yaml.ScalarNode):
            sizes[id(item)] = 1 + len(item.value)
        else:  # a child still unsized is an alias loop back up: counted as one value
            sizes[id(item)] = 1 + sum(sizes.get(id(c), 1) for c in _children(item))
    return sizes[id(node)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _BoundedYAMLHandler(YAMLHandler):
    def load(self, fm: str, **kwargs: object) -> Any:
        return yaml.load(fm, Loader=_BoundedLoader)


_BOUNDED_YAML = _BoundedYAMLHandler()


def _handler_of(text: str) -> BaseHandler | None:
    """The handler python-frontmatter would pick (None: the note has no block), with
    YAML read by the bounded loader."""
    found = frontmatter.detect_format(text.strip(), frontmatter.handlers)
    return _BOUNDED_YAML if isinstance(found, YAMLHandler) else found


def text_value(value: Any, limit: int = TEXT_VALUE_CHARS) -> str:
    """A frontmatter value read as one line of text of at most ``limit`` characters:
    a string or a number as written, a date in ISO form, a list of them joined with
    commas; a mapping (not text) is empty."""
    if isinstance(value, str):
        return " ".join(value[:limit * 2].split())[:limit]
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int | float):
        return str(value)[:limit]
    if isinstance(value, list):
        parts = (text_value(v, limit) for v in value[:limit])
        return ", ".join(p for p in parts if p)[:limit]
    return ""


def yaml_error_line(text: str) -> int | None:
    """The line of the note (1-based) where its frontmatter's YAML goes wrong.

    YAML reports where it gave up, which for an unclosed ``[`` or quote is a later line
    (often the closing ``---``); the line that needs fixing is where the unclosed thing
    began, which YAML gives as the error's context.
    """
    head, _, _ = split_frontmatter(text)
    lines = head.split("\n")[1:-2] if head.endswith("\n") else head.split("\n")[1:-1]
    try:
        yaml.load("\n".join(lines), Loader=_BoundedLoader)
    except (_TooLarge, RecursionError):
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        context = getattr(exc, "context_mark", None)
        opened = str(getattr(exc, "context", "") or "")
        if context is not None and ("flow" in opened or "quoted" in opened):
            mark = context  # an unclosed [ { or quote: the fix is where it opened
        return None if mark is None else mark.line + 2  # + the '---' line, 1-based
    return None


def render_frontmatter(meta: dict[str, Any], body: str) -> str:
    """Frontmatter and body as note text, keys in the order given."""
    if not meta:
        return body if body.endswith("\n") else body + "\n"
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=10_000).strip()
    body = body.lstrip("\n")
    if not body.endswith("\n"):
        body += "\n"
    return f"---\n{head}\n---\n{body}"
