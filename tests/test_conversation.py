"""Conversations kept as day notes (a chat log, an interview, LoCoMo's sessions): read as
the events they move through, named by what the turns say, and merged into another
session's node only as a restatement. Shapes from LoCoMo's sessions (snap-research/locomo)."""

from __future__ import annotations

import pytest

from tests.test_offline import first_step
from vaultlink.pipeline.context import SourceNote
from vaultlink.pipeline.offline import OfflineExtractor, OfflinePolicy
from vaultlink.prose.blocks import parse_blocks
from vaultlink.prose.conversation import (
    conversation_of,
    events,
    speakers,
    turns_of,
)
from vaultlink.prose.subject_names import holds_name
from vaultlink.prose.turns import told_by
from vaultlink.prose.units import Unit

TURNS = [
    ("John", "Hey James, good catching up! Been a while huh? I left my IT job after "
             "three years to work on something that makes a difference."),
    ("James", "Hey John! Great to hear from you. Leaving after three years is a big "
             "step, how did it feel?"),
    ("John", "Scary at first, but the new job fits my values. I want to organise "
             "gaming tournaments for the schools in our state, starting with chess "
             "and Fortnite."),
    ("James", "Gaming tournaments for schools sound great. Which tournament comes "
             "first?"),
    ("John", "A chess tournament in October, then Fortnite tournaments every month "
             "after that."),
    ("James", "Perfect, the schools will love the tournaments."),
    ("James", "Yesterday I took my puppy Daisy to the vet clinic for her first "
             "vaccinations and a routine examination of her paws and teeth."),
    ("John", "Is the puppy all right after the vet clinic? Daisy looked tired in "
             "your photo."),
    ("James", "Daisy is fine, the vet said the puppy is healthy and growing fast."),
    ("John", "Glad the puppy is well. Give Daisy a treat from me."),
    ("John", "Thanks, James! Take care, bye!"),
    ("James", "Take care, John, bye!"),
]
SESSION = "---\ndate: 2022-08-06\n---\n\n" + "\n\n".join(f"{w}: {t}" for w, t in TURNS)


def read(text: str, path: str = "daily/2022-08-06.md") -> list[Unit]:
    return OfflineExtractor().extract_note(SourceNote(path, "", [], text))


def test_a_day_note_of_turns_is_a_conversation_of_its_speakers() -> None:
    assert speakers(parse_blocks(SESSION)) == {"John", "James"}
    # any script: speakers are labels of letters, whatever the alphabet, and a full-width
    # colon needs no space after it
    turns = [("田中", "昨日は山に登りました。"), ("佐藤", "いいですね、どの山ですか。"),
             ("田中", "高尾山です。紅葉がきれいでした。"), ("佐藤", "次は一緒に行きましょう。")]
    assert speakers(parse_blocks("\n\n".join(f"{w}: {t}" for w, t in turns))) == {"田中", "佐藤"}
    assert speakers(parse_blocks("\n\n".join(f"{w}：{t}" for w, t in turns))) == {"田中", "佐藤"}


@pytest.mark.parametrize("text", [
    # one speaker quoted over and over is a note, not a conversation
    "\n\n".join(f"Note: point {i} of the plan is written down here." for i in range(6)),
    # a meeting's fields, each once: no one talks twice
    "\n\n".join(f"{k}: the {k.lower()} of the indexer release is written here." for k in
                ("Status", "Decision", "Action", "Risk", "Note")),
    # a glossary: more labels than a conversation has speakers
    "\n\n".join(f"Term{chr(65 + i)}: what term {i} means, said twice over." for i in range(12)),
    # two labelled lines in a page of prose
    "Intro paragraph of the owner.\n\nQ: why?\n\nA: because.\n\nMore prose here.\n\n"
    "And more prose.\n\nAnd a last paragraph.",
])
def test_labels_that_do_not_take_turns_are_no_conversation(text: str) -> None:
    assert speakers(parse_blocks(text)) == frozenset()


def test_a_conversation_gives_a_unit_per_event_named_by_what_it_says() -> None:
    """Named by the speakers and courtesies, every session was one node "Hey James" or
    "Take care", and a later session merged into it; each event is a unit of its own,
    named by the words its turns keep coming back to."""
    units = read(SESSION)
    names = [u.title.lower() for u in units]
    assert len(units) == 2, names
    assert any("tournament" in n for n in names), names
    assert any("puppy" in n or "daisy" in n or "vet" in n for n in names), names
    for name in names:
        assert "james" not in name and "john" not in name and "care" not in name
    # every turn is kept in some unit: nothing of the talk is passed over
    said = "\n".join(u.summary for u in units)
    assert "Take care, John, bye!" in said and "chess tournament in October" in said


