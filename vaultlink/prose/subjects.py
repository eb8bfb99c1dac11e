"""What a note is about: its blocks grouped into subjects, and the blocks it passes over.

A **document** (its title names a subject) is one subject, its sections aspects of it; a
runbook section of its own inside it is a second subject, a procedure. A **day note** or
meeting holds a subject per section with a specific heading; a section under a heading
that names nothing is cut into runs of blocks by shared vocabulary, and subjects that
share their vocabulary merge; a pasted email is one run from its greeting to its closing.
A day's task list joins the subject it shares most with, each task only if it is that
subject's (the others are passed over). Every block no subject takes is passed over with
a reason (``passing.py``: code, tables, link lists, open tasks, logistics, status lines,
a day's motto) unless it carries a decision, a measured fact or a preference. Pure
functions; in full: docs/pipeline.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vaultlink.markdown.language import count_words, is_unspaced, language_of
from vaultlink.markdown.names import file_title
from vaultlink.markdown.text import LIST_MARK
from vaultlink.prose.blocks import Block, joined
from vaultlink.prose.conversation import conversation_of, event_name, events
from vaultlink.prose.day_tasks import POINTER, linked_name, only_links
from vaultlink.prose.pages import naming_title, note_title, page_title, site_of
from vaultlink.prose.passing import (
    CUE,
    MOTTO,
    NOTICE,
    OTHER_TASK,
    SHORT,
    STATUS_LINE,
    TOO_SHORT,
    WEAK,
    passed_reason,
    slug_of,
)
from vaultlink.prose.phrase_names import closes, greets, opening_words, salient_name, subject_name
from vaultlink.prose.sentences import STEP_MARK, content_words, plain_words
from vaultlink.prose.subject_names import (
    LOGISTICS,
    STATUS,
    capitalized,
    clean_heading,
    first_sound,
    heading_name,
    is_event,
    is_generic,
    name_flaw,
    qualified,
    subject_of_title,
)

MERGE = 0.35        # share of the smaller subject's words two subjects must share to be one
SEGMENT = 0.12      # the same, for neighbouring blocks of one section
WEAK_JOIN = 0.2     # a measured status line joins a subject sharing this much of its words
WEAK_WORDS = 2      # ... and this many ("notes in the retro" is no part of a "Note to self")
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass
class Subject:
    """One subject of a note: its name, the blocks that say it, and its aspects."""

    name: str
    blocks: list[Block]
    document: bool = False
    named: bool = False  # named by a heading or title (not by a phrase of the text)
    procedure: bool = False
    aspect_level: int = 0  # documents: the heading level of their aspects
    opening: str = ""  # documents: the section that opens the page, read as its lead
    turns: bool = False  # an event of a conversation: its turns are kept whole
    top_name: str = ""  # documents whose first block opens the page: the page's title

    def text(self) -> str:
        """Everything the subject's blocks say."""
        return " ".join(i for b in self.blocks for i in b.items)

    def words(self) -> int:
        """How many words it says: a list's marks are none ("- 完善 我的工作流" is four)."""
        return count_words(" ".join(LIST_MARK.sub("", i) for b in self.blocks for i in b.items))


@dataclass
class Reading:
    """A note read: its subjects, the blocks passed over (with why), its title and site."""

    subjects: list[Subject] = field(default_factory=list)
    passed: list[tuple[Block, str]] = field(default_factory=list)
    title: str = ""


def split_items(block: Block, kinds: tuple[str, ...] = ("list", "steps")) -> list[Block]:
    """A list block as one block per item, each with its own lines (a status list is
    judged item by item)."""
    if block.kind not in kinds or len(block.items) < 2:
        return [block]
    starts = [i for i, ln in enumerate(block.lines) if re.match(r"^\s{0,3}(?:[-*+]|\d+[.)])\s",
                                                                ln)]
    if len(starts) != len(block.items):
        return [block]
    out = []
    for n, s in enumerate(starts):
        e = starts[n + 1] if n + 1 < len(starts) else len(block.lines)
        out.append(Block(block.kind, block.start + s, block.start + e - 1, block.lines[s:e],
                         block.heads, levels=block.levels, items=[block.items[n]]))
    return out


