"""Facts about the words of a note that every stage shares: what marks a list item, and
which words carry no subject (left out of keywords, topic names, query terms and the
offline integrator's similarity)."""

from __future__ import annotations

import re

# "- item", "* item", "+ item", "1. item", "1) item"
LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A fenced code block in a model's text: opened at a line's start or after a space
# ("run: ```bash"; in "x```y``` z" the backticks are inline), closed at the start of a
# line or by the end of the text; group 1 is the fence.
FENCED_BLOCK = re.compile(r"(?<!\S)(```|~~~)[^\n`]*\n.*?(?:\n[ \t]*\1[ \t]*(?=\n|$)|$)", re.S)

STOP_WORDS = frozenset("""
a about after again all also an and any are as at back be because been before being
below between both but by can can't could did do does doesn't don't down during e.g
each etc even few first for from further get getting got had has have he her here
his how i i'm i've i.e if in into is isn't it it's its just let like lot made make
may me might more most much must my new no not now of off on once one only or other
our out over own per really same she should so some still such than that that's the
their them then there these they thing things this those through to too two under up
us use used using very via was way we we're we've well were what when where which
while who why will with won't would yet you your
""".split())



def stem(word: str) -> str:
    """A crude stem so "reviews" meets "review" and "reranking" meets "rerank"."""
    for suffix in ("ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def subject_words(text: str) -> list[str]:
    """The stemmed words of ``text`` that carry its subject, in any script: letters and
    digits (numbers matter: "k = 20" is not "k = 60"; Chinese and Japanese as character
    pairs), the stop words of its language and single letters dropped."""
    from vaultlink.markdown.language import language_of, stop_words, tokens

    stops = stop_words(language_of(text)) if text else STOP_WORDS
    return [stem(w) for part in tokens(text) for w in re.split(r"[^\w]+", part)
            if w and w not in stops and len(w) > 1]
