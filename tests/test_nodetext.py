"""How the model path writes around a small model's words (``dream/nodetext.py``), on
what the real 1.5B wrote into the Hatch documentation pages of bench/quality/realdocs:
a pair of sentences said twice, a closing "The following is an example:" with the
example left out, and a REFINE repeating what the node already says."""

from __future__ import annotations

from vaultlink.dream.nodetext import new_sentences, without_dangling_lead

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
