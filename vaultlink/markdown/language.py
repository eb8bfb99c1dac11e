"""What a text's script and language change in how its words are read.

Chinese and Japanese are written without spaces, so a word is not what lies between
spaces: those scripts are counted by characters, cut into character pairs where words
are compared, and end sentences at 。！？. Korean, Cyrillic, Greek, Arabic, Hebrew and the
Latin scripts put spaces between words. A note's language comes from its script where
that decides it (kana: Japanese, Hangul: Korean, Han alone: Chinese) and otherwise from
py3langid, a maintained detector that ships its model; stop words come from the
stopwords-iso lists for every language but English, whose list is ours (tuned on notes).
Pure functions; the detector and the lists load on first use.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

# Han ideographs, their extensions and compatibility forms, Hiragana, Katakana (and the
# half-width forms): the scripts written without spaces between words.
_UNSPACED = ("\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
             "\uff66-\uff9f\U00020000-\U0002fa1f")
UNSPACED_RUN = re.compile(f"[{_UNSPACED}]+")
# Japanese words: any hiragana letter, or katakana two in a row ("テスト"); a kaomoji's
# katakana stand alone among signs ("ヽ(・∀・)ﾉ", "¯\\_(ツ)_/¯"), and its hiragana is an
# iteration mark ("（；´д｀）ゞ"), no letter
_JAPANESE = re.compile("[\u3041-\u3096]|[\u30a1-\u30fa\u30fc\u31f0-\u31ff]{2}|[\uff66-\uff9d]{2}")
_HANGUL = re.compile("[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_CYRILLIC = re.compile("[\u0400-\u04ff]")
# A word of a spaced script: letters, digits and combining marks (\w holds them), with
# inner apostrophes, hyphens, dots and underscores ("don't", "e-mail", "v2.3",
# "scale_factor") kept.
_SPACED_WORD = re.compile(f"(?:(?![{_UNSPACED}])[^\\W_])+(?:['’._-](?:(?![{_UNSPACED}])[^\\W_])+)*")
# Chinese words average 1.5 to 2 characters: "too short" and "too long" in words hold for
# Chinese and Japanese text read as one word per two characters.
CHARS_PER_WORD = 2
SURE = 0.9  # py3langid's probability for a language other than English
# English words that carry no subject: left out of keywords, topic names, query terms and
# the offline integrator's similarity (tuned on notes; other languages use stopwords-iso).
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


def unspaced_chars(text: str) -> int:
    """How many characters of ``text`` are in a script written without spaces."""
    return sum(len(run) for run in UNSPACED_RUN.findall(text))


def count_words(text: str) -> int:
    """The words of a text in any script: what spaces separate, and one word per two
    characters of Chinese or Japanese."""
    spaced = len(UNSPACED_RUN.sub(" ", text).split())
    return spaced + math.ceil(unspaced_chars(text) / CHARS_PER_WORD)


def is_unspaced(text: str) -> bool:
    """Whether most letters of ``text`` are Chinese or Japanese."""
    letters = sum(1 for ch in text if ch.isalpha())
    return letters > 0 and unspaced_chars(text) * 2 > letters


def char_pairs(run: str) -> list[str]:
    """The overlapping character pairs of a run of Chinese or Japanese: the words of a
    text with no spaces, found without a dictionary ("搜索索引" -> 搜索 索索 索引); a
    lone character is kept."""
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> list[str]:
    """Lower-cased words of any script, in order: spaced words as written, Chinese and
    Japanese as character pairs."""
    out: list[str] = []
    pos = 0
    for m in UNSPACED_RUN.finditer(text):
        out += [w.lower() for w in _SPACED_WORD.findall(text[pos:m.start()])]
        out += char_pairs(m.group(0))
        pos = m.end()
    out += [w.lower() for w in _SPACED_WORD.findall(text[pos:])]
    return out


def join_sentences(sentences: list[str]) -> str:
    """Sentences as one paragraph: a space after a sentence of a spaced script, none after
    。！？ (Chinese and Japanese put none)."""
    out = ""
    for sentence in sentences:
        gap = "" if not out or out.endswith(("。", "！", "？")) else " "
        out += gap + sentence
    return out


SAMPLE_CHARS = 2000  # a language shows in a text's opening
# A Chinese character says about what three Latin letters do: a Chinese note full of
# English names ("实现Obsidian插件") is still written in Chinese
CHARACTER_LETTERS = 3


def _latin_letters(text: str) -> int:
    return sum(1 for ch in text if ch.isalpha() and ch.isascii())


def language_of(text: str) -> str:
    """The language of ``text`` as an ISO 639-1 code ("en" when it cannot be told).

    The script decides where it can (cheap and sure); other text goes to py3langid (97
    languages), whose verdict counts when it is sure: 0 of 6,000 English sentences of
    the bench corpora were taken for another language.
    """
    return _language_of_sample(_ADDRESS.sub(r"\2", text[:SAMPLE_CHARS]))


# a link's path or address is no word of the text: "[[resource/PKM/x.md|shown]]" is "shown"
_ADDRESS = re.compile(r"\[\[([^\[\]|]*\|)?([^\[\]|]*)\]\]|(?<=\])\([^()\s]*\)")


# Keyed by the opening only: a daemon that runs for weeks keeps no whole notes here.
@lru_cache(maxsize=4096)
def _language_of_sample(sample: str) -> str:
    if _JAPANESE.search(sample):
        return "ja"  # not a Spanish day with a kaomoji in it: "ヽ(・∀・)ﾉ"
    if _HANGUL.search(sample) and len(_HANGUL.findall(sample)) * 3 > unspaced_chars(sample):
        return "ko"
    if UNSPACED_RUN.search(sample) and (is_unspaced(sample) or unspaced_chars(sample)
                                        * CHARACTER_LETTERS >= _latin_letters(sample)):
        return "zh"  # "新建项目 2025Q1-实现Obsidian插件CortexFlow" is Chinese
    letters = [w for w in _SPACED_WORD.findall(sample) if not w.isdigit()]
    if len(letters) < 3:
        return "ru" if _CYRILLIC.search(sample) else "en"
    lang, confidence = _identifier().classify(sample)
    # English terms run through notes in every language, and a short English note can
    # look like Dutch: only a sure verdict makes a note not English, or an unsure one its
    # function words bear out ("Hoy fue un día tranquilo con los amigos": es at 0.74)
    return str(lang) if lang == "en" or confidence >= SURE or _said_in(sample, str(lang)) \
        else "en"


STOP_VOTES = 3  # function words of a language, and of no English, a short text must hold
# The languages a vote may find: those of Latin script vaultlink writes in (prose/wording);
# a small list's words ("ha" in Breton's) turn up in English chat and code.
VOTED = frozenset({"de", "es", "fr", "it", "nl", "pt"})


def _said_in(sample: str, language: str) -> bool:
    """Whether ``sample`` holds more function words of ``language`` (none of them
    English) than English ones (none of them of ``language``), and at least
    ``STOP_VOTES``."""
    own = stop_words(language) - STOP_WORDS if language in VOTED else frozenset()
    if not own:
        return False
    english = STOP_WORDS - own
    words = [w.lower() for w in _SPACED_WORD.findall(sample) if len(w) > 1]
    votes = sum(w in own for w in words)
    return votes >= STOP_VOTES and votes > sum(w in english for w in words)


@lru_cache(maxsize=1)
def _identifier():  # type: ignore[no-untyped-def]
    # ~0.8 s to load its model: only when a note's language is not told by its script
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@lru_cache(maxsize=32)
def stop_words(language: str) -> frozenset[str]:
    """Words of ``language`` that carry no subject: ours for English, stopwords-iso's for
    the others (English ones always included: notes mix English terms into any language)."""
    if language == "en":
        return STOP_WORDS
    import stopwordsiso  # its lists load only for a note not in English

    if not stopwordsiso.has_lang(language):
        return STOP_WORDS
    return STOP_WORDS | frozenset(w.lower() for w in stopwordsiso.stopwords(language))


def stem(word: str) -> str:
    """A crude stem so "reviews" meets "review" and "reranking" meets "rerank"."""
    for suffix in ("ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def stop_words_of(text: str) -> frozenset[str]:
    """The stop words of the language ``text`` is written in."""
    return stop_words(language_of(text)) if text else STOP_WORDS


def subject_words(text: str) -> list[str]:
    """The stemmed words of ``text`` that carry its subject, in any script: letters and
    digits (numbers matter: "k = 20" is not "k = 60"; Chinese and Japanese as character
    pairs), the stop words of its language and single letters dropped."""
    stops = stop_words_of(text)
    return [stem(w) for part in tokens(text) for w in re.split(r"[^\w]+", part)
            if w and w not in stops and len(w) > 1]
