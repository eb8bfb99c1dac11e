"""Nodes named in a text, and the subject a query names: recall by name.

A digest names its neighbours with ``[[wikilinks]]``, as the documentation it comes from
does, so besides meaning and words ``node_search`` recalls by name both ways: the nodes
the subject's node (else the best match) **names** in its text, and the nodes whose name
or text names the query's **subject** (the words before its first ``:``, ``. ``, ``。``
or line break) as one phrase. A word of a script whose language inflects names (Russian)
is read as its Snowball stem (``_STEMMERS``), in the name table and the text alike, and
asked for by its stem as a prefix (``name_phrase``); English needs nothing (FTS5's porter
tokenizer stems it). Pure: :class:`NameTable` is built from (id, name) pairs.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Iterable
from functools import lru_cache
from typing import Any

from vaultlink.index.words import has_cjk, words_of
from vaultlink.markdown.language import STOP_WORDS

# Scripts whose letters tell which Snowball stemmer reads them. Cyrillic is written in
# several languages, Russian most of all; the Russian stemmer takes off the endings they
# share, and a query and a text are cut alike whatever they are in. The Latin script
# does not tell its language (FTS5's porter stems its English words), nor do Han, kana
# and Hangul, whose words are found as pairs of characters (``words``).
_STEMMERS = ((re.compile("[\u0400-\u04ff]"), "russian"),)
# One stemmer of each language per thread: the daemon's API thread searches while its
# worker indexes, and a Snowball stemmer keeps state between words.
_local = threading.local()


@lru_cache(maxsize=65_536)  # a vault's words repeat: a page's 2,400 words are ~950
def _stem(word: str) -> str:
    """``word`` as its stem when its script tells its stemmer, else ``word``."""
    for script, language in _STEMMERS:
        if script.search(word) is not None:
            stemmers: dict[str, Any] | None = getattr(_local, "stemmers", None)
            if stemmers is None:
                stemmers = _local.stemmers = {}
            if language not in stemmers:
                import snowballstemmer  # imported here: most vaults never meet Cyrillic

                stemmers[language] = snowballstemmer.stemmer(language)
            return str(stemmers[language].stemWord(word)) or word
    return word


def name_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as names are compared: ``words_of``'s, each word of a script
    with a stemmer (``_STEMMERS``) as its stem."""
    words = words_of(text)
    if not _stemmed(text):  # the common case: one scan of the text, no word looked up
        return words
    return tuple(_stem(w) for w in words)


def name_phrase(words: tuple[str, ...]) -> str:
    """An FTS5 phrase for ``words`` (``name_words``'s) that finds their other forms: a
    stemmed word as a prefix ("компонент" *), every other word as itself. FTS5's table
    holds the words as written; only quoted words go in, so it cannot be a syntax error."""
    return " + ".join(f'"{w}" *' if _stemmed(w) else f'"{w}"' for w in words)


def _stemmed(text: str) -> bool:
    """Whether ``text`` holds a letter of a script that is read by its stem."""
    return any(script.search(text) is not None for script, _ in _STEMMERS)


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
    words = name_words(_SUBJECT_END.split(query, maxsplit=1)[0])
    return words if _is_a_name(words) and _size(words) <= MAX_SUBJECT_WORDS else ()


def _size(words: tuple[str, ...]) -> float:
    """How many words ``words`` are, a CJK pair of characters counting as half of one."""
    return sum(0.5 if has_cjk(w) else 1.0 for w in words)


def _name_words(name: str) -> tuple[str, ...]:
    """The words of a node's name, cut after ``MAX_SUBJECT_WORDS`` (``_size``)."""
    words = name_words(name)
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

    def of_name(self, words: tuple[str, ...]) -> list[int]:
        """Ids of the nodes whose name is exactly ``words`` (as ``subject_of`` gives them)."""
        return list(self._ids.get(words, ())) if _is_a_name(words) else []

    def named_in(self, text: str, skip: Collection[int] = (), limit: int | None = None
                 ) -> list[int]:
        """Ids of the nodes whose name ``text`` contains as whole words, in the order the
        text first names them (the longest name at a position first); the first
        ``limit`` of them when given."""
        words = name_words(text)
        found: dict[int, None] = {}
        for start, word in enumerate(words):
            if word not in self._starts:
                continue
            for length in range(min(self._longest, len(words) - start), 0, -1):
                for doc_id in self._ids.get(words[start:start + length], ()):
                    if doc_id not in skip:
                        found.setdefault(doc_id)
                        # the rest is never read: a body can name thousands of nodes
                        # (docs/performance.md, "Figures behind rules in the code")
                        if limit is not None and len(found) >= limit:
                            return list(found)
        return list(found)
