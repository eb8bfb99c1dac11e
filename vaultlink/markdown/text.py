"""Facts about the lines of a note that every stage shares: what marks a list item or a
fenced block(words themselves, in any script, are read by ``markdown.language``)."""

from __future__ import annotations

import re

# "- item", "* item", "+ item", "1. item", "1) item"
LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A task item as a digest node keeps it ("- ☑ Finish the report"): its state a sign,
# never "[ ]", which would show in the owner's task queries (``prose/blocks``).
KEPT_TASK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+[☐☑☒]\s*")
# an icon plugin's shortcode leading a heading ("##:LiFootprints: 跬步", "## :LiSun: 温故")
ICON_SHORTCODE = r":[A-Za-z][\w-]*:"
# the Tasks plugin's stamps: done, due, scheduled, start, created, each with its date
TASK_DATE = re.compile(r"[✅📅🗓⏳🛫➕❌]\ufe0f?\s*\d{4}-\d{2}-\d{2}")
# and its priorities (highest to lowest), which say how urgent a task is, not what it is
TASK_PRIORITY = re.compile(r"\s*[🔺⏫🔼🔽⏬]\ufe0f?")

# A fenced code block in a model's text: opened at a line's start or after a space
# ("run: ```bash"; in "x```y``` z" the backticks are inline), closed at the start of a
# line or by the end of the text; group 1 is the fence.
FENCED_BLOCK = re.compile(r"(?<!\S)(```|~~~)[^\n`]*\n.*?(?:\n[ \t]*\1[ \t]*(?=\n|$)|$)", re.S)


def task_list(lines: list[str]) -> bool:
    """Whether a unit's lines are a day's task list (every line a task item as kept)."""
    said = [ln for ln in lines if ln.strip()]
    return bool(said) and all(KEPT_TASK.match(ln) for ln in said)


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word before ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def heading_title(text: str) -> str:
    """An ATX heading's text without its closing hashes (after a space, as CommonMark
    has them: "C#" is a heading's whole text) and the spaces around them."""
    text = text.rstrip()
    bare = text.rstrip("#")
    return bare.rstrip() if bare != text and (not bare or bare[-1] in " \t") else text


def task_text(line: str) -> str:
    """A task line's words: no list mark and box, no date stamp, no priority mark."""
    return TASK_PRIORITY.sub("", TASK_DATE.sub("", KEPT_TASK.sub("", line)))
