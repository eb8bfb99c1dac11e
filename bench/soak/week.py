"""The soak's week: which note arrives when, and in what pieces (pure; no clock, no I/O
but reading the corpora).

Day notes are ``sample_vault``'s notes of 2026-06-15 to 2026-06-21 (nine notes over seven
dates, the repository's own example of a person's week); clipped pages are pages of
``bench/quality/realdocs`` (real documentation nobody here wrote). Both are written
byte for byte as stored: a day note arrives in two writes, its opening first (the
heading and first section, as typed in the morning) and the whole note later, so its
final text is the published one; a clipped page lands in one write, as a web clipper
saves it. Nothing is reworded, cut or re-dated.

Times are fractions of a working day (0.0 = 09:00, 1.0 = 18:00); the runner maps them
onto ``--minutes-per-day`` of real time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WEEK = ("2026-06-15", "2026-06-16", "2026-06-17", "2026-06-18", "2026-06-19", "2026-06-20",
        "2026-06-21")
# The user's edit of a note the daemon is integrating: a line added at the end.
EDIT_LINE = "\n- Later: the action items above go to the team board on Monday.\n"


@dataclass(frozen=True)
class Write:
    """One write of the week: ``text`` replaces ``path`` at ``day`` + ``at`` (0..1)."""

    day: int  # 0-based
    at: float
    path: str
    text: str
    final: bool  # the note's last write of the schedule (its published text)
    kind: str  # "day" or "page"


def day_notes(dates: tuple[str, ...] = WEEK) -> dict[str, list[tuple[str, str]]]:
    """Date -> [(vault path, text)] of sample_vault's day notes of those dates."""
    out: dict[str, list[tuple[str, str]]] = {}
    daily = REPO / "sample_vault" / "daily"
    for date in dates:
        found = [daily / f"{date}.md"] if (daily / f"{date}.md").is_file() else sorted(
            (daily / date).glob("*.md")) if (daily / date).is_dir() else []
        out[date] = [(p.relative_to(REPO / "sample_vault").as_posix(),
                      p.read_text(encoding="utf-8")) for p in found]
    return out


def clipped_pages(n: int) -> list[tuple[str, str]]:
    """``n`` realdocs pages as ``(resource path, text)``: the best-linked set's pages
    that link to each other, shortest first (so decisions can meet), then the shortest
    of the rest."""
    from bench.quality.realdocs import load_corpus
    from bench.realmodel.run import pick_pages

    pages = load_corpus()
    chosen = pick_pages(pages, n)
    rest = sorted((p for p in pages if p not in chosen), key=lambda p: len(p.text))
    chosen += rest[:max(0, n - len(chosen))]
    return [(f"resource/{p.path}", p.text) for p in chosen[:n]]


def opening(text: str) -> str:
    """The note up to its second ``## `` heading (its title and first section), or the
    whole note when it has fewer: what was typed first."""
    starts = [m.start() for m in re.finditer(r"^## ", text, flags=re.MULTILINE)]
    return text[:starts[1]] if len(starts) > 1 else text


def schedule(days: int, pages_per_day: int) -> list[Write]:
    """Every write of ``days`` days, in time order."""
    notes = day_notes(WEEK[:days])
    pages = clipped_pages(days * pages_per_day)
    writes: list[Write] = []
    for d, date in enumerate(WEEK[:days]):
        mine = notes[date]
        clips = pages[d * pages_per_day:(d + 1) * pages_per_day]
        # Day notes start in the morning and are finished late; pages land in between.
        for i, (path, text) in enumerate(mine):
            start = 0.02 + 0.45 * i / max(1, len(mine))
            first = opening(text)
            if first != text:
                writes.append(Write(d, start, path, first, False, "day"))
            writes.append(Write(d, min(start + 0.5, 0.9), path, text, True, "day"))
        for j, (path, text) in enumerate(clips):
            writes.append(Write(d, 0.12 + 0.7 * (j + 0.5) / max(1, len(clips)), path, text,
                                True, "page"))
    return sorted(writes, key=lambda w: (w.day, w.at, w.path))
