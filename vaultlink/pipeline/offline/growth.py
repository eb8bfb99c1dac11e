"""Which node a unit grows, when several are near it: the rules the offline integrator
decides by (``policy.py`` searches, reads and writes).

Pure functions over the unit, a recalled node's name, its similarity and its text.
"""

from __future__ import annotations

import re

from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.names import is_copy
from vaultlink.markdown.sections import cited_sources, without_sources
from vaultlink.markdown.text import task_list
from vaultlink.prose.sentences import content_words, delink
from vaultlink.prose.shared_subject import names_subject, says_name
from vaultlink.prose.subject_names import holds_name, is_generic, same_name, subject_of_title
from vaultlink.prose.turns import label_of, told_by
from vaultlink.prose.units import Unit
from vaultlink.prose.update import covered
from vaultlink.prose.writing import aspects, unit_lines

_DATED = re.compile(r"\d{4}-\d{2}-\d{2}")  # a note of a day; any other is a page
SAME_THING = 0.85     # a sibling of the unit's note, or a page, merges only this close


def fresh_lines(unit: Unit, text: str) -> list[str]:
    """The unit's sentences the node (``text``) does not already say."""
    have = set(content_words(delink(split_frontmatter(text)[1])))
    return [line for line in unit_lines(unit.summary) if not covered(line, have)]


def naming(unit: Unit, name: str) -> int:
    """0 when the unit is named ``name``, 1 when its text says that name, else 2."""
    if name and same_name(name, unit.title or unit.name.replace("-", " "), whole=True):
        return 0
    return 1 if name and says_name(name, unit.summary) else 2

def may_grow(unit: Unit, name: str, sim: float, text: str, nearest: bool) -> bool:
    """Whether a same-abstraction node may take this unit. Never a node named as another
    subject of the unit's note (the extractor kept them apart); a page with sections
    of its own is its own subject, so it merges only when very close or when the node
    carries its name (a node that is a page itself: its very name, not a part of it,
    so "Environment configuration" stays out of "Advanced environment configuration").
    ``name``: the node's; ``sim``: its similarity; ``nearest``: no node is nearer."""
    mine = unit.title or unit.name.replace("-", " ")
    if any(same_name(name, other, whole=True) for other in unit.siblings):
        return False  # the note's other subject: the extractor kept them apart
    if any(is_copy(unit.paths[0], c) for c in cited_sources(text)) and \
            len(fresh_lines(unit, text)) * 2 <= len(unit_lines(unit.summary)):
        return True  # the owner's copy of a note the node is made of, still saying it
    # the nearest node already cites this day, for no other subject of it: its subject
    cites_day = _DATED.search(unit.paths[0]) and unit.paths[0] in cited_sources(text) \
        and nearest
    if not cites_day and not names_subject(name, f"{mine}\n{unit.summary}"):
        return False  # near is not the same: the unit must name the node's subject
    lines = unit.summary.splitlines()
    if task_list(without_sources(split_frontmatter(text)[1]).split("\n")) \
            and not task_list(lines):
        return False  # a day's tasks are a record of that day, no subject to add to
    if sim < SAME_THING and (told_by(lines) or task_list(lines)):
        # a session's turns share speakers with every other session, a day's tasks
        # their verbs with every other day's: only a restatement shows one subject
        return False
    said = set(content_words(name.replace("-", " ")))
    own = set(content_words(mine.replace("-", " ")))
    whole = says_name(name, unit.summary) and not label_of(lines[0] if lines else "")
    if sim < SAME_THING and said and not is_generic(mine) and not said & own \
            and not whole:
        # the node's words scattered over the unit's text ("staging", "search",
        # "index" in a standup list; a greeting in every session) are no subject: the
        # unit's own name must share one, or its text (not a turn) say the node's name
        return False
    if not _DATED.search(unit.paths[0]):
        # a page is its own subject: it grows only a node its title names, and a node
        # made from another page only word for word (sibling pages name each other in
        # their text, and "npm install" is not "npm install-test")
        pages = any(not _DATED.search(c) for c in cited_sources(text))
        if not same_name(name, mine, whole=pages):
            return False
        if not pages and not holds_name(name, subject_of_title(mine)):
            # a node a day note named by part of the page's title is something else
            # ("Release notes" of a standup is not "Sift 2.3 release notes")
            return False
    page = any(ln.startswith("## ") and ln.strip().lower() != "## sources"
               for ln in split_frontmatter(text)[1].split("\n"))
    if page and (aspects(unit.summary) or not _DATED.search(unit.paths[0])):
        # two pages share a subject only by name (a page saved twice is a repeat,
        # found by its text): an English model scores unrelated pages in another
        # script as near (Russian and Korean pages merged at 0.85 and above)
        return same_name(name, mine, whole=True)
    if sim >= SAME_THING:
        return True
    if not aspects(unit.summary):
        return True
    return same_name(name, mine)
