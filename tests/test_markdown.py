"""Pins the Markdown layer: Obsidian's wikilink rules, resolution, rendering, sections, chunks."""

from __future__ import annotations

import unicodedata

import pytest

from vaultlink.markdown.links import LinkResolver, find_wikilinks, parse_link_body, render_link
from vaultlink.markdown.sections import (
    append_source_sentence,
    bare_link_lines,
    chunk_note,
    find_sources_section,
    removed_links,
    sections,
    sources_links,
    without_sources,
)


def targets(text: str) -> list[str]:
    return [link.target for link in find_wikilinks(text)]


def lines_of(text: str) -> list[tuple[str, int]]:
    return [(link.target, link.line) for link in find_wikilinks(text)]


# -- what is not a link -------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("see `[[code]]` and [[real]]", id="inline-code-single-backtick"),
        pytest.param("see ``[[code]] ` x`` and [[real]]", id="inline-code-double-backtick"),
        pytest.param("```\n[[code]]\n```\n\n[[real]]", id="backtick-fence"),
        pytest.param("~~~python\nx = '[[code]]'\n~~~\n\n[[real]]", id="tilde-fence"),
        pytest.param("para\n\n    [[code]]\n\nthen [[real]]", id="indented-code"),
        pytest.param("<!-- [[code]] -->\n\n[[real]]", id="html-comment-block"),
        pytest.param("a <!-- [[code]] --> b [[real]]", id="html-comment-inline"),
        pytest.param("<!--\n[[code]]\n-->\n\n[[real]]", id="html-comment-multiline"),
        pytest.param("---\nrelated: '[[code]]'\n---\n[[real]]", id="frontmatter"),
        pytest.param("\ufeff---\nrelated: '[[code]]'\n---\n[[real]]", id="frontmatter-after-bom"),
        pytest.param("---\r\nrelated: '[[code]]'\r\n---\r\n[[real]]", id="frontmatter-crlf"),
        pytest.param("\\[\\[code]] and [[real]]", id="escaped-brackets"),
    ],
)
def test_links_in_code_comments_frontmatter_and_escapes_are_not_links(text: str) -> None:
    assert targets(text) == ["real"]


def test_sample_style_note_with_every_kind_of_code_finds_only_the_real_links() -> None:
    text = (
        "Inline `[[inline-code-not-a-link]]` and \\[\\[not a link]].\n"
        "\n"
        "```python\n"
        'text = "see [[fenced-code-not-a-link]]"\n'
        "```\n"
        "\n"
        "    legacy = \"[[indented-code-not-a-link]]\"\n"
        "\n"
        "Real: [[daily/2026-06-10/design-review]] and [[rrf#Key formula|RRF formula]].\n"
    )
    assert targets(text) == ["daily/2026-06-10/design-review", "rrf"]


# -- link forms ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "target", "anchor", "alias", "embed"),
    [
        ("[[t]]", "t", "", "", False),
        ("[[t#heading]]", "t", "heading", "", False),
        ("[[t#^block]]", "t", "^block", "", False),
        ("[[t|alias]]", "t", "", "alias", False),
        ("[[t#h|alias]]", "t", "h", "alias", False),
        ("![[t]]", "t", "", "", True),
        ("![[pic.png|300]]", "pic.png", "", "300", True),
        ("[[#Heading]]", "", "Heading", "", False),
        ("[[Café notes]]", "Café notes", "", "", False),
        ("[[daily/2026-06-20/session notes.md|the session]]",
         "daily/2026-06-20/session notes.md", "", "the session", False),
    ],
)
def test_link_forms_split_into_target_anchor_alias_and_embed(
    raw: str, target: str, anchor: str, alias: str, embed: bool
) -> None:
    [link] = find_wikilinks(f"text {raw} text")
    assert (link.target, link.anchor, link.alias, link.embed, link.raw) == (
        target, anchor, alias, embed, raw)