def read_note(blocks: list[Block], path: str, new: set[int] | None = None,
              front_title: str = "") -> Reading:
    """Subjects and passed-over blocks of a note's new blocks (all blocks if ``new`` is
    None); ``front_title`` is the title its frontmatter gives, which names it first."""
    title, level = note_title(blocks)
    front_title = naming_title(front_title, title)
    reading = Reading(title=front_title or title)
    dated = _DATED.search(path) is not None
    content, weak = _sorted_blocks(blocks, new, reading.passed, dated)
    content = joined(content)
    # a day of nothing but its quoted line (the day's measures below it say no word); a
    # callout or a quoted link is the day's own note ("> [!NOTE] 今日复盘 ... [[...]]")
    alone = len(content) == 1 and dated and not re.search(r"\[\[|\[!", content[0].text)
    above = (len(content) > 1 and content[1].kind != "quote") or alone
    if above and content[0].kind == "quote" \
            and not content[0].heads[level:] and (not dated or (len(content[0].items) == 1
                                                  and not CUE.search(content[0].items[0]))):
        # a quote above a page's text is the site's notice ("Try the new docs", "This
        # page is deprecated"); a line quoted above a day, its motto: not what they say
        reading.passed.append((content[0], MOTTO if dated else NOTICE))
        content = content[1:]
    if not content:
        reading.passed += [(b, STATUS_LINE) for b in weak]
        return reading
    reading.subjects = _subjects(reading, blocks, path, content, level, front_title, dated)
    for pointer in [s for s in reading.subjects if dated and only_links(s.blocks)]:
        reading.subjects.remove(pointer)  # its note is the subject, and has its own node
        reading.passed += [(b, POINTER) for b in pointer.blocks]
    for slight in [s for s in reading.subjects if s.words() < TOO_SHORT
                   and not CUE.search(s.text())]:
        reading.subjects.remove(slight)
        reading.passed += [(b, "too short to say anything on its own") for b in slight.blocks]
    for block in weak:  # a measured status line joins the subject it adds to, if any
        said = " ".join(block.items)
        host = max(reading.subjects, key=lambda s: _overlap(s.text(), said), default=None)
        if host is not None and _overlap(host.text(), said) >= WEAK_JOIN \
                and len(vocabulary(host.text()) & vocabulary(said)) >= WEAK_WORDS:
            host.blocks = sorted([*host.blocks, block], key=lambda b: b.start)
        else:
            reading.passed.append((block, STATUS_LINE))
    reading.passed.sort(key=lambda p: p[0].start)
    return reading


def _sorted_blocks(blocks: list[Block], new: set[int] | None, passed: list[tuple[Block, str]],
                   dated: bool = False) -> tuple[list[Block], list[Block]]:
    """The new blocks as content and weak status lines; the rest go to ``passed``, with
    why. A list of a status or logistics section is judged item by item."""
    content: list[Block] = []
    weak: list[Block] = []
    lead_in = ""  # a passed logistics lead-in ("Personal admin:") passes its list too
    for block in blocks:
        if block.kind == "heading" or (new is not None and block.start not in new):
            continue
        if block.kind == "banner":
            passed.append((block, passed_reason(block)))
            continue
        pieces = split_items(block) if any(slug_of(h) in STATUS | LOGISTICS
                                           for h in block.heads[-1:]) else [block]
        for piece in pieces:
            why = passed_reason(piece, dated)
            if not why and lead_in and piece.kind in ("list", "steps"):
                why = lead_in
            lead_in = why if why.startswith("logistics") and piece.items and \
                piece.items[-1].endswith(":") else ""
            if why == WEAK:
                weak.append(piece)
            elif why:
                passed.append((piece, why))
            else:
                content.append(piece)
    return content, weak


