"""How the model path writes around a small model's words (``prose/node_text.py``), on
what the real 1.5B wrote into the Hatch documentation pages of bench/quality/realdocs:
a pair of sentences said twice, a closing "The following is an example:" with the
example left out, and a REFINE repeating what the node already says."""

from __future__ import annotations

from vaultlink.prose.node_text import (
    new_sentences,
    paragraphs_of,
    title_of,
    without_dangling_lead,
)

TWICE = ("Hatch provides two types of plugins: Hatchling and Hatch. Hatch plugins must be "
         "installed beside Hatch itself. Hatch provides two types of plugins: Hatchling and "
         "Hatch. Hatch plugins must be installed beside Hatch itself.")


def test_a_sentence_said_twice_is_written_once() -> None:
    assert new_sentences(TWICE, "") == ("Hatch provides two types of plugins: Hatchling and "
                                        "Hatch. Hatch plugins must be installed beside Hatch "
                                        "itself.")


def test_sentences_the_node_holds_are_not_added_again_and_blocks_stay_whole() -> None:
    node = "Intro.\n\nHatch plugins must be installed beside Hatch itself.\n"
    added = "Hatch plugins must be installed beside Hatch itself. Hatchling plugins build.\n\n" \
            "- Hatch plugins must be installed beside Hatch itself."
    assert new_sentences(added, node) == ("Hatchling plugins build.\n\n"
                                          "- Hatch plugins must be installed beside Hatch itself.")
    assert new_sentences("Hatch plugins must be installed beside Hatch itself!", node) == ""


def test_a_closing_lead_in_to_nothing_is_dropped() -> None:
    text = ("The run command creates an environment.\n\nThe fields are listed. The following "
            "is an example of a valid block:")
    assert without_dangling_lead(text) == ("The run command creates an environment.\n\n"
                                           "The fields are listed.")
    assert without_dangling_lead("Steps:\n\n- one") == "Steps:\n\n- one"
    assert without_dangling_lead("Only this:") == "Only this:"  # all it says: kept


def test_a_code_block_with_blank_lines_stays_one_block_and_keeps_its_lines() -> None:
    code = "```python\nfrom x import y\n\n\n@hook\ndef f():\n    return y\n```"
    text = f"Decorate it:\n\n{code}\n\nThen   register it. Then   register it."
    assert paragraphs_of(text) == ["Decorate it:", code, "Then   register it. Then   register it."]
    assert new_sentences(text, "") == f"Decorate it:\n\n{code}\n\nThen register it."
    assert paragraphs_of("```\nopen\n\nto the end") == ["```\nopen\n\nto the end"]


def test_a_title_keeps_the_capitals_its_summary_writes_a_word_with() -> None:
    """The 0.5B's handle ``uv`` became "Uv" though the summary says "UV"; a word
    capitalised only because it opens a sentence stays as the handle has it."""
    assert title_of("uv", "To enable UV for the default environment.") == "UV"
    assert title_of("uv", "To enable UV, set `installer = 'uv'`.") == "UV"  # code aside
    assert title_of("sqlite-fts5", "SQLite FTS5 tokenizers: SQLite ships FTS5.") == (
        "SQLite FTS5")
    assert title_of("run-python-scripts", "To run Python scripts inline.") == (
        "Run Python scripts")
    assert title_of("rebuild-online", "Online rebuild. It stays up.") == "Rebuild online"
    assert title_of("pg-mixed", "PG and pg both.") == "Pg mixed"  # two forms: as given
    assert title_of("搜索索引", "搜索索引每周重建。") == "搜索索引"


def test_a_turn_whose_opening_the_node_holds_keeps_its_speaker() -> None:
    """A REFINE of a conversation's node adds only the sentences it lacks: "Gina: Thanks!"
    was known, and "Making my spot comfortable ..." went in with nobody speaking (LoCoMo
    conversation 30, the 0.5B's node "Clothing store")."""
    known = "Gina: Thanks! Glad you like it.\n"
    text = ("Gina: Thanks! Making my spot comfortable is key.\n\n"
            "Jon: Your store looks great.")
    assert new_sentences(text, known) == (
        "Gina: Making my spot comfortable is key.\n\nJon: Your store looks great.")
