"""Text helpers of the offline path: words, sentences, links, the edits it writes, and
the conversation read back.

Pure functions, shared by the offline extractor (which quotes sentences from notes)
and the offline policy (which compares them with nodes, writes them, and re-reads
its own tool calls and their answers every turn instead of keeping state).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from vaultlink.markdown.language import stem, stop_words_of, tokens
from vaultlink.markdown.text import KEPT_TASK, LIST_MARK
from vaultlink.prose.subject_names import FUNCTION
from vaultlink.prose.units import Unit

STEP_MARK = re.compile(r"^\s*(\d+)[.)]\s+")
# A sentence ends at . ! ? before a space and a word that does not start in lower case
# (or inline code, or math: "$$"), or at 。！？ (Chinese and Japanese put no space after
# them), closing quotes kept.
_SPLIT = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[¿¡«„]?[^\W_]|[\"'“‘(\[`*\x00$])"
                    r"|(?<=[。！？])\s*(?![」』”’）)\s*_]|$)")
# An abbreviation ends no sentence: letters dotted in short runs in any script ("e.g.",
# "p.ej.", "z.B.", "т.е.") or a listed word (English, German, Spanish). A lone capital
# is left to end one: "Plan B." ends a sentence as often as "J." starts a name.
_ABBREV = re.compile(r"(?:^|[\s(])(?:[^\W\d_]{1,3}\.){2,}$"
                     r"|\b(?:etc|vs|cf|approx|Dr|Mr|Ms|Mrs|No|Fig|Nr|bzw|usw|vgl|ca"
                     r"|Sr|Sra|Srta|Dra|Prof)\.$")
_CODE_SPAN = re.compile(r"`[^`]*`")
_UNHIDE = re.compile(r"\x00(\d+)\x00")
_WIKILINK = re.compile(r"!?\[\[([^\[\]\n|#]*)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")

# A link target that is a full vault path: a folder and a file with its extension.
_FULL_PATH = re.compile(r"[^\[\]|#]+/[^\[\]|#/]+\.[A-Za-z][A-Za-z0-9]{0,5}")

_SMALL = frozenset("a an and as at by for in of on or the to vs with".split())


# -- words and sentences --------------------------------------------------------------


def words(text: str) -> list[str]:
    """The words of a text in any script, lowercased (inline code and numbers included;
    Chinese and Japanese as character pairs)."""
    return [w.strip("'’.") for w in tokens(text)]


def content_words(text: str) -> list[str]:
    """Stemmed words that carry meaning (the stop words of the text's language dropped)."""
    return [stem(w) for w in plain_words(text)]


def plain_words(text: str) -> list[str]:
    """The words that carry meaning as written, lowercased: for a name, where a stem is no
    word ("hablamo" of the Spanish "hablamos")."""
    stops = stop_words_of(text)
    return [w for w in words(text) if w not in stops and len(w) > 1]


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def readable(target: str) -> str:
    """A note's path as words in a sentence: ``daily/2026-06-17/retro.md`` -> "the
    2026-06-17 retro", ``daily/2026-06-20.md`` -> "the note of 2026-06-20",
    ``resource/rrf-paper-notes.md`` -> "rrf paper notes"."""
    stem = target.rsplit("/", 1)[-1].removesuffix(".md")
    day = _DAY.search(target)
    if day:
        rest = " ".join(w for w in re.split(r"[-_ ]+", _DAY.sub("", stem)) if w)
        return f"the {day.group(0)} {rest}" if rest else f"the note of {day.group(0)}"
    return " ".join(w for w in re.split(r"[-_ ]+", stem) if w)


def link_text(target: str) -> str:
    """What an owner's link with no alias says in their text: its note's name as words,
    a day as its date ("[[2022-12-11]]" says "2022-12-11", not "the note of ...")."""
    said = readable(target)
    return said.removeprefix("the note of ")


def delink(text: str, keep_full: bool = False) -> str:
    """Wikilinks as their display text: ``[[a/b.md|B]]`` -> ``B``, ``[[a/b.md]]`` -> ``b``.

    Summary sentences are quoted from the user's notes, whose links are often short
    forms; written into a digest node they would be refused (links there must be full
    vault paths), so the policy writes their display text instead. With ``keep_full``
    (writing a node), a link by full vault path stays: integrate writes the owner's links
    so (``prose/node_names.py`` ``carried_unit``), each naming what it named in the owner's note.
    """
    def show(m: re.Match[str]) -> str:
        if keep_full and _FULL_PATH.fullmatch(m.group(1).strip()):
            return m.group(0)
        if m.group(2):
            return m.group(2).strip()
        return readable(m.group(1).strip())
    # inline code is left as written: `[[x]]` in code is no link
    return "".join(part if part.startswith("`") else _WIKILINK.sub(show, part)
                   for part in re.split(r"(`[^`]*`)", text))


def split_sentences(text: str) -> list[str]:
    """Sentences of a prose paragraph, whitespace collapsed.

    Abbreviations and inline code (``ALTER TABLE ... SET``) never end a sentence.
    """
    flat = " ".join(text.split())
    spans: list[str] = []

    def hide(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    hidden = _CODE_SPAN.sub(hide, flat)
    # pieces joined once at the end, an abbreviation looked for in the last piece only:
    # growing a sentence piece by piece cost a 60 KB line of "a. a. a." 20 s
    out: list[list[str]] = []
    for piece in _SPLIT.split(hidden):
        if out and (_ABBREV.search(out[-1][-1]) or piece[:1].islower()):
            out[-1].append(piece)
        else:
            out.append([piece])
    joined = (" ".join(pieces) for pieces in out)
    return [_UNHIDE.sub(lambda m: spans[int(m.group(1))], s) for s in joined if s]


# Words that point back to something said before: no node starts with them.
REFERRING = frozenset("""this that these those it its they them so also however but and thus
therefore here such then which where hence""".split())
# ... and words that lean on what came before, which a node's first sentence cannot do.
_STRICT = REFERRING | frozenset("""there additionally alternatively finally instead
otherwise doing once another either none same whereas while unless although
because since if when as moreover furthermore likewise similarly now still yet first second
next lastly below above following note thank thanks""".split())
# The same connectives in other languages written with spaces (Spanish, Portuguese,
# Italian, French, German), a two-word opener as its pair. Their demonstratives are left
# out: a page opening "Esta es la lista de ..." speaks of itself.
_STRICT |= frozenset("""así además también entonces luego então além quindi inoltre anche
poi allora così donc ainsi ensuite puis cependant pourtant alors deshalb daher außerdem
dann trotzdem dabei""".split())
_STRICT_PAIRS = frozenset(["con eso", "con esto", "por eso", "por ello", "sin embargo",
                           "por tanto", "por isso", "com isso", "per questo", "de plus",
                           "par conséquent"])
# A counting word with a noun of its own stands alone ("One page at 07:12 ...", "Each
# query has ..."); alone or before "of", "is", "are" it points back ("One of them").
_COUNTING = frozenset("one each both".split())
_FIRST_TOKEN = re.compile(r"\S+")


def _lower_name(head: str) -> bool:
    """Whether ``head`` opens on a name written in lower case: a word of letters only with
    a capital inside it ("iCloud", "macOS,")."""
    token = _FIRST_TOKEN.match(head)
    word = token.group(0).rstrip(".,;:!?、，：") if token else ""
    return word.isalpha() and any(c.isupper() for c in word[1:])


def starts_sentence(line: str, strict: bool = False) -> bool:
    """Whether a line can open a node (or, not strict, a paragraph of one). A task item
    stands on its own, whatever its case ("- ☐ this needs doing by Friday")."""
    if KEPT_TASK.match(line):
        return True
    text = STEP_MARK.sub("", LIST_MARK.sub("", line)).lstrip("*_\"'“([")
    if not text:
        return False
    if strict and text.startswith("`"):
        return False
    head = text.lstrip("`")
    # lower case continues a sentence, but a name written so ("iCloud", "macOS") opens
    # one (a word of letters only: not code, "fs.readdirSync", nor a web address)
    if head[:1].islower() and not _lower_name(head):
        return False
    first = words(head)[:2]
    if strict and first[:1] and first[0] in _COUNTING:
        return len(first) > 1 and first[1] not in FUNCTION
    if strict and " ".join(first) in _STRICT_PAIRS:
        return False
    return not (first and first[0] in (_STRICT if strict else REFERRING))


# At the top of a page "This is a ..." says what the page's subject is ("This is a lazy
# functional language"); "This is part of a guide" says what the page is.
_OF_THE_PAGE = frozenset(["this is a", "this is an", "this is the"])


def speaks_of_page(line: str) -> bool:
    """Whether a page's first line opens on "This is a ..." (as written, capital T)."""
    return line.startswith("This ") and " ".join(words(line)[:3]) in _OF_THE_PAGE


def full_stopped(sentences: list[str], stop: str) -> str:
    """A line (its ``sentences``) that is one sentence its owner left without a full stop
    ("La dieta es el proceso por el cual ..."), given ``stop``; '' for a line of more, one
    ending on a mark, or one holding a link, a label, code, math or a path."""
    first = sentences[0]
    if len(sentences) > 1 or not first[-1:].isalnum() or "](" in first or "://" in first \
            or any(c in first for c in ":：$#{}|*`[]>→"):  # ">", "→": a path, not a sentence
        return ""
    return first + stop


def summary_lines(summary: str) -> list[str]:
    """A unit summary back as its sentences (one per line offline; split prose otherwise)."""
    out: list[str] = []
    for line in summary.split("\n"):
        line = line.strip()
        if not line:
            continue
        out.extend([line] if STEP_MARK.match(line) else split_sentences(line))
    return out


# -- what the policy writes ------------------------------------------------------------


def title_of(handle: str) -> str:
    """A handle as a title: ``rotate-the-search-api-key`` -> ``Rotate the Search Api Key``."""
    out = []
    for i, word in enumerate(handle.split("-")):
        out.append(word if (i and word in _SMALL) else word[:1].upper() + word[1:])
    return " ".join(out) or "Note"


def short(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, cut at a word."""
    text = " ".join(delink(text).split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


# -- the conversation --------------------------------------------------------------

# the unit is one line of JSON (json.dumps escapes line breaks): read to its line's end,
# so a "}```" inside a summary's code does not cut it short
_UNIT_BLOCK = re.compile(r"```json[ \t]*\n(\{.*\})[ \t]*\n```")


@dataclass(frozen=True)
class Turn:
    """One earlier tool call and its answer (``answer`` None: not JSON, e.g. cut short)."""

    name: str
    args: dict[str, Any]
    answer: dict[str, Any] | None

    @property
    def error(self) -> str:
        """The tool's error message, or ``""`` when it succeeded."""
        if self.answer is None:
            return ""
        return str(self.answer.get("error", ""))

    @property
    def code(self) -> str:
        """The guard's refusal code (``errors.Refusal``), or ``""``."""
        return str(self.answer.get("code", "")) if self.answer is not None else ""

    @property
    def ok(self) -> bool:
        """A JSON answer without an error."""
        return self.answer is not None and not self.error


def read_unit(messages: list[dict[str, Any]]) -> Unit | None:
    """The unit embedded as a ```json block in the first user message."""
    for msg in messages:
        if msg.get("role") == "user":
            m = _UNIT_BLOCK.search(str(msg.get("content") or ""))
            if not m:
                return None
            try:
                return Unit.from_dict(json.loads(m.group(1)))
            except (ValueError, AttributeError):
                return None
    return None


def read_turns(messages: list[dict[str, Any]]) -> list[Turn]:
    """Tool calls of the assistant paired, in order, with the tool answers after them."""
    turns: list[Turn] = []
    pending: list[dict[str, Any]] = []
    for msg in messages:
        if msg.get("role") == "assistant":
            pending = [c.get("function", c) for c in msg.get("tool_calls") or []]
        elif msg.get("role") == "tool" and pending:
            call = pending.pop(0)
            try:
                answer = json.loads(str(msg.get("content") or ""))
            except ValueError:
                answer = None
            args = call.get("arguments")
            turns.append(Turn(str(call.get("name", "")), args if isinstance(args, dict) else {},
                              answer if isinstance(answer, dict) else None))
    return turns
