"""Names that say a subject, built from a note's title, its headings and its own phrases.

A name is never a bag of frequent words: it is the note's title, a heading, the thing a
definition defines ("A golden query set is ..."), or a run of words that stands together
in the text. Every candidate passes ``name_flaw`` before it is used; the first sound
one wins, so a heading like "Key formula" or "Notes" never names a node on its own.
Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter

from vaultlink.markdown.language import (
    STOP_WORDS,
    UNSPACED_RUN,
    count_words,
    is_unspaced,
    stem,
    stop_words_of,
)
from vaultlink.markdown.names import name_words_of, numbered_name
from vaultlink.prose.sentences import words

MAX_NAME_WORDS = 7
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
_DEFINES = re.compile(r"^(?:(?:an?|the)\s+)?([A-Za-z][\w\s./+-]{1,50}?)\s*(?:\([^)]{1,30}\)\s*)?"
                      r"(?:is|are|means|refers to)\s+(?:an?|the|our|one|used)\b", re.IGNORECASE)
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
    if numbered_name(text) or numbered_name(text.replace(" ", "-")):
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
    if _EVENT.search(title):
        return True
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
    if any(w in _CONTRACTION_BITS for w in ws):
        return "a broken contraction"
    if any(ws.count(w) > 1 for w in ws if w not in FUNCTION):
        return "a repeated word"
    if (ws[0] in FUNCTION and not (title and ws[0] in _QUESTION)) or ws[-1] in FUNCTION:
        return "a function word at an edge"
    if is_generic(name):
        return "generic"
    if numbered_name(name):
        return "a date, a file id or a number"
    if is_references(name):
        return "a references heading"
    return ""


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


def qualified(name: str, site: str, language: str = "en") -> str:
    """A one-word or generic title qualified by the site it belongs to: 'Plugins' of the
    fastify pages -> 'Fastify plugins'; 'Getting Started' -> 'Getting started with
    Fastify'; in a page of another ``language``, its site before it as written
    ('React Erste Schritte', 'React 开始')."""
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
        plain = name[1:] == name[1:].lower()  # "CodeHilite", "EM" keep their capitals
        return f"{site} {name[:1].lower() if plain else name[:1]}{name[1:]}"
    return name


def salient_name(sentences: list[str]) -> str:
    """The proper name a text keeps coming back to ("React" on React's "Getting Started"
    page, in any of its translations): the capitalised word most often found inside
    its sentences, never first, three times at least; '' when there is none."""
    counts: Counter[str] = Counter()
    for sentence in sentences:
        for word in re.findall(r"(?<=[^\W_]\s)[A-Z][\w.+-]*[\w+]", sentence):
            if word.lower() not in STOP_WORDS and word.lower() not in GENERIC:
                counts[word] += 1
    best = counts.most_common(1)
    return best[0][0] if best and best[0][1] >= 3 else ""


def defined_term(sentence: str) -> str:
    """The thing a definition sentence defines: 'A golden query set is a ...' ->
    'golden query set' ('' when the sentence is no definition)."""
    m = _DEFINES.match(sentence.strip().lstrip("*_"))
    if not m:
        return ""
    term = m.group(1).strip(" ,")
    ws = name_words(term)
    if not ws or len(ws) > 4 or ws[0] in FUNCTION or ws[-1] in FUNCTION:
        return ""
    return term


def key_phrase(sentences: list[str]) -> str:
    """The run of two to four content words that recurs most, as written ('' if none
    recurs). Runs never cross a stop word or punctuation, so the phrase is one the text
    says ("golden query set"), never words picked from here and there."""
    counts: Counter[tuple[str, ...]] = Counter()
    shown: dict[tuple[str, ...], str] = {}
    first: dict[tuple[str, ...], int] = {}
    stops = stop_words_of(" ".join(sentences))
    for sentence in sentences:
        for run in _runs(sentence, stops):
            for size in range(2, min(4, len(run)) + 1):
                for i in range(len(run) - size + 1):
                    key = tuple(stem(w.lower()) for w in run[i:i + size])
                    counts[key] += 1
                    shown.setdefault(key, " ".join(run[i:i + size]))
                    first.setdefault(key, len(first))
    repeated = [k for k in counts if counts[k] >= 2]
    if not repeated:
        return ""
    best = max(repeated, key=lambda k: (counts[k] * (1 + 0.8 * (len(k) - 1)), -first[k]))
    return shown[best]


def opening_phrase(sentence: str) -> str:
    """The first run of two to four content words of a sentence: usually what it is
    about ("The embedding model is ..." -> "embedding model")."""
    for run in _runs(sentence, stop_words_of(sentence)):
        if len(run) >= 2:
            return " ".join(run[:4])
    return ""


def subject_name(items: list[str], headings: list[str]) -> str:
    """A name for a run of sentences with no heading of its own: what a definition defines,
    a phrase the text repeats, the phrase it opens with, else a heading above it (Chinese
    and Japanese: the phrase whose characters the text repeats most)."""
    if is_unspaced(" ".join(items)):
        candidates = [unspaced_phrase(items)]
    else:
        candidates = [defined_term(i) for i in items[:3]]
        candidates += [key_phrase(items), *(opening_phrase(i) for i in items[:2])]
    candidates += [clean_heading(h) for h in headings]
    return first_sound(candidates)


# Characters that are grammar, not subject, in Chinese (particles, pronouns, "and",
# "is", "in") and Japanese (the particles written in kana): a phrase never spans them.
_GRAMMAR_CHARS = ("的了和与及或是在也都就而并把被从对为于以将要会我你他她它们这那"
                  "个吗呢吧啊着过又还但即其之所每はがをにでとのもへやねよ")
_GRAMMAR = re.compile(f"[{_GRAMMAR_CHARS}]+")
MAX_PHRASE_CHARS = 8


def unspaced_phrase(items: list[str]) -> str:
    """The phrase of a Chinese or Japanese text that says its subject: of the runs of one
    to four whole words (``markdown/names.py``: a dictionary's words, never pairs of
    characters) between punctuation and grammar words, two to eight characters, the one
    the text repeats most, longer runs weighing more ("搜索索引" in a paragraph on
    rebuilding the search index), the earliest of equals; else the text's first run."""
    chunks = UNSPACED_RUN.findall(" ".join(items))
    counts: Counter[tuple[str, ...]] = Counter()
    first: dict[tuple[str, ...], int] = {}
    opening = ""
    for chunk in chunks:
        for run in _word_runs(name_words_of(chunk)):
            text = "".join(run)
            if not opening and len(text) >= 2 and not is_generic(text) and not is_event(text):
                opening = text
            for size in range(1, min(4, len(run)) + 1):
                for i in range(len(run) - size + 1):
                    key = tuple(run[i:i + size])
                    if 2 <= len("".join(key)) <= MAX_PHRASE_CHARS:
                        counts[key] += 1
                        first.setdefault(key, len(first))
    repeated = [k for k, n in counts.items() if n >= 2 and not is_generic("".join(k))
                and not is_event("".join(k))]
    if not repeated:
        return opening
    best = max(repeated, key=lambda k: (counts[k] * (1 + 0.8 * (len(k) - 1)), -first[k]))
    if len(best) == 1:  # a word the text repeats names its subject with its neighbour:
        # "索引" comes back, "搜索索引" says which index (the first such pair of words)
        pairs = [k for k in counts if len(k) == 2 and best[0] in k
                 and not any(_COUNTED.match(w) for w in k)
                 and not is_generic("".join(k)) and not is_event("".join(k))]
        best = min(pairs, key=lambda k: first[k]) if pairs else best
    return "".join(best)


