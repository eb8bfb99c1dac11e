"""Whether a name can name a subject, and the names a note's title and headings give.

A name is never a bag of frequent words: it is the note's title, a heading, or (see
``phrase_names``) a phrase the text says. Every candidate passes ``name_flaw`` before it
is used; the first sound one wins, so a heading like "Key formula" or "Notes" never
names a node on its own. Pure functions.
"""

from __future__ import annotations

import re

from vaultlink.markdown.language import (
    UNSPACED_RUN,
    count_words,
    is_unspaced,
    stop_words_of,
)
from vaultlink.markdown.names import dated_name, numbered_name

MAX_NAME_WORDS = 7
# Headings (as slugs) over a day's logistics and over who is doing what: they sort what
# is under them and name nothing (``prose/subjects``).
LOGISTICS = frozenset("""todo to-do todos to-dos task tasks action-items follow-ups followups
next-steps agenda attendees lunch dinner breakfast weather weekend evening misc miscellaneous random
personal-admin errands""".split())
STATUS = frozenset("standup stand-up status check-in daily-standup".split())
# Words that name no subject on their own: a heading made only of these is a part of the
# note ("Summary", "Key formula", "Practical guidance"), not a subject.
GENERIC = frozenset("""overview introduction intro description descriptions example examples
note notes usage summary key formula practical guidance paper claims claim background
detail details context misc miscellaneous general basics basic reference tips caveats
conclusion discussion question questions open decision decisions todo to-do standup
stand-up status update updates log ideas thoughts today journal every document documents
section sections page part things stuff info information option options setting settings
installation install setup configuration config getting started start quick first steps
step other case cases preferences preference observations observation research learnings
reading went well didn didn't wrong right results result highlights changes change
considerations caveat pitfalls faq more further notes-for-us synopsis syntax see also
related links specification specifications compatibility parameters parameter arguments
returns return value values exceptions properties methods constructor events default
defaults misc. untitled todo done tbd wip fixme
全て すべて 全部 所有 一切 全部分 其他 その他 他
""".split()) | frozenset(
    # the same parts of a page in the languages Obsidian is used in most; a Chinese or
    # Japanese heading is one word here (no spaces), compared whole
    """übersicht einführung beschreibung beispiel beispiele syntax siehe auch hinweise
    hinweis notizen zusammenfassung verwendung parameter rückgabewert spezifikationen
    browserkompatibilität einleitung details aperçu introduction exemple exemples syntaxe
    voir aussi remarques résumé utilisation paramètres valeur retour spécifications
    compatibilité descripción ejemplo ejemplos sintaxis véase ver también notas resumen
    introducción uso parámetros especificaciones compatibilidad описание пример примеры
    синтаксис см также смотрите введение обзор примечания примечание использование
    параметры спецификации совместимость итоги заметки
    erste schritte einstieg loslegen premiers pas démarrage primeros pasos comenzando
    начало работы 开始 入门 快速开始 快速入门 始める 入門 시작하기
    描述 概述 概览 简介 介绍 示例 例子 范例 语法 参见 另请参阅 参阅 相关 注意 说明 用法 参数
    返回值 规范 规范说明 浏览器兼容性 总结 笔记 备注 示例代码 更多
    安装 配置 下载 使用 教程 其他 杂项
    概要 説明 例 構文 関連情報 関連項目 参照 はじめに 注意 使い方 引数 返値 戻り値 仕様書
    仕様 ブラウザーの互換性 まとめ メモ 詳細 解説
    개요 설명 예제 구문 같이 보기 참고 소개 요약 사용법 매개변수 반환 값 명세 브라우저 호환성
    메모 노트""".split())
FUNCTION = frozenset("""a an the of to in on at by for from with and or but as is are was
be you your i me my we our us it its this that these those he she they them their there
here where when which who what how why if then so not no do does did""".split())
_CONTRACTION_BITS = frozenset("ll t s re ve d m".split())
_QUESTION = frozenset("why how what when which who".split())
_EVENT = re.compile(r"\b(design review|review|incident|retro|retrospective|stand-?up|sync|"
                    r"meeting|1:1|one-on-one|post-?mortem|clipping|transcript|minutes)\b",
                    re.IGNORECASE)
