"""A conversation written as a person keeps a conversation journal: one day note a session.

Each session is ``daily/YYYY-MM-DD.md`` (the session's date). When two sessions share a
day (none do in LoCoMo 10, but the bench does not assume it) each is
``daily/YYYY-MM-DD/session-N.md``, N being LoCoMo's session number, a shape vaultlink
reads as a day note too. The note::

    ---
    date: 2023-05-08
    time: "13:56"
    ---

    Caroline: Hey Mel! Good to see you! How have you been?

    Melanie: ... take a look at this. [shares a photo: a photo of a painting of a sunset]

One paragraph a turn, ``Speaker: text``; a turn's own line breaks (37 turns have some)
become spaces so that a turn stays one paragraph; a shared photo is its BLIP caption in
brackets at the end of the turn. Nothing else: no heading, no summary, no observation
(LoCoMo's generated summaries and observations are not what a person writes).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.quality.locomo.data import Conversation, Session, Turn


@dataclass(frozen=True)
class Place:
    """Where a turn landed: its note and its paragraph's lines (1-based, inclusive)."""

    path: str
    line: int
    end_line: int


@dataclass
class Layout:
    """Note path of each session, and where each turn is."""

    note_of: dict[int, str] = field(default_factory=dict)  # session n -> vault path
    session_of: dict[str, int] = field(default_factory=dict)  # vault path -> session n
    turns: dict[str, Place] = field(default_factory=dict)  # "D1:3" -> its paragraph

    def session_of_link(self, target: str) -> int | None:
        """The session a wikilink target names: a full path, without .md, or a bare name."""
        t = target.strip().split("#", 1)[0].split("|", 1)[0].strip()
        for cand in (t, t + ".md"):
            if cand in self.session_of:
                return self.session_of[cand]
        base = t.rsplit("/", 1)[-1].removesuffix(".md")
        hits = [n for p, n in self.session_of.items()
                if p.rsplit("/", 1)[-1].removesuffix(".md") == base]
        return hits[0] if len(hits) == 1 else None

    def turn_at(self, path: str, line: int) -> str | None:
        for dia, place in self.turns.items():
            if place.path == path and place.line <= line <= place.end_line:
                return dia
        return None


def note_paths(sessions: list[Session]) -> dict[int, str]:
    per_day = Counter(s.when.date() for s in sessions)
    return {s.n: (f"daily/{s.when:%Y-%m-%d}.md" if per_day[s.when.date()] == 1
                  else f"daily/{s.when:%Y-%m-%d}/session-{s.n}.md") for s in sessions}


def paragraph(turn: Turn) -> str:
    text = " ".join(turn.text.split())
    if turn.caption:
        text = f"{text} [shares a photo: {' '.join(turn.caption.split())}]".strip()
    return f"{turn.speaker}: {text}"


def note_text(session: Session) -> tuple[str, list[int]]:
    """The note and the 1-based line of each turn's paragraph."""
    lines = ["---", f"date: {session.when:%Y-%m-%d}", f'time: "{session.when:%H:%M}"', "---"]
    where = []
    for turn in session.turns:
        lines.append("")
        lines.append(paragraph(turn))
        where.append(len(lines))
    return "\n".join(lines) + "\n", where


def write_vault(conv: Conversation, root: Path) -> Layout:
    """Write the conversation's day notes under ``root`` (which must not hold them yet)."""
    layout = Layout()
    paths = note_paths(conv.sessions)
    for s in conv.sessions:
        path = paths[s.n]
        text, where = note_text(s)
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8") as fh:
            fh.write(text)
        layout.note_of[s.n] = path
        layout.session_of[path] = s.n
        for turn, line in zip(s.turns, where, strict=True):
            layout.turns[turn.dia_id] = Place(path, line, line)
    return layout
