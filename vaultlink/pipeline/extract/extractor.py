"""The model extractor: memory units from one note per structured-output call.

What the code knows, it never asks the model. A unit's source is the note it was
extracted from, so the schema has no ``paths`` (small models put headings there, or
repeat one path until the answer is cut). A unit named after a heading (``standup``,
``notes``, ``todo``) or a date is renamed after its subject. Only the note's new
sections are sent: the rest was integrated before.

One bad answer fails one note, never the run: an answer cut at its length cap is asked
again smaller (half the sections, or fewer, shorter units), not resent; an answer that
is not the JSON asked for gets one repair turn; what still fails raises
``ModelOutputError`` for ``extract_step`` to record against that note.
"""

from __future__ import annotations

import logging
import re
import textwrap
from collections.abc import Sequence
from importlib import resources
from typing import Any

from vaultlink.errors import AnswerCut, ModelOutputError, PromptTooLarge
from vaultlink.llm.chat import ChatModel, estimate_tokens, extract_json
from vaultlink.markdown.language import STOP_WORDS, language_of, stem, subject_words
from vaultlink.markdown.links import RAW_WIKILINK
from vaultlink.markdown.obsidian import readable_text
from vaultlink.markdown.text import FENCED_BLOCK
from vaultlink.pipeline.context import PassedOver, SourceNote
from vaultlink.pipeline.integrate.session import Usage
from vaultlink.pipeline.prompts import prompt
from vaultlink.prose.blocks import parse_blocks
from vaultlink.prose.pages import note_title, page_facts
from vaultlink.prose.phrase_names import subject_name as said_subject
from vaultlink.prose.sentences import split_sentences
from vaultlink.prose.subject_names import clean_heading, name_flaw
from vaultlink.prose.units import BUCKETS, Unit, normalize_bucket, slugify

log = logging.getLogger(__name__)

MAX_UNITS = 3  # per note and call: few, rich units
SMALL_UNITS = 2  # when an answer was cut: fewer, shorter units
SECTION_CHARS = 4000
# Sections never worth a unit: told to skip them, small models still extract each item.
SKIP_HEADINGS = frozenset("""todo to-do todos tasks action-items follow-ups followups lunch
dinner breakfast weather weekend errands personal-admin""".split())
# Names that say where a unit was written, not what it is about (what the 1.5B model
# named its units after: headings and the note's title).
VAGUE_NAMES = SKIP_HEADINGS | frozenset("""note notes standup stand-up decisions decision
reading summary log ideas thoughts today journal update updates misc meeting meetings
discussion context background details learnings preferences observations research
agenda attendees retro retrospective incident review design-review status""".split())

EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "units": {
            "type": "array",
            "maxItems": MAX_UNITS,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "bucket": {"type": "string", "enum": list(BUCKETS)},
                    "summary": {"type": "string"},
                },
                "required": ["name", "bucket", "summary"],
            },
        }
    },
    "required": ["units"],
}
# Share of a summary's content words (stemmed) that must occur in the note. Every unit
# the 1.5B extracted on sample_vault and realdocs kept 0.75 or more; the six the 0.5B
# copied from the prompt's example ("To rotate the API key: ...", "To vacuum the table:
# create the new key ...") into notes that say nothing of it kept 0 to 0.33.
# A short summary is held to it too: in a week's soak the 0.5B wrote "To preserve the
# backup-keep期 for the vault." and "To document the notes of the vault." (0 and 1 of 3)
# from a Hatch page that says neither, and both became nodes.
GROUNDED = 0.4
# A sentence is the example's, not the note's, when this many of its subject words (and
# a quarter of them) are the example's and not the note's. In a week's soak the 0.5B
# ended a Hatch page's unit and an incident's with "create the new key, deploy it, wait
# an hour, then revoke the old one" (3 and 4 such words); the note's own sentences of
# the 1.5B's sample_vault and realdocs units had at most one.
ECHOED_WORDS = 3
REPAIR = ('That was not the JSON asked for. Answer again with JSON only: '
          '{"units": [{"name": "...", "bucket": "...", "summary": "..."}]}')