_LEADS = re.compile(r"^(?:how (?:we|i|to)|changes to(?: the)?|notes on|more on|about|"
                    r"on using|the|a|an)\s+", re.IGNORECASE)
_TRAILS = re.compile(r"\s*(?:\((?:[^()]*)\)|[:?!.]+)\s*$", re.IGNORECASE)
_PAST = re.compile(r"^[a-z]+ed\b")
IMPERATIVE = frozenset("""add announce apply ask avoid back build call change check clean
close commit compare configure confirm copy create delete deploy disable do don't drain
edit enable ensure export fill find fix follow generate get give go install keep kill
lock log look make merge mount move never open pause pin post pull purge push put read
reboot record remove rename replace restart restore resume revoke roll rotate run save
schedule send set ship skip start stop swap switch tag terminate test turn type unlock
update upgrade use verify wait watch write""".split())


def name_words(name: str) -> list[str]:
    """Lowercase words of a name in any script; hyphenated words and contractions stay
    whole, and a run of Chinese or Japanese (written without spaces) is one word."""
    return [w.lower() for w in _NAME_WORD.findall(name)]


_NAME_WORD = re.compile(f"{UNSPACED_RUN.pattern}|(?:(?!{UNSPACED_RUN.pattern})[^\\W_])+"
                        f"(?:['’-](?:(?!{UNSPACED_RUN.pattern})[^\\W_])+)*")


# A heading that lists where to read more names no subject, in any language: "References",
# "See also", "Java 参考", "Literatur", "Weiterführende Links".
REFERENCES = frozenset("""references bibliography literature literatur quellen
quellenangaben bibliographie références bibliografía referencias литература 参考 参考资料
参考文献 参考链接 相关链接 延伸阅读 扩展阅读 参照 参考リンク 関連リンク 참고 참고문헌""".split())
# ... and words that make one only with nothing else beside them ("Links", "Useful links")
_REFERENCE_ONLY = frozenset("""links sources resources useful further external related
weiterführende more 链接 资料 来源""".split())
_SEE_ALSO = re.compile(r"\b(?:see also|further reading|read more|siehe auch|voir aussi|"
                       r"véase también|ver también|см\. также)\b", re.IGNORECASE)
# A numbered heading's number: "1、安装", "2. Install", "3) Setup", "第二章 配置", "四、总结".
NUMBER_MARK = re.compile(r"^\s*(?:(?:\d+(?:\.\d+)*|[一二三四五六七八九十百]+)\s*[、.)．:：]|"
                         r"第[\d一二三四五六七八九十百]+[章节部分步]|step \d+\s*[:.)-]?)\s*",
                         re.IGNORECASE)


def is_references(text: str) -> bool:
    """Whether a heading is a references or see-also heading ("Java 参考", "Literatur")."""
    if _SEE_ALSO.search(text):
        return True
    ws = [w for w in name_words(text) if w not in FUNCTION]
    if not ws or len(ws) > 4:
        return False
    if all(w in REFERENCES or w in _REFERENCE_ONLY for w in ws) or ws[-1] in REFERENCES:
        return True
    return is_unspaced(ws[-1]) and any(ws[-1].endswith(r) for r in REFERENCES
                                       if is_unspaced(r))


def node_name_flaw(name: str) -> str:
    """Why ``name`` may not name a digest node ('' when it may): a date, a file id or a
    number, a numbered heading, a references or see-also heading, a generic heading."""
    text = " ".join(name.split())
    if not text or not name_words(text):
        return "empty"
    if numbered_name(text) or numbered_name(text.replace(" ", "-")) or dated_name(text):
        return "a date, a file id or a number"
    if NUMBER_MARK.match(text):
        return "a numbered heading"
    if is_references(text):
        return "a references heading"
    if is_generic(text):
        return "generic"
    return ""


