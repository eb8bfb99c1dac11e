"""A note read as a page: its title, the site it belongs to, and what its frontmatter
says of it. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultlink.errors import FrontmatterError
from vaultlink.markdown.frontmatter import read_frontmatter
from vaultlink.markdown.language import count_words
from vaultlink.markdown.names import INDEX_PAGES, file_title, numbered_name
from vaultlink.markdown.obsidian import besides_links
from vaultlink.prose.blocks import WRITTEN_KINDS, Block, parse_blocks
from vaultlink.prose.subject_names import capitalized, is_event, is_generic


def note_title(blocks: list[Block]) -> tuple[str, int]:
    """The note's title and its level: its one top-level heading when it opens the note."""
    heads = [b for b in blocks if b.kind == "heading"]
    if not heads:
        return "", 0
    top = min(b.level for b in heads)
    tops = [b for b in heads if b.level == top]
    before = [b for b in blocks if b.start < heads[0].start and b.kind in WRITTEN_KINDS]
    if len(tops) == 1 and tops[0] is heads[0] and not before:
        return heads[0].info, top
    return "", 0


def naming_title(front_title: str, heading: str) -> str:
    """The frontmatter's title as the note's name: '' when it is a date above a ``heading``
    (the note's title heading) that names a subject ("2022 12 14" over "# UML Class
    Diagram - Assignment": the day is that assignment)."""
    if front_title and heading and is_event(front_title) and not is_event(heading) \
            and not is_generic(heading):
        return ""
    return front_title


def page_title(blocks: list[Block], path: str) -> tuple[str, int, str]:
    """A page with no single title (several top headings): its first heading when it
    opens the page, else its file name; the level its sections sit at, and the section
    that is the page's opening ('' if none)."""
    heads = [b for b in blocks if b.kind == "heading"]
    top = min((b.level for b in heads), default=1)
    before = [b for b in blocks if heads and b.start < heads[0].start and b.kind in WRITTEN_KINDS]
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    opens = bool(heads) and heads[0].level == top and not before
    # a first heading that names nothing ("# 2025" atop "OWASP Top 10.md", "# Notes")
    # still opens the page, but the file's name says what it is about
    if opens and (not is_generic(heads[0].info) or numbered_name(stem)):
        return heads[0].info, top, heads[0].info
    if heads and numbered_name(stem):  # a Zettelkasten id or a date: its heading says more
        return heads[0].info, top, ""
    # the owner's spelling stays ("SQL Injection", "Aaron Swartz"); a slug gets a capital
    name = capitalized(" ".join(re.split(r"[-_ ]+", file_title(path))))
    return name, top, heads[0].info if opens else ""


# Folders that hold pages of any site (the Web Clipper's default is Clippings/)
_NOT_SITES = frozenset("""clippings clipping clips clipped docs doc notes articles article
web inbox resources resource reading pages bookmarks read-later later saved papers copies
imports imported archive""".split())


# A folder numbered to sort ("10_cool", "01_draft", "20-AREAS", "1. Projects"): where the
# owner files notes (Johnny.Decimal, PARA), not a site the note belongs to.
_FILED = re.compile(r"^(?:\d{2}[._-]|\d{1,2}\.\s)(?=\D)")


def site_of(blocks: list[Block], path: str) -> str:
    """What the note belongs to: a banner heading, or the folder it sits in (not a date,
    nor a folder that sorts notes of any subject: "general", "misc")."""
    banner = next((b for b in blocks if b.kind == "banner"), None)
    if banner is not None and banner.info:
        return banner.info
    parts = path.split("/")
    folder = parts[-2] if len(parts) > 2 else ""
    if folder and re.search(r"[^\W\d_]{3}", folder) and not re.search(r"\d{4}", folder) \
            and folder.lower() not in _NOT_SITES and not _FILED.match(folder) \
            and not is_generic(folder.replace("-", " ").replace("_", " ")) \
            and not re.fullmatch(r"[a-z]{2}(?:[-_][a-z]{2,4})?", folder.lower()):  # "zh-hans"
        return "-".join(w[:1].upper() + w[1:] for w in folder.split("-"))
    return ""


# A folder's index page (``INDEX_PAGES``) that says less than this of its own, links and
# headings aside, tells what the folder holds ("いい感じの記事たち", "Main hub for all the
# different note categories"), not a subject.
INDEX_WORDS = 30
INDEX_PAGE = "a folder's index page: it says what the folder holds"


def index_page(path: str, text: str) -> bool:
    """Whether the note at ``path`` (its ``text``) is a folder's index page that says
    little of its own; only an index page's text is read."""
    if file_title(path).lower() not in INDEX_PAGES:
        return False
    text = "\n".join(ln for b in parse_blocks(text) if b.kind in WRITTEN_KINDS for ln in b.lines)
    said = besides_links(text)
    return count_words(text if said is None else said) < INDEX_WORDS


@dataclass(frozen=True)
class PageFacts:
    """What a page's frontmatter says of it, as Web Clipper, Hugo, Jekyll and Docusaurus
    write it: its title and one line on what it is."""

    title: str = ""
    description: str = ""


def page_facts(text: str) -> PageFacts:
    """The ``title`` and ``description`` (or ``summary``) of a note's frontmatter; empty
    for a note without them or with a block that does not parse."""
    try:
        meta, _ = read_frontmatter(text)
    except FrontmatterError:
        return PageFacts()

    def line(key: str) -> str:
        value = meta.get(key)
        return " ".join(value.split()) if isinstance(value, str) else ""
    return PageFacts(line("title")[:200], (line("description") or line("summary"))[:400])
