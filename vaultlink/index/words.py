"""Search words: how keyword recall and recall by name cut a text, in every script.

One cut serves every place that reads words for search: the text FTS5 indexes
(:func:`search_text`), the query (``fusion.fts_match``), the subject phrase and the name
table (``mentions``), so they never disagree on where a word starts. A run of Han or
Hangul letters, which FTS5's ``unicode61`` would keep as one token, is cut into
overlapping pairs of characters (the CJK bigram analysis of Lucene), needing no
dictionary and no language guess; a run with kana is Japanese for sure and is cut into
words by MeCab with UniDic, its particles and auxiliary verbs left out as stop words.
Everything else is cut as ``unicode61`` cuts it. The alternatives measured against these
rules: docs/performance.md, "Keyword search in Chinese, Japanese and Korean".
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from vaultlink.markdown.language import char_pairs

# Bumped whenever the cut changes: the indexes name it in their params and rebuild.
CUT_VERSION = "cjk-bigram-1+ja-unidic-1"

# Letters of the scripts written without spaces between words (and Hangul, whose words
# carry particles): Han with its extensions and compatibility forms, the iteration and
# numeral marks 々〆〇〻, hiragana, katakana (with ー and the half-width forms), Hangul
# syllables and jamo. ``_CJK`` only tells that a text needs the slower cut; ``_CJK_RUN``
# decides what is cut, and it takes letters alone.
_CJK_RANGES = (
    "\u1100-\u11ff"          # Hangul jamo
    "\u3005-\u3007\u3021-\u3029"  # 々〆〇, Hangzhou numerals
    "\u3031-\u3035\u3038-\u303c"  # kana repeat marks, 〻
    "\u3040-\u30ff"          # hiragana, katakana
    "\u3130-\u318f"          # Hangul compatibility jamo
    "\u31f0-\u31ff"          # katakana phonetic extensions
    "\u3400-\u4dbf"          # Han extension A
    "\u4e00-\u9fff"          # Han
    "\ua960-\ua97f"          # Hangul jamo extended A
    "\uac00-\ud7ff"          # Hangul syllables, jamo extended B
    "\uf900-\ufaff"          # Han compatibility
    "\uff66-\uffdc"          # half-width katakana and Hangul
    "\U00020000-\U0003134f"  # Han extensions B to G
)
_CJK = re.compile(f"[{_CJK_RANGES}]")
# A run of CJK letters only: a mark or punctuation inside the blocks (・, ゛) ends it, as
# in unicode61. Captured, so that splitting a word on it keeps the runs ("API接口" is
# "API" and "接口").
_CJK_RUN = re.compile(f"((?:(?![\\W_])[{_CJK_RANGES}])+)")
# A word as unicode61 cuts it: letters and digits; ``_`` and every mark between words.
_WORD = re.compile(r"[^\W_]+")

CjkCut = Callable[[str], list[str]]
# Another cut of CJK runs for this process, or None for ``cjk_words``: a bench compares
# cuts with it (bench/quality/cjk_cuts.py); the product never sets it.
_other_cut: CjkCut | None = None


def use_cjk_cut(cut: CjkCut | None) -> None:
    """Cut runs of CJK letters with ``cut`` in this process from now on (None: with
    ``cjk_words`` again). ``CUT_VERSION`` does not change: an index built under one cut
    is not rebuilt for another."""
    global _other_cut
    _other_cut = cut


def _run_words(run: str) -> list[str]:
    return cjk_words(run) if _other_cut is None else _other_cut(run)


def cjk_runs(text: str) -> list[str]:
    """The runs of CJK letters in ``text``, in order."""
    return _CJK_RUN.findall(text)


def words_of(text: str) -> tuple[str, ...]:
    """The lower-cased search words of ``text``: letters and digits as FTS5's unicode61
    tokenizer cuts them (``-``, ``_``, ``/`` and every other mark between words), and each
    run of CJK letters as its overlapping pairs of characters (a lone one as itself)."""
    if _CJK.search(text) is None:  # the common case, and exactly what it always was
        return tuple(w.lower() for w in _WORD.findall(text))
    words: list[str] = []
    for word in _WORD.findall(text):
        for i, piece in enumerate(_CJK_RUN.split(word)):
            if i % 2:  # the odd pieces are the CJK runs
                words += _run_words(piece)
            elif piece:
                words.append(piece.lower())
    return tuple(words)


def cjk_words(run: str) -> list[str]:
    """The search words of one run of CJK letters: its words as UniDic cuts them when
    it holds kana, else its overlapping pairs of characters (a lone one as itself)."""
    if len(run) > 1 and _KANA.search(run) is not None:
        words = _japanese_words(run)
        if words:
            return words
    return char_pairs(run)


_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
# One MeCab tagger per thread: a tagger is not safe to share, and the daemon's API
# thread searches while its worker indexes.
_taggers = threading.local()


_GRAMMAR = frozenset({"助詞", "助動詞"})


def _japanese_words(run: str) -> list[str]:
    """The lower-cased words of ``run`` as MeCab with UniDic cuts it, without its
    particles and auxiliaries (all of them when it holds nothing else)."""
    tagger: Any = getattr(_taggers, "tagger", None)
    if tagger is None:
        import fugashi  # imported here: most vaults never meet kana

        tagger = _taggers.tagger = fugashi.Tagger()
    words = [(w.surface.lower(), w.feature.pos1) for w in tagger(run)
             if w.surface and w.surface[0].isalnum()]
    return [w for w, pos in words if pos not in _GRAMMAR] or [w for w, _ in words]


def search_text(text: str) -> str:
    """``text`` as FTS5 indexes it: each run of CJK letters replaced by its search words
    between spaces, so that unicode61 finds the same words as :func:`words_of`; any
    other text is returned unchanged."""
    if _CJK.search(text) is None:
        return text
    return _CJK_RUN.sub(lambda m: f" {' '.join(_run_words(m.group()))} ", text)


def has_cjk(text: str) -> bool:
    """True when ``text`` holds a CJK letter (and so is indexed in another form)."""
    return _CJK.search(text) is not None