def is_generic(text: str) -> bool:
    """Whether a heading or title names no subject (only generic or function words)."""
    ws = [w for w in name_words(text) if w not in FUNCTION]
    return not ws or all(w in GENERIC or re.fullmatch(r"[\d-]+", w) for w in ws)


# A day note's heading that names its day ("Montag", "周一", "Monday 2026-06-20"): when,
# not what.
_DAYS = frozenset("""monday tuesday wednesday thursday friday saturday sunday today
yesterday montag dienstag mittwoch donnerstag freitag samstag sonntag heute lundi mardi
mercredi jeudi vendredi samedi dimanche aujourd'hui lunes martes miércoles jueves viernes
sábado domingo hoy понедельник вторник среда четверг пятница суббота воскресенье сегодня
周一 周二 周三 周四 周五 周六 周日 周天 星期一 星期二 星期三 星期四 星期五 星期六 星期日 星期天
今天 今日 月曜日 火曜日 水曜日 木曜日 金曜日 土曜日 日曜日 월요일 화요일 수요일 목요일 금요일
토요일 일요일 오늘 jan feb mar apr may jun jul aug sep oct nov dec""".split())


def is_event(title: str) -> bool:
    """A title that names a meeting, a day or a kind of note rather than a subject."""
    if _EVENT.search(title) or dated_name(title):
        return True  # "December 28, 2022", "2022-07-06": the day's own title ("1984" is a book)
    ws = [w for w in name_words(title) if not re.fullmatch(r"[\d.年月日号-]+", w)]
    return bool(ws) and all(w in _DAYS for w in ws)


def name_flaw(name: str, title: bool = False) -> str:
    """Why ``name`` cannot name a node ('' when it can). A title may open with a question
    word ("Why Hatch"): the author named the page so."""
    ws = name_words(name)
    if not ws:
        return "empty"
    if count_words(name) > MAX_NAME_WORDS:
        return "too long"
    if len(ws) == 1 and len(ws[0]) == 1 and ws[0] != ws[0].upper():
        return "a single letter"  # "C": every "c" in a text would be a mention of it
    if any(w in _CONTRACTION_BITS for w in ws):
        return "a broken contraction"
    if any(ws.count(w) > 1 for w in ws if w not in FUNCTION):
        return "a repeated word"
    if (ws[0] in FUNCTION and not (title and ws[0] in _QUESTION)) or ws[-1] in FUNCTION:
        return "a function word at an edge"
    if is_generic(name):
        return "generic"
    if numbered_name(name) or dated_name(name):
        return "a date, a file id or a number"
    if is_references(name):
        return "a references heading"
    return ""


def heading_name(heading: str) -> str:
    """A section's heading as its subject's name ('' when it cannot be one): a heading too
    long to be a name names its subject in the words before its first function word
    ("Useful compiler options for making asm for human consumption" -> "Useful compiler
    options"), as a reader shortens it."""
    if name_flaw(heading) != "too long":
        return "" if name_flaw(heading) else heading
    ws = heading.split()
    stops = FUNCTION | stop_words_of(heading)
    cut = next((i for i, w in enumerate(ws) if i >= 2 and w.lower().strip(",;:") in stops), 0)
    return first_sound([" ".join(ws[:cut])]) if cut else ""


def clean_heading(text: str) -> str:
    """A heading or title as a name: no 'How we'/'Notes on' lead, no '(excerpt)' tail, no
    code ticks; 'How we rotated the key' becomes 'Rotate the key'."""
    raw = NUMBER_MARK.sub("", text.strip().replace("`", ""), count=1) or text.strip()
    how = re.match(r"^how (?:we|i)\s+", raw, re.IGNORECASE)
    out = raw
    for _ in range(3):
        out = _TRAILS.sub("", _LEADS.sub("", out)).strip()
    if how:  # a past-tense account of a procedure names the procedure
        out = _PAST.sub(lambda m: _present(m.group(0)), out, count=1)
    return capitalized(out)


