"""A conversation kept as a note: paragraphs that each open with a speaker's name
("Caroline: I went to a support group yesterday."), as chat logs, interviews and
transcripts are kept. The speakers are the frame of such a note, as a template is of a
day note: every turn carries them, so they tell no subject from another. A conversation
is read as the events it moves through, one subject per run of turns on one thing,
each named by what the turns say, never by a speaker, a greeting or a sign-off.
Pure functions over blocks.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

from vaultlink.prose.blocks import Block
from vaultlink.prose.phrase_names import (
    content_runs,
    opening_words,
    salient_name,
    subject_name,
)
from vaultlink.prose.sentences import content_words
from vaultlink.prose.subject_names import first_sound

# A speaker's label: one to three words of letters (any script) and a colon, then text.
# "Note: ..." and "TODO: ..." are caught too, but never by two or more labels taking turns.
_LABEL = re.compile(r"^([^\W\d_][\w'’.-]{0,30}(?: [^\W\d_][\w'’.-]{0,30}){0,2})\s?[:：]\s+(?=\S)")
MIN_TURNS = 4           # fewer labelled paragraphs is a note quoting someone, no conversation
TURN_SHARE = 0.6        # of the note's paragraphs: the rest is the owner's own comment
TOPIC_WORDS = 6         # content words: a turn saying this much may open an event of its own
STAYS = 0.2             # share of its words a long turn shares with the event so far to stay in it
MIN_EVENT = 4           # turns an event holds before a new one may open
MAX_TURNS = 12          # an event longer than this is cut where its talk moves on the most


def speaker_of(block: Block) -> str:
    """The speaker a paragraph opens with ('' if it opens with no label)."""
    if block.kind != "prose" or not block.items:
        return ""
    m = _LABEL.match(block.items[0])
    return m.group(1) if m else ""


def speakers(blocks: list[Block]) -> frozenset[str]:
    """The speakers of a conversation, when the blocks are one: two or more labels
    taking turns over most of its paragraphs (empty when they are not)."""
    prose = [b for b in blocks if b.kind == "prose"]
    labels = [speaker_of(b) for b in prose]
    said = [s for s in labels if s]
    if len(said) < MIN_TURNS or len(said) < TURN_SHARE * len(prose):
        return frozenset()
    names = frozenset(said)
    switches = sum(1 for a, b in pairwise(said) if a != b)
    return names if len(names) >= 2 and switches >= len(said) // 2 else frozenset()


def told_by(lines: list[str]) -> frozenset[str]:
    """The speakers of a unit's lines, when they are turns of a conversation: two labels
    or more, each opening a line (empty for any other text)."""
    said = [m.group(1) for m in map(_LABEL.match, lines) if m]
    return frozenset(said) if len(set(said)) >= 2 else frozenset()


def frame_words(names: frozenset[str]) -> frozenset[str]:
    """The stems of the speakers' names: words of every turn, so of no subject."""
    return frozenset(w for name in names for w in content_words(name))


def unlabelled(text: str) -> str:
    """A turn's text without its speaker's label."""
    return _LABEL.sub("", text, count=1)


def _vocabulary(blocks: list[Block], frame: frozenset[str]) -> set[str]:
    return set(content_words(" ".join(unlabelled(i) for b in blocks for i in b.items))) - frame


def _share(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a) if a and b else 0.0


def events(blocks: list[Block], names: frozenset[str]) -> list[list[Block]]:
    """The conversation's turns in runs, one per thing talked about: a long turn that
    shares little with a run of ``MIN_EVENT`` turns or more opens a new one; replies,
    greetings and short turns stay with the run they answer."""
    frame = frame_words(names)
    runs: list[list[Block]] = []
    for block in blocks:
        said = _vocabulary([block], frame)
        if runs and (len(runs[-1]) < MIN_EVENT or len(said) < TOPIC_WORDS
                     or _share(said, _vocabulary(runs[-1], frame)) >= STAYS):
            runs[-1].append(block)
        else:
            runs.append([block])
    if len(runs) > 1 and len(runs[-1]) < MIN_EVENT:  # the last words: goodbyes
        last = runs.pop()
        runs[-1] += last
    out: list[list[Block]] = []
    for run in runs:
        out.extend(_cut(run, frame))
    return out


def _cut(run: list[Block], frame: frozenset[str]) -> list[list[Block]]:
    """A run of at most ``MAX_TURNS`` turns, else cut where neighbours share least."""
    if len(run) <= MAX_TURNS:
        return [run]
    lo, hi = MIN_EVENT, len(run) - MIN_EVENT
    at = min(range(lo, hi), key=lambda i: _share(_vocabulary(run[i:i + 2], frame),
                                                 _vocabulary(run[max(0, i - 2):i], frame)))
    return _cut(run[:at], frame) + _cut(run[at:], frame)


def event_name(run: list[Block], turns: list[Block], names: frozenset[str]) -> str:
    """What a run of turns talks about, in the words it says: the phrase holding the word
    the run keeps coming back to and the rest of the conversation does not (chat's
    "amazing" and "take care" are in every part of it), never a speaker's name (a
    greeting "Hey James", a thanks "Thanks, John" name the listener, not a subject)."""
    frame = frame_words(names)
    inside = Counter(w for b in run for w in _vocabulary([b], frame))
    overall = Counter(w for b in turns for w in _vocabulary([b], frame))
    weight = {w: n * n / overall[w] for w, n in inside.items() if n >= 2}
    items = [_unnamed(unlabelled(i), names) for b in run for i in _said(b, turns)]
    phrases = [(sum(weight.get(w, 0.0) for w in content_words(" ".join(ph))), -k, " ".join(ph))
               for k, ph in enumerate(p for i in items for p in content_runs(i))]
    ranked = [ph for score, _, ph in sorted(phrases, reverse=True) if score > 0]
    # one word names an event only as a name it keeps coming back to ("Daisy", never
    # "Thanks" or "Going")
    return first_sound([p for p in ranked if len(p.split()) > 1] + [salient_name(items)]
                       + [subject_name(items, []), opening_words(" ".join(items))])


def _said(turn: Block, turns: list[Block]) -> list[str]:
    """What a turn says beyond the courtesies: the first sentence of the first two turns
    is a greeting, the last two turns a sign-off."""
    at = next((k for k, t in enumerate(turns) if t is turn), 0)
    if at >= len(turns) - 2:
        return []
    return turn.items[1:] if at < 2 else turn.items


def _unnamed(text: str, names: frozenset[str]) -> str:
    """A sentence with the speakers' names cut out, so no phrase spans one."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)", " , ", text)
    return text
