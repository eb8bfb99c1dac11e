"""dream_topics_step: a few topics of the day, written by the step itself.

Topics come from the units the run integrated, grouped by the day of their source
notes: title, reason, evidence, keywords and paths. Without a model, or while a day holds
fewer than ``topics.min_units`` units, each unit is a candidate topic, the most
significant actions first. With a model the day's material is grouped and named by it
(``ModelTopicPicker``) once, in the run that brings the day to ``topics.min_units``
(counting the topics earlier runs wrote for it: the daemon integrates a note or two a
run); the file then says ``grouped_by: model`` and is not regrouped. An unusable answer
leaves one topic per unit. They go to
``digest/topics/<date>-topics.md``: the frontmatter holds the machine-readable list, the body
links evidence notes and digest nodes in sentences. A topic whose normalised title
appeared in the last ``lookback_days`` days is not repeated. A topics file that does
not parse is left untouched and reported.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections import Counter
from typing import Any

from vaultlink.errors import (
    ModelError,
    ModelOutputError,
    NoteNotFound,
    NoteUnreadable,
    StateError,
    VaultError,
    unexpected,
)
from vaultlink.llm.chat import ChatModel, estimate_tokens, extract_json, require_content
from vaultlink.markdown.language import STOP_WORDS
from vaultlink.markdown.links import render_link
from vaultlink.markdown.remote import strip_remote
from vaultlink.markdown.text import LIST_MARK
from vaultlink.pipeline.context import DreamContext, RunState, UnitResult
from vaultlink.pipeline.events import UnitStatus
from vaultlink.pipeline.prompts import prompt
from vaultlink.vault.actions import Action
from vaultlink.vault.notes import Vault, parse_note, render_note

log = logging.getLogger(__name__)

_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
# What each action did, in words for the reader of the topics note.
_ACTION_WORDS: dict[str, str] = {
    Action.CREATE: "New in the digest:", Action.CORROBORATE: "Confirmed again:",
    Action.REFINE: "Added detail:", Action.CORRECT: "Corrected:"}
_ACTION_WEIGHT: dict[str, int] = {
    Action.CORRECT: 4, Action.CREATE: 3, Action.REFINE: 2, Action.CORROBORATE: 1}


def normalize_title(title: str) -> str:
    """How topic titles are compared across days: lowercase words, no punctuation."""
    return " ".join(re.findall(r"[^\W_]+", title.lower()))


def day_of(paths: list[str], today: dt.date) -> dt.date:
    """The date of a unit's material: the first date in its source paths, else today."""
    for path in paths:
        m = _DATE.search(path)
        if m:
            try:
                return dt.date.fromisoformat(m.group(1))
            except ValueError:
                continue
    return today


# Words that name nothing a topic is about, beyond the stop words.
_PLAIN = frozenset("""every top make makes made use uses used get gets got take takes took
need needs new old first last next much many more most less few lot lots thing things way
ways time times day days today week also still just even well good better best""".split())


def keywords(text: str, n: int = 5, first: str = "") -> list[str]:
    """Two to five content words: those of ``first`` (a title), then the most frequent of
    ``text``; never a stop word, a bare number or a word like "every" or "top"."""
    def content(t: str) -> list[str]:
        return [w for w in re.findall(r"[^\W\d_][^\W_-]*(?:-[^\W_]+)*", t.lower())
                if len(w) > 2 and w not in STOP_WORDS and w not in _PLAIN]
    picked = list(dict.fromkeys(content(first)))[:n]
    for w, _ in Counter(content(text)).most_common():
        if len(picked) >= n:
            break
        if w not in picked and w.rstrip("s") not in {p.rstrip("s") for p in picked}:
            picked.append(w)
    return picked


def topic_of(result: UnitResult) -> dict[str, Any]:
    """A topic from one integrated unit, titled with its subject's name."""
    unit = result.unit
    # A runbook summary starts "1. Announce ...": the marker is no sentence.
    prose = " ".join(LIST_MARK.sub("", line) for line in unit.summary.strip().split("\n")
                     if not line.startswith("## "))
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(prose.split()))
    first = unit.description or next((s for s in sentences if len(s.split()) >= 3),
                                     sentences[0])
    action = result.action or ""
    said = _ACTION_WORDS.get(action, f"{action.capitalize()}:")
    title = shown(unit.title) or unit.name.replace("-", " ").capitalize()
    return {"title": title, "reason": f"{said} {shown(first)[:300]}",
            "evidence": list(unit.paths), "keywords": keywords(unit.summary, first=title),
            "paths": [result.target]}