# a word that counts ("一次", "三点", "每周日"): no part of a name
_COUNTED = re.compile(r"^[每第]?[\d一二三四五六七八九十百千万两几零〇]")


def _word_runs(ws: list[str]) -> list[list[str]]:
    """Runs of words between grammar words, each cut to at most ``MAX_PHRASE_CHARS``."""
    out: list[list[str]] = []
    run: list[str] = []
    for w in [*ws, "的"]:
        if not w or _GRAMMAR.fullmatch(w):  # "": a word no name is made of
            if run:
                out.append(run)
            run = []
        elif sum(map(len, run)) + len(w) > MAX_PHRASE_CHARS:
            if run:
                out.append(run)
            run = [w] if len(w) <= MAX_PHRASE_CHARS else []
        else:
            run.append(w)
    return out


def opening_words(text: str, count: int = 3) -> str:
    """The first content words of a text as written, in any script: a Chinese or
    Japanese run as its words ("长时间 没写"), never as pairs of characters."""
    out: list[str] = []
    clause = next((c for c in re.split(r"[，。！？；：,.!?;:\n]+", text)
                   if re.search(r"[^\W\d_]", c)), "")
    for token in re.findall(f"{UNSPACED_RUN.pattern}|[^\\W_][\\w'’-]*", clause):
        pieces = name_words_of(token) if UNSPACED_RUN.fullmatch(token) else [token]
        for piece in pieces:
            if not piece or _GRAMMAR.fullmatch(piece) or piece.lower() in STOP_WORDS or \
                    piece.lower() in FUNCTION or not re.search(r"[^\W\d_]", piece):
                continue
            out.append(piece)
            if len(out) == count:
                break
        if len(out) == count:
            break
    joiner = "" if out and all(UNSPACED_RUN.fullmatch(w) for w in out) else " "
    return joiner.join(out)


