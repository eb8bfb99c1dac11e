"""A note's YAML frontmatter: the one place it is found, read and written.

``split_frontmatter`` finds the block as text (for rules that look at the body only);
``read_frontmatter`` parses it with python-frontmatter and says what is wrong with a
block that does not parse; ``render_frontmatter`` writes keys and body back as a note.
"""

from __future__ import annotations

import re
from typing import Any

import frontmatter
import yaml

from vaultlink.errors import FrontmatterError

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
    try:
        post = frontmatter.loads(text)
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


def yaml_error_line(text: str) -> int | None:
    """The line of the note (1-based) where its frontmatter's YAML goes wrong.

    YAML reports where it gave up, which for an unclosed ``[`` or quote is a later line
    (often the closing ``---``); the line that needs fixing is where the unclosed thing
    began, which YAML gives as the error's context.
    """
    head, _, _ = split_frontmatter(text)
    lines = head.split("\n")[1:-2] if head.endswith("\n") else head.split("\n")[1:-1]
    try:
        yaml.safe_load("\n".join(lines))
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