def test_events_break_where_a_long_turn_turns_to_something_else() -> None:
    blocks = [b for b in parse_blocks(SESSION) if b.kind == "prose"]
    conv = conversation_of(blocks, blocks)
    assert conv is not None
    runs = events(conv, blocks)
    assert [len(r) for r in runs] == [6, 6]
    assert runs[1][0].items[0].startswith("James: Yesterday I took my puppy")


def test_a_units_lines_are_turns_when_two_speakers_open_them() -> None:
    assert told_by(["Andrew: Hey!", "Audrey: Hi, the dogs are fine.", "Andrew: Good.",
                    "Audrey: Bye."]) == {"Andrew", "Audrey"}
    assert told_by(["Note: one line.", "Note: another."]) == frozenset()
    assert told_by(["Status: staging is green.", "Action: deploy on Monday."]) == frozenset()
    assert told_by(["Plain prose.", "More prose."]) == frozenset()


@pytest.mark.parametrize("similarity, grows", [(0.7, False), (0.9, True)])
def test_a_conversations_unit_grows_another_sessions_node_only_as_a_restatement(
        similarity: float, grows: bool) -> None:
    """Two sessions of one conversation share speakers, courtesies and the words of the
    speakers' lives ("dog", "walk"): below the similarity of a restatement a session's
    event is a node of its own, even under the same name."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("dog-walks", "wiki", "Andrew: My dog walks got longer.\n"
                "Audrey: Two dogs, two walks a day!\nAndrew: And a third on Sundays.\n"
                "Audrey: Lucky dogs.", ["daily/2023-07-08.md"], title="Dog walks")
    node = ("---\nname: Dog walks\ndescription: d\n---\nAndrew: Dog walks in the park.\n\n"
            "## Sources\n\n- From [[daily/2023-06-02.md]].\n")
    assert (first_step(policy, unit, node, "Dog walks", similarity) == "edit") is grows


def test_a_page_grows_a_day_notes_node_only_when_the_node_holds_its_whole_title() -> None:
    """A standup's status list named "Release notes" took the indexer's "Sift indexer 2.3.0
    release notes" page: the node's name is part of the page's title, not its subject."""
    assert holds_name("Reciprocal rank fusion paper", "Reciprocal rank fusion")
    assert not holds_name("Release notes", "Sift indexer 2.3.0 release notes")
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("sift-indexer-2-3-0-release-notes", "wiki",
                "The indexer builds the new index beside the old one.\n\n## Highlights\n"
                "Online rebuilds.", ["resource/sift-2-3-release-notes.md"],
                title="Sift indexer 2.3.0 release notes")
    node = ("---\nname: Release notes\ndescription: d\n---\n- Jonas upgraded the indexer. "
            "Release notes: sift 2 3 release notes.\n\n## Sources\n\n"
            "- From [[daily/2026-06-17/standup.md]].\n")
    assert first_step(policy, unit, node, "Release notes", 0.7) != "edit"


def test_a_conversations_event_keeps_every_turn_whole() -> None:
    """A day note's subject keeps 16 sentences; an event of a conversation is the turns a
    later question asks of, so none is cut short (LoCoMo: 4,447 of 6,154 turns were passed
    over as "condensed" when sessions were read as day notes)."""
    turns = [("Ana" if i % 2 else "Ben", f"Turn {i} tells of the garden plot. The tomatoes "
              f"grew {i} centimetres this week in the garden plot.") for i in range(12)]
    text = "---\ndate: 2023-05-01\n---\n\n" + "\n\n".join(f"{w}: {t}" for w, t in turns)
    units = read(text, "daily/2023-05-01.md")
    said = "\n".join(u.summary for u in units)
    assert all(f"grew {i} centimetres" in said for i in range(12)), said


def test_a_long_conversation_is_read_in_events_of_at_most_twelve_turns() -> None:
    """Reading grows with the note, not its square: a chat log of 3,000 turns (the
    review measured 56 s for 2,000 turns before each turn's words were counted once)."""
    turns = [("Ana" if i % 2 else "Ben", f"Turn {i}: the garden plot and the tomatoes "
              f"grew {i % 7} centimetres this week.") for i in range(3000)]
    blocks = parse_blocks("\n\n".join(f"{w}: {t}" for w, t in turns))
    conv = conversation_of(blocks, blocks)
    assert conv is not None
    runs = events(conv, blocks)
    assert sum(len(r) for r in runs) == 3000 and max(len(r) for r in runs) <= 12