Section = tuple[str, str]  # (heading breadcrumb, text)


class ModelExtractor:
    """Extract through a chat model with structured output, one note per call."""

    def __init__(self, model: ChatModel, num_ctx: int, resource: str = "resource") -> None:
        self.model = model
        self.num_ctx = num_ctx
        self.resource = resource  # the folder of documents the person keeps (not theirs)
        self.usage = Usage()  # every call's tokens and seconds, for the run's report
        self.passes_over = "the model found nothing worth keeping in its new sections"
        self.rules = "model"
        self.passed: list[PassedOver] = []  # a model reads every paragraph

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        """Units of each note; a note the model cannot answer for raises."""
        units: list[Unit] = []
        for note in notes:
            units.extend(self.extract_note(note))
        return units

    def extract_note(self, note: SourceNote) -> list[Unit]:
        """The note's new sections in as few calls as fit the context (to-do lists,
        meals and weather left out: small models make units of them). A section is sent
        as its owner wrote it: inline fields, queries, comments and navigation lines are
        Obsidian's machinery, not prose (``markdown.obsidian``; ``extract.source_note``
        has left a day note's template out already)."""
        sections = [(crumb, readable_text(text)[:SECTION_CHARS])
                    for crumb, text, new in note.sections
                    if new and slugify(crumb.split(" > ")[-1]) not in SKIP_HEADINGS]
        sections = [(crumb, text) for crumb, text in sections if text.strip()]
        units: list[Unit] = []
        for part in self._parts(sections):
            units.extend(self._ask(note, part, MAX_UNITS))
        return _unique(units)

    def _budget(self) -> int:
        # Half the context for the note: the rest is instructions, schema and answer.
        return max(self.num_ctx // 2 - estimate_tokens(extract_prompt("en")), 256)

    def _parts(self, sections: list[Section]) -> list[list[Section]]:
        parts: list[list[Section]] = []
        used = 0
        for section in sections:
            cost = estimate_tokens(section[1]) + 8
            if parts and used + cost <= self._budget():
                parts[-1].append(section)
                used += cost
            else:
                parts.append([section])
                used = cost
        return parts

    def _ask(self, note: SourceNote, sections: list[Section], most: int) -> list[Unit]:
        # The instructions are the same for every call of a language and come first,
        # everything of this note (even how many units) last: a server that caches the
        # prompt's start (llama.cpp, Ollama) reads the instructions once, not per note.
        # A section's text starts with its own heading: the breadcrumb would repeat it.
        body = "\n\n".join(text for _, text in sections)
        system = extract_prompt(language_of(body))
        user = (f"Note {note.path}\n\n{body}" + language_hint(body)
                + f"\n\n(At most {most} units.)")
        messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                          {"role": "user", "content": user}]
        try:
            data = self._answer(messages)
        except (AnswerCut, PromptTooLarge) as exc:
            if len(sections) > 1:  # smaller: half the sections each
                half = len(sections) // 2
                log.info("%s: %s; asking for each half of its sections", note.path, exc)
                return (self._ask(note, sections[:half], most)
                        + self._ask(note, sections[half:], most))
            if most > SMALL_UNITS and isinstance(exc, AnswerCut):
                log.info("%s: %s; asking for fewer, shorter units", note.path, exc)
                return self._ask(note, sections, SMALL_UNITS)
            raise ModelOutputError(f"extract {note.path}: {exc}") from None
        headings = {slugify(h) for crumb, _ in sections for h in crumb.split(" > ") if h}
        headings.add(slugify(note.title))
        page = note.path.startswith(f"{self.resource}/")
        title = page_heading(note.text) if page else ""
        units = []
        for raw in _merged(data)[:most]:
            unit = _unit(raw, note.path, headings)
            if unit is None:
                continue
            if grounded(unit.summary, note.new_text()) < GROUNDED:
                log.info("dropping unit %r of %s: its summary is not in the note (%s)",
                         unit.name, note.path, unit.summary[:80])
                continue
            unit.summary = without_echoes(unit.summary, example_of(language_of(body)),
                                          note.new_text())
            if not unit.summary:
                log.info("dropping unit %r of %s: its summary is the prompt's example",
                         unit.name, note.path)
                continue
            unit.summary = with_code_restored(unit.summary, note.new_text())
            if page:
                # A document the person keeps is general knowledge: the 1.5B put pages of
                # the Hatch docs under "personal" (this person's facts and preferences).
                if unit.bucket == "personal":
                    unit.bucket = "wiki"
                named_by_title(unit, title)
            units.append(unit)
        return units

    def _answer(self, messages: list[dict[str, Any]]) -> list[Any]:
        """The ``units`` list of the answer, after at most one repair turn."""
        content = ""
        for turn in range(2):
            try:
                reply = self.model.chat(messages, schema=EXTRACT_SCHEMA)
                self.usage.add(reply)
                content = reply.content or ""
            except AnswerCut:
                raise
            except ModelOutputError as exc:
                content = str(exc)
                reply = None
            data = extract_json(content) if reply is not None else None
            if isinstance(data, dict) and isinstance(data.get("units"), list):
                return list(data["units"])
            if turn == 0:
                messages = [*messages, {"role": "assistant", "content": content[:1000]},
                            {"role": "user", "content": REPAIR}]
        raise ModelOutputError("the model's answer is not {\"units\": [...]} after a repair "
                               f"turn: {content[:160]!r}")


