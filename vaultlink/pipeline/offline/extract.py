"""The offline extractor: a unit per subject of a note, in the note's own sentences.

A note is read as blocks (``prose.blocks``) grouped into subjects (``prose.subjects``);
each subject becomes one unit whose summary is the note's own sentences, one per line: a
document's opening, then each aspect as ``## Heading`` with its opening; a day note's
subject whole, up to a cap. Sentences run from a paragraph's start, so a node never
starts mid-thought, and every new block no unit quotes is reported in ``passed`` with
its reason. Deterministic: same notes, same units (docs/pipeline.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from vaultlink.markdown.language import UNSPACED_RUN, char_pairs, count_words, is_unspaced
from vaultlink.markdown.obsidian import content_text
from vaultlink.markdown.remote import strip_remote
from vaultlink.markdown.text import LIST_MARK, clip
from vaultlink.pipeline.context import PassedOver, SourceNote
from vaultlink.prose.blocks import WRITTEN_KINDS, Block, parse_blocks
from vaultlink.prose.day_tasks import LISTED, list_items
from vaultlink.prose.pages import INDEX_PAGE, index_page, page_facts
from vaultlink.prose.sentences import (
    STEP_MARK,
    full_stopped,
    speaks_of_page,
    split_sentences,
    starts_sentence,
)
from vaultlink.prose.subject_names import FUNCTION, IMPERATIVE, name_words
from vaultlink.prose.subjects import Subject, read_note
from vaultlink.prose.units import MAX_CONTEXT, Unit, slugify
from vaultlink.prose.wording import wording_of

log = logging.getLogger(__name__)

RULES = "offline-2"   # bump when a rule change may let a note give what it did not
LEAD_LINES = 3        # opening sentences of a document
ASPECT_LINES = 2      # sentences per aspect of a document
ASPECT_ITEMS = 8      # list items per aspect (or opening) of a document
MAX_ASPECTS = 6
NOTE_LINES = 16       # a subject of a day note keeps everything up to this many sentences
NOTE_ITEMS = 16       # ... and list items
EVENT_LINES = 48      # an event of a conversation (at most 12 turns) keeps this many sentences
MAX_DESCRIPTION = 280
PROCEDURE_HEADING = re.compile(r"\b(how to|how we|how i|steps?|runbook|procedure|checklist|"
                               r"playbook|setup|install|rotate|deploy|rebuild)\b", re.IGNORECASE)
PREFERENCE = re.compile(
    r"\b(?:I|we) (?:really |usually |still |also )?(?:prefer|always|never)\b"
    r"|\bI (?:really |usually |still |also )?(?:like|love|hate|avoid|protect|refuse)\b"
    r"|\bnote to self\b|\bmy (?:[\w-]+ ){0,3}(?:preference|rule|habit|routine)s?\b"
    r"|\bI(?:'d| would) rather\b|\bI(?:'m| am) keeping\b|\bworks for me\b",
    re.IGNORECASE)
# A sentence that tells the reader to do something says nothing of what the node is.
_ADDRESSES = IMPERATIVE | frozenset("visit check see read enable consider let please".split())
_ITEM_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?=\s|$)")
_DEFINITION = re.compile(r"^[^.:;]{0,80}?\b(is|are|means|refers to)\s+(a|an|the|our)\b")


def bucket_of(heading: str, lines: list[str]) -> str:
    """procedure, personal or wiki, from cues in the lines and their heading.

    Numbered steps, or several lines led by an imperative verb, make a procedure (unless
    the list is the user's own rules); first-person preference wording ("I prefer", "I
    always", "note to self") makes a personal note; anything else is general knowledge.
    """
    text = " ".join(lines)
    prefs = len(PREFERENCE.findall(text)) + (2 if "preference" in heading.lower() else 0)
    firsts = [name_words(STEP_MARK.sub("", LIST_MARK.sub("", s)))[:1] for s in lines]
    imperative = sum(1 for f in firsts if f and f[0] in IMPERATIVE)
    steps = sum(1 for s in lines if STEP_MARK.match(s))
    if steps >= 2 and prefs < 2:
        return "procedure"
    if prefs >= 1:
        return "personal"
    if imperative >= 3 or (imperative >= 2 and 2 * imperative >= len(lines)) \
            or (PROCEDURE_HEADING.search(heading) and imperative >= 1):
        return "procedure"
    return "wiki"


_META = re.compile(r"\b(?:digest|(?:our|the|this) [\w' -]{0,40}?(?:note|node|wiki|runbook))\b"
                   r"[^.]{0,80}?\b(?:still says|says|is wrong|(?:is )?out of date|needs updating)"
                   r"\b", re.IGNORECASE)
_NOTICE = re.compile(r"^(?:correction|update|fix|note)(?: to [^:]{1,60})?:\s*", re.IGNORECASE)


def tidy(items: list[str]) -> list[str]:
    """A block's lines as a node keeps them: a remark about the digest itself ("our note
    still says ...") is no fact about the subject and goes; a "Correction to the X note:"
    lead goes, the correction stays."""
    out = []
    for item in items:
        if _META.search(item):
            continue
        bare = _NOTICE.sub("", item)
        out.append(bare[:1].upper() + bare[1:] if bare != item else item)
    return out


@dataclass
class Picked:
    """Lines taken from some blocks, the blocks they come from, and the blocks only part
    of which is taken (with what was left out)."""

    lines: list[str] = field(default_factory=list)
    used: list[Block] = field(default_factory=list)
    partial: list[tuple[Block, str]] = field(default_factory=list)

    def aspects(self) -> list[str]:
        """The headings of the parts taken."""
        return [ln[3:] for ln in self.lines if ln.startswith("## ")]

    def add(self, other: Picked, heading: str) -> None:
        """Another pick, under its own heading."""
        self.lines += (["", f"## {heading}"] if self.lines else []) + other.lines
        self.used += other.used
        self.partial += other.partial


def pick(blocks: list[Block], sentences: int, items: int, strict_first: bool,
         follow_on: bool = False, page_top: str = "") -> Picked:
    """Sentences and list items from the start of each block, in order, while the budgets
    last (a sentence and an item count apart: a list keeps its facts).

    A block that does not start a sentence is quoted from its first sentence that does,
    or skipped (it continues something that is not quoted); a lead-in ending in ':' is
    kept only when what it introduces comes with it. ``page_top``: the title of the page
    the first block opens; there "This is a ..." says what that is, and says it by name.
    """
    got = Picked()
    room = {"sentence": sentences, "item": items}
    for n, block in enumerate(blocks):
        lines = tidy(block.items)
        at = 0
        if page_top and n == 0 and lines and speaks_of_page(lines[0]):
            lines[0] = page_top + lines[0][len("This"):]  # "Haskell is a lazy language"
        # a paragraph right after one quoted may lean on it ("This API is synchronous.")
        next_to = bool(got.used) and block.start <= got.used[-1].end + 2
        if not ((follow_on or next_to) and got.lines and lines
                and not lines[0][:1].islower()):
            # a node, or a part of one, opens on a sentence that stands on its own
            found = next((i for i, it in enumerate(lines)
                          if starts_sentence(it, strict=strict_first and not got.lines)), None)
            if found is None:
                continue
            at = found
        take: list[str] = []
        for line in lines[at:]:
            kind = "item" if LIST_MARK.match(line) else "sentence"
            if room[kind] <= 0:
                break
            room[kind] -= 1
            take.append(line)
        # what a lead-in introduces must come right after it: "- Command:" above a code
        # block the node leaves out introduces nothing that is kept
        follows = blocks[n + 1] if n + 1 < len(blocks) \
            and blocks[n + 1].start <= block.end + 2 else None
        while take and take[-1].rstrip().endswith(":") and not (
                len(take) < len(lines) - at or (follows is not None and follows.kind in
                                                ("list", "steps") and room["item"] > 0)):
            take = take[:-1]
        if not take:
            continue
        got.lines += ([""] if got.lines else []) + take
        got.used.append(block)
        if at:
            got.partial.append((block, "its opening sentence is left out: the node starts on "
                                       "what it introduces"))
        elif at + len(take) < len(lines):
            got.partial.append((block, "condensed: the node keeps the start of this paragraph"))
    return got


def summary_of(subject: Subject) -> Picked:
    """The unit's lines, the blocks they come from, and those only partly quoted."""
    if subject.turns:  # an event of a conversation keeps its turns whole: a turn cut
        # short loses what a later question asks of it
        return pick(subject.blocks, EVENT_LINES, EVENT_LINES, strict_first=True,
                    follow_on=True)
    if not subject.document:  # the user's own flow: later paragraphs may say "It ..."
        return pick(subject.blocks, NOTE_LINES, NOTE_ITEMS, strict_first=True, follow_on=True)
    level = subject.aspect_level
    lead = [b for b in subject.blocks if b.head_at(level) in ("", subject.opening)]
    parts: dict[str, list[Block]] = {}
    for b in subject.blocks:
        if b not in lead:
            parts.setdefault(b.head_at(level), []).append(b)
    # the lead opens the page when nothing but the page's title comes before it
    top = subject.top_name if lead[:1] == subject.blocks[:1] and (not lead[0].heads or (
        len(lead[0].heads) == 1 and lead[0].levels[0] < level and not subject.opening)) else ""
    got = pick(lead, LEAD_LINES, ASPECT_ITEMS, strict_first=True, page_top=top)
    for heading, blocks in list(parts.items()):
        if len([ln for ln in got.lines if ln.startswith("## ")]) >= MAX_ASPECTS \
                or heading.strip().lower() == "sources":  # a node's own section
            continue
        part = pick(blocks, ASPECT_LINES if got.lines else LEAD_LINES, ASPECT_ITEMS,
                    strict_first=not got.lines)
        if part.lines:
            got.add(part, heading)
    return got


def _stems(text: str) -> set[str]:
    """A text's content words without a plural "s"; Chinese and Japanese by character pairs."""
    return ({w.removesuffix("s") for w in name_words(text)} - FUNCTION) | {
        p for run in UNSPACED_RUN.findall(text) for p in char_pairs(run)}


def _whole(prose: list[str]) -> list[str]:
    """The sentences that may describe a unit: whole, opening on their own, 6-45 words."""
    return [s for s in prose[:6] if starts_sentence(s, strict=True) and s.endswith((".", "。"))
            and 6 <= count_words(s) <= 45 and name_words(s)[:1] != [] and
            name_words(s)[0] not in _ADDRESSES]


def describe(title: str, lines: list[str], bucket: str) -> str:
    """One whole sentence on what the unit is about: its best opening sentence, else a
    sentence built from its name and aspects."""
    said = wording_of("\n".join(lines))
    # steps named by what they do ("Rotate the search API key"): a remark after them
    # speaks of them ("The overlap in step 2 is the important part"), not of their aim
    verb = name_words(title)[:1]
    task = bucket == "procedure" and bool(said.steps_to) and bool(verb) and verb[0] in IMPERATIVE
    cut = next((i for i, ln in enumerate(lines) if task and STEP_MARK.match(ln)), len(lines))
    firsts = [(ln, first) for ln in lines[:cut] if not ln.startswith("## ")
              and not STEP_MARK.match(ln)
              and (first := split_sentences(STEP_MARK.sub("", LIST_MARK.sub("", ln))))]
    own = _stems(title)
    # a lead-in that defines the subject ("A binary heap is a form of binary tree, with
    # two additional properties:") says what it is better than the list it opens
    whole = _whole([s[:-1] + "." if s.endswith(":") and _DEFINITION.search(s)
                    and own & _stems(s) else s for s in (first[0] for _, first in firsts)])
    if not whole and firsts and not LIST_MARK.match(firsts[0][0]) \
            and not is_unspaced(firsts[0][0]):  # owners often end an opening without a stop
        whole = _whole([full_stopped(firsts[0][1], said.stop)])
    # a definition of the subject itself says best what it is, then a sentence naming it
    whole.sort(key=lambda s: (0 if bucket == "wiki" and _DEFINITION.search(s)
                              and own & _stems(s) else 1, 0 if own & _stems(s) else 1))
    if whole:
        return whole[0] if len(whole[0]) <= MAX_DESCRIPTION else \
            whole[0][:MAX_DESCRIPTION].rsplit(" ", 1)[0] + " …"
    aspects = [ln[3:] for ln in lines if ln.startswith("## ")][:3]
    items = list_items(lines)
    if not aspects and len(items) >= 2:  # a list (a day's tasks) says what it holds
        shown = said.comma.join(items[:LISTED])
        end = "" if shown[-1:] in "?!？！…。" else said.stop  # "... with co-op?" ends
        return clip(shown + (said.comma + "…" if len(items) > LISTED else end),
                    MAX_DESCRIPTION)
    kind = said.steps_to.format(title=title[:1].lower() + title[1:]) if task else {
        "procedure": said.steps_for, "personal": said.holds_for}.get(
        bucket, said.notes_on).format(title=title)
    if aspects:
        listed = said.comma.join(aspects[:-1]) + (said.and_ if len(aspects) > 1 else "") \
            + aspects[-1]
        return f"{kind}: {listed}{said.stop}"
    return f"{kind}{said.stop}"


class OfflineExtractor:
    """``Extractor`` with no model: a unit per subject of each note's new sections."""

    rules = RULES
    usage = None  # no model: nothing spent

    def __init__(self) -> None:
        self.passes_over = ("the offline extractor found no subject in it: only logistics, "
                            "open tasks, code or tables (see `vaultlink status`); a model "
                            "reads it differently (see vaultlink doctor)")
        self.passed: list[PassedOver] = []

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        """Units from every note, in note order; a unit's only path is its note."""
        self.passed = []
        units: list[Unit] = []
        for note in notes:
            found = self.extract_note(note)
            log.debug("%s: %d unit(s)", note.path, len(found))
            units.extend(found)
        return units

    def extract_note(self, note: SourceNote) -> list[Unit]:
        """The units of one note's new sections; what they leave out goes to ``passed``."""
        # Obsidian's machinery is no prose (the text from ``source_note`` is read so already)
        text = content_text(note.text or rebuilt(note), keep_embeds=True)
        blocks = parse_blocks(text)
        if index_page(note.path, text):
            self.passed += [PassedOver(note.path, b.start, b.end, excerpt(b), INDEX_PAGE)
                            for b in blocks if b.kind in WRITTEN_KINDS]
            return []
        page = page_facts(text)
        reading = read_note(blocks, note.path, new_lines(note, text), page.title)
        units: list[Unit] = []
        passed = list(reading.passed)
        for subject in reading.subjects:
            unit, left = unit_of(subject, note.path, reading.title)
            passed += left
            if unit is None:
                continue
            if page.description and subject.named and subject.document \
                    and subject.name == reading.subjects[0].name:
                unit.description = page.description  # the page says what it is
            if unit.name in {u.name for u in units}:  # two subjects named alike: kept apart
                unit.name = slugify(f"{unit.name}-{len(units) + 1}")
            if tame(unit, text):
                units.append(unit)
        for unit in units:
            unit.siblings = [u.title for u in units if u is not unit]
        self.passed += [PassedOver(note.path, b.start, b.end, excerpt(b), why)
                        for b, why in sorted(passed, key=lambda p: p[0].start)]
        return units


def unit_of(subject: Subject, path: str, title: str) -> tuple[Unit | None, list[tuple[Block, str]]]:
    """The unit of one subject, and the subject's blocks it does not quote, with why."""
    got = summary_of(subject)
    lines = got.lines
    if not [ln for ln in lines if ln and not ln.startswith("## ")]:
        return None, [(b, "no sentence to open a node with") for b in subject.blocks]
    left = [(b, left_out(b, subject)) for b in subject.blocks if b not in got.used]
    left += got.partial
    heading = " ".join(h for b in subject.blocks for h in b.heads[-1:])
    prose = [ln for ln in lines if ln and not ln.startswith("## ")]
    if subject.procedure:
        bucket = "procedure"
    elif subject.document:  # a page about a thing is knowledge, unless it says how to
        bucket = bucket_of(subject.name, prose[:LEAD_LINES])
        if bucket == "procedure" and got.aspects() and not PROCEDURE_HEADING.search(title):
            bucket = "wiki"  # a page with a runbook among its parts is still about its thing
    elif all(b.kind == "tasks" for b in subject.blocks):
        bucket = "wiki"  # a day's tasks ("Finish the report") are no steps to follow
    else:
        bucket = bucket_of(heading, prose)
    unit = Unit(slugify(subject.name), bucket, "\n".join(lines), [path], title=subject.name,
                description=describe(subject.name, lines, bucket),
                context=subject.text()[:MAX_CONTEXT])
    return unit, left


def tame(unit: Unit, source: str) -> bool:
    """Leave out of the unit's words what would reach outside the vault from a node: a
    remote image, a tag that loads or runs (a clipped page keeps both; the guard refuses
    a node that holds them). Links stay: ``source`` holds them. False when no word of
    the summary is left."""
    lines = strip_remote(unit.summary, source).split("\n")
    # an item that held only an image is left as its mark ("   1."): no words, dropped
    unit.summary = "\n".join(ln for ln in lines if not ln.strip()
                             or re.search(r"[^\W_]", _ITEM_MARK.sub("", ln)))
    unit.title = " ".join(strip_remote(unit.title, source).split())
    unit.description = " ".join(strip_remote(unit.description, source).split())
    return bool(re.search(r"[^\W_]", unit.summary))


def left_out(block: Block, subject: Subject) -> str:
    """Why a block of a subject is not quoted in its unit."""
    if block.items and all(i.rstrip().endswith(":") for i in block.items):
        return "introduces code or a table, which a node does not keep"
    if block.items and not any(starts_sentence(i) for i in block.items):
        return "goes on from a passage the node does not quote"
    if subject.document:
        return "condensed: the node keeps the opening of each part; the rest stays in the note"
    return "condensed: past the length of a node"


def excerpt(block: Block) -> str:
    """The start of a block as the user wrote it, on one line."""
    text = " ".join(" ".join(block.lines).split())
    return text if len(text) <= 80 else text[:80].rsplit(" ", 1)[0] + " …"


def rebuilt(note: SourceNote) -> str:
    """A note's text from its sections alone (a SourceNote built without its text)."""
    parts = []
    for crumb, text, _ in note.sections:
        heading = crumb.split(" > ", 1)[1].rsplit(" > ", 1)[-1] if " > " in crumb else ""
        parts.append(f"## {heading}\n\n{text}" if heading else text)
    return "\n\n".join(parts) + "\n"


def new_lines(note: SourceNote, text: str) -> set[int] | None:
    """File lines (1-based) of the note's new sections; None when every section is new."""
    if all(new for _, _, new in note.sections):
        return None
    out: set[int] = set()
    pos = 0
    for _, chunk, new in note.sections:
        at = text.find(chunk, pos)
        if at < 0:
            continue
        first = text.count("\n", 0, at) + 1
        last = first + chunk.count("\n")
        if new:
            out.update(range(first, last + 1))
        pos = at + len(chunk)
    return out
