"""The model extractor: memory units from one note per structured-output call.

What the code knows, it never asks the model: a unit's source is its note (the schema
has no ``paths``), a unit named after a heading or a date is renamed after its subject,
a list of tasks done (or of errands) is read by the offline rules, and only the note's
new sections are sent. One bad answer fails one note, never the run: an answer cut at
its length cap is asked again smaller (half the sections, or fewer, shorter units); an
answer that is not the JSON asked for gets one repair turn; what still fails raises
``ModelOutputError`` for ``extract_step`` to record.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from vaultlink.errors import AnswerCut, ModelOutputError, PromptTooLarge
from vaultlink.llm.chat import ChatModel, estimate_tokens, extract_json
from vaultlink.markdown.language import count_words, language_of, subject_words
from vaultlink.markdown.obsidian import besides_links, readable_text
from vaultlink.markdown.text import LIST_MARK
from vaultlink.pipeline.context import Extractor, PassedOver, SourceNote
from vaultlink.pipeline.extract.answer import (
    GROUNDED,
    grounded,
    merged_items,
    plain_summary,
    with_code_restored,
    without_echoes,
)
from vaultlink.pipeline.extract.prompt import (
    EXTRACT_SCHEMA,
    MAX_UNITS,
    REPAIR,
    example_of,
    extract_prompt,
    language_hint,
)
from vaultlink.pipeline.extract.unit_names import (
    SKIP_HEADINGS,
    named_by_title,
    page_heading,
    subject_name,
    unique_names,
)
from vaultlink.pipeline.usage import Usage
from vaultlink.prose.blocks import Block, parse_blocks, task_done
from vaultlink.prose.conversation import turns_of
from vaultlink.prose.pages import index_page
from vaultlink.prose.passing import CUE, SHORT, TOO_SHORT, errand_lines, says_something
from vaultlink.prose.units import Unit, normalize_bucket, slugify

log = logging.getLogger(__name__)

SMALL_UNITS = 2  # when an answer was cut: fewer, shorter units
SECTION_CHARS = 4000
FEW_SUBJECTS = 3  # a unit naming fewer content words is a fragment of its sentence
_FOOTNOTE_MARK = re.compile(r"\[\^[^\[\]\s]+\]")
Section = tuple[str, str]  # (heading breadcrumb, text)


def tasks_apart(text: str) -> tuple[str, str]:
    """A section twice, line for line: the lists of tasks the rules read (``for_rules``)
    and its headings ('' when it has none), and the rest but those lists, its lists
    of links and its errands (``errand_lines``). A list of links
    points at other notes: the 0.5B wrote what it imagined each one is ("[[Alfred]] is
    a popular plugin for automating tasks"), as the offline extractor never does."""
    blocks = parse_blocks(text)
    lines = text.split("\n")
    tasks = {i for b in blocks if b.kind == "tasks" and for_rules(b)
             for i in range(b.start - 1, b.end)}
    links = {i for b in blocks if b.kind == "links" or link_paragraph(b)
             for i in range(b.start - 1, b.end)}
    heads = {b.start - 1 for b in blocks if b.kind in ("heading", "banner")}
    shown, hidden = tasks | heads, tasks | links | errand_lines(blocks)
    only = "\n".join(ln if i in shown else "" for i, ln in enumerate(lines))
    return (only if tasks else "",
            "\n".join("" if i in hidden else ln for i, ln in enumerate(lines)))


def link_paragraph(block: Block) -> bool:
    """Whether a paragraph is links and nothing else (footnote marks aside): a map of
    content's "[[202212090136|Harlem Shake]][^1]", of which the 0.5B wrote "is a popular
    restaurant in the city of Harlem"."""
    if block.kind != "prose":
        return False
    said = besides_links(_FOOTNOTE_MARK.sub(" ", "\n".join(block.lines)))
    return said is not None and not re.search(r"[^\W\d_]", said)


def for_rules(tasks: Block) -> bool:
    """Whether the rules read a list of tasks: a record of work (a box ticked or
    cancelled), or errands they pass over; a plan of open tasks is the model's."""
    return any(map(task_done, tasks.items)) or not says_something(tasks.items, SHORT)


def with_tasks_apart(note: SourceNote) -> tuple[SourceNote, SourceNote]:
    """The note as the rules read it (its new sections' lists of tasks) and as the model
    reads it (the rest); each with the note's own line numbers."""
    text = note.text or "\n\n".join(t for _, t, _ in note.sections)
    listed, rest = [], []
    listed_text, rest_text = "", ""
    pos = 0
    for crumb, chunk, new in note.sections:
        only, others = tasks_apart(chunk) if new else ("", chunk)
        listed.append((crumb, only or chunk, new and bool(only)))
        rest.append((crumb, others, new))
        at = text.find(chunk, pos)
        if at >= 0:
            listed_text += text[pos:at] + (only or chunk)
            rest_text += text[pos:at] + others
            pos = at + len(chunk)
    listed_text, rest_text = listed_text + text[pos:], rest_text + text[pos:]
    return (SourceNote(note.path, note.title, listed, listed_text),
            SourceNote(note.path, note.title, rest, rest_text))


def skipped(crumb: str) -> bool:
    """Whether a section is under a heading of to-dos, meals or weather, left out; a
    heading written as a path ("todo/daily") by its first part."""
    heading = crumb.split(" > ")[-1]
    return slugify(heading) in SKIP_HEADINGS or slugify(heading.split("/")[0]) in SKIP_HEADINGS


def says_too_little(text: str) -> bool:
    """Whether a section says under ``TOO_SHORT`` words, with no cue, besides its
    headings, links, list marks and task boxes: a small model invents the rest."""
    body = "\n".join(ln for ln in text.split("\n") if not ln.lstrip().startswith("#"))
    said = besides_links(body)
    said = re.sub(r"[^\w\s]", " ", body if said is None else said)
    return count_words(said) < TOO_SHORT and not CUE.search(said)


class ModelExtractor:
    """Extract through a chat model with structured output, one note per call."""

    def __init__(self, model: ChatModel, num_ctx: int, task_lists: Extractor,
                 resource: str = "resource") -> None:
        self.model = model
        self.num_ctx = num_ctx
        self.resource = resource  # the folder of documents the person keeps (not theirs)
        self.usage = Usage()  # every call's tokens and seconds, for the run's report
        self.passes_over = "the model found nothing worth keeping in its new sections"
        self.rules = "model-2"  # 2: lists of tasks done are read by the offline rules
        self.passed: list[PassedOver] = []  # what the rules pass over of those lists
        self.task_lists = task_lists  # the offline rules, as the offline digest reads them

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        """Units of each note; a note the model cannot answer for raises."""
        self.passed = []
        units: list[Unit] = []
        for note in notes:
            units.extend(self.extract_note(note))
        return units

    def extract_note(self, note: SourceNote) -> list[Unit]:
        """The note's new sections in as few calls as fit the context (to-do sections,
        meals and weather left out: small models make units of them; lists of tasks done
        and errands are the offline rules'). A section is sent as its owner wrote it:
        inline fields, queries, comments and navigation lines are Obsidian's machinery,
        not prose (``markdown.obsidian``; ``extract.source_note`` has left a day note's
        template out already). A conversation is the offline rules' too, a unit per
        event with every turn whole (``prose.conversation``): a small model kept little
        of what was said (docs/quality.md, LoCoMo with a real model)."""
        if turns_of(note.text) or index_page(note.path, note.text or ""):
            # a folder's index page says what the folder holds: the rules pass it over
            units = self.task_lists.extract([note])
            self.passed += self.task_lists.passed
            return units
        kept = SourceNote(note.path, note.title, [(crumb, text, new and not skipped(crumb))
                                                  for crumb, text, new in note.sections],
                          note.text)
        listed, rest = with_tasks_apart(kept)
        units = self._task_lists(listed)
        sections = [(crumb, readable_text(text)[:SECTION_CHARS])
                    for crumb, text, new in rest.sections if new]
        # a section of nothing but links (a page listing its project's notes) or of a
        # few words is passed over as the offline extractor passes it: a small model
        # invented what each linked note is ("[[Alfred]] is a popular plugin for
        # automating tasks") and repeated the emoji of "Coachella WHOOOOO!!" to its cap
        sections = [(crumb, text) for crumb, text in sections if not says_too_little(text)]
        for part in self._parts(sections):
            units.extend(self._ask(note, part, MAX_UNITS))
        return unique_names(units)

    def _task_lists(self, listed: SourceNote) -> list[Unit]:
        """The units of the lists of tasks in the note's new sections (``listed``), read
        by the offline rules: a day's plan of timed tasks ("- [x] 12:30 Read Shred") is
        kept whole as the owner wrote it, errands are passed over; a small model made a
        few words of each task, or nothing."""
        if not any(new for _, _, new in listed.sections):
            return []
        units = self.task_lists.extract([listed])
        self.passed += self.task_lists.passed
        return units

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
        headings = heading_slugs([crumb for crumb, _ in sections], note.title)
        page = note.path.startswith(f"{self.resource}/")
        return kept_units(data, note, headings, most, example_of(language_of(body)),
                          page_heading(note.text) if page else None)

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


class RulesInstead:
    """The offline rules reading a note for the model path (an ``Extractor``): for a
    note the model gives no usable answer for, run after run (``extract_step``). Each
    unit is named after its subject as a model's unit is; the rules name a day's
    section after its day, and a node may not be named by a date."""

    usage = None  # no model: nothing spent

    def __init__(self, rules: Extractor) -> None:
        self.inner = rules
        self.passes_over = rules.passes_over
        self.rules = rules.rules
        self.passed: list[PassedOver] = []

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        units = self.inner.extract(notes)
        self.passed = list(self.inner.passed)
        for note in notes:
            headings = heading_slugs([crumb for crumb, _, _ in note.sections], note.title)
            for unit in units:
                if unit.paths == [note.path]:
                    named = subject_name(unit.name, unit.summary, headings)
                    if named != unit.name:
                        unit.name, unit.title = named, ""
        return unique_names(units)


def heading_slugs(crumbs: list[str], title: str) -> set[str]:
    """The headings of the given breadcrumbs and the note's title, as slugs: what names
    where a unit was written, not what it is about."""
    return {slugify(h) for crumb in crumbs for h in crumb.split(" > ") if h} | {slugify(title)}


def kept_units(items: list[Any], note: SourceNote, headings: set[str], most: int,
               example: str, title: str | None) -> list[Unit]:
    """The units of an answer worth keeping, at most ``most``; ``title`` is the page's
    own title when the note is a page the person keeps (None for their own notes)."""
    units = []
    for raw in merged_items(items)[:most]:
        unit = unit_of(raw, note.path, headings)
        if unit is None:
            continue
        if grounded(unit.summary, note.new_text()) < GROUNDED:
            log.info("dropping unit %r of %s: its summary is not in the note (%s)",
                     unit.name, note.path, unit.summary[:80])
            continue
        unit.summary = without_echoes(unit.summary, example, note.new_text())
        if not unit.summary:
            log.info("dropping unit %r of %s: its summary is the prompt's example",
                     unit.name, note.path)
            continue
        unit.summary = with_code_restored(unit.summary, note.new_text())
        if too_little(unit.summary):
            log.info("dropping unit %r of %s: too short to say anything on its own (%s)",
                     unit.name, note.path, unit.summary[:80])
            continue
        if title is not None:
            # A document the person keeps is general knowledge, never "personal" (this
            # person's facts and preferences), whatever a small model answers.
            if unit.bucket == "personal":
                unit.bucket = "wiki"
            named_by_title(unit, title)
        units.append(unit)
    return units


def too_little(summary: str) -> bool:
    """Whether a unit says too little to stand on its own, with no cue: under
    ``TOO_SHORT`` words ("Discuss.", "Go home.": a day planner's line, as the offline
    extractor reads it), or under ``FEW_SUBJECTS`` content words, a phrase cut from what
    it answers ("To create a new note.", "Turns out not so much actually.")."""
    said = " ".join(LIST_MARK.sub("", ln) for ln in summary.split("\n"))
    if CUE.search(said):
        return False
    return count_words(said) < TOO_SHORT or len(set(subject_words(said))) < FEW_SUBJECTS


def unit_of(raw: dict[str, Any], path: str, headings: set[str]) -> Unit | None:
    """A unit from one answer item, its source the note, its name made specific."""
    summary = plain_summary(str(raw.get("summary") or ""))
    if not summary:
        log.info("dropping unit %r of %s: empty summary", raw.get("name"), path)
        return None
    name = str(raw.get("name") or "")
    if invented(name, summary, headings):
        log.info("renaming unit %r of %s: neither its summary nor its note's title and "
                 "headings say its name", name, path)
        name = ""
    return Unit(subject_name(name, summary, headings),
                normalize_bucket(raw.get("bucket")), summary, [path])


def invented(name: str, summary: str, headings: set[str]) -> bool:
    """Whether a model's name says no word of the unit's summary, nor of its note's
    title and headings (``headings``, as slugs): the 0.5B named the README's paragraph
    on quick capture "Organize", after a letter of the section's "CODE", and a link on
    "organize notes" led to it. (A name its note's title or a heading says is judged by
    ``subject_name``.)"""
    named = set(subject_words(name.replace("-", " ")))
    said = set(subject_words(summary)) | {w for h in headings
                                          for w in subject_words(h.replace("-", " "))}
    return bool(named) and not named & said
