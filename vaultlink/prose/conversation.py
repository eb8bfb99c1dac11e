"""A conversation kept as a note: paragraphs that each open with a speaker's name
("Caroline: I went to a support group yesterday.", "小明：周末去爬山了。"), as chat logs,
interviews and transcripts are kept. The speakers are the frame of such a note, as a
template is of a day note: every turn carries them, so they tell no subject from another.
A conversation is read as the events it moves through, one subject per run of turns on
one thing, each named by what the turns say, never by a speaker, a greeting or a sign-off.
Pure functions over blocks, linear in the note's length.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise

from vaultlink.markdown.language import UNSPACED_RUN
from vaultlink.prose.blocks import Block, parse_blocks
from vaultlink.prose.phrase_names import (
    content_runs,
    opening_words,
    salient_name,
    subject_name,
)
from vaultlink.prose.sentences import content_words
from vaultlink.prose.subject_names import first_sound
from vaultlink.prose.turns import label_of, talking, unlabelled

MIN_TURNS = 4           # fewer labelled paragraphs is a note quoting someone, no conversation
TURN_SHARE = 0.6        # of the note's paragraphs: the rest is the owner's own comment
TOPIC_WORDS = 6         # content words: a turn saying this much may open an event of its own
STAYS = 0.2             # share of its words a long turn shares with the event so far to stay in it
MIN_EVENT = 4           # turns an event holds before a new one may open
MAX_TURNS = 12          # an event longer than this is cut where its talk moves on the most


@dataclass
class Conversation:
    """A note's speakers and what each of its turns says (words counted once)."""

    names: frozenset[str]
    turns: list[Block]
    frame: frozenset[str] = frozenset()
    words: dict[int, set[str]] = field(default_factory=dict)  # id(block) -> its words
    overall: Counter[str] = field(default_factory=Counter)  # turns holding each word
    place: dict[int, int] = field(default_factory=dict)  # id(block) -> turn number
    names_at: re.Pattern[str] = re.compile(r"(?!)")

    def said(self, block: Block) -> set[str]:
        """The words of a block, speakers' names and labels aside."""
        key = id(block)
        if key not in self.words:
            text = " ".join(unlabelled(i) for i in block.items)
            self.words[key] = set(content_words(text)) - self.frame
        return self.words[key]


def speaker_of(block: Block) -> str:
    """The speaker a paragraph opens with ('' if it opens with no label)."""
    if block.kind != "prose" or not block.items:
        return ""
    return label_of(block.items[0])


def speakers(blocks: list[Block]) -> frozenset[str]:
    """The speakers of a conversation, when the blocks are one: two to ``MAX_SPEAKERS``
    labels taking turns over most of its paragraphs, two of them twice or more (a
    meeting's "Status:", "Decision:", "Action:" each once are no speakers)."""
    prose = [b for b in blocks if b.kind == "prose"]
    said = [s for s in map(speaker_of, prose) if s]
    if len(said) < MIN_TURNS or len(said) < TURN_SHARE * len(prose):
        return frozenset()
    counts = Counter(said)
    switches = sum(1 for a, b in pairwise(said) if a != b)
    if not talking(counts) or switches < len(said) // 2:
        return frozenset()
    return frozenset(counts)


def conversation_of(blocks: list[Block], turns: list[Block]) -> Conversation | None:
    """The conversation ``blocks`` (the whole note) are, read for ``turns`` (its new
    blocks); None when the note is no conversation."""
    names = speakers(blocks)
    if not names:
        return None
    conv = Conversation(names, [b for b in turns if b.kind == "prose"])
    conv.frame = frozenset(w for name in names for w in content_words(name))
    conv.overall = Counter(w for b in conv.turns for w in conv.said(b))
    conv.place = {id(b): k for k, b in enumerate(conv.turns)}
    # a name in a spaced script is a whole word ("Jon" is not in "Jonathan"); "小明说"
    # holds 小明 with no space around it
    alternatives = "|".join(re.escape(n) if UNSPACED_RUN.fullmatch(n)
                            else rf"(?<!\w){re.escape(n)}(?:['’]s)?(?!\w)"
                            for n in sorted(names, key=len, reverse=True))
    conv.names_at = re.compile(alternatives)
    return conv