def test_escaped_pipe_inside_a_table_separates_alias() -> None:
    text = "| note | why |\n|---|---|\n| [[t\\|alias]] | [[u]] |\n"
    links = find_wikilinks(text)
    assert [(x.target, x.alias, x.line) for x in links] == [("t", "alias", 3), ("u", "", 3)]


def test_parse_link_body_treats_escaped_pipe_as_alias_separator() -> None:
    assert parse_link_body("t#h\\|shown") == ("t", "h", "shown")


def test_nfd_target_is_reported_in_nfc() -> None:
    nfd = unicodedata.normalize("NFD", "Café notes")
    [link] = find_wikilinks(f"[[{nfd}]]")
    assert link.target == unicodedata.normalize("NFC", "Café notes")


def test_alias_is_not_part_of_the_edge() -> None:
    a, b = find_wikilinks("[[t#h|one]] [[t#h|two]]")
    assert a.edge == b.edge == ("t", "h")


# -- line numbers -------------------------------------------------------------


def test_line_numbers_are_file_lines_counting_frontmatter() -> None:
    text = "---\nname: x\ndescription: y\n---\nfirst [[a]]\n\nthird\n[[b]] and [[c]]\n"
    assert lines_of(text) == [("a", 5), ("b", 8), ("c", 8)]


def test_line_numbers_with_crlf_line_endings() -> None:
    text = "---\r\nname: x\r\n---\r\nline4 [[a]]\r\n\r\n`[[a]]`\r\n[[b]]\r\n"
    assert lines_of(text) == [("a", 4), ("b", 7)]


def test_links_in_quotes_callouts_lists_tasks_and_footnotes_are_links() -> None:
    text = ("> [!note] Title [[c1]]\n> body [[c2]]\n\n- item [[l1]]\n  - nested [[l2]]\n"
            "\n- [ ] task [[t]]\n\ntext[^1]\n\n[^1]: note [[fn]]\n")
    assert targets(text) == ["c1", "c2", "l1", "l2", "t", "fn"]


def test_inline_code_spanning_lines_holds_no_links() -> None:
    assert lines_of("a `code\n[[x]]\nstill` [[y]]") == [("y", 3)]


def test_line_number_skips_the_same_link_inside_inline_code_earlier() -> None:
    text = "`[[same]]` is code\n\nbut [[same]] is a link\n"
    assert lines_of(text) == [("same", 3)]


def test_line_number_skips_the_same_link_inside_indented_code_earlier() -> None:
    text = "intro\n\n    [[same]]\n\nthen [[same]]\n"
    assert lines_of(text) == [("same", 5)]


def test_line_number_skips_the_same_link_inside_an_html_block_earlier() -> None:
    text = "<div>\n[[same]]\n</div>\n\n[[same]]\n"
    assert lines_of(text) == [("same", 5)]


def test_line_number_skips_an_escaped_copy_earlier() -> None:
    text = "\\[[same]] escaped\n\n[[same]]\n"
    assert lines_of(text) == [("same", 3)]


def test_repeated_links_each_get_their_own_line() -> None:
    text = "[[x]]\n```\n[[x]]\n```\n[[x]]\n\n[[x]]\n"
    assert lines_of(text) == [("x", 1), ("x", 5), ("x", 7)]


def test_a_link_spanning_a_line_break_is_not_a_link() -> None:
    assert targets("[[two\nlines]] [[ok]]") == ["ok"]


# -- resolution ---------------------------------------------------------------

FILES = [
    "daily/2026-06-20.md",
    "daily/2026-06-21/standup.md",
    "daily/2026-06-22/standup.md",
    "daily/Café notes.md",
    "digest/wiki/hybrid-search.md",
    "resource/2026-06-20/paper.md",
    "resource/figure.png",
    "Index.md",
    "a/notes.md",
    "b/notes.md",
]


