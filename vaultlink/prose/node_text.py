"""The Markdown of a digest node around a model's words: pure functions.

What the one-shot mode writes besides the unit's text: the related-node sentence, the
``## Sources`` section, a paragraph inserted before it, a superseded sentence struck
through with its correction, and how much of a unit a node already says.
"""

from __future__ import annotations

import re

from vaultlink.markdown.links import code_line_numbers
from vaultlink.markdown.sections import find_sources_section
from vaultlink.markdown.text import FENCED_BLOCK
from vaultlink.prose.turns import label_of
from vaultlink.prose.writing import weave


def compose(body: str, source_line: str) -> str:
    """A body: the text, then ``## Sources`` with its first line."""
    parts = [body.strip()]
    if source_line:
        parts.append("## Sources\n\n" + source_line)
    return "\n\n".join(p for p in parts if p) + "\n"


def weave_mentions(text: str, nodes: list[tuple[str, str]], own: str = "") -> str:
    """``text`` of the node named ``own`` with the first mention of each node (path,
    name) made a link. Only mentions: a node a model merely lists as related is often
    another subject (docs/quality.md), and a link a reader cannot see the reason for is
    noise."""
    blocks = paragraphs_of(text)
    woven, _ = weave(blocks, [(p, n) for p, n in nodes if n.strip()], set(), own=own)
    return "\n\n".join(woven)


def insert_before_sources(body: str, text: str) -> str:
    """``text`` as a new paragraph just before ``## Sources`` (or at the end)."""
    lines = body.rstrip("\n").split("\n")
    sec = find_sources_section(body)
    at = sec.start if sec is not None else len(lines)
    head = "\n".join(lines[:at]).rstrip()
    tail = "\n".join(lines[at:])
    return "\n\n".join(p for p in (head, text.strip(), tail) if p) + "\n"


SENTENCE = re.compile(r"(?<=[.!?])\s+")


def paragraphs_of(text: str) -> list[str]:
    """``text`` cut at its blank lines, except those inside a fenced code block: cut
    there, a block's lines were joined as prose and its fence left open."""
    code = code_line_numbers(text)
    out: list[str] = []
    first = 1  # the line each piece starts on; the blank line before it is first - 1
    for piece in text.split("\n\n"):
        if out and first - 1 in code:
            out[-1] += "\n\n" + piece
        else:
            out.append(piece)
        first += piece.count("\n") + 2
    return out


def lead_sentence(text: str) -> str:
    """The first sentence of ``text`` on one line, for a description: a fenced block
    stands as its first line in backticks ("run: `hatch new my-app`")."""
    def inline(m: re.Match[str]) -> str:
        lines = [ln.strip() for ln in m.group(0).split("\n")[1:] if ln.strip()]
        code = next((ln for ln in lines if not ln.startswith(m.group(1))), "")
        return f" `{code}` " if code else " "
    return SENTENCE.split(" ".join(FENCED_BLOCK.sub(inline, text).split()))[0]


def _said(sentence: str) -> str:
    return " ".join(re.findall(r"\w+", sentence.lower()))


def new_sentences(text: str, known: str) -> str:
    """``text`` without the sentences ``known`` already holds, or that ``text`` said
    before (small models repeat a pair of sentences; a REFINE from a page read twice
    would copy the node's own text into it again). Paragraphs stay."""
    seen = {_said(x) for line in known.split("\n") for x in SENTENCE.split(line.strip())}
    paragraphs = []
    for para in paragraphs_of(text):
        if para.lstrip().startswith(("#", "`", "-", "*", "|", "1.")):
            paragraphs.append(para)  # headings, code, lists, tables: kept whole
            continue
        kept = []
        for sentence in SENTENCE.split(" ".join(para.split())):
            key = _said(sentence)
            if key and key not in seen:
                seen.add(key)
                kept.append(sentence)
        if kept:
            joined, who = " ".join(kept), label_of(para)
            # a turn whose opening sentence the node holds keeps its speaker all the same
            paragraphs.append(f"{who}: {joined}" if who and not label_of(joined) else joined)
    return "\n\n".join(paragraphs)


