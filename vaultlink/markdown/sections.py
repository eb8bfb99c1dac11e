"""The structure of a note's body: headings, the ``## Sources`` section, chunks.

A digest node keeps its evidence in ``## Sources``, one sentence per source link; the
helpers here find that section, add to it, and tell what an edit removed, so the
guard can hold updates to being additive. Chunks cut a note into heading-sized
sections for ``search``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import CHARS_PER_WORD, UNSPACED_RUN, unspaced_chars
from vaultlink.markdown.links import (
    RAW_WIKILINK,
    Wikilink,
    code_line_numbers,
    find_wikilinks,
    link_key,
)
from vaultlink.markdown.text import LIST_MARK, heading_title

SOURCES_HEADING = "## Sources"
# The title is cut in code (``heading_title``): "(.*?)\s*#*\s*$" over a long run of
# spaces in a heading took cubic time (2,000 spaces: 10 s).
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass(frozen=True)
class Section:
    """A heading's section: lines ``[start, end)`` of the body, 0-based; heading at ``start``."""

    title: str
    level: int
    start: int
    end: int


def sections(body: str) -> list[Section]:
    """The heading tree flattened: every ATX heading outside fenced code, with its extent."""
    lines = body.split("\n")
    fenced = code_line_numbers(body)
    heads = []
    for i, line in enumerate(lines):
        if i + 1 in fenced:
            continue
        m = _HEADING.match(line)
        if m:
            heads.append((i, len(m.group(1)), heading_title(m.group(2))))
    # a section ends at the next heading of its level or above: the headings still open
    # are a stack of rising levels (looking ahead from each heading was quadratic)
    ends = [len(lines)] * len(heads)
    still_open: list[int] = []
    for n, (i, level, _) in enumerate(heads):
        while still_open and heads[still_open[-1]][1] >= level:
            ends[still_open.pop()] = i
        still_open.append(n)
    return [Section(title, level, i, end)
            for (i, level, title), end in zip(heads, ends, strict=True)]


def find_sources_section(body: str) -> Section | None:
    """The ``## Sources`` section of a body, if it has one."""
    for sec in sections(body):
        if sec.level == 2 and sec.title.strip().lower() == "sources":
            return sec
    return None


def without_sources(body: str) -> str:
    """The body with its ``## Sources`` section cut out (what the node says, not where from)."""
    sec = find_sources_section(body)
    if sec is None:
        return body
    lines = body.split("\n")
    return "\n".join(lines[:sec.start] + lines[sec.end:])


def sources_links(body: str) -> list[Wikilink]:
    """The wikilinks inside the ``## Sources`` section (the node's source edges)."""
    sec = find_sources_section(body)
    if sec is None:
        return []
    lines = body.split("\n")
    text = "\n".join(lines[sec.start:sec.end])
    return find_wikilinks(text)


def cited_sources(text: str) -> set[str]:
    """The targets a note cites as its sources: the links under its ``## Sources``."""
    _, body, _ = split_frontmatter(text)
    return {link.target for link in sources_links(body)}


def cites_any(text: str, sources: list[str]) -> bool:
    """Whether the ``## Sources`` of ``text`` cite one of ``sources`` (``.md`` or not)."""
    cited = {t.removesuffix(".md") for t in cited_sources(text)}
    return any(s.removesuffix(".md") in cited for s in sources)


def cites_all(text: str, sources: list[str]) -> bool:
    """Whether the ``## Sources`` of ``text`` cite every one of ``sources``."""
    return set(sources) <= cited_sources(text)


def append_source_sentence(body: str, sentence: str) -> str:
    """Add ``sentence`` as a list item at the end of ``## Sources`` (made if missing)."""
    sentence = sentence.strip()
    item = sentence if sentence.startswith("- ") else f"- {sentence}"
    body = body.rstrip("\n")
    lines = body.split("\n")
    sec = find_sources_section(body)  # on the same lines that are edited below
    if sec is None:
        return "\n".join([*lines, "", SOURCES_HEADING, "", item]) + "\n"
    end = sec.end
    while end > sec.start + 1 and not lines[end - 1].strip():
        end -= 1
    insert = [item] if end > sec.start + 1 else ["", item]
    new = lines[:end] + insert + lines[end:]
    return "\n".join(new).rstrip("\n") + "\n"