def _subjects(reading: Reading, blocks: list[Block], path: str, content: list[Block],
              level: int, front_title: str, dated: bool) -> list[Subject]:
    """The subjects of a note's content: one for a document whose title names it (or a
    page with no such title), else one per section (a day note, a meeting)."""
    title = reading.title
    subject = subject_of_title(clean_heading(title)) if title and slug_of(title) not in \
        STATUS | LOGISTICS else ""  # a "Todo" over a day's first list names nothing
    site = site_of(blocks, path)
    said = [i for b in content for i in b.items]
    language = language_of(" ".join(said[:20]))
    if subject and not site and is_generic(subject) and not dated:
        site = salient_name(said)  # "Getting started" of what: "React"
    own = file_title(path)
    stem = own.replace("-", " ")
    if subject:
        name = first_sound([qualified(subject, site, language, own)], title=True) or \
            qualified(clean_heading(stem), site, language, own)
        if front_title and name.lower() == front_title.lower():
            name = front_title  # as its author wrote it: "npm-ci" is a command
        return _document(content, name, _aspect_level(blocks, level), "", split=dated,
                         top_name=subject if _first_written(blocks, content) else "")
    if not dated and not (title and is_event(title)):  # a page: one subject all the same
        page, top, opening = page_title(blocks, path)
        name = first_sound([qualified(clean_heading(page), site, language, own)],
                           title=True) or qualified(clean_heading(stem), site, language, own)
        reading.title = reading.title or page
        return _document(content, name, top, opening, split=False,
                         top_name=page if _first_written(blocks, content) else "")
    if conv := conversation_of(blocks, content):  # one subject per event talked over
        talked = [Subject(event_name(conv, run), run, turns=True) for run in events(conv, content)]
        return [s for s in talked if s.name] + _unnamed(talked)
    return _sections(content, level, reading.passed)


def _aspect_level(blocks: list[Block], title_level: int) -> int:
    levels = sorted({b.level for b in blocks if b.kind == "heading" and b.level > title_level})
    return levels[0] if levels else title_level + 1


def _first_written(blocks: list[Block], content: list[Block]) -> bool:
    """Whether the first of ``content`` is the first block of the note, headings aside."""
    return bool(content) and next((b for b in blocks if b.kind != "heading"), None) is content[0]


def _document(content: list[Block], name: str, aspect: int, opening: str,
              split: bool, top_name: str = "") -> list[Subject]:
    """One subject; with ``split``, a runbook section of its own is a second one."""
    main = Subject(name, [], document=True, named=True, aspect_level=aspect,
                   opening=opening, top_name=top_name)
    extra: list[Subject] = []
    by_part: dict[str, list[Block]] = {}
    for block in content:
        by_part.setdefault(block.head_at(aspect), []).append(block)
    for part, part_blocks in by_part.items():
        steps = sum(1 for b in part_blocks for i in b.items if STEP_MARK.match(i))
        own = clean_heading(part) if part else ""
        if split and steps >= 3 and own and not name_flaw(own) and len(by_part) > 1:
            extra.append(Subject(own, part_blocks, named=True, procedure=True))
        else:
            main.blocks += part_blocks
    return ([main] if main.blocks else []) + extra


def _sections(content: list[Block], level: int,
              passed: list[tuple[Block, str]]) -> list[Subject]:
    """Subjects of a note with no subject title: by heading, by vocabulary, then merged."""
    by_section: dict[tuple[str, ...], list[Block]] = {}
    for block in content:
        by_section.setdefault(block.heads, []).append(block)
    found: list[Subject] = []
    for heads, blocks in by_section.items():
        name = heading_name(clean_heading(heads[-1])) if len(heads) > max(level, 0) else ""
        if name and slug_of(heads[-1]) not in STATUS | LOGISTICS:
            found.append(Subject(name, list(blocks), named=True))
            continue
        for run in _runs(blocks):
            found.append(Subject("", run))
    # a day's tasks share words with its notes, not a subject: they never join two of
    # them into one; a task list joins the subject it shares most with, else stands alone
    merged = _merged([s for s in found if not _tasks(s.blocks)])
    lists = _merged([s for s in found if _tasks(s.blocks)])
    for subject in merged + lists:
        _name(subject, passed)
    for tasks in (t for t in lists if t.name != POINTER):
        host = max(merged, key=lambda m: _overlap(m.text(), tasks.text()), default=None)
        if host is None or _overlap(host.text(), tasks.text()) < MERGE:
            merged.append(tasks)
            continue
        # the list joins its subject, but a task of something else stays out of it
        # ("Hybrid search to 10% of production" below the golden query set's tasks)
        items = [one for b in tasks.blocks for one in split_items(b, ("tasks",))]
        own = _its_tasks(host, items) or items
        host.blocks = sorted(host.blocks + _rejoined(own), key=lambda b: b.start)
        passed += [(b, OTHER_TASK) for b in _rejoined([b for b in items if b not in own])]
    merged.sort(key=lambda s: s.blocks[0].start)
    return [s for s in merged if s.name and s.name != POINTER] + _unnamed(merged)


