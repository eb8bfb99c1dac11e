"""Updates that edit a node the way a person would: new facts where they belong, a changed
value replaced with the old one kept once as "Earlier", a repeat only noted as a source.

``plan_update`` takes a node's body and a unit and returns the new body:

* CORRECT: a unit sentence states a value of the same thing a node line states (the same
  words around a number: "top 100 from BM25" / "top 200 from BM25"), and the unit's note
  is dated no earlier than any note the node cites. The node line gets the new value and
  keeps its old text in one "Earlier: ..." sentence, with the source;
* REFINE: each sentence the node does not say yet goes to the section it belongs to (the
  unit's own aspect heading, else the section sharing most words), as a sentence or a
  list item, cited right there. Never an "Added from" paragraph;
* CORROBORATE: nothing new: one Sources line saying what the source confirms.

Pure functions; the policy sends the result through ``edit`` and the guard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vaultlink.markdown.sections import find_sources_section, sections
from vaultlink.markdown.text import LIST_MARK
from vaultlink.prose.blocks import is_task
from vaultlink.prose.sentences import STEP_MARK, content_words, delink
from vaultlink.prose.wording import wording_of
from vaultlink.prose.writing import (
    ENGLISH,
    MAX_MENTIONS,
    cite,
    listing,
    paragraphs,
    phrase_of,
    source_sentence,
    weave,
)
from vaultlink.vault.actions import Action

COVERED = 0.7  # share of a sentence's words the node must hold to already say it
_TOKEN = re.compile(r"`[^`]*`|\d+(?:[.,]\d+)*|[^\W\d_][\w'-]*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass
class Plan:
    """What an update writes: its action, the new body, and what it says it did."""

    action: Action
    body: str
    did: str
    corrected: list[str] = field(default_factory=list)


def covered(line: str, have: set[str]) -> bool:
    """Whether the node already says ``line`` (most of its words are there)."""
    words = set(content_words(delink(STEP_MARK.sub("", LIST_MARK.sub("", line)))))
    if len(words) < 3:
        return True  # too little to be worth adding on its own
    return len(words & have) >= COVERED * len(words)


def contexts(line: str) -> dict[tuple[str, str], str]:
    """Each number of a line with the two words right before and the two after it: the
    same four words around another number state another value of the same thing."""
    toks = _TOKEN.findall(delink(LIST_MARK.sub("", line)))
    out: dict[tuple[str, str], str] = {}
    for i, tok in enumerate(toks):
        if not _NUMBER.fullmatch(tok) or i < 2 or i + 2 >= len(toks):
            continue
        around = [t.lower() for t in (*toks[i - 2:i], *toks[i + 1:i + 3])]
        if all(t[:1].isalpha() for t in around):
            out.setdefault((" ".join(around[:2]), " ".join(around[2:])), tok)
    return out


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_newer(source: str, body: str) -> bool:
    """Whether ``source`` is a dated note later than every dated note the node cites:
    only then may it change a value the node states. An older note read later (a replay,
    a backlog) must never put back a value a newer one replaced."""
    mine = _DAY.search(source)
    if mine is None:
        return False
    cited = [m.group(0) for link in re.findall(r"\[\[([^\]|#]+)", body)
             for m in [_DAY.search(link)] if m]
    return all(mine.group(0) >= day for day in cited)


def value_changes(unit_lines: list[str], line: str) -> list[tuple[str, str, str, str]]:
    """(before, after, old, new) for each value of ``line`` a unit sentence restates as
    another number in the same words, when the two share more than the context."""
    mine = contexts(line)
    if not mine or "Earlier:" in line or "~~" in line:
        return []
    words = {w for w in content_words(delink(line)) if not w[:1].isdigit()}
    for sentence in unit_lines:
        theirs = contexts(sentence)
        shared = words & {w for w in content_words(delink(sentence)) if not w[:1].isdigit()}
        changes = [(b, a, mine[(b, a)], new) for (b, a), new in theirs.items()
                   if (b, a) in mine and new != mine[(b, a)]
                   and mine[(b, a)] not in sentence.split()]
        if changes and len(shared) >= 4:
            return changes
    return []


def _label(line: str) -> str:
    """What a line states a value of, when it says so up front ("Candidate depth: ...")."""
    text = LIST_MARK.sub("", line).strip()
    head, sep, _ = text.partition(":")
    return head.strip("*_ ") if sep and 0 < len(head.split()) <= 4 else ""


def corrected_line(line: str, changes: list[tuple[str, str, str, str]], source: str) -> str:
    """The node line with its new values, then its old text as one "Earlier" sentence."""
    mark = LIST_MARK.match(line)
    head, text = (mark.group(0), line[mark.end():]) if mark else ("", line)
    new = text
    for before, after, old, value in changes:
        lead, tail = (r"\W+".join(map(re.escape, w.split())) for w in (before, after))
        pattern = rf"(?i)\b({lead}\W+){re.escape(old)}(\W+{tail})"
        new = re.sub(pattern, rf"\g<1>{value}\g<2>", new)
    return f"{head}{new} Earlier: {text.strip()} Corrected in {cite(source)}."


@dataclass(frozen=True)
class Linkable:
    """Nodes the added text may link where it names them, and the words its note shares
    with their qualifiers (``writing.weave``)."""

    nodes: tuple[tuple[str, str], ...] = ()  # (path, name)
    context: frozenset[str] = frozenset()
    own: str = ""  # the node's own name: its namesakes are no mention (writing.weave)
    known: frozenset[str] = frozenset()  # names of nodes linked already: no one's part


def plan_update(body: str, summary: str, source: str, title: str, cites_source: bool,
                linkable: Linkable = Linkable()) -> Plan | None:
    """The updated body, or None when the node already holds the unit and cites it."""
    lines = body.rstrip("\n").split("\n")
    sec = find_sources_section(body)
    main_end = sec.start if sec is not None else len(lines)
    unit = [ln for p in paragraphs(summary) for ln in p.lines if p.kind != "heading"]
    words = wording_of(summary)
    corrections: list[str] = []
    newer = is_newer(source, "\n".join(lines))
    for i in range(main_end):
        changes = value_changes(unit, lines[i]) if newer and lines[i].strip() and \
            not lines[i].lstrip().startswith("#") else []
        if changes:
            label = _label(lines[i]) or title
            lines[i] = corrected_line(lines[i], changes, source)
            olds = list(dict.fromkeys(old for _, _, old, _ in changes))
            news = list(dict.fromkeys(new for _, _, _, new in changes))
            corrections.append(f"{label} is now {' and '.join(news)} (was {' and '.join(olds)})")
    have = set(content_words(delink("\n".join(lines[:main_end]))))
    fresh = _fresh(summary, have)
    if not fresh and not corrections and cites_source:
        return None
    have_links = {m.group(1) for m in re.finditer(r"\[\[([^\]|#]+)", "\n".join(lines))}
    # a node the text links already is still a name: "hybrid search" is its mention,
    # not a part of "Hybrid search design doc"
    linkable = Linkable(tuple(n for n in linkable.nodes if n[0] not in have_links),
                        linkable.context, linkable.own,
                        frozenset(n.lower() for _, n in linkable.nodes))
    # the cap holds for the node, not for one update: REFINEs add up
    tops = {path.split("/", 1)[0] for path, _ in linkable.nodes}
    woven = sum(1 for m in re.finditer(r"\[\[([^\]|#]+)", "\n".join(lines[:main_end]))
                if m.group(1).split("/", 1)[0] in tops)
    inserted, made = _insert(lines, main_end, fresh, source, linkable,
                             max(0, MAX_MENTIONS - woven))
    main_end += inserted
    action = Action.CORRECT if corrections else Action.REFINE if fresh else Action.CORROBORATE
    if action == Action.CORRECT:
        what, extra = corrections[0], ""
    elif action == Action.REFINE:
        into_old = [ln for heading, ln in fresh if heading not in made]
        phrase = phrase_of([ln for _, ln in fresh]) if into_old else ""
        parts = [words.more_on.format(what=phrase or title)] if into_old else []
        if made:
            parts.append(listing([f"“{h}”" for h in made], words) if words is not ENGLISH
                         else f"the section{'s' if len(made) > 1 else ''} "
                         + listing([f"“{h}”" for h in made]))
        what, extra = "; ".join(parts), ""
    else:
        what, extra = title, ""
    sentence = source_sentence(action, what, [source], extra, words,
                               as_written=action == Action.CORROBORATE)
    new_body = _with_source_line(lines, sentence)
    did = (f"corrected: {'; '.join(corrections)}" if corrections else "") + \
        (f"{'; ' if corrections else ''}added {len(fresh)} sentence(s) where they belong"
         if fresh else "") + ("" if fresh or corrections else "added the source")
    return Plan(action, new_body, did, corrections)


def _fresh(summary: str, have: set[str]) -> list[tuple[str, str]]:
    """(unit aspect heading, line) for each unit line the node does not say yet; a
    lead-in ("... as I did them:") only with the new list it introduces."""
    out: list[tuple[str, str]] = []
    heading = ""
    paras = paragraphs(summary)
    for n, p in enumerate(paras):
        if p.kind == "heading":
            heading = p.lines[0][3:].strip()
            continue
        # a list the node holds already, told again: a step with another ending is the
        # same step ("Re-check `n_dead_tup`; it went from 1.1M to about 2k" by step 4)
        known = p.kind in ("list", "steps") and \
            2 * sum(covered(ln, have) for ln in p.lines) >= len(p.lines)
        for i, ln in enumerate(p.lines):
            if known and _same_opening(ln, have):
                continue
            if ln.rstrip().endswith(":"):
                # a lead-in goes with its list, whether or not its own words are said
                after = p.lines[i + 1:] or (paras[n + 1].lines if n + 1 < len(paras)
                                            and paras[n + 1].kind != "heading" else [])
                if not after or all(covered(a, have) for a in after[:1]):
                    continue
            elif covered(ln, have):
                continue
            out.append((heading, ln))
    return out


def _same_opening(line: str, have: set[str]) -> bool:
    """Whether a list line's opening clause (before ";", ": " or a dash) is all said,
    in two words or more."""
    head = re.split(r";|:\s|\s[—–-]\s", STEP_MARK.sub("", LIST_MARK.sub("", line)), maxsplit=1)
    words = set(content_words(delink(head[0])))
    return len(head) == 2 and len(words) >= 2 and words <= have


def _insert(lines: list[str], main_end: int, fresh: list[tuple[str, str]], source: str,
            linkable: Linkable, budget: int) -> tuple[int, list[str]]:
    """Put each fresh line in its section of ``lines[:main_end]`` (in place); returns how
    many lines were added and the headings of the sections made for them. Runs going to
    one place become one paragraph or list, cited once at their end; a section made
    for the source is cited by its Sources line, which names it (cited at the end of
    each, five sections of one page ended in the same link five times)."""
    if not fresh:
        return 0, []
    spans = _spans(lines, main_end)
    by_place: dict[tuple[int, str], list[str]] = {}  # (section index, new heading) -> lines
    for heading, line in fresh:
        by_place.setdefault(_target(spans, lines, heading, line), []).append(line)
    groups = [(t, h, g) for (t, h), g in by_place.items()]
    added = 0
    order = sorted(range(len(groups)), key=lambda i: (-_end_of(spans, groups[i][0]), -i))
    for target, new_heading, group in (groups[i] for i in order):
        end = _end_of(spans, target)
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        block = _as_markdown(group, "" if new_heading else source,
                             lines[end - 1] if end else "")
        woven, linked = weave(block, list(linkable.nodes), set(linkable.context), budget,
                              linkable.own, linkable.known)
        block, budget = woven, budget - len(linked)
        linkable = Linkable(tuple(n for n in linkable.nodes if n[0] not in linked),
                            linkable.context, linkable.own, linkable.known)
        if new_heading:
            block = ["", f"## {new_heading}", "", *block]
        elif not (LIST_MARK.match(group[0]) and end and LIST_MARK.match(lines[end - 1])) \
                or is_task(group[0]):  # another day's tasks: their own list, not run on
            block = ["", *block]
        lines[end:end] = block
        added += len(block)
    return added, [h for _, h, _ in groups if h]


def _spans(lines: list[str], main_end: int) -> list[tuple[str, int, int]]:
    """(heading, first line, end) of the lead and each section of the main part."""
    heads = [s for s in sections("\n".join(lines[:main_end])) if s.level >= 2]
    out = [("", 0, heads[0].start if heads else main_end)]
    for n, s in enumerate(heads):
        out.append((s.title, s.start, heads[n + 1].start if n + 1 < len(heads) else main_end))
    return out


def _end_of(spans: list[tuple[str, int, int]], target: int) -> int:
    return spans[-1][2] if target >= len(spans) else spans[target][2]


def _target(spans: list[tuple[str, int, int]], lines: list[str], heading: str,
            line: str) -> tuple[int, str]:
    """Where a line goes: the section under the unit's heading, a new one, or the section
    sharing most of its words (the lead on a tie)."""
    if heading:
        for n, (title, _, _) in enumerate(spans):
            if title.strip().lower() == heading.lower():
                return n, ""
        return len(spans), heading
    words = set(content_words(delink(line)))

    def score(n: int) -> int:
        title, start, end = spans[n]
        return len(words & set(content_words(delink(" ".join([title, *lines[start:end]])))))
    best = max(range(len(spans)), key=lambda n: (score(n), -n))
    return best, ""


def _as_markdown(group: list[str], source: str, before: str) -> list[str]:
    """Lines to insert: items stay items (steps numbered on from the list above), prose
    becomes one paragraph, but for a lead-in above its list; the run is cited once, at
    its end (unless ``source`` is "")."""
    out: list[str] = []
    prose: list[str] = []
    last = STEP_MARK.match(before)
    number = int(last.group(1)) if last else 0
    # a lone step with no list to go on is an item: "1. Re-check ..." among bullets
    # reads as a list of its own, restarted
    numbered = bool(last) or sum(1 for ln in group if STEP_MARK.match(ln)) >= 2
    for line in group:
        if LIST_MARK.match(line) and prose and prose[-1].rstrip().endswith(":"):
            # a lead-in ("New steps before running VACUUM:") stays above its list
            out += ["", " ".join(prose), ""] if out else [" ".join(prose), ""]
            prose, number = [], 0
        if STEP_MARK.match(line) and numbered:
            number += 1
            out.append(f"{number}. {delink(STEP_MARK.sub('', line), keep_full=True)}")
        elif LIST_MARK.match(line):
            out.append(f"- {delink(LIST_MARK.sub('', line), keep_full=True)}")
        else:
            prose.append(delink(line, keep_full=True))
    if prose:
        out += ["", " ".join(prose)] if out else [" ".join(prose)]
    if source:
        out[-1] += f" ({cite(source)})"
    return out


def _with_source_line(lines: list[str], sentence: str) -> str:
    """The body with ``sentence`` as the last line of ``## Sources`` (made if missing)."""
    text = "\n".join(lines).rstrip("\n")
    sec = find_sources_section(text)
    body_lines = text.split("\n")
    if sec is None:
        return text + f"\n\n## Sources\n\n{sentence}\n"
    end = sec.end
    while end > sec.start + 1 and not body_lines[end - 1].strip():
        end -= 1
    listed = body_lines[end - 1].lstrip().startswith(("- ", "* "))
    body_lines[end:end] = [sentence] if listed else ["", sentence]
    return "\n".join(body_lines).rstrip("\n") + "\n"