def bare_link_lines(body: str) -> list[tuple[int, str]]:
    """Lines of ``## Sources`` that are only links, with no sentence around them.

    A source line must say what its source supports: after removing the list marker
    and the links, fewer than three words is a bare link line. Returns 1-based line
    numbers of the body with the line's text.
    """
    sec = find_sources_section(body)
    if sec is None:
        return []
    lines = body.split("\n")
    out = []
    for i in range(sec.start + 1, sec.end):
        line = lines[i]
        if not RAW_WIKILINK.search(line):
            continue
        rest = RAW_WIKILINK.sub(" ", LIST_MARK.sub("", line))
        # Chinese and Japanese have no spaces: one word per two of their characters
        words = len(re.findall(r"[^\W_]+", UNSPACED_RUN.sub(" ", rest))) \
            + unspaced_chars(rest) // CHARS_PER_WORD
        if words < 3:
            out.append((i + 1, line))
    return out


def removed_links(before: str, after: str) -> list[str]:
    """Wikilinks and source entries present in ``before`` but missing in ``after``.

    An update must be additive: every edge (target and anchor) of the old text is still
    in the new one, and every source link stays under ``## Sources``. Rewriting a link
    to the full path of the same note (``[[x]]`` to ``[[digest/wiki/x.md]]``, as
    vaultlink writes links) keeps it. Returns a plain description of each loss; empty
    means the edit is additive.
    """
    lost = []
    after_edges = [(link_key(link.target), link.anchor) for link in find_wikilinks(after)]
    for link in find_wikilinks(before):
        if not any(_same_target(link.target, t) and link.anchor == a for t, a in after_edges):
            lost.append(f"the link {link.raw} was removed")
    _, before_body, _ = split_frontmatter(before)
    _, after_body, _ = split_frontmatter(after)
    after_sources = [link_key(link.target) for link in sources_links(after_body)]
    for link in sources_links(before_body):
        if not any(_same_target(link.target, t) for t in after_sources):
            lost.append(f"the source entry for {link.target} left ## Sources")
    return sorted(set(lost))


def _same_target(old: str, new_key: str) -> bool:
    """True if a new link names the old target, as written or by a longer path to it."""
    key = link_key(old)
    return new_key == key or new_key.endswith("/" + key)


# -- chunks ------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A piece of a note for search: its heading breadcrumb, text and first line (1-based)."""

    breadcrumb: str
    text: str
    line: int


def chunk_note(body: str, title: str, max_chars: int = 1200) -> list[Chunk]:
    """Split a body along its heading tree: a section per chunk where it fits.

    Long sections are split at paragraph boundaries; every chunk carries the
    breadcrumb of headings above it (``Title > Section > Subsection``). A section with
    nothing under its heading gives no chunk.
    """
    lines = body.split("\n")
    secs = sections(body)
    starts = sorted({0, *(s.start for s in secs)})
    chunks: list[Chunk] = []
    # the sections around each start, kept as the starts go down the note: looking
    # through every section for each start cost a note of 20,000 headings 9 s
    order = sorted(range(len(secs)), key=lambda i: secs[i].start)
    around: list[int] = []
    taken = 0
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while taken < len(order) and secs[order[taken]].start <= start:
            around.append(order[taken])
            taken += 1
        around = [i for i in around if secs[i].end > start]
        crumbs = [title] + [secs[i].title for i in sorted(around)]
        while start < end and not lines[start].strip():
            start += 1  # the chunk's line is its first non-blank line
        text = "\n".join(lines[start:end]).strip()
        if all(_HEADING.match(ln) or not ln.strip() for ln in text.split("\n")):
            continue  # an empty heading (a template's frame) says nothing to find
        crumb = " > ".join(crumbs)
        for piece, offset in _split_long(text, max_chars):
            chunks.append(Chunk(crumb, piece, start + 1 + offset))
    return chunks


def _split_long(text: str, max_chars: int) -> list[tuple[str, int]]:
    if len(text) <= max_chars:
        return [(text, 0)]
    out: list[tuple[str, int]] = []
    buf: list[str] = []
    buf_line = 0
    line = 0
    for para in text.split("\n\n"):
        while len(para) > max_chars:  # one giant paragraph: hard split
            if buf:
                out.append(("\n\n".join(buf), buf_line))
                buf = []
            out.append((para[:max_chars], line))
            line += para[:max_chars].count("\n")
            para = para[max_chars:]
        if not para.strip():
            line += para.count("\n") + 2
            continue
        if buf and sum(len(p) + 2 for p in buf) + len(para) > max_chars:
            out.append(("\n\n".join(buf), buf_line))
            buf = []
        if not buf:
            buf_line = line
        buf.append(para)
        line += para.count("\n") + 2
    if buf:
        out.append(("\n\n".join(buf), buf_line))
    return out
