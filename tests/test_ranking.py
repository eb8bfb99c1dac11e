"""The ranking rules of ``search`` (issue 39), each chosen on LoCoMo's tuning half
(docs/quality.md) and each with a test that fails without it."""

from __future__ import annotations

import pytest

from tests.vaults import write_note
from vaultlink.index import chunks
from vaultlink.index.recall import Indexes
from vaultlink.vault.notes import Vault


def test_the_words_a_question_names_outweigh_notes_of_the_same_subject(
        vault: Vault, indexes: Indexes) -> None:
    """Keywords weigh 0.7, vectors 0.3: three notes about adoption are nearer the
    question's meaning, the one note with its council meeting has its words (with
    0.7/0.3 the other way round it came last)."""
    write_note(vault.root, "daily/2023-05-01.md", "Caroline: I'm looking into adoption agencies, "
               "adopting a child is my dream.\n\nMelanie: Adoption is such a loving choice.\n")
    write_note(vault.root, "daily/2023-05-09.md", "Caroline: The adoption process takes so long, "
               "but I want to give a kid a loving home.\n\nMelanie: You'll be a great mom.\n")
    write_note(vault.root, "daily/2023-05-20.md", "Caroline: I read about families who adopted "
               "children and how happy they are.\n\nMelanie: Adopting is beautiful.\n")
    write_note(vault.root, "daily/2023-06-02.md", "Caroline: Yesterday I went to the town council "
               "meeting. They showed plans for a new park.\n\nMelanie: Cool, I painted a sunset.\n")
    indexes.chunks.sync()
    hits = indexes.chunks.search("What did Caroline see at the council meeting for adoption?", 4)
    assert hits[0].path == "daily/2023-06-02.md"


def test_one_entry_per_note_with_its_best_section(vault: Vault, indexes: Indexes) -> None:
    """A note whose sections all match is one entry, showing its best section; the
    places it took are other notes'."""
    write_note(vault.root, "daily/2026-03-02.md", "# Monday\n\n## Morning\n\nRamen for breakfast, "
               "the miso ramen from the stall.\n\n## Evening\n\nMore ramen: tonkotsu ramen with "
               "extra ramen noodles, the best ramen of the week.\n\n## Night\n\nRamen again.\n")
    write_note(vault.root, "daily/2026-03-03.md",
               "# Tuesday\n\nA ramen shop opened by the office.\n")
    indexes.chunks.sync()
    hits = indexes.chunks.search("ramen", 10)
    paths = [h.path for h in hits]
    assert sorted(paths) == ["daily/2026-03-02.md", "daily/2026-03-03.md"]
    best = next(h for h in hits if h.path == "daily/2026-03-02.md")
    assert best.breadcrumb.endswith("Evening")


NODE = """---
name: Trail running
description: Gina's trail runs.
---
Gina ran the Ridgeback trail with her pups; the loop took three hours.

Gina trains on Tuesdays.

## Sources

- [[daily/2023-04-02.md]]
- [[daily/2023-04-20.md]]
"""


def test_a_digest_hit_is_the_passage_that_backs_it(vault: Vault, indexes: Indexes) -> None:
    """A node's section stands for the section of a cited note holding its matched
    lines (the node in ``via``), not for every note it cites, and not for itself."""
    write_note(vault.root, "daily/2023-04-02.md", "Gina: I ran the Ridgeback trail with my pups "
               "yesterday, the loop took three hours!\n\nJon: Wow, long run.\n")
    write_note(vault.root, "daily/2023-04-20.md", "Gina: I train on Tuesdays now.\n\n"
               "Jon: Good routine.\n")
    write_note(vault.root, "daily/2023-05-01.md", "Jon: My pups love the beach.\n")
    write_note(vault.root, "digest/wiki/trail-running.md", NODE)
    indexes.chunks.sync()
    hits = indexes.chunks.search("How long did the Ridgeback trail run with the pups take?", 5)
    assert hits[0].path == "daily/2023-04-02.md"
    assert hits[0].via == ["digest/wiki/trail-running.md"]
    assert "three hours" in hits[0].text
    assert "digest/wiki/trail-running.md" not in [h.path for h in hits]
    assert all(h.via == [] for h in hits if h.path == "daily/2023-04-20.md")
    # asked for digest nodes only, the node is the hit
    only = indexes.chunks.search("Ridgeback trail pups", 5, digest_only=True)
    assert [h.path for h in only] == ["digest/wiki/trail-running.md"] and only[0].via == []


def test_a_node_no_cited_note_backs_is_its_own_entry(vault: Vault, indexes: Indexes) -> None:
    write_note(vault.root, "daily/2023-04-02.md", "Jon: Nothing about running today.\n")
    write_note(vault.root, "digest/wiki/trail-running.md", NODE.replace(
        "- [[daily/2023-04-20.md]]\n", ""))
    indexes.chunks.sync()
    hits = indexes.chunks.search("Ridgeback trail pups three hours", 5)
    assert hits[0].path == "digest/wiki/trail-running.md" and hits[0].via == []


