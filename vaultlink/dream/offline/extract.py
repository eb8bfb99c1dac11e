"""The offline extractor: memory units from a note's own structure, with no model.

Only sections the checkpoint does not know yet (``SourceNote.sections`` marked new)
are read. A section is cut into blocks (a paragraph, or a lead-in line with the list
or steps it introduces); neighbouring blocks that share vocabulary are merged, so a
section about one thing gives one rich unit and a "Notes" section about three things
gives up to three. Blocks without substance (short asides, TODO lists, logistics
headings such as Lunch or Weather) give nothing: extract is the only gate on what is
worth remembering.

Everything a unit says is copied from the note. The summary is a handful of the
block's own sentences (list items count as sentences), one per line, so the text can
never claim what the user did not write; numbered steps keep their number, so the
integrator can tell a runbook from prose. Deterministic: same notes, same units.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from vaultlink.dream.context import SourceNote
from vaultlink.dream.offline.text import (
    STEP_MARK,
    content_words,
    delink,
    split_sentences,
    stem,
    words,
)
from vaultlink.dream.units import Unit, slugify
from vaultlink.markdown.text import LIST_MARK, STOP_WORDS

log = logging.getLogger(__name__)

MIN_WORDS = 25          # fewer words than this is an aside, not a memory
MAX_SENTENCES = 4       # prose summaries: a few sentences, not a copy of the note
MAX_STEPS = 6           # a runbook cut after four steps would be wrong, so steps get more
MERGE_OVERLAP = 0.12    # neighbouring blocks sharing this much vocabulary are one topic

# Headings that announce logistics or chatter rather than knowledge.
TRIVIA_HEADINGS = frozenset("""todo to-do tasks action-items follow-ups followups agenda
attendees lunch dinner breakfast weather weekend evening misc miscellaneous random
personal-admin errands standup stand-up status check-in""".split())
# Headings too generic to name a unit: a key phrase of the text names it instead.
GENERIC_HEADINGS = frozenset("""notes note standup stand-up decisions decision reading
summary log ideas thoughts today journal update updates what-went-well what-didn-t
what-didnt open-questions discussion context background details learnings misc
preferences observations research""".split())

IMPERATIVE = frozenset("""add announce apply ask avoid back build call change check clean
close commit compare configure confirm copy create delete deploy disable do don't drain
edit enable ensure export fill find fix follow generate get give go install keep kill
lock log look make merge mount move never open pause pin post pull purge push put read
reboot record remove rename replace restart restore resume revoke roll rotate run save
schedule send set ship skip start stop swap switch tag terminate test turn type unlock
update upgrade use verify wait watch write""".split())

PROCEDURE_HEADING = re.compile(r"\b(how to|how we|how i|steps?|runbook|procedure|checklist|"
                               r"playbook|setup|install)\b", re.IGNORECASE)
# "we" only with prefer/always/never: "so we avoid X" is usually technical, not a habit.
PREFERENCE = re.compile(
    r"\b(?:I|we) (?:really |usually |still |also )?(?:prefer|always|never)\b"
    r"|\bI (?:really |usually |still |also )?(?:like|love|hate|avoid|protect|refuse)\b"
    r"|\bnote to self\b|\bmy (?:[\w-]+ ){0,3}(?:preference|rule|habit|routine)s?\b"
    r"|\bI(?:'d| would) rather\b|\bI(?:'m| am) keeping\b|\bworks for me\b",
    re.IGNORECASE)

CHECKBOX = re.compile(r"^\s*[-*+]\s+\[[ xX]\]")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s")


# -- blocks ------------------------------------------------------------------------------


@dataclass
class Block:
    """A run of a section: its sentences (list items whole), which of them are steps."""

    sentences: list[str]
    steps: set[int]

    def text(self) -> str:
        """The block's text, for word statistics."""
        return " ".join(self.sentences)

    def extend(self, other: Block) -> None:
        """Append another block's sentences, keeping step marks."""
        base = len(self.sentences)
        self.sentences += other.sentences
        self.steps |= {base + i for i in other.steps}


def _paragraphs(text: str) -> list[list[str]]:
    """Blank-line separated groups of lines, without headings, code and checkboxes."""
    groups: list[list[str]] = [[]]
    in_fence = in_indented = False
    for line in text.split("\n"):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        indented = line.startswith(("    ", "\t")) and not LIST_MARK.match(line)
        # Indented code starts after a blank line; indented lines inside a paragraph
        # or list item are its continuation.
        in_indented = indented and (in_indented or not groups[-1])
        if in_fence or in_indented:
            continue  # code is not prose: never quoted as a sentence
        if not line.strip() or HEADING.match(line) or CHECKBOX.match(line) \
                or line.strip().startswith(("|", ">")):
            groups.append([])
            continue
        groups[-1].append(line)
    return [g for g in groups if g]