@pytest.fixture
def resolver() -> LinkResolver:
    return LinkResolver(FILES)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        pytest.param("daily/2026-06-20.md", "daily/2026-06-20.md", id="exact-path"),
        pytest.param("daily/2026-06-20", "daily/2026-06-20.md", id="path-plus-md"),
        pytest.param("2026-06-20", "daily/2026-06-20.md", id="unique-name"),
        pytest.param("HYBRID-Search", "digest/wiki/hybrid-search.md", id="name-case-insensitive"),
        pytest.param("Digest/Wiki/Hybrid-Search", "digest/wiki/hybrid-search.md",
                     id="path-case-insensitive"),
        pytest.param("2026-06-21/standup", "daily/2026-06-21/standup.md", id="partial-path"),
        pytest.param("wiki/hybrid-search.md", "digest/wiki/hybrid-search.md",
                     id="partial-path-with-ext"),
        pytest.param("figure.png", "resource/figure.png", id="attachment"),
        pytest.param("Café notes", "daily/Café notes.md", id="unicode-and-spaces"),
        pytest.param(unicodedata.normalize("NFD", "Café notes"), "daily/Café notes.md",
                     id="nfd-target-nfc-file"),
    ],
)
def test_resolution_follows_obsidian(resolver: LinkResolver, target: str, expected: str) -> None:
    assert resolver.resolve(target, "x.md").path == expected


def test_nfd_file_names_resolve_from_nfc_targets() -> None:
    nfd_file = unicodedata.normalize("NFD", "daily/Café notes.md")
    assert LinkResolver([nfd_file]).resolve("Café notes").path == unicodedata.normalize(
        "NFC", nfd_file)


def test_ambiguous_name_is_unresolved_naming_both_candidates(resolver: LinkResolver) -> None:
    res = resolver.resolve("standup", "x.md")
    assert res.path is None
    assert "ambiguous" in res.reason
    assert "daily/2026-06-21/standup.md" in res.reason
    assert "daily/2026-06-22/standup.md" in res.reason


def test_ambiguous_bare_name_across_folders(resolver: LinkResolver) -> None:
    res = resolver.resolve("notes")
    assert res.path is None
    assert "a/notes.md" in res.reason and "b/notes.md" in res.reason


def test_partial_path_must_match_whole_segments(resolver: LinkResolver) -> None:
    assert resolver.resolve("ki/hybrid-search").path is None


def test_missing_target_is_unresolved_with_a_reason(resolver: LinkResolver) -> None:
    res = resolver.resolve("2026-06-31", "daily/2026-06-20.md")
    assert res.path is None
    assert "2026-06-31" in res.reason


def test_heading_only_link_resolves_to_the_note_itself(resolver: LinkResolver) -> None:
    [link] = find_wikilinks("see [[#Heading]]")
    assert resolver.resolve(link.target, "daily/2026-06-20.md").path == "daily/2026-06-20.md"


def test_heading_only_link_without_source_is_unresolved(resolver: LinkResolver) -> None:
    assert resolver.resolve("").path is None


def test_attachment_name_needs_its_extension(resolver: LinkResolver) -> None:
    assert resolver.resolve("figure").path is None


# -- rendering ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("digest/wiki/x.md",), "[[digest/wiki/x.md]]"),
        (("digest/wiki/x",), "[[digest/wiki/x.md]]"),
        (("daily/2026-06-20.md", "Decisions"), "[[daily/2026-06-20.md#Decisions]]"),
        (("daily/2026-06-20.md", "", "June 20"), "[[daily/2026-06-20.md|June 20]]"),
        (("daily/2026-06-20.md", "Decisions", "the decision"),
         "[[daily/2026-06-20.md#Decisions|the decision]]"),
        (("resource/figure.png",), "[[resource/figure.png]]"),
        (("daily/2026.06.20",), "[[daily/2026.06.20.md]]"),
        (("digest/wiki/v1.2-notes",), "[[digest/wiki/v1.2-notes.md]]"),
    ],
)
def test_render_link_writes_the_full_path_with_extension(
    args: tuple[str, ...], expected: str
) -> None:
    assert render_link(*args) == expected