def test_backing_share_is_what_decides(vault: Vault, indexes: Indexes,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The share of a paragraph's words a cited section must hold: above what the note
    holds, the node stays its own entry."""
    write_note(vault.root, "daily/2023-04-02.md", "Gina: I ran the Ridgeback trail with my pups "
               "yesterday, the loop took three hours!\n")
    write_note(vault.root, "digest/wiki/trail-running.md", NODE)
    indexes.chunks.sync()
    query = "Ridgeback trail pups three hours"
    assert indexes.chunks.search(query, 5)[0].path == "daily/2023-04-02.md"
    monkeypatch.setattr(chunks, "BACKING_SHARE", 1.01)
    assert indexes.chunks.search(query, 5)[0].path == "digest/wiki/trail-running.md"


def test_a_date_the_question_names_brings_the_notes_of_that_date(
        vault: Vault, indexes: Indexes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Day notes whose date is in the month a question names (or the week after: a note
    tells of the days before it) rank as a list of their own beside the fused one."""
    write_note(vault.root, "daily/2023-05-10.md", "Melanie: We went camping by the lake, camping "
               "with the kids is the best.\n\nCaroline: So fun!\n")
    write_note(vault.root, "daily/2023-07-03.md", "Melanie: Last week we slept under a tent "
               "up the mountains.\n\nCaroline: Lovely.\n")
    write_note(vault.root, "daily/2023-08-15.md", "Melanie: Camping again! We love camping "
               "trips.\n\nCaroline: Enjoy.\n")
    for day, words in (("03", "painted a sunset"), ("11", "ran a charity race"),
                       ("19", "read a book on pottery")):
        write_note(vault.root, f"daily/2023-09-{day}.md", f"Caroline: I {words}.\n")
    indexes.chunks.sync()
    query = "When did Melanie go camping in June?"
    assert indexes.chunks.search(query, 3)[0].path == "daily/2023-07-03.md"
    monkeypatch.setattr(chunks, "DATE_WEIGHT", 0.0)
    assert indexes.chunks.search(query, 3)[0].path != "daily/2023-07-03.md"


def test_date_spans_of_a_question() -> None:
    from datetime import date

    from vaultlink.index.dates import date_spans, note_date, within

    assert date_spans("When did Melanie go camping in June?") == [(None, 6, None)]
    assert date_spans("What did Gina find on 1 February, 2023?") == [(2023, 2, 1)]
    assert date_spans("What painting on October 13, 2023?") == [(2023, 10, 13)]
    assert date_spans("How many times in 2023?") == [(2023, None, None)]
    assert date_spans("you may go") == [] and date_spans("no date here") == []
    assert date_spans("May I ask about May 3?") == [(None, 5, 3)]
    assert note_date("daily/2023-06-30/standup.md") == date(2023, 6, 30)
    assert note_date("resource/paper.md") is None
    assert within(date(2023, 7, 5), [(None, 6, None)])
    assert not within(date(2023, 7, 9), [(None, 6, None)])


def test_a_note_holding_all_the_rare_words_rises(vault: Vault, indexes: Indexes,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The question's rare words spread over a note's sections, one each: every other
    note matches one of them better, section for section, but only this note holds all
    three; the notes ranked by the share of the words they hold lift it into the top 5
    (without that list it was not in the top 6)."""
    write_note(vault.root, "daily/2023-03-04.md", "# Saturday\n\n## Morning\n\nWe took the "
               "early train to Porto and walked along the river, grey and quiet under the "
               "bridges.\n\n## Lunch\n\nLunch at my aunt's house by the sea; she talked for "
               "hours about the old days and her childhood friends.\n\n## Evening\n\nBack home "
               "in the evening with a jar she gave me, her sourdough, older than me.\n")
    for n, text in enumerate(["Sourdough again: sourdough loaf, sourdough pancakes.",
                              "Porto on TV, Porto won, Porto fans sang.",
                              "My aunt called, my aunt wants to visit in spring.",
                              "The car starter broke, a new starter costs a lot.",
                              "Sourdough class tonight, sourdough is hard.",
                              "Porto is far, Porto trains are slow.",
                              "My aunt sent a postcard, my aunt is funny."], start=1):
        write_note(vault.root, f"daily/2023-04-{n:02d}.md", text + "\n")
    indexes.chunks.sync()
    query = "Porto aunt sourdough"
    assert "daily/2023-03-04.md" in [h.path for h in indexes.chunks.search(query, 5)]
    monkeypatch.setattr(chunks, "COVERAGE_WEIGHT", 0.0)
    assert "daily/2023-03-04.md" not in [h.path for h in indexes.chunks.search(query, 6)]


def test_coverage_weighs_the_rare_words_a_few_sections_in_a_row_hold() -> None:
    from vaultlink.index.fusion import by_coverage, term_weights, window_weight

    weights = term_weights(["porto", "aunt", "the"], {"porto": 2, "aunt": 5, "the": 60}, 100)
    assert weights["porto"] > weights["aunt"] > 0 and weights["the"] == 1e-6
    # the words within three sections in a row count, each once; apart, they do not add up
    near = [{"porto"}, {"aunt"}, set(), set(), {"porto"}]
    apart = [{"porto"}, set(), set(), {"aunt"}]
    assert window_weight(near, weights) == weights["porto"] + weights["aunt"]
    assert window_weight(apart, weights) == weights["porto"]
    assert window_weight(apart, weights, reach=2) == window_weight(near, weights)
    share = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 0.0, "e": 1.0}
    assert by_coverage(["a", "b", "c", "d", "e"], share) == ["c", "b", "a", "e"]
    # CJK words are terms like any other (the index's cut makes them)
    cjk = term_weights(["東京", "大阪"], {"東京": 3, "大阪": 3}, 50)
    assert window_weight([{"東京"}, {"大阪"}], cjk) == 2 * cjk["東京"]


def test_coverage_weight_is_the_same_in_every_process() -> None:
    """A set's order follows string hashing, which changes per process: the weight must
    not (a last-bit difference flipped ties, and the daemon's answer differed from the
    CLI's for 5 of 197 LoCoMo questions)."""
    import os
    import subprocess
    import sys

    code = ("from vaultlink.index.fusion import window_weight;"
            "print(repr(window_weight([{'x', 'y', 'z'}], {'x': 0.1, 'y': 0.2, 'z': 0.3})))")
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}
                           ).stdout.strip() for seed in range(4)}
    assert seen == {repr(0.1 + 0.2 + 0.3)}
