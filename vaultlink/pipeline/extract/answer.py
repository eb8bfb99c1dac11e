"""The model's answer read: items merged by name, summaries as plain text with their
code kept as code, and how much of a summary the note (not the prompt's example) says.
The extractor builds its units from these. Pure functions.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from vaultlink.markdown.language import subject_words
from vaultlink.markdown.links import RAW_WIKILINK
from vaultlink.markdown.text import FENCED_BLOCK
from vaultlink.prose.sentences import split_sentences
from vaultlink.prose.units import slugify

# Share of a summary's content words (stemmed) that must occur in the note, short
# summaries too: below it the model wrote of something else (docs/quality.md, "The
# measurements behind the model extractor's guards").
GROUNDED = 0.4
# A sentence is the prompt example's, not the note's, when this many of its subject
# words (and a quarter of them) are the example's and not the note's (same section).
ECHOED_WORDS = 3


def merged_items(items: list[Any]) -> list[dict[str, Any]]:
    """Answer items with one name are one subject: their summaries joined (small models
    cut one procedure into a unit per step); a summary given twice counts once."""
    out: dict[str, dict[str, Any]] = {}
    for raw in items:
        if not isinstance(raw, dict):
            continue
        key = slugify(str(raw.get("name") or "")).removesuffix("-md")
        summary = summary_text(str(raw.get("summary") or ""))
        if key not in out:
            out[key] = {**raw, "summary": summary}
        elif summary and summary not in out[key]["summary"]:
            joined = out[key]["summary"].rstrip()
            out[key]["summary"] = f"{joined}{'' if joined.endswith('.') else '.'} {summary}"
    return list(out.values())


def plain_summary(text: str) -> str:
    """A summary as plain words: a link copied from the note ([[2026-06-31]]) may name no
    note, and links are the integrator's to write (checked by the guard)."""
    return RAW_WIKILINK.sub(_label, summary_text(text))


def summary_text(text: str) -> str:
    """A summary's prose on one line, its fenced code blocks kept line by line as
    paragraphs of their own: a model that copies a page's commands with their line
    breaks gets them in the node as code, not as one line that is neither code nor a
    sentence."""
    parts, at = [], 0
    for m in FENCED_BLOCK.finditer(text):
        parts.append(" ".join(text[at:m.start()].split()))
        block = m.group(0).rstrip()
        fence = m.group(1)
        if not block.endswith(fence):
            block += "\n" + fence  # an answer cut inside its block: closed
        parts.append("\n".join(line.rstrip() for line in block.split("\n")))
        at = m.end()
    parts.append(" ".join(text[at:].split()))
    return "\n\n".join(p for p in parts if p)


_INLINE_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def with_code_restored(summary: str, source: str) -> str:
    """``summary`` with each inline code span that is a code block of ``source`` run onto
    one line put back as that block: a model that copies a page's example as one line
    of inline code writes neither code nor prose; the note still has the block."""
    blocks = []
    for m in FENCED_BLOCK.finditer(source):
        lines = m.group(0).rstrip().split("\n")
        closed = len(lines) > 1 and lines[-1].strip().startswith(m.group(1))
        body = textwrap.dedent("\n".join(lines[1:-1] if closed else lines[1:])).strip("\n")
        if body.strip():
            info = lines[0].strip()[len(m.group(1)):].split()
            blocks.append((" ".join(body.split()), m.group(1) + (info[0] if info else ""),
                           m.group(1), body))

    def restore(m: re.Match[str]) -> str:
        span = " ".join(m.group(1).split())
        cut = span.removesuffix("...").rstrip()  # "`some lines ...`": the rest left out
        words = len(cut.split())
        if words < 3:
            return m.group(0)  # a name or a command of a word or two stays inline
        for flat, opening, fence, body in blocks:
            # most of one block: a command quoted from a long block stays inline
            if flat == span or (cut in flat and 2 * words >= len(flat.split())):
                return f"\n\n{opening}\n{body}\n{fence}\n\n"
        return m.group(0)

    restored = _INLINE_CODE.sub(restore, summary)
    return summary if restored == summary else summary_text(restored)


def _label(m: re.Match[str]) -> str:
    """A wikilink's words: its alias, else its target's last part without ``.md``."""
    body = m.group(2)
    target, _, alias = body.partition("|")
    return alias.strip() or target.split("#")[0].rsplit("/", 1)[-1].removesuffix(".md")


def grounded(summary: str, source: str) -> float:
    """The share of ``summary``'s subject words that ``source`` holds (1.0 for a summary
    with none)."""
    want = set(subject_words(summary))
    return len(want & set(subject_words(source))) / len(want) if want else 1.0


def without_echoes(summary: str, example: str, source: str) -> str:
    """``summary`` without the sentences the model took from the prompt's worked
    ``example`` rather than from ``source`` (see ``ECHOED_WORDS``); '' if all were.
    Lines with code, list items and headings are kept as they are."""
    shown = set(subject_words(example)) - set(subject_words(source))
    if not shown:
        return summary

    def echoed(sentence: str) -> bool:
        words = set(subject_words(sentence))
        copied = words & shown
        return len(copied) >= ECHOED_WORDS and 4 * len(copied) >= len(words)

    kept: list[str] = []
    for paragraph in summary.split("\n\n"):
        if "`" in paragraph or "\n" in paragraph.strip():
            kept.append(paragraph)
            continue
        sentences = [s for s in split_sentences(paragraph) if not echoed(s)]
        if sentences:
            kept.append(" ".join(sentences))
    return "\n\n".join(kept).strip()

