"""Nodes named in a text, and the subject a query names: recall by name.

A digest is woven with ``[[wikilinks]]`` where its text names another node, and the
documentation it is made from does the same with links: a page names the pages next
to its subject. So besides meaning (vectors) and words (BM25), ``node_search`` recalls
by name in two directions:

* the nodes the best match **names** in its text (its links, or a node's name written
  as plain words): the neighbours of the subject the query is about;
* the nodes whose name or text names the query's **subject** (the words before its
  first ``:``, ``. ``, ``。`` or line break), as one phrase: the node of that name, then the
  nodes that would link to it.

Pure: :class:`NameTable` is built from (id, name) pairs by the index that owns them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from vaultlink.index.words import has_cjk, words_of
from vaultlink.markdown.language import STOP_WORDS

# A subject longer than this is a sentence, not a name; no phrase search for it. A CJK
# run's search words are its pairs of characters, and a word there is about two
# characters long, so a pair counts as half a word (``_size``).
MAX_SUBJECT_WORDS = 8
# ":" or "：", ". " or "。", or a line break (Chinese and Japanese write no space after
# their full stop, and full-width colons).
_SUBJECT_END = re.compile(r"[:：。\n]|\.\s")


def subject_of(query: str) -> tuple[str, ...]:
    """The words of the subject ``query`` names first, or ``()`` when it names none.

    The dream and the offline integrator ask ``"<unit name>: <summary>"`` or ``"<unit
    name>. <summary>"``; a short query without either is all subject.
    """
    words = words_of(_SUBJECT_END.split(query, maxsplit=1)[0])
    return words if _is_a_name(words) and _size(words) <= MAX_SUBJECT_WORDS else ()


def _size(words: tuple[str, ...]) -> float:
    """How many words ``words`` are, a CJK pair of characters counting as half of one."""
    return sum(0.5 if has_cjk(w) else 1.0 for w in words)


def _name_words(name: str) -> tuple[str, ...]:
    """The words of a node's name, cut after ``MAX_SUBJECT_WORDS`` (``_size``)."""
    words = words_of(name)
    while _size(words) > MAX_SUBJECT_WORDS:
        words = words[:-1]
    return words


def _is_a_name(words: tuple[str, ...]) -> bool:
    """Some words, and not one stop word alone ("About", "the"), which every text has."""
    return bool(words) and not (len(words) == 1 and words[0] in STOP_WORDS)


class NameTable:
    """Every node's name as words, to find which nodes a text names.

    A name of one stop word ("About", "Index") would be found in every text and say
    nothing, so it is left out; two nodes of the same name are both found.
    """

    def __init__(self, names: Iterable[tuple[int, str]]) -> None:
        self._ids: dict[tuple[str, ...], list[int]] = {}
        for doc_id, name in names:
            words = _name_words(name)
            if not _is_a_name(words):
                continue
            self._ids.setdefault(words, []).append(doc_id)
        self._starts = {words[0] for words in self._ids}
        self._longest = max((len(words) for words in self._ids), default=0)

    def __len__(self) -> int:
        return sum(len(ids) for ids in self._ids.values())

    def named(self, words: tuple[str, ...]) -> list[int]:
        """Ids of the nodes whose name is exactly ``words`` (as ``subject_of`` gives them)."""
        return list(self._ids.get(words, ()))

    def named_in(self, text: str, skip: Collection[int] = (), limit: int | None = None
                 ) -> list[int]:
        """Ids of the nodes whose name ``text`` contains as whole words, in the order the
        text first names them (the longest name at a position first); the first
        ``limit`` of them when given."""
        words = words_of(text)
        found: dict[int, None] = {}
        for start, word in enumerate(words):
            if word not in self._starts:
                continue
            for length in range(min(self._longest, len(words) - start), 0, -1):
                for doc_id in self._ids.get(words[start:start + length], ()):
                    if doc_id not in skip:
                        found.setdefault(doc_id)
                        # the rest is never read: at 100,000 nodes of common-word names a
                        # body named ~12,000 of them, 15 ms a query for a list cut to 60
                        if limit is not None and len(found) >= limit:
                            return list(found)
        return list(found)