def _present(word: str) -> str:
    """``rotated`` -> ``rotate``, ``fixed`` -> ``fix``: only to a verb of IMPERATIVE."""
    for base in (word[:-1], word[:-2], word[:-3] + "y", word[:-3]):
        if base in IMPERATIVE:
            return base
    return word


def subject_of_title(title: str) -> str:
    """What a note's title says the note is about ('' for a meeting with no subject):
    'Design review: hybrid search' -> 'hybrid search'; 'Sprint 14 retro' -> ''."""
    head, sep, tail = title.partition(":")
    if sep and is_event(head) and tail.strip() and not is_event(tail):
        return clean_heading(tail)
    if is_event(title) and len(name_words(title)) <= 6:
        return ""
    return clean_heading(title)


def qualified(name: str, site: str, language: str = "en", own: str = "") -> str:
    """A one-word or generic title qualified by the site it belongs to: 'Plugins' of the
    fastify pages -> 'Fastify plugins'; 'Getting Started' -> 'Getting started with
    Fastify'; in a page of another ``language``, its site before it as written
    ('React Erste Schritte', 'React 开始'). One word that is the note's file name as its
    owner wrote it (``own``: "Haskell.md" in a folder "Programming") is not qualified."""
    if not site or site.lower() in name.lower():
        return name
    ws = [w for w in name_words(name) if w not in FUNCTION]
    if is_generic(name):
        if language != "en" or UNSPACED_RUN.search(name):
            return f"{site} {name}"
        if name_words(name)[:1] in (["introduction"], ["intro"], ["overview"]):
            return f"{site} {name.lower()}"  # "Hatch introduction"
        return f"{name[:1].upper()}{name[1:].lower()} with {site}"
    if len(ws) == 1 and count_words(name) == 1:  # "代码分割" is a phrase, not one word
        if name == own and not name_flaw(name, title=True):
            return name  # a folder of the owner's sorts notes; the name is theirs
        # "CodeHilite", "EM" keep their capitals, and so does a letter ("Programming C")
        plain = len(name) > 1 and name[1:] == name[1:].lower()
        return f"{site} {name[:1].lower() if plain else name[:1]}{name[1:]}"
    return name


def same_name(a: str, b: str, whole: bool = False) -> bool:
    """Whether two names name the same thing: the same words, or (unless ``whole``) one's
    two or more words all in the other ("Reciprocal rank fusion" and "Reciprocal rank
    fusion paper"), word endings aside ("reranker", "reranking")."""
    ka, kb = _name_key(a), _name_key(b)
    if whole:
        return bool(ka) and ka == kb
    return bool(ka) and (ka == kb or (min(len(ka), len(kb)) >= 2 and (ka <= kb or kb <= ka)))


def holds_name(outer: str, inner: str) -> bool:
    """Whether every word of ``inner`` is in ``outer`` ("Reciprocal rank fusion paper"
    holds "Reciprocal rank fusion"; "Release notes" does not hold "Sift 2.3 release
    notes"), word endings aside."""
    inside = _name_key(inner)
    return bool(inside) and inside <= _name_key(outer)


def _name_key(name: str) -> set[str]:
    out = set()
    for w in name_words(name.replace("-", " ")):
        if w in FUNCTION:
            continue
        for suffix in ("ings", "ing", "ers", "er", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 4:
                w = w[:-len(suffix)]
                break
        out.add(w)
    return out


def first_sound(candidates: list[str], title: bool = False) -> str:
    """The first candidate name without a flaw ('' if none)."""
    for name in candidates:
        name = " ".join(name.split()).strip(" ,;:-")
        if name and not name_flaw(name, title):
            return capitalized(name)
    return ""


def capitalized(text: str) -> str:
    """``text`` with a capital first letter, unless it opens with a command or an
    identifier written in lower case ("npm-ci", "iPhone")."""
    return text if _IDENTIFIER.match(text) else text[:1].upper() + text[1:]


# A name that opens with an identifier keeps its case: "iPhone", "v2", "e5-base".
_IDENTIFIER = re.compile(r"^[a-z][\w.-]*(?:[_.\d]|[A-Z])[\w.-]*(?:\s|$)")