def shown(text: str) -> str:
    """A topic's words on one line, without a remote image, HTML or URL: the topics page
    is written past the guard, from the model's words (a prompt-injected model's too)."""
    return " ".join(strip_remote(text).split())


class ModelTopicPicker:
    """Topics picked and named by the chat model with structured output.

    The model only groups and names: it answers unit numbers, and the evidence and
    node paths of a topic are taken from those units by code, so a topic can never
    point at a note the run did not touch. An unusable answer raises
    ``ModelOutputError``; the step then falls back to one topic per unit.
    """

    def __init__(self, model: ChatModel, num_ctx: int) -> None:
        self.model, self.num_ctx = model, num_ctx
        self.system = prompt("topics")

    def pick(self, candidates: list[dict[str, Any]], described: list[str],
             recent: set[str], max_topics: int) -> list[dict[str, Any]]:
        """One structured-output call over the day's material (``described``: a line
        per candidate, see :func:`unit_line`; as many as fit half the context, most
        significant first)."""
        budget = self.num_ctx // 2 - estimate_tokens(self.system)
        lines: list[str] = []
        for n, text in enumerate(described, start=1):
            line = f"[{n}] {text}"
            if estimate_tokens("\n".join([*lines, line])) > budget:
                break
            lines.append(line)
        covered = ", ".join(sorted(recent)) or "none"
        user = (f"Pick at most {max_topics} topics.\nAlready covered recently: {covered}\n\n"
                + "\n".join(lines))
        reply = self.model.chat([{"role": "system", "content": self.system},
                                 {"role": "user", "content": user}], schema=TOPICS_SCHEMA)
        data = extract_json(require_content(reply))
        if not isinstance(data, dict) or not isinstance(data.get("topics"), list):
            raise ModelOutputError('topics: the answer is not {"topics": [...]}')
        topics: list[dict[str, Any]] = []
        for raw in data["topics"]:  # the first usable ones, up to max_topics
            topic = _checked(raw, candidates[:len(lines)])
            if topic is not None:
                topics.append(topic)
            if len(topics) == max_topics:
                break
        if not topics:
            raise ModelOutputError("topics: no topic named a unit it was given")
        return topics


def unit_line(result: UnitResult) -> str:
    """How the model is shown a unit the run integrated: its name, what happened, and
    its summary."""
    return (f"{result.unit.name} ({result.action} {result.target}): "
            f"{' '.join(result.unit.summary.split())[:600]}")


def topic_line(topic: dict[str, Any]) -> str:
    """How the model is shown a topic an earlier run wrote for the day (one unit's, as
    a run below ``topics.min_units`` writes them)."""
    paths = ", ".join(str(p) for p in topic.get("paths", []))
    return f"{topic['title']} ({paths}): {' '.join(str(topic.get('reason', '')).split())}"


# What a topic keeps of a model's answer (``_checked``); the schema asks for no more, so
# the grammar stops a small model before the answer cap, where the answer was lost
# (docs/quality.md, LoCoMo with a real model).
TITLE_CHARS, REASON_CHARS, KEYWORDS, KEYWORD_CHARS, MOST_TOPICS = 80, 300, 5, 40, 8
TOPICS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"topics": {"type": "array", "maxItems": MOST_TOPICS, "items": {
        "type": "object",
        "properties": {"title": {"type": "string", "maxLength": TITLE_CHARS},
                       "reason": {"type": "string", "maxLength": REASON_CHARS},
                       "keywords": {"type": "array", "maxItems": KEYWORDS,
                                    "items": {"type": "string", "maxLength": KEYWORD_CHARS}},
                       "units": {"type": "array", "items": {"type": "integer"}}},
        "required": ["title", "reason", "keywords", "units"]}}},
    "required": ["topics"],
}