def _block(lines: list[str]) -> Block:
    sentences: list[str] = []
    steps: set[int] = set()
    prose: list[str] = []
    for line in lines:
        if LIST_MARK.match(line):
            if prose:
                sentences += split_sentences(" ".join(prose))
                prose = []
            if STEP_MARK.match(line):
                steps.add(len(sentences))
                sentences.append(" ".join(line.split()))
            else:
                sentences.append(" ".join(LIST_MARK.sub("", line).split()))
        elif sentences and not prose and line.startswith((" ", "\t")):
            sentences[-1] += " " + " ".join(line.split())  # a list item's continuation
        else:
            prose.append(line)
    if prose:
        sentences += split_sentences(" ".join(prose))
    return Block([s for s in sentences if s], steps)


def blocks_of(text: str) -> list[Block]:
    """A section's blocks; a paragraph ending in ':' joins the list it introduces."""
    out: list[Block] = []
    lead_in = False
    for para in _paragraphs(text):
        block = _block(para)
        if not block.sentences:
            continue
        if out and lead_in:
            out[-1].extend(block)
        else:
            out.append(block)
        lead_in = block.sentences[-1].rstrip().endswith(":")
    return out


def _overlap(a: Block, b: Block) -> float:
    wa, wb = set(content_words(a.text())), set(content_words(b.text()))
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


def segments(blocks: list[Block]) -> list[Block]:
    """Merge neighbouring blocks about the same thing (shared vocabulary)."""
    out: list[Block] = []
    for block in blocks:
        if out and _overlap(out[-1], block) >= MERGE_OVERLAP:
            out[-1].extend(block)
        else:
            out.append(Block(list(block.sentences), set(block.steps)))
    return out


# -- cues --------------------------------------------------------------------------------


def _first_word(sentence: str) -> str:
    found = words(STEP_MARK.sub("", sentence))
    return found[0] if found else ""


def bucket_of(heading: str, block: Block) -> str:
    """procedure, personal or wiki, from cues in the block and its heading.

    Numbered steps, or several lines led by an imperative verb, make a procedure
    (unless the list is a list of the user's own rules); first-person preference
    wording ("I prefer", "I always", "note to self") makes a personal note; anything
    else is general knowledge.
    """
    text = block.text()
    prefs = len(PREFERENCE.findall(text)) + (2 if "preference" in heading.lower() else 0)
    imperative = sum(_first_word(s) in IMPERATIVE for s in block.sentences)
    steps = len(block.steps)
    if steps >= 2 and prefs < 2:
        return "procedure"
    if prefs >= 1:
        return "personal"
    # A purpose list ("VACUUM exists to: update statistics ...") has a verb or two up
    # front; a runbook is mostly instructions.
    if imperative >= 3 or (imperative >= 2 and 2 * imperative >= len(block.sentences)) \
            or (PROCEDURE_HEADING.search(heading) and imperative >= 1):
        return "procedure"
    return "wiki"


def key_phrase(text: str, max_words: int = 3) -> str:
    """The text's most salient phrase, from word frequencies.

    A run of 2-3 content words that recurs whole ("golden query set") wins when it
    holds the most frequent word; otherwise the most frequent words (seen at least
    twice), in the order they first appear ("cross-encoder rerank candidates").
    """
    tokens = words(text)

    def plain(tok: str) -> bool:
        return tok not in STOP_WORDS and len(tok) > 2 and not re.fullmatch(r"[\d.:,–-]+", tok)

    freq = Counter(stem(t) for t in tokens if plain(t))
    if not freq:
        return ""
    grams: Counter[tuple[str, ...]] = Counter()
    shown: dict[tuple[str, ...], str] = {}
    run: list[str] = []
    for tok in [*tokens, "the"]:
        if plain(tok):
            run.append(tok)
            continue
        for n in range(2, min(len(run), max_words) + 1):
            for i in range(len(run) - n + 1):
                key = tuple(stem(w) for w in run[i:i + n])
                grams[key] += 1
                shown.setdefault(key, " ".join(run[i:i + n]))
        run = []
    first: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        first.setdefault(stem(tok), i)
    top = sorted(freq, key=lambda w: (-freq[w], first[w]))
    repeated = [k for k in grams if grams[k] >= 2 and top[0] in k]
    if repeated:
        best = max(repeated, key=lambda k: (grams[k] * sum(freq[w] for w in k), -first[k[0]]))
        return shown[best]
    picked = [w for w in top[:max_words] if freq[w] >= 2] or top[:2]
    surface = {stem(t): t for t in reversed(tokens)}  # first spelling of each stem
    return " ".join(surface[w] for w in sorted(picked, key=lambda w: first[w]))


