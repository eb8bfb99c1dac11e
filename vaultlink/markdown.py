"""Markdown as Obsidian reads it: wikilinks, their resolution, sections and chunks.

Wikilinks are found with mistune's parser plus a wikilink rule, so whatever Markdown
says is code, an HTML comment or an escaped bracket is not a link, exactly as in
Obsidian. Links are reported with their line; resolution follows Obsidian (exact path,
path plus ``.md``, unique file name); rendering always writes the full vault path.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import mistune

_WIKILINK_RE = r"(?P<wl_embed>!?)\[\[(?P<wl_body>[^\[\]\n]+?)\]\]"
_RAW_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")


def _parse_wikilink(inline: Any, m: re.Match[str], state: Any) -> int:
    state.append_token({"type": "wikilink", "raw": m.group(0),
                        "attrs": {"embed": bool(m.group("wl_embed")),
                                  "body": m.group("wl_body")}})
    end: int = m.end()
    return end


def _wikilink_plugin(md: Any) -> None:
    md.inline.register("wikilink", _WIKILINK_RE, _parse_wikilink, before="link")


_PARSER = mistune.create_markdown(renderer=None, plugins=[_wikilink_plugin, "table",
                                                          "strikethrough"])


@dataclass(frozen=True)
class Wikilink:
    """One ``[[target#anchor|alias]]``; ``line`` is 1-based in the text given to the parser."""

    target: str
    anchor: str = ""
    alias: str = ""
    embed: bool = False
    line: int = 0
    raw: str = ""

    @property
    def edge(self) -> tuple[str, str]:
        """What makes two links the same graph edge: target and anchor, not alias."""
        return (self.target, self.anchor)


def parse_link_body(body: str) -> tuple[str, str, str]:
    """Split ``target#anchor|alias`` (``\\|`` inside tables counts as ``|``)."""
    body = body.replace("\\|", "|")
    target, _, alias = body.partition("|")
    target, _, anchor = target.partition("#")
    return unicodedata.normalize("NFC", target.strip()), anchor.strip(), alias.strip()


def _tokens_with_links(tokens: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for tok in tokens:
        if tok["type"] == "wikilink":
            yield tok
        children = tok.get("children")
        if isinstance(children, list):
            yield from _tokens_with_links(children)


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """``(frontmatter block, body, lines the block takes)``; none: ``("", text, 0)``."""
    m = re.match(r"\A(\ufeff?---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z))", text, re.DOTALL)
    if not m:
        return "", text, 0
    head = m.group(1)
    return head, text[m.end():], head.count("\n")


# A write is checked against its old and new text by several rules (guard, additive
# update, bare lines), each asking for the links of the same texts: parse each once.
_CACHED_TEXT_CHARS = 64_000


def find_wikilinks(text: str) -> list[Wikilink]:
    """Every wikilink in a note's text, in order, each with its 1-based line.

    Frontmatter, inline code, fenced and indented code, HTML comments and escaped
    brackets hold no links.
    """
    if len(text) <= _CACHED_TEXT_CHARS:
        return list(_cached_wikilinks(text))
    return _parse_wikilinks(text)


@functools.lru_cache(maxsize=64)
def _cached_wikilinks(text: str) -> tuple[Wikilink, ...]:
    return tuple(_parse_wikilinks(text))


def _parse_wikilinks(text: str) -> list[Wikilink]:
    _, body, offset = split_frontmatter(text)
    candidates = list(_RAW_WIKILINK.finditer(body))
    if not candidates:
        return []
    # The parser knows which candidates are real links but not where they are. Tag
    # each candidate with its index (private-use characters, inert to Markdown) so the
    # links the parser returns point back to their exact place in the body.
    tagged: list[str] = []
    pos = 0
    for i, m in enumerate(candidates):
        tagged += [body[pos:m.end() - 2], _TAG.format(i), "]]"]
        pos = m.end()
    tagged.append(body[pos:])
    parsed = _PARSER("".join(tagged))
    links: list[Wikilink] = []
    for tok in _tokens_with_links(parsed):  # type: ignore[arg-type]
        tag = _TAG_RE.search(tok["attrs"]["body"])
        if tag is None:  # pragma: no cover - every candidate carries its tag
            continue
        m = candidates[int(tag.group(1))]
        embed = bool(tok["attrs"]["embed"])  # the parser's view: `\![[x]]` is no embed
        raw = m.group(0) if embed or not m.group(1) else m.group(0)[1:]
        target, anchor, alias = parse_link_body(m.group(2))
        line = body.count("\n", 0, m.start()) + 1 + offset
        links.append(Wikilink(target, anchor, alias, embed, line, raw))
    return links


_TAG = "\ue000{}\ue001"
_TAG_RE = re.compile("\ue000(\\d+)\ue001$")


def _code_line_ranges(body: str) -> set[int]:
    """Lines inside fenced code blocks or HTML comments (1-based)."""
    lines = body.split("\n")
    out: set[int] = set()
    fence: str | None = None
    in_comment = False
    for i, line in enumerate(lines, start=1):
        stripped = line.strip()
        if fence is not None:
            out.add(i)
            if stripped.startswith(fence):
                fence = None
            continue
        if in_comment:
            out.add(i)
            if "-->" in line:
                in_comment = False
            continue
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if m:
            fence = m.group(1)
            out.add(i)
        elif "<!--" in line and "-->" not in line.split("<!--", 1)[1]:
            in_comment = True
            out.add(i)
    return out


# -- resolution --------------------------------------------------------------


@dataclass(frozen=True)
class Resolution:
    """Where a link points: ``path`` when resolved, else ``reason`` says why not."""

    path: str | None
    reason: str = ""


class LinkResolver:
    """Resolves link targets against the set of files in the vault, as Obsidian does.

    Order: the exact vault path; the path plus ``.md``; else a unique file whose path
    ends with the target (plus ``.md``), compared case-insensitively. An ambiguous or
    missing name is unresolved, with the reason.
    """

    def __init__(self, files: Iterable[str]) -> None:
        self._files = {unicodedata.normalize("NFC", f) for f in files}
        self._by_name: dict[str, list[str]] = {}
        for path in self._files:
            name = path.rsplit("/", 1)[-1].lower()
            self._by_name.setdefault(name, []).append(path)
            if name.endswith(".md"):
                self._by_name.setdefault(name[:-3], []).append(path)

    def resolve(self, target: str, source: str | None = None) -> Resolution:
        """Resolve ``target``; an empty target (``[[#Heading]]``) is the source note itself."""
        if not target:
            if source is not None:
                return Resolution(source)
            return Resolution(None, "the link names no note")
        t = unicodedata.normalize("NFC", target.strip().lstrip("/"))
        if t in self._files:
            return Resolution(t)
        if t + ".md" in self._files:
            return Resolution(t + ".md")
        last = t.rsplit("/", 1)[-1].lower()
        suffix = t.lower()
        matches = sorted({p for p in self._by_name.get(last, [])
                          if p.lower() == suffix or p.lower() == suffix + ".md"
                          or p.lower().endswith("/" + suffix)
                          or p.lower().endswith("/" + suffix + ".md")})
        if len(matches) == 1:
            return Resolution(matches[0])
        if not matches:
            return Resolution(None, f"no note named {target!r} in the vault")
        return Resolution(None, f"{target!r} is ambiguous: {', '.join(matches[:5])}")

    def __contains__(self, path: object) -> bool:
        return path in self._files


# A file extension: a dot and a short alphanumeric suffix starting with a letter
# (``.md``, ``.png``, ``.pdf``), not the dots of ``2026.06.20`` or ``v1.2-notes``.
_HAS_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")


def render_link(path: str, anchor: str = "", alias: str = "") -> str:
    """A wikilink as vaultlink writes it: the full vault path with its extension."""
    target = path if _HAS_EXTENSION.search(path) else path + ".md"
    return f"[[{target}{'#' + anchor if anchor else ''}{'|' + alias if alias else ''}]]"


# -- sections ----------------------------------------------------------------

SOURCES_HEADING = "## Sources"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


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
    fenced = _code_line_ranges(body)
    heads = []
    for i, line in enumerate(lines):
        if i + 1 in fenced:
            continue
        m = _HEADING.match(line)
        if m:
            heads.append((i, len(m.group(1)), m.group(2)))
    out = []
    for n, (i, level, title) in enumerate(heads):
        end = len(lines)
        for j, lvl, _ in heads[n + 1:]:
            if lvl <= level:
                end = j
                break
        out.append(Section(title, level, i, end))
    return out


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


_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


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
        if not _RAW_WIKILINK.search(line):
            continue
        rest = _RAW_WIKILINK.sub(" ", _LIST_MARK.sub("", line))
        words = re.findall(r"[^\W_]+", rest)
        if len(words) < 3:
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
    after_edges = [(_link_key(link.target), link.anchor) for link in find_wikilinks(after)]
    for link in find_wikilinks(before):
        if not any(_same_target(link.target, t) and link.anchor == a for t, a in after_edges):
            lost.append(f"the link {link.raw} was removed")
    _, before_body, _ = split_frontmatter(before)
    _, after_body, _ = split_frontmatter(after)
    after_sources = [_link_key(link.target) for link in sources_links(after_body)]
    for link in sources_links(before_body):
        if not any(_same_target(link.target, t) for t in after_sources):
            lost.append(f"the source entry for {link.target} left ## Sources")
    return sorted(set(lost))


def _link_key(target: str) -> str:
    return unicodedata.normalize("NFC", target).strip().lstrip("/").lower().removesuffix(".md")


def _same_target(old: str, new_key: str) -> bool:
    """True if a new link names the old target, as written or by a longer path to it."""
    key = _link_key(old)
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
    breadcrumb of headings above it (``Title > Section > Subsection``).
    """
    lines = body.split("\n")
    secs = sections(body)
    starts = sorted({0, *(s.start for s in secs)})
    chunks: list[Chunk] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        crumbs = [title]
        crumbs += [s.title for s in secs if s.start <= start < s.end]
        while start < end and not lines[start].strip():
            start += 1  # the chunk's line is its first non-blank line
        text = "\n".join(lines[start:end]).strip()
        if not text:
            continue
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