def test_rendered_link_parses_back_and_resolves(resolver: LinkResolver) -> None:
    [link] = find_wikilinks(render_link("daily/Café notes.md", "Plan", "plan"))
    assert (link.target, link.anchor, link.alias) == ("daily/Café notes.md", "Plan", "plan")
    assert resolver.resolve(link.target).path == "daily/Café notes.md"


# -- sections and ## Sources ---------------------------------------------------

NODE = (
    "Hybrid search ranks notes, see [[digest/procedure/rebuild-index.md]].\n"
    "\n"
    "## Sources\n"
    "\n"
    "- The ranking rule was decided in [[daily/2026-06-20/session.md|the June 20 session]].\n"
    "- Benchmarks supporting it come from [[resource/2026-06-20/paper.md]].\n"
    "\n"
    "## Notes\n"
    "\n"
    "Later text.\n"
)


def test_sections_skip_headings_inside_fenced_code() -> None:
    body = "# A\n```\n# not a heading\n```\n## B\ntext\n"
    assert [(s.title, s.level, s.start) for s in sections(body)] == [("A", 1, 0), ("B", 2, 4)]


def test_find_sources_section_spans_up_to_the_next_heading() -> None:
    sec = find_sources_section(NODE)
    assert sec is not None
    lines = NODE.split("\n")
    assert lines[sec.start] == "## Sources"
    assert lines[sec.end] == "## Notes"


def test_find_sources_section_is_none_without_one() -> None:
    assert find_sources_section("text\n\n## Other\n") is None
    assert find_sources_section("# Sources\n") is None  # level 1 is the title, not the section


def test_without_sources_cuts_only_the_sources_section() -> None:
    cut = without_sources(NODE)
    assert "## Sources" not in cut and "## Notes" in cut
    assert not any(x.target.startswith(("daily/", "resource/")) for x in find_wikilinks(cut))
    assert without_sources("text\n\n## Other\n") == "text\n\n## Other\n"


def test_sources_links_are_only_those_under_sources() -> None:
    assert [x.target for x in sources_links(NODE)] == [
        "daily/2026-06-20/session.md", "resource/2026-06-20/paper.md"]


def test_append_source_sentence_adds_at_the_end_of_the_section() -> None:
    out = append_source_sentence(NODE, "A rerun confirmed it in [[daily/2026-06-21.md]].")
    lines = out.split("\n")
    i = lines.index("- A rerun confirmed it in [[daily/2026-06-21.md]].")
    assert lines[i - 1].startswith("- Benchmarks")
    assert lines[i + 1] == "" and lines[i + 2] == "## Notes"
    assert out.replace("- A rerun confirmed it in [[daily/2026-06-21.md]].\n", "") == NODE
    assert removed_links(NODE, out) == []


def test_append_source_sentence_makes_the_section_when_missing() -> None:
    out = append_source_sentence("Body text.\n", "The claim comes from [[daily/x.md]].")
    assert out == "Body text.\n\n## Sources\n\n- The claim comes from [[daily/x.md]].\n"
    assert [x.target for x in sources_links(out)] == ["daily/x.md"]


@pytest.mark.parametrize("body", ["Body.\n\n## Sources\n", "Body.\n\n## Sources",
                                  "Body.\n\n## Sources\n\n\n"])
def test_append_source_sentence_fills_an_empty_section(body: str) -> None:
    out = append_source_sentence(body, "The claim comes from [[daily/x.md]].")
    assert out == "Body.\n\n## Sources\n\n- The claim comes from [[daily/x.md]].\n"


def test_append_source_sentence_keeps_an_existing_list_marker() -> None:
    out = append_source_sentence("B.\n", "- Stated in [[daily/x.md]] by Mara.")
    assert out.endswith("\n- Stated in [[daily/x.md]] by Mara.\n")
    assert "- - " not in out