def unit_name(crumb: str, block: Block, own_heading: bool) -> str:
    """A kebab-case handle: the heading when it is specific, else a key phrase.

    A one-word heading ("Cost", "Pairing") is qualified by the note's title or
    parent heading when that is specific ("cross-encoder-reranking-cost"), else by
    the text's key phrase.
    """
    parts = [p.strip() for p in crumb.split(" > ")]
    head = re.sub(r"^(how (we|i|to)|changes to( the)?|notes on|on|about)\s+", "", parts[-1],
                  flags=re.IGNORECASE)

    def generic(text: str) -> bool:
        key = slugify(text)
        return (key in GENERIC_HEADINGS or key in TRIVIA_HEADINGS or not content_words(text)
                or re.fullmatch(r"[\d-]+", key) is not None)

    phrase = key_phrase(delink(block.text()))
    if not own_heading or generic(head):
        return slugify(phrase or head)
    if len(content_words(head)) >= 2:
        return slugify(head)
    # The file's own name names a resource best; a long H1 title only as a fallback.
    parents = [parts[0], *reversed(parts[1:-1])] if len(parts) > 1 else []
    parent = next((p for p in parents if not generic(p)), "")
    parent = re.sub(r"(^on[-_ ]|[-_ ]notes?$)", "", parent, flags=re.IGNORECASE)
    parent = " ".join(w for w in re.split(r"[\W_]+", parent) if w)  # kebab file names
    parent = " ".join(parent.split()[:3])
    if parent:
        return slugify(f"{parent} {head}")
    if phrase and stem(head.lower()) not in {stem(w) for w in words(phrase)}:
        return slugify(f"{head} {phrase}")
    return slugify(phrase or head)


# -- summary -----------------------------------------------------------------------------


def choose_sentences(block: Block, bucket: str) -> list[str]:
    """The block's most central sentences, in their original order.

    Central = made of the block's frequent words. Lead-in lines ending in ':' and
    very short fragments say little on their own and are taken last. A procedure
    keeps its numbered steps first.
    """
    sents = block.sentences
    freq = Counter(content_words(block.text()))

    def score(i: int) -> float:
        cw = set(content_words(sents[i]))
        if not cw:
            return -1.0
        value: float = sum(freq[w] for w in cw) / len(cw) ** 0.5
        if sents[i].rstrip().endswith(":") or len(words(sents[i])) < 5:
            value *= 0.2
        elif i not in block.steps and not re.search(r"[.!?)\"'`”*]$", sents[i].rstrip()):
            value *= 0.4  # cut off (a formula or code followed): weak on its own
        if sents[i][:1].islower():
            value *= 0.3  # a list fragment ("update the statistics;") needs its lead-in
        return value + (0.5 if i == 0 else 0.0)  # openings tend to state the point

    chosen: list[int] = []
    if bucket == "procedure" and block.steps:
        chosen = sorted(block.steps)[:MAX_STEPS]
        room = max(0, MAX_STEPS - len(chosen))
        rest = [i for i in range(len(sents)) if i not in block.steps and score(i) > 0]
        chosen += sorted(rest, key=lambda i: (-score(i), i))[:min(room, 1)]
    else:
        ranked = sorted(range(len(sents)), key=lambda i: (-score(i), i))
        chosen = [i for i in ranked if score(i) > 0][:MAX_SENTENCES]
    return [sents[i] for i in sorted(chosen)]


class OfflineExtractor:
    """``Extractor`` with no model: units from the structure of the notes' new sections."""

    def __init__(self, min_words: int = MIN_WORDS) -> None:
        self.min_words = min_words
        self.passes_over = (
            f"the offline extractor keeps passages of at least {min_words} words and "
            "passes over logistics sections (Standup, Status, TODO, Agenda, Weekend, ...); "
            "a model reads everything (see vaultlink doctor)")

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        """Units from every note, in note order; a unit's only path is its note."""
        units: list[Unit] = []
        for note in notes:
            found = self.extract_note(note)
            log.debug("%s: %d unit(s)", note.path, len(found))
            units.extend(found)
        return units

    def extract_note(self, note: SourceNote) -> list[Unit]:
        """The units of one note's new sections."""
        units: list[Unit] = []
        seen: set[str] = set()
        for crumb, text, is_new in note.sections:
            if not is_new or self._trivia(crumb):
                continue
            segs = [s for s in segments(blocks_of(text)) if self._substantial(s)]
            for seg in segs:
                bucket = bucket_of(crumb, seg)
                summary = choose_sentences(seg, bucket)
                if not summary:
                    continue
                name = unit_name(crumb, seg, own_heading=len(segs) == 1)
                if name in seen:  # two blocks of one note named alike: keep both, apart
                    name = slugify(f"{name}-{len(units) + 1}")
                seen.add(name)
                units.append(Unit(name, bucket, "\n".join(summary), [note.path]))
        return units

    def _trivia(self, crumb: str) -> bool:
        return slugify(crumb.rsplit(" > ", 1)[-1]) in TRIVIA_HEADINGS

    def _substantial(self, block: Block) -> bool:
        n = len(words(block.text()))
        return n >= self.min_words and (len(block.sentences) >= 2 or n >= 2 * self.min_words)
