"""Names: how ``[[name]]`` meets a file, what no node may be called, and the words of
a Chinese or Japanese text as names need them.

Obsidian resolves ``[[name]]`` by file name, in any folder, without case and in NFC
(:func:`name_key`, :func:`file_keys`). A date, a file id or a number names no node
(:func:`numbered_name`): a vault that links days or Zettelkasten ids by name would find
its links taken (``vault/names.py`` holds the rest of the rule).

Search cuts a run of CJK letters into overlapping pairs of characters
(``index/words.py``): no dictionary, and a query meets a text wherever it stands. A name
cannot be made of those: "长时间没写了" would be named ``长时 时间 间没``, pieces no one
wrote. Names take words: a run holding kana is cut by MeCab with UniDic (fugashi, as
the index cuts Japanese), a run of Han alone by jieba's dictionary (MIT; the dictionary
ships in the package, nothing is downloaded). Both load on the first name that needs
them: jieba costs ~0.1 s to import, ~0.4 s for its first cut and ~80 MB resident.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from typing import Any

_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_lock = threading.Lock()
_state = threading.local()
_jieba: Any = None


def _chinese(run: str) -> list[str]:
    global _jieba
    with _lock:
        if _jieba is None:
            # jieba and its dictionary (~0.5 s, ~80 MB): only for a Chinese name
            import jieba

            jieba.setLogLevel(logging.WARNING)  # "Loading model cost ..." on stderr
            _jieba = jieba.Tokenizer()
            _jieba.initialize()
    return [w for w in _jieba.cut(run, HMM=True) if w.strip()]


def _tagger() -> Any:
    tagger: Any = getattr(_state, "tagger", None)
    if tagger is None:
        import fugashi  # UniDic is mapped, not read: milliseconds, only for kana

        tagger = _state.tagger = fugashi.Tagger()
    return tagger


def _japanese(run: str) -> list[str]:
    return [w.surface for w in _tagger()(run) if w.surface]


# Parts of speech a Japanese name is made of: nouns and what attaches to them. Verb
# endings and particles ("ない", "ある", "が") are words, but no subject.
_NAME_POS = frozenset({"名詞", "代名詞", "接頭辞", "接尾辞"})


def name_words_of(run: str) -> list[str]:
    """The words of one run as a name may use them: a Japanese run's words that are no
    noun (a verb, an ending, a particle) become ``""``, where a name must break; a
    Chinese run's words as ``cjk_words`` gives them."""
    if len(run) < 2 or not _KANA.search(run):
        return cjk_words(run)
    try:
        return [w.surface if w.feature.pos1 in _NAME_POS else "" for w in _tagger()(run)
                if w.surface]
    except Exception:  # pragma: no cover - a broken install: the run is one word
        return [run]


def cjk_words(run: str) -> list[str]:
    """The words of one run of Chinese or Japanese letters, as written, in order."""
    if len(run) < 2:
        return [run] if run else []
    try:
        return _japanese(run) if _KANA.search(run) else _chinese(run)
    except Exception:  # pragma: no cover - a broken install: the run is one word
        return [run]


# A date in any usual spelling (2022-08-05, 2025 01 02 as a slug 2025-01-02, 20220805,
# 2022年8月5日), a file id (eight digits or more: 202208051230), or digits alone ("7",
# "1-2"): the whole name, once separators are read as hyphens.
_NUMBERED = re.compile(r"[\d\-_. ]+|\d{4}年\d{1,2}月(?:\d{1,2}[日号]?)?|\d{1,2}月\d{1,2}[日号]")


# A date, a timestamp or a time leading a name ("2022-12-11--11-59-30 with Smartphone
# Capture", "202208051230 HTTP配置", an hour log's "11:52: work"): an id, not a subject.
_DATED_LEAD = re.compile(
    r"^\s*(?:\d{4}[-_./ ]?\d{1,2}[-_./ ]?\d{1,2}|\d{4}年\d{1,2}月\d{1,2}日?|\d{8,14}"
    r"|\d{1,2}[:h-][0-5]\d(?=[^\w.]|$))"  # or a time of day alone: "11:52 work"
    r"(?:[-_T .:]+\d{1,2}(?:[-_.: ]\d{2}){1,2})?(?:\s*(?:UTC|GMT|[A-Z]{1,3}[SD]?T)\b)?"
    r"(?=\D|$)[\s\-_:–—]*")


