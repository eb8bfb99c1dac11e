"""Why a block of a note gives no unit: the reasons the offline rules pass a block over
(code, tables, open tasks, errands, logistics, status lines, a log of times, a day's
motto, a block of no words), and what counts as a cue that keeps a block whatever its
heading. A day's task list that says something ("Finish the CSCC24 cheat sheet",
"Review the Moosavi paper", with their boxes ticked or not) is the owner's record of the
day's work and is kept; a list of errands ("buy milk") is not. Pure functions;
``subjects.py`` sorts a note's blocks with them.
"""

from __future__ import annotations

import re

from vaultlink.markdown.language import count_words
from vaultlink.markdown.text import TASK_DATE
from vaultlink.prose.blocks import PROSE_KINDS, Block, task_said
from vaultlink.prose.subject_names import LOGISTICS, STATUS
from vaultlink.prose.units import slugify

SHORT = 12          # words: a block this short with no cue of its own joins its neighbour
TOO_SHORT = 5       # words: a subject this short with no cue says nothing on its own
_LEAD_LOGISTICS = re.compile(r"^\W*(attendees|present|participants|agenda|personal admin|"
                             r"errands|to ?do|action items|follow-ups)\b", re.IGNORECASE)
# A decision, a rule, a measured fact or a preference: content, whatever the heading.
DECISION = re.compile(
    r"\b(decided|decision|agreed|from now on|going forward|always|never|prefer|rule|policy|"
    r"is now|are now|no longer|correction|stays? at|every \d+ \w+|note to self)\b",
    re.IGNORECASE)
CUE = re.compile(DECISION.pattern + r"|\b(we will|we'll|must|default|instead of)\b"
                 r"|\d[\d.,]*\s?(ms|s|sec|seconds|min|minutes|hours?|days?|weeks?|GB|MB|KB|"
                 r"TB|%|x|lines|queries|documents|rows|tuples|requests)\b"
                 r"|\bfrom \d[\d.,]* to \d", re.IGNORECASE)
STATUS_LINE = "status update (who is doing what)"
NOTICE = "a notice above the page's text (a quote before it starts)"
# A standup line about a person's day rather than about the work: "Me: ...", "Jonas: ...".
# An item that opens with a time of day ("13:00: go eat", "9:30 - standup", "14h05 nap"):
# a day's log of times is when the owner did things, not a subject to keep.
_TIME_OF_DAY = re.compile(r"^\W*(?:[01]?\d|2[0-3])[:h][0-5]\d(?:\s*[ap]\.?m\.?)?\b", re.I)
TIME_LOG = "a log of times of day"
_ACTIVITY = re.compile(r"^\W*(?:me|[A-Z][a-zé]+(?: and [A-Z][a-zé]+)?)\s*:|\b(?:working on|"
                       r"paired|pairing|reviewing|drafted|wants|will|today|tomorrow|"
                       r"this (?:morning|afternoon)|all (?:morning|afternoon|day))\b")
WEAK = "weak"  # a status line with a measure: kept if it adds to a subject of the note
_REASONS = {"code": "code block", "diagram": "diagram", "table": "table", "html": "HTML",
            "image": "image", "links": "list of links", "linkdefs": "link definitions",
            "footnote": "footnote", "tasks": "open tasks (checkboxes)",
            "banner": "site banner"}
MOTTO = "the day's motto (a quote above the day)"
OTHER_TASK = "a task of another subject than its list's"
NO_WORDS = "no word of three letters: numbers and signs"
# a word: three letters in a row, or one hiragana, Han or Hangul letter ("很好" says much)
_WORD = re.compile(r"[^\W\d_]{3}|[\u3041-\u309f\u3400-\u9fff\uac00-\ud7af]")
PLAN = 3  # items: a day's plan, not an errand or two


def says_something(tasks: list[str], least: int) -> bool:
    """Whether a day's task list is the owner's record of the day (``PLAN`` items, or
    ``least`` words: the boxes and the dates the Tasks plugin stamps not counted), not
    an errand or two ("call the bank", "buy milk")."""
    return len(tasks) >= PLAN or count_words(
        TASK_DATE.sub(" ", " ".join(map(task_said, tasks)))) >= least


def slug_of(heading: str) -> str:
    """A heading as the logistics lists spell it."""
    return slugify(heading)


def passed_reason(block: Block, dated: bool = False) -> str:
    """Why a block gives no unit ('' when it is content); ``dated``: of a day note."""
    if block.kind == "tasks":
        if not (dated and says_something(block.items, SHORT)):
            return _REASONS["tasks"]
    elif block.kind not in PROSE_KINDS:
        return _REASONS.get(block.kind, block.kind)
    text = " ".join(block.items)
    if not _WORD.search(text):
        return NO_WORDS  # a day's closing "> 94 > 27.2 > ⊙﹏⊙∥": a measure with no word
    heads = [slug_of(h) for h in block.heads]
    logistic = next((h for h in block.heads if slug_of(h) in LOGISTICS), "")
    if logistic and not DECISION.search(text):
        return f"logistics (the '{logistic}' section)"
    if block.items and _LEAD_LOGISTICS.match(block.items[0]) and not DECISION.search(text):
        return "logistics (" + _LEAD_LOGISTICS.match(block.items[0]).group(1).lower() + ")"  # type: ignore[union-attr]
    if any(h in STATUS for h in heads[-1:]) and not DECISION.search(text):
        return STATUS_LINE if _ACTIVITY.search(text) else WEAK
    if block.kind != "tasks" and is_time_log(block.items):
        return TIME_LOG  # a task in a slot of the day is still a task
    return ""


def errand_lines(blocks: list[Block]) -> set[int]:
    """File lines (0-based) of a logistics lead-in ("Personal admin:") and the list it
    introduces, as ``_sorted_blocks`` passes them: a day's errands, no subject."""
    out: set[int] = set()
    lead = False
    for block in blocks:
        said = " ".join(block.items)
        opens = bool(block.items) and bool(_LEAD_LOGISTICS.match(block.items[0])) \
            and block.items[-1].endswith(":") and not DECISION.search(said)
        if opens or (lead and block.kind in ("list", "steps", "tasks")):
            out.update(range(block.start - 1, block.end))
        lead = opens
    return out


def is_time_log(items: list[str]) -> bool:
    """Whether a list is a log of times of day: three items or more, two in three of
    them opening with a time."""
    timed = sum(bool(_TIME_OF_DAY.match(i)) for i in items)
    return len(items) >= 3 and 3 * timed >= 2 * len(items)
