"""Whether a digest node already holds a unit: the rules both integrators and the
replay checks share.

Three readings, each for its own question:

- by its Sources (the text rules are ``markdown.sections.cites_any`` and ``cites_all``):
  :func:`node_cites` (the node was written from this note at all: an earlier attempt,
  or another unit of the same note; one Sources line per note), :func:`own_node` (the
  node this unit's CREATE would take, written by an earlier attempt); a replay must
  cite every source of the unit (``cites_all``);
- by its words: :func:`holds_words` (the node already says most of what the unit says),
  :func:`held_share` (for a conversation's turns, by their phrases), and
  :func:`unshared` (an update of a node whose subject the unit does not share is made a
  CREATE);
- by the journal: :func:`decided_before` (this very unit was decided, looked up by its
  note) and :func:`journaled_to` (a unit of this name went to this node).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultlink.markdown.language import subject_words
from vaultlink.markdown.sections import cites_any, without_sources
from vaultlink.pipeline.stored import is_unit, stored_name
from vaultlink.prose.node_names import node_names
from vaultlink.prose.shared_subject import names_node, shared_subject, subject_names
from vaultlink.prose.turns import told_by
from vaultlink.prose.units import Unit, slugify
from vaultlink.vault.actions import DECISIONS, Action
from vaultlink.vault.journal import JournalEntry
from vaultlink.vault.notes import parse_note
from vaultlink.vault.state import State

if TYPE_CHECKING:  # types only: the tools and decisions load with integrate
    from vaultlink.pipeline.integrate.decision import Decision
    from vaultlink.pipeline.integrate.tools import Toolbox

# Share of the unit's content words a node holds from which the unit adds nothing
# (measured on restatements and additions: docs/quality.md, "one-shot decisions").
HOLDS = 0.7


def node_cites(toolbox: Toolbox, path: str, sources: list[str]) -> bool:
    """``cites_any`` for the node at ``path``; False when it cannot be read."""
    try:
        return cites_any(toolbox.text_of(path), sources)
    except Exception:  # an unreadable node is not a target anyway
        return False


def own_node(toolbox: Toolbox, unit: Unit) -> str:
    """The node at the path this unit's CREATE takes, if it exists and cites the unit's
    note (an earlier attempt at the unit wrote it); else ''."""
    for slug in dict.fromkeys((slugify(unit.name), node_names(unit)[0][1])):
        path = f"{toolbox.guard.digest}/{unit.bucket}/{slug}.md"
        if slug and path in toolbox.guard.existed and node_cites(toolbox, path, unit.paths):
            return path
    return ""


def coverage(summary: str, text: str) -> float:
    """The share of ``summary``'s content words (stemmed) that ``text`` holds."""
    want = set(subject_words(summary))
    return len(want & set(subject_words(text))) / len(want) if want else 1.0


# A conversation's turns share their everyday words with any talk, so a node of talk
# "holds" most words of any later turns (docs/quality.md, LoCoMo with a real model):
# turns are held only as runs of this many content words in a row.
PHRASE_WORDS = 3


def held_share(summary: str, text: str) -> float:
    """How much of a unit's ``summary`` the node ``text`` holds: ``coverage`` of its
    words, or for a unit of a conversation's turns (``told_by``) of its phrases
    (``PHRASE_WORDS`` content words in a row, in that order)."""
    if not told_by(summary.split("\n")):
        return coverage(summary, text)
    want = _runs(subject_words(summary))
    return len(want & _runs(subject_words(text))) / len(want) if want else 1.0


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + PHRASE_WORDS]) for i in range(len(words) - PHRASE_WORDS + 1)}


def holds_words(summary: str, text: str) -> bool:
    """Whether ``text`` holds at least ``HOLDS`` of the summary's content words."""
    return coverage(summary, text) >= HOLDS


def decided_before(state: State, unit: Unit) -> JournalEntry | None:
    """The live journal row of this very unit (name, sources and summary), if a run
    decided it already."""
    if not unit.paths:
        return None
    for e in state.journal(limit=50, path=unit.paths[0]):
        if e.action in DECISIONS and e.undone_by is None and is_unit(e.unit, unit):
            return e
    return None


def journaled_to(state: State, unit: Unit, target: str) -> bool:
    """Whether a live decision sent a unit of this name to ``target``."""
    return any(entry.target == target and entry.action in DECISIONS
               and entry.undone_by is None and stored_name(entry.unit) == unit.name
               for entry in state.journal(50, target))


def unshared(toolbox: Toolbox, unit: Unit, d: Decision, path: str) -> str:
    """Why the update ``d`` of ``path`` is made a CREATE, or '' when it stands: the unit
    names the node's subject (name, alias, the phrase its description opens with) or
    states its facts (``subject.shared_subject``), or the node is the unit's own (an
    earlier attempt wrote it). The model's word and nearness are no evidence."""
    if path not in toolbox.guard.existed or path == own_node(toolbox, unit):
        return ""
    try:
        note = parse_note(path, toolbox.text_of(path).encode("utf-8"))
    except Exception:  # unreadable: the update fails on its own
        return ""
    name = unit.title or unit.name.replace("-", " ")
    body = without_sources(note.body)
    if told_by(unit.summary.split("\n")) and not node_cites(toolbox, path, unit.paths):
        # Another session's node: talk shares its everyday words and phrases with any
        # other, so only the unit's name naming it, or the node holding its turns
        # already, is evidence (docs/quality.md, LoCoMo with a real model).
        if names_node(name, note.frontmatter) or held_share(unit.summary, body) >= HOLDS:
            return ""
        return (f"the model said {d.action} {path}, another conversation's node, but the "
                f"unit's name ({name}) does not name its subject "
                f"({', '.join(subject_names(note.frontmatter)) or path}): {Action.CREATE}")
    if shared_subject(f"{name}\n{unit.summary}", note.frontmatter, body, unit.summary):
        return ""
    return (f"the model said {d.action} {path}, but the unit neither names its subject "
            f"({', '.join(subject_names(note.frontmatter)) or path}) nor states its facts: "
            f"{Action.CREATE}")
