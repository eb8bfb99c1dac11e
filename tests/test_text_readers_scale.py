"""What the readers of note text keep when they were rewritten to grow linearly.

A note is untrusted input up to 2 MB. Some shapes made a reader look through the rest
of the text from every position: 20,000 headings (``sections`` looked ahead from each
heading, ``chunk_note`` through every section for each chunk), a line of "a. a. a."
(``split_sentences`` grew each sentence piece by piece), 50,000 "Term: text"
paragraphs (``joined`` copied each run so far), "[a](" or "[[" repeated with no close
(link patterns scanned to the end of the line). The seconds are measured in
``bench/bench_hostile_text.py``; these tests pin down that each rewrite says what the
plain definition says.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultlink.markdown.obsidian import besides_links, content_text
from vaultlink.markdown.sections import chunk_note, sections
from vaultlink.prose.blocks import clean_inline, joined, parse_blocks
from vaultlink.prose.sentences import split_sentences

LINES = st.lists(st.one_of(st.integers(1, 6).map(lambda n: "#" * n + " h"),
                           st.sampled_from(["", "text", "more text"])), max_size=40)


@settings(max_examples=200, deadline=None)
@given(LINES)
def test_a_section_ends_at_the_next_heading_of_its_level_or_above(lines: list[str]) -> None:
    heads = [(i, len(ln.split(" ")[0])) for i, ln in enumerate(lines) if ln.startswith("#")]
    want = []
    for n, (i, level) in enumerate(heads):
        later = [j for j, lv in heads[n + 1:] if lv <= level]
        want.append((i, later[0] if later else len(lines)))
    assert [(s.start, s.end) for s in sections("\n".join(lines))] == want


@settings(max_examples=200, deadline=None)
@given(LINES)
def test_a_chunks_breadcrumb_is_every_section_around_it_outermost_first(
        lines: list[str]) -> None:
    body = "\n".join(lines)
    secs = sections(body)
    for chunk in chunk_note(body, "T"):
        at = chunk.line - 1
        # the chunk's line is its first non-blank line; its sections hold the heading
        start = max([s.start for s in secs if s.start <= at] or [0])
        around = [s.title for s in secs if s.start <= start < s.end]
        assert chunk.breadcrumb == " > ".join(["T", *around])


def test_sentences_go_on_after_an_abbreviation_and_before_lower_case_at_any_length() -> None:
    text = "We met Dr. Ana at noon. it went on. " * 3 + "Then e.g. tea came. Done."
    assert split_sentences(text) == ["We met Dr. Ana at noon. it went on."] * 3 + [
        "Then e.g. tea came.", "Done."]
    many = split_sentences("a. " * 5000)
    assert len(many) == 1 and many[0].split() == ["a."] * 5000


def test_a_run_of_lead_ins_is_one_block_with_every_line_and_item_of_the_run() -> None:
    text = "Terms:\n\nfirst goes on here.\n\nsecond too:\n\nthird ends it.\n\nA new paragraph.\n"
    blocks = joined(parse_blocks(text))
    assert [b.kind for b in blocks] == ["prose", "prose"]
    run, rest = blocks
    assert (run.start, run.end) == (1, 7) and rest.start == 9
    assert run.lines == ["Terms:", "first goes on here.", "second too:", "third ends it."]
    assert run.items == ["Terms:", "first goes on here.", "second too:", "third ends it."]


def test_a_link_stops_at_the_bracket_of_the_next_one() -> None:
    """An unclosed link never swallows the link after it."""
    assert clean_inline("[a](x [b](https://e.org) and [c](page.md)") == \
        "[a](x [b](https://e.org) and c"
    assert clean_inline("note[^1 [^2] end") == "note[^1 end"
    assert besides_links("[[a [[b]] c") == "[[a   c"
    assert content_text("see [[a [[b|B]] here") == "see [[a [[b|B]] here"


def test_a_lone_bracketed_phrase_is_literal_and_a_reference_link_its_label() -> None:
    """LoCoMo's chat logs end a turn with "[shares a photo: ...]"; every node quoting one
    said "shares a photo: ..." (a lone "[text]" is a link only where its note defines
    it, which a line does not know). "[text][ref]" and "[text][]" are links."""
    assert clean_inline("Look! [shares a photo: a sunset]") == \
        "Look! [shares a photo: a sunset]"
    assert clean_inline("See [the guide][g] and [Hatch][].") == "See the guide and Hatch."


def test_a_long_run_of_spaces_and_unclosed_attribute_lists_read_as_before() -> None:
    """A line with 40,000 spaces took clean_inline 9.9 s (a leading "\\s*" tried at each
    space), "{: " repeated 3.3 s (an attribute list scanned to the end from each brace);
    both are bounded now. What they say is the same: spaces become one, an attribute
    list goes, an unclosed one stays."""
    assert clean_inline("a" + " " * 50000 + "b") == "a b"
    assert clean_inline("Heading {#id} and text {: .cls} end {: #a .b key=v}.") == \
        "Heading and text end."
    assert clean_inline("{: " * 3) == "{: {: {:"
    assert clean_inline("rebuild" + " " * 30 + "([[x|rebuild]])") == "rebuild"


@pytest.mark.parametrize(("line", "title"), [
    ("# a ## ", "a"), ("# #", ""), ("# a#b", "a#b"), ("# a # #", "a #"), ("#   ", ""),
    ("#\tTab title  ##  ", "Tab title"), ("# C#", "C#"), ("## F# and C#", "F# and C#"),
    ("# a" + " " * 20000 + "b", "a" + " " * 20000 + "b"),
])
def test_a_headings_title_loses_only_its_closing_hashes(line: str, title: str) -> None:
    """A heading with a long run of spaces took cubic time ("(.*?)\\s*#*\\s*$": 2,000
    spaces 10 s, a 2 MB note hours); the title is now cut in code. Closing hashes go only
    after a space, as CommonMark has them: "# C#" was read as "C"."""
    assert [s.title for s in sections(line)] == [title]
    head = next(b for b in parse_blocks(line + "\n") if b.kind == "heading")
    assert head.info == " ".join(title.split())


def test_a_callout_title_with_a_long_run_of_spaces_is_read_whole() -> None:
    """The callout pattern ended in a lazy title and optional spaces: quadratic on a run."""
    assert content_text("> [!note] Read   this  \n> body line\n") == "Read   this:\nbody line\n"
    spaces = " " * 20000
    assert content_text(f"> [!note] Read{spaces}this{spaces}\n> body line\n") == \
        f"Read{spaces}this:\nbody line\n"