def test_bare_link_lines_flags_links_without_a_sentence() -> None:
    body = (
        "Intro [[a]] alone is fine outside Sources.\n"
        "\n"
        "## Sources\n"
        "\n"
        "- [[daily/x.md]]\n"
        "- [[daily/y.md|a long alias of many words]]\n"
        "- The ranking rule was decided in [[daily/z.md]].\n"
        "[[daily/w.md]]\n"
        "- see [[daily/v.md]]\n"
        "- Plain sentence without links.\n"
    )
    assert [n for n, _ in bare_link_lines(body)] == [5, 6, 8, 9]


def test_bare_link_lines_empty_without_sources_section() -> None:
    assert bare_link_lines("[[a]]\n\n[[b]]\n") == []


def test_removed_links_catches_a_dropped_link() -> None:
    after = NODE.replace(", see [[digest/procedure/rebuild-index.md]]", "")
    lost = removed_links(NODE, after)
    assert lost == ["the link [[digest/procedure/rebuild-index.md]] was removed"]


def test_removed_links_catches_a_source_entry_moved_out_of_sources() -> None:
    line = "- Benchmarks supporting it come from [[resource/2026-06-20/paper.md]].\n"
    after = NODE.replace(line, "") + "See [[resource/2026-06-20/paper.md]].\n"
    lost = removed_links(NODE, after)
    assert lost == ["the source entry for resource/2026-06-20/paper.md left ## Sources"]


def test_removed_links_catches_a_dropped_source_entry() -> None:
    line = "- Benchmarks supporting it come from [[resource/2026-06-20/paper.md]].\n"
    lost = removed_links(NODE, NODE.replace(line, ""))
    assert lost == [
        "the link [[resource/2026-06-20/paper.md]] was removed",
        "the source entry for resource/2026-06-20/paper.md left ## Sources",
    ]


def test_removed_links_accepts_a_link_rewritten_to_its_full_path() -> None:
    before = "See [[hybrid-search#Ranking|ranking]].\n\n## Sources\n\n- From [[2026-06-20]] x.\n"
    after = ("See [[digest/wiki/hybrid-search.md#Ranking|ranking]].\n\n## Sources\n\n"
             "- From [[daily/2026-06-20.md]] x.\n")
    assert removed_links(before, after) == []


def test_removed_links_catches_a_link_pointed_elsewhere() -> None:
    before = "See [[hybrid-search]].\n"
    assert removed_links(before, "See [[digest/wiki/hybrid-search-old.md]].\n") != []
    assert removed_links(before, "See [[digest/wiki/not-hybrid-search.md]].\n") != []
    # shortening a full path loses which note was meant
    assert removed_links("See [[digest/wiki/x.md]].\n", "See [[x]].\n") != []


def test_removed_links_catches_a_dropped_anchor() -> None:
    before = "See [[daily/x.md#Decisions]].\n"
    assert removed_links(before, "See [[daily/x.md]].\n") != []


def test_removed_links_ignores_an_alias_change() -> None:
    after = NODE.replace("|the June 20 session]]", "|the session on June 20]]")
    assert removed_links(NODE, after) == []


def test_removed_links_ignores_additions_and_rewording() -> None:
    after = NODE.replace("Hybrid search ranks notes", "Hybrid search (BM25 + vectors) ranks notes")
    after = append_source_sentence(after, "More in [[daily/2026-06-21.md]] from the retro.")
    assert removed_links(NODE, after) == []


def test_removed_links_ignores_links_in_frontmatter() -> None:
    before = "---\nrelated: '[[x]]'\n---\nBody.\n"
    assert removed_links(before, "---\n---\nBody.\n") == []


# -- chunks -------------------------------------------------------------------