def _merged(items: list[Any]) -> list[dict[str, Any]]:
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


def _unit(raw: dict[str, Any], path: str, headings: set[str]) -> Unit | None:
    """A unit from one answer item, its source the note, its name made specific."""
    # A summary is plain words: a link copied from the note ([[2026-06-31]]) may name no
    # note, and links are the integrator's to write (checked by the guard).
    summary = RAW_WIKILINK.sub(_label, summary_text(str(raw.get("summary") or "")))
    if not summary:
        log.info("dropping unit %r of %s: empty summary", raw.get("name"), path)
        return None
    return Unit(subject_name(str(raw.get("name") or ""), summary, headings),
                normalize_bucket(raw.get("bucket")), summary, [path])


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
    one line put back as that block. The 1.5B copies a page's examples into a summary
    as one line of inline code ("`from hatchling.plugin import hookimpl from .plugin
    import SpecialEnvironment @hookimpl def hatch_register_environment(): ...`"), which
    reads as neither code nor prose in the node; the note still has the block."""
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


def subject_name(name: str, summary: str, headings: set[str]) -> str:
    """``name`` as a kebab-case handle, or the summary's subject when ``name`` is vague:
    empty, a date, a generic or logistics word, a heading or the title of the note.

    The subject is a phrase the summary says (what it defines, a phrase it repeats, the
    phrase it opens with; for Chinese and Japanese the characters it repeats), else the
    words it is about (``key_words``): a 0.5B named a retro's "The design review ...
    settled the fusion question" after the note's heading, and picked words gave
    "design-review-design-review-settled"."""
    slug = slugify(name).removesuffix("-md") if name.strip() else ""
    if not _vague(slug, headings):
        return slug
    for phrase in (said_subject(split_sentences(summary), []), key_words(summary)):
        candidate = slugify(phrase)
        if candidate and not _vague(candidate, headings):
            return candidate
    return slug or "note"


def page_heading(text: str) -> str:
    """A page's own title: its frontmatter's ``title`` (a clipped page's), else the one
    top heading that opens it, as the offline reader takes it (``note_title``); '' when
    it has neither (a file name is no title)."""
    return page_facts(text).title or note_title(parse_blocks(text))[0]


def named_by_title(unit: Unit, title: str) -> None:
    """A page's unit named by one word of the page's title is named by the title: the
    0.5B called the unit of Hatch's "How to run Python scripts" "script". The title keeps
    its case ("Run Python scripts"), as the page writes it."""
    words = [w for w in unit.name.split("-") if w]
    named = clean_heading(title) if title.strip() else ""
    if len(words) != 1 or not named or name_flaw(named, title=True):
        return
    if stem(words[0]) in {stem(w.lower()) for w in re.findall(r"[^\W_]+", named)}:
        unit.name, unit.title = slugify(named), named


def _vague(slug: str, headings: set[str]) -> bool:
    """Whether a handle names no subject: see ``subject_name``; ``name_flaw`` knows the
    generic words of other languages ("Beschreibung", "概述") and a word said twice."""
    return (not slug or slug in VAGUE_NAMES or re.fullmatch(r"[\d-]+", slug) is not None
            or slug in headings or name_flaw(slug.replace("-", " ")) != "")


def key_words(text: str, most: int = 4) -> str:
    """The words a text is about: those it repeats (in their first order), else the
    first content words of its first sentence; a word written as part of a compound
    already taken ("design review ... design-review") counts once."""
    tokens = re.findall(r"\w[\w.-]*\w|\w", text)
    plain = [t for t in tokens if t.lower() not in STOP_WORDS and len(t) > 2
             and not t.replace(".", "").isdigit()]
    counts: dict[str, int] = {}
    for t in plain:
        counts[stem(t.lower())] = counts.get(stem(t.lower()), 0) + 1
    seen: set[str] = set()
    repeated = []
    for t in plain:
        key = stem(t.lower())
        if counts[key] > 1 and key not in seen:
            seen.add(key)
            repeated.append(t.lower())
    if len(repeated) >= 2:
        return " ".join(_distinct(repeated)[:most])
    first = split_sentences(text)[:1]
    return " ".join(_distinct([t.lower() for t in plain if first and t in first[0]])[:most])


def _distinct(words: list[str]) -> list[str]:
    """``words`` less those whose parts (split at ``-`` and ``.``) are all taken before."""
    taken: set[str] = set()
    out: list[str] = []
    for word in words:
        parts = set(re.split(r"[-.]", word)) - {""}
        if parts and parts <= taken:
            continue
        taken |= parts
        out.append(word)
    return out


def _unique(units: list[Unit]) -> list[Unit]:
    """Units with distinct names (a second ``x`` becomes ``x-2``)."""
    seen: dict[str, int] = {}
    for unit in units:
        n = seen.get(unit.name, 0) + 1
        seen[unit.name] = n
        if n > 1:
            unit.name = f"{unit.name}-{n}"
    return units


LANGUAGE_NAMES = {"de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
                  "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "zh": "Chinese",
                  "ja": "Japanese", "ko": "Korean"}


def extract_prompt(language: str) -> str:
    """The extract instructions with their worked example in ``language`` (English for a
    language without one): the 0.5B copied the English example's units for a Chinese
    note, and the 1.5B wrote Chinese summaries under English kebab-case names, as the
    example showed; an example in the note's language is what small models follow."""
    return prompt("extract").replace("{example}", example_of(language))


def example_of(language: str) -> str:
    """The worked example of the extract prompt in ``language`` (else English)."""
    examples = resources.files("vaultlink.pipeline.prompts") / "examples"
    example = examples / f"extract.{language}.md"
    if not example.is_file():
        example = examples / "extract.en.md"
    return example.read_text("utf-8").strip()


def language_hint(text: str) -> str:
    """A closing line asking for units in the note's language ('' for English): small
    models answer in English unless told, even for a Chinese note."""
    name = LANGUAGE_NAMES.get(language_of(text))
    return f"\n\n(The note is in {name}: write the units in {name}.)" if name else ""