def _its_tasks(host: Subject, items: list[Block]) -> list[Block]:
    """The tasks (one block each) that are ``host``'s: naming it, or sharing ``MERGE`` of
    their words with its text (numbers aside: "10%" is no subject)."""
    named, said = vocabulary(host.name), vocabulary(host.text())
    out = []
    for block in items:
        words = {w for w in vocabulary(" ".join(block.items)) if not w.isdigit()}
        if words & named or (words and len(words & said) >= MERGE * len(words)):
            out.append(block)
    return out


def _rejoined(blocks: list[Block]) -> list[Block]:
    """Neighbouring items of one list as one block again."""
    out: list[Block] = []
    for b in blocks:
        last = out[-1] if out else None
        if last is not None and last.kind == b.kind and last.end + 1 == b.start:
            out[-1] = Block(last.kind, last.start, b.end, last.lines + b.lines, last.heads,
                            levels=last.levels, items=last.items + b.items)
        else:
            out.append(b)
    return out


def _merged(found: list[Subject]) -> list[Subject]:
    """Subjects that share their vocabulary, as one (named by a heading if one is)."""
    merged: list[Subject] = []
    for subject in found:
        host = next((m for m in merged if _overlap(m.text(), subject.text()) >= MERGE), None)
        if host is None:
            merged.append(subject)
            continue
        host.blocks += subject.blocks
        if not host.named and subject.named:
            host.name, host.named = subject.name, True
    return merged


def _name(subject: Subject, passed: list[tuple[Block, str]]) -> None:
    """A subject's name from its words when no heading gave one ('' when none is sound;
    ``POINTER`` for one that only links other notes, passed over)."""
    subject.blocks.sort(key=lambda b: b.start)
    if subject.name:
        return
    items = [i for b in subject.blocks for i in b.items]
    subject.name = subject_name(items, [h for b in subject.blocks for h in b.heads
                                        if slug_of(h) not in STATUS | LOGISTICS])
    subject.name = linked_name(subject.name, subject.blocks) if subject.name else ""
    if subject.name == POINTER:
        passed += [(b, POINTER) for b in subject.blocks]


def _as_written(word: str, text: str) -> str:
    """``word`` (lowercased) as ``text`` first writes it: "Sammy", not "sammy"."""
    found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE)
    return found.group(0) if found else word


def _unnamed(subjects: list[Subject]) -> list[Subject]:
    """A subject no sound name was found for: named by its first words' longest run."""
    out = []
    for s in subjects:
        if s.name:
            continue
        said = re.sub(r"\w+://\S+", " ", s.text())  # an address is no word of it
        if is_unspaced(said):  # words of the text, never pairs of characters
            s.name = opening_words(said) or "Untitled"
        else:
            # a time or a number ("16:00 offensive security report") says no subject
            words = [w for w in plain_words(said) if not w.isdigit()][:3]
            s.name = capitalized(" ".join(_as_written(w, said) for w in words)) or "Untitled"
        out.append(s)
    return out


def _runs(blocks: list[Block]) -> list[list[Block]]:
    """Neighbouring blocks that share vocabulary; a short block joins its neighbour."""
    runs: list[list[Block]] = []
    letter = False  # a pasted email runs from its greeting to its closing, one text
    for block in blocks:
        text = " ".join(block.items)
        short = count_words(text) < SHORT and not CUE.search(text)
        lead_in = bool(runs) and runs[-1][-1].items and runs[-1][-1].items[-1].endswith(":")
        if runs and _tasks(runs[-1]) == _tasks([block]) and (letter or short or lead_in or _overlap(
                " ".join(i for b in runs[-1] for i in b.items), text) >= SEGMENT):
            runs[-1].append(block)
        else:
            runs.append([block])
        letter = greets(text) or (letter and not any(map(closes, block.items)))
    return runs


def _tasks(blocks: list[Block]) -> bool:
    return all(b.kind == "tasks" for b in blocks)


def vocabulary(text: str) -> set[str]:
    """Stems of the content words, code and dotted names split into their words."""
    return set(content_words(re.sub(r"[._/()`\[\]@=]", " ", text)))


def _overlap(a: str, b: str) -> float:
    wa, wb = vocabulary(a), vocabulary(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))
