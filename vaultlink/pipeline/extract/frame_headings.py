"""The day-note frame's headings: which one a heading line is, and which of them come back.

A frame's heading that names nothing but tells how to read what is under it ("## Standup",
"## Notes") is structure, not the template's content: blank, a day's standup lines read as
a subject's sentences and its "## Notes" ran on under the owner's "## Weekend"
(``template.DayTemplate.owner_text`` puts them back; docs/pipeline.md).
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultlink.markdown.text import ICON_SHORTCODE
from vaultlink.prose.subject_names import LOGISTICS, STATUS, is_generic
from vaultlink.prose.units import slugify

# "## 🦶跬步（...）", "##:LiFootprints: 跬步（...）", "### 跬步（...）": one heading of the frame
# (the owner's template changed its level or icon over the years)
_HEADING_KEY = re.compile(rf"^#{{1,6}}(?:\s+|(?=:))(?:{ICON_SHORTCODE}\s*)?[^\w]*")


def heading_key(line: str) -> str:
    """A heading's words, its level and leading icons aside ('' for no heading)."""
    m = _HEADING_KEY.match(line)
    return line[m.end():].strip().casefold() if m else ""


LEVEL = re.compile(r"^ {0,3}(#{1,6})(?:\s|:|$)")
_WORD = re.compile(r"[^\W\d_]")


@lru_cache(maxsize=1024)  # a frame's few headings, once per line of every day note
def sorts_only(line: str) -> bool:
    """Whether a line is a heading that names nothing but tells how to read what is
    under it: a status heading ("## Standup") or a generic one ("## Notes"); not a date,
    and not a to-do heading (a day's task list under the frame's "# Todo" is the owner's
    record of the day, ``prose/day_tasks``)."""
    key = heading_key(line)
    slug = slugify(key)
    return bool(_WORD.search(key)) and slug not in LOGISTICS and (
        slug in STATUS or is_generic(key))


def keep_sorting_headings(lines: list[str], written: list[str]) -> None:
    """Put back the frame's headings that only sort what the owner wrote under them
    (``sorts_only``), but a status heading above a blanked one that holds the owner's
    lines; one pass from the bottom (a note of 100,000 template headings: 0.3 s)."""
    blank_at: set[int] = set()  # frame headings left blank with the owner's lines under them
    below: dict[int, int] = {}  # level -> the nearest heading below that ends a section
    text_at: int | None = None  # the nearest line below that is not blank
    for i in range(len(lines) - 1, -1, -1):
        head = LEVEL.match(written[i])
        level = len(head.group(1)) if head else 0
        if lines[i].strip():
            if head:
                below[level] = i
            text_at = i
            continue
        if not head:
            continue
        ends = min((j for lv, j in below.items() if lv <= level), default=None)
        if text_at is None or (ends is not None and text_at >= ends):
            continue  # a bare heading: nothing to sort, nothing to run on
        status = slugify(heading_key(written[i])) in STATUS
        if sorts_only(written[i]) and not (status and ends in blank_at):
            lines[i] = written[i]
            text_at = i
        else:
            blank_at.add(i)
        below[level] = i
