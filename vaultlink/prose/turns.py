"""A speaker's label opening a line ("Caroline: ...", "小明：..."), and whether the labels
of some lines are people taking turns: the small reading both the conversation reader
(``prose.conversation``) and the integrators' judgement of a unit of turns share. Pure.
"""

from __future__ import annotations

import re
from collections import Counter

# A speaker's label: one to three words of letters (any script) and a colon, then text;
# a full-width colon needs no space after it ("小明：你好").
LABEL = re.compile(r"^([^\W\d_][\w'’.-]{0,30}(?: [^\W\d_][\w'’.-]{0,30}){0,2})"
                   r"(?:\s?:\s+|\s?：\s*)(?=\S)")
MAX_SPEAKERS = 8        # more labels are a glossary or a list of fields ("Docker: ...")


def label_of(text: str) -> str:
    """The speaker's label ``text`` opens with ("Jon: ..." -> "Jon"), else ''."""
    m = LABEL.match(text)
    return m.group(1) if m else ""


def talking(labels: Counter[str]) -> bool:
    """Whether labels counted are speakers: at most ``MAX_SPEAKERS``, two of them twice."""
    return len(labels) <= MAX_SPEAKERS and sum(1 for n in labels.values() if n >= 2) >= 2


def told_by(lines: list[str]) -> frozenset[str]:
    """The speakers of a unit's lines, when they are turns of a conversation: two labels
    or more, each opening a line twice or more (empty for any other text)."""
    said = Counter(m.group(1) for m in map(LABEL.match, lines) if m)
    return frozenset(said) if talking(said) else frozenset()


def unlabelled(text: str) -> str:
    """A turn's text without its speaker's label."""
    return LABEL.sub("", text, count=1)