def _share(a: set[str], b: set[str] | Counter[str]) -> float:
    return sum(1 for w in a if w in b) / len(a) if a and b else 0.0


def events(conv: Conversation, blocks: list[Block]) -> list[list[Block]]:
    """The conversation's blocks in runs, one per thing talked about: a long turn that
    shares little with a run of ``MIN_EVENT`` turns or more opens a new one; replies,
    greetings and short turns stay with the run they answer."""
    runs: list[list[Block]] = []
    heard: Counter[str] = Counter()  # the words of the run so far
    for block in blocks:
        said = conv.said(block)
        if runs and (len(runs[-1]) < MIN_EVENT or len(said) < TOPIC_WORDS
                     or _share(said, heard) >= STAYS):
            runs[-1].append(block)
        else:
            runs.append([block])
            heard = Counter()
        heard.update(said)
    if len(runs) > 1 and len(runs[-1]) < MIN_EVENT:  # the last words: goodbyes
        last = runs.pop()
        runs[-1] += last
    return [part for run in runs for part in _cut(conv, run)]


def _cut(conv: Conversation, run: list[Block]) -> list[list[Block]]:
    """Runs of at most ``MAX_TURNS`` turns, cut where neighbouring turns share least;
    no cut leaves fewer than ``MIN_EVENT`` turns after it (a session's last two turns, its
    goodbyes, were an event of their own)."""
    out: list[list[Block]] = []
    while len(run) > MAX_TURNS:
        last = min(MAX_TURNS, len(run) - MIN_EVENT)
        at = min(range(MIN_EVENT, last + 1), key=lambda i: _gap(conv, run, i))
        out.append(run[:at])
        run = run[at:]
    return [*out, run]


def _gap(conv: Conversation, run: list[Block], at: int) -> float:
    """How much the two turns from ``at`` share with the two before it."""
    before = conv.said(run[at - 2]) | conv.said(run[at - 1])
    after = set().union(*(conv.said(b) for b in run[at:at + 2]))
    return _share(after, Counter(before))


def event_name(conv: Conversation, run: list[Block]) -> str:
    """What a run of turns talks about, in the words it says: the phrase holding the word
    the run keeps coming back to and the rest of the conversation does not (chat's
    "amazing" and "take care" are in every part of it), never a speaker's name (a
    greeting "Hey James", a thanks "Thanks, John" name the listener, not a subject)."""
    inside = Counter(w for b in run for w in conv.said(b))
    weight = {w: n * n / max(conv.overall[w], n) for w, n in inside.items() if n >= 2}
    kept = [i for b in run for i in _said(conv, b)] or [i for b in run for i in b.items]
    items = [conv.names_at.sub(" , ", unlabelled(i)) for i in kept]
    phrases = [(sum(weight.get(w, 0.0) for w in content_words(" ".join(ph))), -k, " ".join(ph))
               for k, ph in enumerate(p for i in items for p in content_runs(i))]
    ranked = [ph for score, _, ph in sorted(phrases, reverse=True) if score > 0]
    # one word names an event only as a name it keeps coming back to ("Daisy", never
    # "Thanks" or "Going")
    return first_sound([p for p in ranked if len(p.split()) > 1] + [salient_name(items)]
                       + [subject_name(items, []), opening_words(" ".join(items))])


def _said(conv: Conversation, block: Block) -> list[str]:
    """What a block says beyond the courtesies: the first sentence of the first two turns
    is a greeting, the last two turns a sign-off (a block that is no turn says it all)."""
    at = conv.place.get(id(block))
    if at is None:
        return block.items
    if at >= len(conv.turns) - 2:
        return []
    return block.items[1:] if at < 2 else block.items


def turns_of(text: str) -> list[tuple[str, str]]:
    """The turns of a note that is a conversation, as (speaker, what they said with its
    whitespace collapsed); none for any other note."""
    blocks = parse_blocks(text)
    if not speakers(blocks):
        return []
    return [(who, " ".join(unlabelled(b.text).split())) for b in blocks
            if (who := speaker_of(b))]