DOC = (
    "Preamble line.\n"      # 1
    "\n"                    # 2
    "# Title\n"             # 3
    "\n"                    # 4
    "Intro.\n"              # 5
    "\n"                    # 6
    "## Setup\n"            # 7
    "\n"                    # 8
    "Install it.\n"         # 9
    "\n"                    # 10
    "### Linux\n"           # 11
    "\n"                    # 12
    "apt install.\n"        # 13
    "\n"                    # 14
    "## Use\n"              # 15
    "\n"                    # 16
    "Run it.\n"             # 17
)


def test_chunk_note_gives_each_section_its_breadcrumb_and_first_line() -> None:
    chunks = chunk_note(DOC, "My note")
    assert [(c.breadcrumb, c.line) for c in chunks] == [
        ("My note", 1),
        ("My note > Title", 3),
        ("My note > Title > Setup", 7),
        ("My note > Title > Setup > Linux", 11),
        ("My note > Title > Use", 15),
    ]
    assert chunks[3].text == "### Linux\n\napt install."


def test_chunk_note_line_skips_leading_blank_lines() -> None:
    [chunk] = chunk_note("\n\nplain text\n", "T")
    assert chunk.line == 3


def test_chunk_note_splits_a_long_section_at_paragraphs() -> None:
    paras = [f"para {i} " + "w" * 80 for i in range(6)]
    body = "## Long\n\n" + "\n\n".join(paras) + "\n"
    chunks = chunk_note(body, "T", max_chars=200)
    assert len(chunks) > 1
    assert all(len(c.text) <= 200 for c in chunks)
    assert all(c.breadcrumb == "T > Long" for c in chunks)
    # nothing lost, nothing duplicated, in order
    joined = "\n\n".join(c.text for c in chunks)
    assert joined == body.strip()
    lines = body.split("\n")
    for c in chunks:
        assert lines[c.line - 1] == c.text.split("\n", 1)[0]


def test_chunk_note_hard_splits_one_giant_paragraph() -> None:
    body = "## H\n\n" + "x" * 500 + "\n"
    chunks = chunk_note(body, "T", max_chars=120)
    assert all(len(c.text) <= 120 for c in chunks)
    assert "".join(c.text for c in chunks[1:]) == "x" * 500


def test_chunk_note_hard_split_of_an_exact_multiple_leaves_no_empty_chunk() -> None:
    body = "## H\n\n" + "y" * 240
    chunks = chunk_note(body, "T", max_chars=120)
    assert [len(c.text) for c in chunks] == [len("## H"), 120, 120]
    assert all(c.text.strip() for c in chunks)


def test_chunk_note_hard_split_pieces_report_their_own_lines() -> None:
    giant = "\n".join(f"line {i:03d}" for i in range(40))  # one paragraph, 40 lines
    body = "## H\n\n" + giant + "\n"
    lines = body.split("\n")
    chunks = chunk_note(body, "T", max_chars=100)
    for c in chunks[1:]:
        first = c.text.split("\n", 1)[0]
        assert first in lines[c.line - 1]


def test_link_targets_are_the_targets_the_parser_finds() -> None:
    """The quick scan the name index reads every note with agrees with the parser on
    links in prose, aliases, anchors, embeds, code spans, fences and comments."""
    from vaultlink.markdown.links import find_wikilinks, link_targets

    text = ("---\nlinks: [[not a link]]\n---\n# T\n\nSee [[clflush]], [[Timing|a timer]], "
            "[[Note#Part]] and ![[diagram.png]].\nCode `[[in code]]` and ``[[x]]``.\n\n"
            "```\n[[fenced]]\n```\n\n<!--\n[[commented]]\n-->\nA <!-- [[c]] --> b.\n"
            "- [[日本語のノート]]\n")
    parsed = [w.target for w in find_wikilinks(text) if w.target]
    assert link_targets(text) == parsed == ["clflush", "Timing", "Note", "diagram.png",
                                            "日本語のノート"]