def _runs(sentence: str, stops: frozenset[str] = STOP_WORDS) -> list[list[str]]:
    """Maximal runs of content words (as written) between stop words and punctuation."""
    out: list[list[str]] = []
    run: list[str] = []
    after_date = False  # "the 2026-06-10 design review" names a note, not a subject
    tokens = re.findall(r"`[^`]*`|[^\W_][\w'’.-]*[^\W_]|[^\W\d_]|[^\w\s]", sentence)
    if tokens and tokens[0].lower() in IMPERATIVE:
        tokens = tokens[1:]  # "Run the rebuild": the verb of an instruction names nothing
    for token in tokens:
        word = token.lower()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", word):
            after_date = True
            if run:
                out.append(run)
            run = []
            continue
        if after_date:
            after_date = word[:1].isalpha() and word not in stops
            continue
        possessive = re.fullmatch(r"[\w-]+['’]s", word) is not None
        plain = (token[0].isalnum() and word not in stops and word not in FUNCTION
                 and len(word) > 2 and not re.fullmatch(r"[\d.:,–-]+", word)
                 and (("'" not in word and "’" not in word) or possessive))
        if plain and run and _VERBISH.match(word):  # a verb ends a phrase
            out.append(run)
            run = []
        elif plain and not (run and possessive):
            run.append(token)
        else:
            if run:
                out.append(run)
            run = [token] if plain else []
    if run:
        out.append(run)
    return [t for t in (_trim(r) for r in out) if t and not all(w.lower() in GENERIC for w in t)]


_PAST_IRREGULAR = frozenset("""ran went got took made did said began came found gave left kept
set put saw told felt thought brought bought built sent spent stood won wrote broke chose
done gone seen known shown begun written treats works makes takes uses needs runs
today yesterday tomorrow morning afternoon evening tonight now""".split())


_VERBISH = re.compile(r"^(?:treats|works|makes|takes|uses|needs|runs|adds|gives|shows|says|"
                      r"keeps|holds|sees|gets|puts|lets|means|lives|sits|stays|goes|comes|"
                      r"becomes|seems|looks|happens|returns|contains|requires|supports|allows|"
                      r"provides|includes|expires|ran|went|got|took|made|did)$")


def _trim(run: list[str]) -> list[str]:
    """A run without the verbs at its edges: 'Hybrid search ran' -> 'Hybrid search'."""
    def verb(w: str) -> bool:
        low = w.lower()
        return low in _PAST_IRREGULAR or (low.endswith("ed") and len(low) > 4)
    while run and verb(run[-1]):
        run = run[:-1]
    while run and verb(run[0]) and len(run) > 1:
        run = run[1:]
    return run


def same_name(a: str, b: str, whole: bool = False) -> bool:
    """Whether two names name the same thing: the same words, or (unless ``whole``) one's
    two or more words all in the other ("Reciprocal rank fusion" and "Reciprocal rank
    fusion paper"), word endings aside ("reranker", "reranking")."""
    def key(name: str) -> set[str]:
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
    ka, kb = key(a), key(b)
    if whole:
        return bool(ka) and ka == kb
    return bool(ka) and (ka == kb or (min(len(ka), len(kb)) >= 2 and (ka <= kb or kb <= ka)))


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


def common_words(a: str, b: str) -> set[str]:
    """Stems two texts share (content words only)."""
    def stems(t: str) -> set[str]:
        return {stem(w) for w in words(t) if w not in STOP_WORDS and len(w) > 2}
    return stems(a) & stems(b)
