"""The shape of what ``vaultlink mcp`` answers: the tools' output types, caps that keep
each answer inside an assistant's context, and the fence around note text.

Pure functions and types only (no I/O, no protocol): ``assist.py`` fills them, and
``mcp_server.py`` publishes the types as the tools' output schemas.

Note text is data, never instructions. Every string read from a note (a section, a
note's body, a description, a source sentence, a diff) goes out between two markers
carrying one random id per answer, ``<note id="…">`` and ``</note id="…">``: a note
cannot close its own quote early, because it cannot know the id.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

# pydantic (the SDK's schemas) reads nested TypedDicts only from typing_extensions
# before Python 3.12
from typing_extensions import TypedDict

# Hits per answer: an assistant reads them all; twenty is already a long answer.
MAX_HITS = 20
# Characters of one section's text in a search answer, of one note in a read answer,
# and of one decision's diff in recent(); an answer as a whole stays under
# ANSWER_CHARS of JSON (about 5,000 tokens), trailing hits dropped to fit.
SECTION_CHARS = 1500
READ_CHARS = 12000
DIFF_CHARS = 1500
DESCRIPTION_CHARS = 400
ANSWER_CHARS = 20000
LIST_ITEMS = 10  # links, sources, queue entries... shown per list


class SourceRef(TypedDict):
    """A note a digest node cites under ``## Sources``, with the sentence citing it."""

    path: str
    link: str
    sentence: str


class NodeHit(TypedDict):
    """A digest node found by ``node_search``."""

    path: str
    link: str
    name: str
    description: str
    score: float
    similarity: float
    sources: list[SourceRef]


class NodeSearchAnswer(TypedDict):
    """``node_search``'s answer."""

    query: str
    hits: list[NodeHit]
    cut: bool
    note: str


class SectionHit(TypedDict):
    """A section of a note found by ``search``."""

    path: str
    link: str
    line: int
    heading: str
    text: str
    score: float
    links_to: list[str]
    linked_from: list[str]


class SearchAnswer(TypedDict):
    """``search``'s answer."""

    query: str
    hits: list[SectionHit]
    cut: bool
    note: str


class ReadAnswer(TypedDict):
    """``read``'s answer: a note's text, and for a digest node its sources resolved."""

    path: str
    link: str
    kind: str
    name: str
    description: str
    section: str
    text: str
    sections: list[str]
    sources: list[SourceRef]
    related: list[str]
    backlinks: list[str]
    cut: bool
    note: str


class Decision(TypedDict):
    """One decision of the journal."""

    id: int
    at: str
    action: str
    target: str
    link: str
    sources: list[str]
    note: str
    diff: str
    undone: bool
    integrator: str


class RecentAnswer(TypedDict):
    """``recent``'s answer, newest first."""

    days: int
    decisions: list[Decision]
    cut: bool
    note: str


class Problem(TypedDict):
    """A failed unit, a note that could not be read, or one that gave nothing."""

    kind: str
    paths: list[str]
    reason: str
    parked: bool


class Proposal(TypedDict):
    """A decision held for the owner's review (``review.mode``): read-only here."""

    id: int
    at: str
    action: str
    target: str
    link: str
    sources: list[str]
    held: str  # why it waits (vaultlink's words)
    why: str  # why vaultlink would do it (fenced: it quotes the unit)
    summary: str  # the unit (fenced)
    diff: str  # the exact change (fenced)
    stale: bool  # its node changed since: approving has the next run decide it again


class StatusAnswer(TypedDict):
    """``status``'s answer."""

    running: bool
    state: str
    queue_length: int
    queue: list[str]
    problems: list[Problem]
    backlog_waiting: int
    proposals_waiting: int
    proposals: list[Proposal]
    last_run: str
    cut: bool
    note: str


class IntegrateAnswer(TypedDict):
    """``integrate_now``'s answer."""

    queued: list[str]
    note: str


def link(path: str) -> str:
    """A vault path as an assistant can cite it in the vault: ``[[path]]``."""
    return f"[[{path}]]" if path else ""


class Fence:
    """The markers around note text for one answer (one random id)."""

    def __init__(self) -> None:
        self.id = secrets.token_hex(4)

    def __call__(self, text: str) -> str:
        """``text`` between the markers; empty text stays empty."""
        if not text:
            return ""
        return f'<note id="{self.id}">\n{text}\n</note id="{self.id}">'


def cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to about ``limit`` characters at a line end when one is near, and
    how many characters were left out (0: whole)."""
    if len(text) <= limit:
        return text, 0
    head = text[:limit]
    at = head.rfind("\n")
    if at > limit * 0.6:
        head = head[:at]
    return head.rstrip(), len(text) - len(head.rstrip())


def size(answer: Any) -> int:
    """The answer's length as the client receives it (JSON, as the SDK sends it)."""
    return len(json.dumps(answer, indent=2, ensure_ascii=False))


def fit(answer: Any, items: list[Any], limit: int = ANSWER_CHARS) -> int:
    """Drop trailing ``items`` (a list inside ``answer``) until the answer fits in
    ``limit`` characters; how many were dropped."""
    dropped = 0
    while items and size(answer) > limit:
        items.pop()
        dropped += 1
    return dropped