def is_stamp(name: str) -> bool:
    """Whether a name is only a date, a timestamp or a time ("2025年12月14日 4:15:33 JST")."""
    return bool(name.strip()) and not _DATED_LEAD.sub("", name, count=1).strip()


def without_dated_lead(name: str) -> str:
    """``name`` without a date or timestamp in front of it (the name itself when that
    is all it is)."""
    rest = _DATED_LEAD.sub("", name, count=1)
    return rest if rest.strip() else name


# A file name's running number ("10 - file hash", "7a - concorrenza", "3. intro"): the
# note's place in a series, not its subject (a date's "2024-01-05" has no spaces)
_RUNNING_NUMBER = re.compile(r"^\s*\d{1,3}[a-z]?(?:\s+[-–—]|[.)])\s+(?=\S)")


# A folder's index page (Quartz's index.md and _index.md, a README): it stands for its
# folder.
INDEX_PAGES = frozenset({"index", "_index", "readme"})


def file_title(path: str) -> str:
    """A note's file name as a title: no folder, no ``.md``, no running number in
    front of it."""
    return _RUNNING_NUMBER.sub("", path.rsplit("/", 1)[-1].removesuffix(".md"), count=1)


def is_copy(path: str, of: str) -> bool:
    """Whether ``path`` is a copy of ``of`` as Obsidian's "Make a copy" names one: the
    same folder, the same name with a number after it ("Emacs 1.md" of "Emacs.md")."""
    folder, _, name = path.removesuffix(".md").rpartition("/")
    other_folder, _, other = of.removesuffix(".md").rpartition("/")
    copy = _COPY_NUMBER.fullmatch(name)
    return folder == other_folder and copy is not None and copy.group(1) == other


_COPY_NUMBER = re.compile(r"(.+?) \d{1,2}")


def name_key(name: str) -> str:
    """A name as ``[[name]]`` meets it: NFC, lower case, no ``.md``, no folder."""
    base = unicodedata.normalize("NFC", name).strip().rsplit("/", 1)[-1].lower()
    return base.removesuffix(".md")


def file_keys(path: str) -> set[str]:
    """The names a file answers to: ``resource/CoPP.md`` -> ``copp``; an attachment
    ``img/Diagram.png`` -> ``diagram.png`` and ``diagram``."""
    key = name_key(path)
    keys = {key}
    if not path.lower().endswith(".md") and "." in key.strip("."):
        keys.add(key.rsplit(".", 1)[0])
    return keys


# Each language's twelve month names, January first, as a question writes them (Russian
# in the forms "в мае", "8 мая" and "май" take).
_MONTH_NAMES = (
    "january february march april may june july august september october november december",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre "
    "dicembre",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "januari februari maart april mei juni juli augustus september oktober november december",
    "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",
    "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
    "январе феврале марте апреле мае июне июле августе сентябре октябре ноябре декабре",
)
MONTHS = {name: n for names in _MONTH_NAMES for n, name in enumerate(names.split(), start=1)}
MONTHS.update({name: n for n, name in enumerate(
    "jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)})
_MONTH = "(?:" + "|".join(sorted(map(re.escape, MONTHS), key=len, reverse=True)) + r")\.?"
# A day's date anywhere in a name ("Task 2022-12-11 done", "December 28, 2022", "28.
# Dezember 2022"): the note's day, not a subject.
_DAY_INSIDE = re.compile(r"(?<!\d)\d{4}[-_./ ]\d{1,2}[-_./ ]\d{1,2}(?!\d)"
                         r"|\d{4}年\d{1,2}月\d{1,2}日"
                         rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"
                         rf"|\b\d{{1,2}}(?:st|nd|rd|th|\.)?\s+(?:de\s+)?{_MONTH}\s+(?:de\s+)?\d{{4}}\b",
                         re.IGNORECASE)


def dated_name(name: str) -> bool:
    """Whether a name holds a day's date anywhere ("Task 2022-12-11 done", "Daily 2022 12
    11"): a node so named reads as the owner's day note (a year alone is no day)."""
    # a name is short: a heading line of a megabyte is read for a date as far as a name goes
    return _DAY_INSIDE.search(unicodedata.normalize("NFC", name[:300])) is not None


def numbered_name(name: str) -> bool:
    """Whether a name (or slug) is a date, a file id or a number: nothing a node may be
    called ("2022-08-05", "2025 01 02", "20220805", "202208051230", "7")."""
    text = unicodedata.normalize("NFC", name).strip().lower().removesuffix(".md")
    if not text:
        return False
    return _NUMBERED.fullmatch(text) is not None
