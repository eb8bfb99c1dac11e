"""Markdown as Obsidian reads it: wikilinks, their resolution and rendering.

Wikilinks are found with mistune's parser plus a wikilink rule, so whatever Markdown
says is code, an HTML comment or an escaped bracket is not a link, exactly as in
Obsidian. Links are reported with their line; resolution follows Obsidian (exact path,
path plus ``.md``, unique file name); rendering always writes the full vault path.
Headings, the ``## Sources`` section and chunks are in ``sections``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import mistune

from vaultlink.markdown.frontmatter import split_frontmatter

_WIKILINK_RE = r"(?P<wl_embed>!?)\[\[(?P<wl_body>[^\[\]\n]+?)\]\]"
# Every [[...]] as typed, in code or not: the candidates the parser confirms, and a
# quick test for "is there a link on this line".
RAW_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")


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


def link_key(target: str) -> str:
    """A link target as links to one note have it in common: NFC, no leading ``/``,
    lower case, no ``.md`` (``[[Digest/Wiki/X.md]]`` and ``[[digest/wiki/x]]`` match)."""
    return unicodedata.normalize("NFC", target).strip().lstrip("/").lower().removesuffix(".md")


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
    candidates = list(RAW_WIKILINK.finditer(body))
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


_CODE_SPAN = re.compile(r"(`+)[^`]*?\1|<!--.*?-->")


def link_targets(text: str) -> list[str]:
    """The targets a note's links name, found without a full Markdown parse (fenced code,
    code spans and HTML comments left out), for reading every note of a vault
    (docs/performance.md). It may take an escaped ``\\[[x]]`` for a link."""
    _, body, _ = split_frontmatter(text)
    if "[[" not in body:
        return []
    code = code_line_numbers(body)
    out: list[str] = []
    for number, line in enumerate(body.split("\n"), start=1):
        if number in code or "[[" not in line:
            continue
        for m in RAW_WIKILINK.finditer(_CODE_SPAN.sub("", line)):
            target = parse_link_body(m.group(2))[0]
            if target:
                out.append(target)
    return out


def code_line_numbers(body: str) -> set[int]:
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


_LINK_BREAKERS = ("[", "]", "|", "#", "\n")


def unlinkable_reason(path: str) -> str | None:
    """Why no wikilink can name ``path`` (None if one can): ``#`` starts a heading,
    ``|`` an alias and brackets end the link, so Obsidian itself refuses these in names."""
    bad = [c for c in _LINK_BREAKERS if c in path]
    if not bad:
        return None
    shown = " ".join(repr(c) for c in bad)
    return (f"its path holds {shown}, which no wikilink can carry, so a digest note "
            "could not cite it; rename the file without those characters")


def render_link(path: str, anchor: str = "", alias: str = "") -> str:
    """A wikilink as vaultlink writes it: the full vault path with its extension."""
    target = path if _HAS_EXTENSION.search(path) else path + ".md"
    return f"[[{target}{'#' + anchor if anchor else ''}{'|' + alias if alias else ''}]]"


# -- sections ----------------------------------------------------------------


def relinked(text: str, source: str, old: str, new: str, files: set[str]) -> str:
    """``text`` (of the note ``source``) with each link that named ``old`` naming ``new``:
    a renamed note's links followed; ``files`` is the vault as it was, less ``old``. A
    topics page lists its evidence in front matter too."""
    before = LinkResolver(files | {old})
    out = text
    for link in find_wikilinks(text):
        if before.resolve(link.target, source).path != old:
            continue
        fresh = render_link(new, link.anchor, link.alias)
        out = out.replace(link.raw, ("!" if link.raw.startswith("!") else "") + fresh)
    if source.split("/", 2)[1:2] == ["topics"]:
        out = out.replace(f"- {old}\n", f"- {new}\n")  # its frontmatter lists evidence
    return out