def without_dangling_lead(text: str) -> str:
    """``text`` without a closing sentence that introduces what is not there ("The
    following is an example of a valid block:" with the example left out); ``text``
    itself when that sentence is all it says."""
    paragraphs = paragraphs_of(text.rstrip())
    last = paragraphs[-1]
    if last.rstrip().endswith(":") and not last.lstrip().startswith(("#", "`", "-", "|")):
        sentences = SENTENCE.split(last.strip())
        rest = " ".join(sentences[:-1])
        paragraphs = paragraphs[:-1] + ([rest] if rest else [])
    return "\n\n".join(paragraphs) or text


def strike(body: str, old: str, correction: str, within: bool = False) -> str | None:
    """The body with the sentence ``old`` names struck through and the correction after
    it; None when no sentence of the body matches well enough. ``within``: ``old`` is
    the correcting text itself, so the sentence whose words it holds most is meant."""
    want = set(re.findall(r"\w+", old.lower()))
    if not want:
        return None
    lines = body.split("\n")
    best: tuple[float, int, str] = (0.0, -1, "")
    sec = find_sources_section(body)
    stop = sec.start if sec is not None else len(lines)
    for i, line in enumerate(lines[:stop]):
        if line.lstrip().startswith("#"):
            continue
        for sentence in SENTENCE.split(line.strip()):
            have = set(re.findall(r"\w+", sentence.lower()))
            score = len(want & have) / max(len(have) if within else len(want | have), 1)
            if sentence and score > best[0]:
                best = (score, i, sentence)
    score, i, sentence = best
    if score < 0.5 or "~~" in sentence:
        return None
    lines[i] = lines[i].replace(sentence, f"~~{sentence}~~ {correction}", 1)
    return "\n".join(lines)


# How a unit says that it corrects something (the extract prompt asks it to say what is
# true now): "no longer", "outdated", "not X as noted before", "changed from".
CORRECTION = re.compile(
    r"\b(no longer|not any ?more|out of date|outdated|obsolete|superseded|correct(ed|ion)|"
    r"(was|were|is|are) wrong|changed (from|to)|used to be|"
    r"not (?:[^.;:]|\.(?=\d)){1,60}? (as|like) "
    r"(noted|stated|written|said|before|previously|earlier))\b",
    re.IGNORECASE)


def says_correction(text: str) -> bool:
    """Whether ``text`` says that something known before is no longer true."""
    return CORRECTION.search(text) is not None


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def new_values(summary: str, text: str) -> set[str]:
    """The numbers ``summary`` states that ``text`` does not (a changed value)."""
    return set(_NUMBER.findall(summary)) - set(_NUMBER.findall(text))


def title_of(handle: str, text: str = "") -> str:
    """A unit's handle as a title: ``online-rebuild`` -> ``Online rebuild``; a word that
    ``text`` (the unit's summary) always writes in capitals keeps them (``sqlite-fts5``
    -> ``SQLite FTS5``, not ``Sqlite fts5``; ``uv`` from "UV" is "UV", not "Uv")."""
    words = handle.replace("-", " ").split()
    if not words:
        return "Note"
    out = [as_written(w, text) for w in words]
    out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)


def as_written(word: str, text: str) -> str:
    """``word`` as ``text`` writes it wherever it stands outside code, when that is one
    form with a capital letter that is not just a sentence's first ("UV", "SQLite",
    "Python" in the middle of a sentence); else ``word``."""
    prose = re.sub(r"`[^`\n]*`", " ", text)  # code keeps its own case (`installer = 'uv'`)
    found = list(re.finditer(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", prose,
                             re.IGNORECASE))
    forms = {m.group(0) for m in found}
    if len(forms) != 1:
        return word
    form = forms.pop()
    if form == form.lower():
        return word
    inside = any(not _SENTENCE_START.search(prose[:m.start()]) for m in found)
    return form if form[1:] != form[1:].lower() or inside else word


_SENTENCE_START = re.compile(r"(?:^|[.!?。！？:]\s+|\n\s*)$")
