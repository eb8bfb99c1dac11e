"""Evidence that a unit and a digest node share a subject, checked by vaultlink.

An update (CORROBORATE, REFINE, CORRECT) writes the unit's text into a node the owner
trusts, so it needs more than nearness: the unit must name the node's subject, or state
the node's own facts (the same sentence with a new value, the same steps). Similarity
alone does not tell a duplicate from a neighbour (a Redis query cache scored close to the
search service, an API key leak in the staging pods' logs close to the staging deploy),
and a model's word for it is no evidence either. Both integrators use these: the offline
one (``pipeline/offline/policy.py``) and the one-shot model path (``oneshot.py``).
"""

from __future__ import annotations

import re
from typing import Any

from vaultlink.markdown.language import stem, stop_words_of, tokens

# A unit sentence states one of the node's facts when this share of its words (numbers
# aside, at least FRAME_WORDS of them) stands in one sentence of the node.
FRAME = 0.6
FRAME_WORDS = 2
# Share of the unit's words the node holds from which the unit restates the node.
RESTATES = 0.7
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*|\n+")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
# "Melanie's pottery" names Melanie: a possessive ending is no part of the word
_POSSESSIVE = re.compile(r"['’]s$")
# where the subject phrase a description opens with ends
_PHRASE_END = re.compile(r"[:;,.!?。：；，]\s|[;(。：；，]|\s[-—–]\s|—"
                         r"| (?:is|are|was|were|uses?|means?|covers?|that|which|with|when"
                         r"|where|used)\b")


def content_words(text: str) -> list[str]:
    """Stemmed words that carry meaning, in any script (the stop words of the text's
    language dropped; Chinese and Japanese as character pairs): the words of
    ``offline.text.content_words``, here so that both integrators can import this module."""
    stops = stop_words_of(text)
    words = (_POSSESSIVE.sub("", t.strip("'’.")) for t in tokens(text))
    return [stem(w) for w in words if w not in stops and len(w) > 1]


def names_subject(name: str, text: str) -> bool:
    """Whether ``text`` names the subject a node's ``name`` says: most of the name's
    words that carry meaning, by stem (any script; "Deploy to staging" needs both).
    Similarity alone does not tell a duplicate from a neighbour; a subject is said."""
    want = set(content_words(name.replace("-", " ")))
    return bool(want) and 2 * len(want & set(content_words(text))) > len(want)


def says_name(name: str, text: str) -> bool:
    """Whether ``text`` says a node's name of two words or more whole, as one phrase ("My
    morning focus time stays" says "Morning focus time"), not its words here and there."""
    words = name.replace("-", " ").split()
    if len(content_words(" ".join(words))) < 2:
        return False
    phrase = r"\s+".join(map(re.escape, words))
    return re.search(rf"(?<![\w-]){phrase}(?![\w-])", text, re.IGNORECASE) is not None


def subject_names(meta: dict[str, Any]) -> list[str]:
    """How a node names its subject: its name, its aliases, and the subject phrase its
    description opens with ("Hybrid search in Sift" of "Hybrid search in Sift: BM25 and
    vectors fused with RRF")."""
    out = [str(meta.get("name") or "")]
    for key in ("aliases", "alias"):
        value = meta.get(key)
        out += [str(v) for v in value] if isinstance(value, list) else [str(value or "")]
    description = " ".join(str(meta.get("description") or "").split())
    if description:
        out.append(_PHRASE_END.split(description, maxsplit=1)[0])
    return list(dict.fromkeys(n.strip() for n in out if n and n.strip()))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if s and s.strip()]


def _frame(sentence: str) -> set[str]:
    return set(content_words(_NUMBER.sub(" ", sentence)))


def same_facts(summary: str, body: str) -> str:
    """How ``summary`` states facts of a node whose body (without Sources) is ``body``,
    in words, or '' when it states none: it restates the node (most of its words), a
    sentence of it gives one of the node's sentences a new value, or two of its
    sentences are the node's (the same steps)."""
    held = set(content_words(body))
    want = set(content_words(summary))
    if want and len(want & held) / len(want) >= RESTATES:
        return "it restates the node"
    lines = [(_frame(s), set(_NUMBER.findall(s))) for s in _sentences(body)]
    matched = 0
    for sentence in _sentences(summary):
        frame, values = _frame(sentence), set(_NUMBER.findall(sentence))
        if len(frame) < FRAME_WORDS:
            continue
        for words, numbers in lines:
            if len(frame & words) >= max(FRAME_WORDS, FRAME * len(frame)):
                if values - numbers and numbers:
                    return f"it gives a new value to the node's {sentence[:60]!r}"
                matched += 1
                break
        if matched >= 2:
            return "two of its sentences are the node's"
    return ""


def names_node(unit_text: str, meta: dict[str, Any]) -> str:
    """How a unit (``unit_text``: its title and summary) names the subject of a node
    whose front matter is ``meta``, in words; '' when it names none of its names."""
    for name in subject_names(meta):
        if names_subject(name, unit_text):
            return f"the unit names {name!r}"
    return ""


def shared_subject(unit_text: str, meta: dict[str, Any], body: str, summary: str) -> str:
    """The evidence that a unit (``unit_text``: its title and summary; ``summary`` alone
    for facts) and a node (front matter ``meta``, ``body`` without Sources) share a
    subject, in words; '' when there is none."""
    return names_node(unit_text, meta) or same_facts(summary, body)
