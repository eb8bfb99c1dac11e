"""A unit's name as its handle: specific, never a heading, a date or a generic word.
"""

from __future__ import annotations

import re

from vaultlink.markdown.language import STOP_WORDS, stem
from vaultlink.prose.blocks import parse_blocks
from vaultlink.prose.pages import note_title, page_facts
from vaultlink.prose.phrase_names import subject_name as said_subject
from vaultlink.prose.sentences import split_sentences
from vaultlink.prose.subject_names import clean_heading, name_flaw
from vaultlink.prose.units import Unit, slugify

# Sections never worth a unit: told to skip them, small models still extract each item.
SKIP_HEADINGS = frozenset("""todo to-do todos tasks action-items follow-ups followups lunch
dinner breakfast weather weekend errands personal-admin""".split())
# Names that say where a unit was written, not what it is about: small models name
# units after the note's headings and title.
VAGUE_NAMES = SKIP_HEADINGS | frozenset("""note notes standup stand-up decisions decision
reading summary log ideas thoughts today journal update updates misc meeting meetings
discussion context background details learnings preferences observations research
agenda attendees retro retrospective incident review design-review status daily day
entry task weekly""".split())
# A day's date inside a handle ("daily-2022-12-11", "example-usage-2022-12-11") is the
# note's, not the subject's: a node named so reads as the owner's day note.
_DAY_IN_HANDLE = re.compile(r"(?:^|-)\d{4}-\d{2}-\d{2}(?=-|$)")

def subject_name(name: str, summary: str, headings: set[str]) -> str:
    """``name`` as a kebab-case handle, or the summary's subject when ``name`` is vague:
    empty, a date, a generic or logistics word, a heading or the title of the note.

    The subject is a phrase the summary says (what it defines, a phrase it repeats, the
    phrase it opens with; for Chinese and Japanese the characters it repeats), else the
    words it is about (``key_words``), never words picked from here and there."""
    slug = slugify(name).removesuffix("-md") if name.strip() else ""
    slug = _DAY_IN_HANDLE.sub("", slug).strip("-")
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
    """A page's unit named by one word of the page's title ("script" for "How to run
    Python scripts") is named by the title, in the case the page writes it."""
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


def unique_names(units: list[Unit]) -> list[Unit]:
    """Units with distinct names (a second ``x`` becomes ``x-2``)."""
    seen: dict[str, int] = {}
    for unit in units:
        n = seen.get(unit.name, 0) + 1
        seen[unit.name] = n
        if n > 1:
            unit.name = f"{unit.name}-{n}"
    return units
