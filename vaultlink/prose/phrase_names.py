"""Names a text says of itself: the thing a definition defines, a phrase it repeats, the
phrase it opens with, and for Chinese and Japanese the characters it repeats. Used where
a run of sentences has no heading of its own; every candidate still passes
``subject_names.name_flaw``. Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter

from vaultlink.markdown.language import (
    STOP_WORDS,
    UNSPACED_RUN,
    is_unspaced,
    stem,
    stop_words_of,
)
from vaultlink.markdown.names import name_words_of
from vaultlink.prose.subject_names import (
    FUNCTION,
    GENERIC,
    IMPERATIVE,
    clean_heading,
    first_sound,
    is_event,
    is_generic,
    name_words,
)

_DEFINES = re.compile(r"^(?:(?:an?|the)\s+)?([A-Za-z][\w\s./+-]{1,50}?)\s*(?:\([^)]{1,30}\)\s*)?"
                      r"(?:is|are|means|refers to)\s+(?:an?|the|our|one|used)\b", re.IGNORECASE)


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


# A letter's greeting or closing on a line of its own ("Hello Robin,", "Kind Regards,
# Pietra", "Viele Grüße", "此致"): how a pasted email opens and ends, never its subject.
_GREETING = re.compile(
    r"(?:hello|hi|hey|dear|good\s+(?:morning|afternoon|evening)|hallo|liebe[rs]?|"
    r"sehr\s+geehrte[rs]?|bonjour|salut|cher|chère|hola|querid[oa]s?|estimad[oa]s?|ciao|"
    r"car[oa]|olá|oi|здравствуйте|привет|уважаем\w*|您好|你好|拝啓|안녕하세요)", re.IGNORECASE)
_CLOSING = re.compile(
    r"(?:(?:kind|best|warm|many|with)\s+(?:regards|wishes|thanks)|regards|cheers|thanks|"
    r"thank\s+you|sincerely|yours(?:\s+(?:sincerely|truly))?|viele\s+grüße|liebe\s+grüße|"
    r"beste\s+grüße|mit\s+freundlichen\s+grüßen|cordialement|bien\s+à\s+vous|amicalement|"
    r"saludos|un\s+saludo|atentamente|cordiali\s+saluti|saluti|atenciosamente|abraços|"
    r"с\s+уважением|всего\s+доброго|此致|敬礼|よろしくお願いします|敬具|감사합니다)",
    re.IGNORECASE)
# what may follow either: the names of who is greeted or who signs, and a comma
_NAMES = re.compile(r"[,，]?(?:\s+[^\W\d_][\w'’-]*){0,3}\s*[,.!。！]?", re.IGNORECASE)


def greets(item: str) -> bool:
    """Whether ``item`` is a letter's greeting and nothing else ("Hello Robin,")."""
    return _letter_line(item, _GREETING)


def closes(item: str) -> bool:
    """Whether ``item`` is a letter's closing and nothing else ("Kind Regards,\nPietra")."""
    return _letter_line(item, _CLOSING)


def _letter_line(item: str, opener: re.Pattern[str]) -> bool:
    line = " ".join(item.split())
    m = opener.match(line)
    rest = _NAMES.fullmatch(line[m.end():]) if m else None
    return rest is not None and all(
        w[:1].isupper() for w in rest.group(0).strip(" ,，.!。！").split())


def subject_name(items: list[str], headings: list[str]) -> str:
    """A name for a run of sentences with no heading of its own: what a definition defines,
    a phrase the text repeats, the phrase it opens with, else a heading above it (Chinese
    and Japanese: the phrase whose characters the text repeats most)."""
    items = [i for i in items if not greets(i) and not closes(i)] or items
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
    counts: Counter[tuple[str, ...]] = Counter()
    first: dict[tuple[str, ...], int] = {}
    opening = ""
    grammar = stop_words_of(" ".join(items))  # こと, これ: words of every text
    for item in (s for i in items for s in _CLAUSE_END.split(i)):
        seen: set[tuple[str, ...]] = set()  # once a clause: "半音の半音" says it once
        for run in (r for chunk in UNSPACED_RUN.findall(item)
                    for r in _word_runs(name_words_of(chunk))):
            text = "".join(run)
            if not opening and len(text) >= 2 and not is_generic(text) and not is_event(text) \
                    and text not in grammar:
                opening = text
            for size in range(1, min(4, len(run)) + 1):
                for i in range(len(run) - size + 1):
                    key = tuple(run[i:i + size])
                    if 2 <= len("".join(key)) <= MAX_PHRASE_CHARS and key not in seen:
                        seen.add(key)
                        counts[key] += 1
                        first.setdefault(key, len(first))
    repeated = [k for k, n in counts.items() if n >= 2 and not is_generic("".join(k))
                and not is_event("".join(k)) and "".join(k) not in grammar]
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


_CLAUSE_END = re.compile(r"(?<=[。！？!?，,：:；;、])")
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


def content_runs(sentence: str) -> list[list[str]]:
    """The runs of content words a sentence says, as written: the phrases a name is cut from."""
    return _runs(sentence, stop_words_of(sentence))


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