def test_no_event_is_a_long_sessions_last_few_turns_alone() -> None:
    """A session of 14 turns is cut once; the cut never leaves its goodbyes alone (LoCoMo
    conversation 43: "Tim: I hope you like it. Chat soon!" / "John: Me too. Talk to you
    soon!" was an event, its node "Chat soon")."""
    turns = [("Ana" if i % 2 else "Ben", f"Turn {i}: the garden plot and the tomatoes "
              f"grew {i} centimetres this week.") for i in range(12)]
    turns += [("Ana", "Talk soon!"), ("Ben", "Bye, talk soon!")]
    blocks = parse_blocks("\n\n".join(f"{w}: {t}" for w, t in turns))
    conv = conversation_of(blocks, blocks)
    assert conv is not None
    runs = events(conv, blocks)
    assert sum(len(r) for r in runs) == 14
    assert min(len(r) for r in runs) >= 4, [len(r) for r in runs]


def test_turns_added_to_a_conversation_are_read_as_its_turns() -> None:
    """The owner appends two turns: the note is still a conversation (its speakers are
    found in the whole note), and the new turns are named without their speakers."""
    blocks = parse_blocks(SESSION + "\n\nJohn: The chess tournament has forty schools "
                          "signed up now.\n\nJames: Forty schools for the chess tournament!")
    new = blocks[-2:]
    conv = conversation_of(blocks, new)
    assert conv is not None and conv.names == {"John", "James"}


@pytest.mark.parametrize("similarity, grows", [(0.7, False), (0.9, True)])
def test_a_days_task_list_grows_another_days_node_only_as_a_restatement(
        similarity: float, grows: bool) -> None:
    """Two days' task lists share their verbs ("take notes", "finish", "review"): a day's
    list of a malware course's work merged into another day's "Take notes" list."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("take-notes", "wiki", "- ☐ Take notes on the malware course, week 3\n"
                "- ☑ Finish the reverse engineering lab", ["daily/2026-05-07.md"],
                title="Take notes")
    node = ("---\nname: Take notes\ndescription: d\n---\n- ☑ Take notes on CSCB09 lecture 4\n"
            "- ☐ Review the pointers chapter\n\n## Sources\n\n- From [[daily/2026-03-12.md]].\n")
    assert (first_step(policy, unit, node, "Take notes", similarity) == "edit") is grows


def test_a_conversations_turns_are_its_speakers_and_what_they_said() -> None:
    turns = turns_of(SESSION)
    assert turns[0] == ("John", "Hey James, good catching up! Been a while huh? I left my IT "
                                "job after three years to work on something that makes a "
                                "difference.")
    assert len(turns) == len(TURNS)
    assert turns_of("# Notes\n\nDocker: a container runtime.\n") == []


def test_the_model_path_reads_a_conversation_by_event_as_the_rules_do() -> None:
    """The 0.5B kept 38 units of LoCoMo conversation 30's 369 turns (16 of its 75
    evidence turns), quoted them without their speakers and made a node of a photo's
    caption ("Transporting the space to a special shopping mall with a glass entrance"):
    a conversation is read by event, every turn whole, whatever the model would answer."""
    from tests.test_personal_notes import Answering
    from vaultlink.pipeline.extract.extractor import ModelExtractor

    note = SourceNote("daily/2022-08-06.md", "2022-08-06",
                      [("2022-08-06", SESSION.split("---\n", 2)[2], True)], SESSION)
    model = Answering([{"name": "vet-transportation", "bucket": "personal", "summary":
                        "Transporting the puppy to the vet clinic for her first vaccinations."}])
    units = ModelExtractor(model, 8192, OfflineExtractor()).extract([note])
    assert [(u.name, u.summary) for u in units] == [(u.name, u.summary) for u in read(SESSION)]
    said = "\n\n".join(u.summary for u in units)
    assert all(f"{who}: " in said for who in ("John", "James"))
    assert "Transporting" not in said


def test_a_node_of_talk_holds_a_conversations_unit_only_by_its_phrases() -> None:
    """The 0.5B's node of pep talk ("let's keep going") held 71-82% of the words of every
    later session's units, so each was judged a restatement and only cited: their turns
    were lost. A unit of turns is held by its runs of words; other units by their words."""
    from vaultlink.pipeline.integrate.holds import HOLDS, coverage, held_share

    node = ("Gina: Keep going, Jon! You got this, I believe in you and your dance studio. "
            "Jon: Thanks Gina, your support means a lot, I'm staying positive and going "
            "full-time with my dance studio. Gina: Awesome, staying positive is key!")
    unit = ("Jon: I'm going to a dance competition next month, the studio is going great.\n\n"
            "Gina: Awesome Jon, keep going! I believe in you.\n\n"
            "Jon: Thanks Gina, your support means a lot.\n\n"
            "Gina: Staying positive is key!")
    assert coverage(unit, node) >= HOLDS  # by its words, a restatement
    assert held_share(unit, node) < HOLDS  # by its phrases, news: a competition
    assert held_share(unit, f"{node}\n\n{unit}") == 1.0  # quoted already: held
    fact = "The dance studio is going full-time, staying positive."
    assert held_share(fact, node) == coverage(fact, node)