def _checked(raw: Any, candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A model's topic made safe: known unit numbers only, text cut to size."""
    if not isinstance(raw, dict) or not isinstance(raw.get("units"), list):
        return None
    numbers = [n for n in raw["units"] if isinstance(n, int)
               and not isinstance(n, bool) and 1 <= n <= len(candidates)]
    title = shown(raw["title"])[:TITLE_CHARS] if isinstance(raw.get("title"), str) else ""
    if not numbers or not title:
        return None
    chosen = [candidates[n - 1] for n in dict.fromkeys(numbers)]
    given_reason: str = raw["reason"] if isinstance(raw.get("reason"), str) else ""
    reason = shown(given_reason)[:REASON_CHARS] or chosen[0]["reason"]
    given: list[Any] = raw["keywords"] if isinstance(raw.get("keywords"), list) else []
    words = [w for w in (k.strip().lower() for k in given if isinstance(k, str))
             if w and len(w) <= KEYWORD_CHARS][:KEYWORDS]
    return {"title": title, "reason": reason,
            "evidence": list(dict.fromkeys(p for c in chosen for p in c["evidence"])),
            "keywords": words or chosen[0]["keywords"],
            "paths": list(dict.fromkeys(p for c in chosen for p in c["paths"]))}


def topics_step(ctx: DreamContext, run: RunState) -> None:
    """Write the day's topics for every day the run touched; a day whose topics fail
    is left as it was and said in the run's warnings."""
    report = run.report
    done = [r for r in report.results if r.status == UnitStatus.INTEGRATED and r.target]
    by_day: dict[dt.date, list[UnitResult]] = {}
    for r in done:
        by_day.setdefault(day_of(r.unit.paths, ctx.today), []).append(r)
    for day, results in sorted(by_day.items()):
        path = topics_path(ctx.vault, day)
        try:
            if _day_topics(ctx, run, day, path, results):
                report.topics_written.append(path)
        except (NoteUnreadable, VaultError) as exc:
            report.warnings.append(f"topics file {path} left untouched: {exc}")
            log.warning("topics file %s left untouched: %s", path, exc)
        except StateError:
            raise
        except Exception as exc:  # a day's topics never stop the run
            log.exception("topics file %s: unexpected error", path)
            report.warnings.append(f"topics file {path} left untouched: {unexpected(exc)}")


def _day_topics(ctx: DreamContext, run: RunState, day: dt.date, path: str,
                results: list[UnitResult]) -> bool:
    """Pick and write one day's topics; whether the file was written.

    The model groups a day only when there is something to group: the day's topics so
    far and this run's units come to ``topic_min_units``, and the model has not grouped
    the day yet (so one call per day at most). Otherwise each unit is a candidate topic,
    no call (what a call per run cost: docs/performance.md, "topics without a call")."""
    results.sort(key=lambda r: -_ACTION_WEIGHT.get(r.action or "", 0))
    candidates = [topic_of(r) for r in results]
    recent = recent_titles(ctx.vault, day, ctx.lookback_days)
    try:
        earlier, _, grouped = read_day(ctx.vault, path)
    except (NoteUnreadable, VaultError):  # a file write_topics will not touch
        earlier, grouped = [], "left alone"
    if (ctx.topic_picker is not None and not grouped
            and len(earlier) + len(results) >= ctx.topic_min_units):
        try:  # the day's earlier topics and this run's units, grouped anew
            picked = ctx.topic_picker.pick(
                earlier + candidates, [topic_line(t) for t in earlier]
                + [unit_line(r) for r in results], recent, ctx.max_topics)
        except (ModelError, VaultError) as exc:  # one topic per unit, and not asked again
            run.report.warnings.append(f"topics of {day}: the model's pick is unusable "
                                       f"({exc}); one topic per unit instead")
            log.warning("topics of %s: %s; one topic per unit instead", day, exc)
            return write_topics(ctx.vault, path, day, candidates, ctx.max_topics, recent,
                                ctx.dry_run, grouped="units")
        return write_topics(ctx.vault, path, day, picked, ctx.max_topics, recent,
                            ctx.dry_run, grouped="model")
    return write_topics(ctx.vault, path, day, candidates, ctx.max_topics, recent,
                        ctx.dry_run)


def topics_path(vault: Vault, day: dt.date) -> str:
    """``digest/topics/<date>-topics.md``: not ``<date>.md``, which would make the user's
    ``[[2026-06-20]]`` links to day notes ambiguous."""
    return f"{vault.digest}/topics/{day.isoformat()}-topics.md"


def read_day(vault: Vault, path: str) -> tuple[list[dict[str, Any]], str | None, str]:
    """A day's topics, the file's hash ([] and None: no file yet), and how the model
    was asked to group them ('' when it was not): ``grouped_by`` is ``model``, or
    ``units`` when its answer was unusable and one topic per unit stands.

    Raises ``NoteUnreadable`` for a file that is not a topics file vaultlink wrote: a
    ``topics`` entry that is not a list of ``{title: ...}`` mappings is the user's own,
    and the file is left alone (reported) rather than rewritten without it.
    """
    try:
        note = vault.read_note(path)
    except NoteNotFound:
        return [], None, ""
    topics = note.frontmatter.get("topics")
    if not isinstance(topics, list) or not all(
            isinstance(t, dict) and isinstance(t.get("title"), str) for t in topics):
        raise NoteUnreadable(path, "its frontmatter 'topics' is not a list of titled topics")
    mark = note.frontmatter.get("grouped_by")
    return topics, note.hash, mark if mark in ("model", "units") else ""


def day_titles(vault: Vault, path: str) -> list[str] | None:
    """Normalised titles already in a day's topics file; None if it is left alone."""
    try:
        return [normalize_title(t["title"]) for t in read_day(vault, path)[0]]
    except (NoteUnreadable, VaultError):
        return None


def recent_titles(vault: Vault, day: dt.date, lookback_days: int) -> set[str]:
    """Normalised titles of topics in the days before ``day`` (unreadable files skipped)."""
    seen: set[str] = set()
    for back in range(1, lookback_days + 1):
        seen.update(day_titles(vault, topics_path(vault, day - dt.timedelta(days=back)))
                    or [])
    return seen


def write_topics(vault: Vault, path: str, day: dt.date, candidates: list[dict[str, Any]],
                 max_topics: int, recent: set[str], dry_run: bool, grouped: str = "") -> bool:
    """Merge new topics into the day's file, skipping titles in ``recent`` (earlier
    days, see :func:`recent_titles`); returns whether anything was written.

    ``grouped``: the model was asked for the day in this run. ``"model"``: ``candidates``
    are its grouping of the whole day, earlier topics included, and replace the file's;
    ``"units"``: its answer was unusable, and ``candidates`` (one per unit) are merged.
    Either is kept in the file as ``grouped_by``, so the day is asked once.
    """
    existing, expected, asked = read_day(vault, path)  # NoteUnreadable: never overwrite
    kept = [] if grouped == "model" else existing
    seen = recent | {normalize_title(t["title"]) for t in kept}
    fresh: list[dict[str, Any]] = []
    for topic in candidates:
        key = normalize_title(topic["title"])
        if key in seen or len(kept) + len(fresh) >= max_topics:
            continue
        seen.add(key)
        fresh.append(topic)
    if grouped == "model" and not fresh:  # every pick was a recent day's: the day's stay
        kept = existing
    if not fresh and (asked or not grouped):
        return False
    topics = kept + fresh
    meta: dict[str, Any] = {"name": f"Topics of {day.isoformat()}",
                            "description": "What the day's notes were about, picked by "
                                           "vaultlink.",
                            "date": day.isoformat(), "topics": topics}
    mark = asked or grouped
    if mark:
        meta["grouped_by"] = mark
    if not dry_run:
        vault.write(path, render_note(meta, _body(topics)), expected)
    return True


def _body(topics: list[dict[str, Any]]) -> str:
    lines = []
    for t in topics:
        evidence = " and ".join(render_link(p) for p in t.get("evidence", []))
        nodes = " and ".join(render_link(p) for p in t.get("paths", []))
        lines.append(f"## {t['title']}\n\n{t['reason']} The material is in {evidence}, "
                     f"and it now lives in {nodes}.\n")
    return "\n".join(lines)


def without_nodes(path: str, text: str, gone: set[str]) -> str | None:
    """A topics file's text with the digest nodes in ``gone`` left out of every topic (a
    topic left with no node goes too); None when no topic is left. Used when an undo
    removes a node the day's topics link to. Raises ``NoteUnreadable`` when the file is
    not a topics file as vaultlink wrote it (its owner's edits are never re-rendered)."""
    note = parse_note(path, text.encode("utf-8"))
    topics = note.frontmatter.get("topics")
    if not isinstance(topics, list) or not all(
            isinstance(t, dict) and isinstance(t.get("title"), str) for t in topics):
        raise NoteUnreadable(path, "its frontmatter 'topics' is not a list of titled topics")
    if note.body.strip() != _body(topics).strip():
        raise NoteUnreadable(path, "its text was edited by hand")
    kept = []
    for t in topics:
        paths = [p for p in t.get("paths", []) if p not in gone]
        if paths or not t.get("paths"):
            kept.append({**t, "paths": paths})
    if not kept:
        return None
    return render_note({**note.frontmatter, "topics": kept}, _body(kept))
