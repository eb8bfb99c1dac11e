"""A day note's tasks and links, read as what the owner says of the day.

A day's subject named after a note it links is that note's, whose page makes its node:
the day's line that names it names the day's subject instead, and a subject that says
nothing but links is a pointer to the notes it links, passed over. (Which task lists are
a record of the day, not errands: ``passing.says_something``.) Pure functions.
"""

from __future__ import annotations

import re

from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.names import file_title
from vaultlink.markdown.text import LIST_MARK, TASK_DATE, task_text
from vaultlink.prose.blocks import Block, task_said
from vaultlink.prose.sentences import STEP_MARK, delink
from vaultlink.prose.subject_names import first_sound

POINTER = "a link to another note, which is the subject"
_WIKILINK = re.compile(r"!?\[\[[^\[\]\n]*\]\]")


def only_links(blocks: list[Block]) -> bool:
    """Whether blocks say nothing but links to other notes (a task's box and date
    aside): "- [x] [[2025Q1-优化前端项目]] ✅ 2025-02-24"."""
    rest = _WIKILINK.sub(" ", "\n".join(ln for b in blocks for ln in b.lines))
    return not re.search(r"[^\W\d_]", TASK_DATE.sub(" ", re.sub(r"\[.\]", " ", rest)))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[\s_-]+", " ", text.casefold()).split())


def linked_name(name: str, blocks: list[Block]) -> str:
    """``name`` for a day's subject, unless it is the name of a note the blocks link: that
    note's page is the subject, and its node would become the day's lines ("Look into
    American Fuzzy Lop, z3, LEAN" named "American Fuzzy Lop", then the AFL page merged
    into it). Then the line that names it, as the owner wrote it; ``POINTER`` when no
    line says more than the link."""
    linked = {_norm(n) for b in blocks for link in find_wikilinks("\n".join(b.lines))
              for n in (file_title(link.target), link.alias) if n}
    if _norm(name) not in linked:
        return name
    for item in (task_said(i) for b in blocks for i in b.items):
        said = " ".join(TASK_DATE.sub(" ", LIST_MARK.sub("", item)).split())
        if _norm(name) in _norm(said) and _norm(said) != _norm(name):
            # a line too long to be a name still says more than the link: the new node
            # is named from it (``node_names``), never as the linked note
            return first_sound([said]) or re.sub(r"\*{1,3}", "", said)
    return POINTER


LISTED = 4  # items of a list its description names
_CLOCK = re.compile(r"^\d{1,2}[:.h]\d{2}\s+")  # a day planner's "11:30 Make slides"
_LABELLED = re.compile(r"\[([^\]\[]+)\]\([^)\s]*\)")  # "[label](target)": its label
_ADDRESS = re.compile(r"\(?\b[a-z][a-z0-9+.-]*://\S+")  # a web address says no words


def list_items(lines: list[str]) -> list[str]:
    """A unit's items as it says them, when it is nothing but a list: each without its
    mark, box, time of day, date stamp or link brackets ([] when it holds other lines)."""
    said = [ln for ln in lines if ln and not ln.startswith("## ")]
    if not said or not all(LIST_MARK.match(ln) or STEP_MARK.match(ln) for ln in said):
        return []
    out = []
    for ln in said:
        text = STEP_MARK.sub("", LIST_MARK.sub("", task_text(ln)))
        text = _CLOCK.sub("", " ".join(text.split()))
        text = " ".join(_ADDRESS.sub("", _LABELLED.sub(r"\1", delink(text))).split())
        if text := text.rstrip(".;,:"):
            out.append(text)
    return out
