"""Obsidian's own syntax, read as Obsidian means it: which lines and spans of a note are
what its owner says, and which are machinery.

Pure functions over text. ``content_text`` keeps every line where it is (a line that is
not content reads as blank, a span that is not content is cut from its line), so the
file's line numbers still hold for what is left; front matter and fenced code are left
exactly as written. What it recognises:

* query blocks: fenced ``dataview``, ``dataviewjs``, ``tasks`` and ``query`` blocks
  (with ``````` or ``~~~``), and inline queries (`` `= this.file.day` ``,
  `` `$= dv.current()` ``): not content, they show what other notes hold;
* Templater tags ``<% ... %>`` (``<%*``, ``<%+``, ``-%>``), inline or over several
  lines: not content;
* comments ``%% ... %%``, inline or over several lines (one never closed runs to the
  end, as Obsidian shows it): not content;
* inline fields (Dataview's properties): a line ``Key:: value`` (as a list item too,
  the key bold or not) and ``[Key:: value]`` / ``(Key:: value)`` inside a line: cut,
  they are properties, not prose;
* navigation lines: links to other notes with nothing but arrows, separators and words
  such as "previous" or "next" (``<< [[2022-08-04]] | [[2022-08-06]] >>``): not content;
* callouts ``> [!type]± Title`` followed by ``> body`` lines: unwrapped, the title
  leading its body as one paragraph ("Eigenvector: An eigenvector of ..."); a callout
  with no title keeps its body; nested callouts are unwrapped in turn;
* embeds ``![[...]]``: cut (what they show is another note's or a file), unless
  ``keep_embeds`` (the offline reader passes an image over with its reason);
* block ids ``^id`` at the end of a line, or on a line of their own: cut;
* tags: a line of tags only, and the tags that follow a sentence's end or a heading
  (``Ran five miles. #exercise #health``, ``## Ideas #idea``) or end a line two or more
  at a time, are cut; a tag inside a sentence is one of its words and stays as written
  ("Announce it in #sift-ops"); a heading is no tag, nor ``C#`` or ``#123``;
* empty list items and empty checkboxes, and items holding only a placeholder word
  (``- TODO``, ``- DONE``, ``- NOTE``, ``- ...``): a template's placeholders, blank.

``aliases_of`` reads a note's other names from its front matter (``aliases``, or the
older ``alias``; a string or a list).
"""

from __future__ import annotations

import re
from typing import Any

from vaultlink.markdown.frontmatter import split_frontmatter

QUERY_LANGUAGES = frozenset({"dataview", "dataviewjs", "tasks", "query"})
MAX_NESTING = 4  # callouts inside callouts unwrapped at most this deep

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_CALLOUT = re.compile(r"^ {0,3}>[ \t]?\[!([^\]\s]+)\][+-]?[ \t]*(.*)$")  # title: .strip()
_QUOTED = re.compile(r"^ {0,3}>[ \t]?")
# Where hidden text or code may start on a line: a code span, a comment, a Templater tag.
_OPENER = re.compile(r"`+|%%|<%")
_INLINE_QUERY = re.compile(r"^\s*\$?=")
# A field's key: a few words, no code, no link, no heading or quote mark before it.
_KEY = r"[^\s`:>#|\[\]()*_][^`:\n\[\]()]{0,39}?(?<!\s)"
_FIELD_LINE = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[.\]\s+)?)?(?:\*\*|__)?" + _KEY
                         + r"(?:\*\*|__)?::(?:\s|$)")
# A field's value may hold links ("[[x]]") and, in parentheses, parentheses of its own.
_BRACKET_FIELD = re.compile(r"\[\s*" + _KEY + r"::(?:\[\[[^\]\n]*\]\]|[^\]\[\n])*\]")
_PAREN_FIELD = re.compile(r"\(\s*" + _KEY
                          + r"::(?:\[\[[^\[\]\n]*\]\]|\([^()\n]*\)|[^)(\n\[]|\[(?!\[))*\)")
_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]")
_BLOCK_ID = re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+\s*$")
_TAG = re.compile(r"(?<!\S)#(?=[\w/-]*[^\W\d_])[\w/-]+")
# (tried only where a run of spaces starts: from each space of a long run it was quadratic)
_TAGS_AT_END = re.compile(r"(?<![ \t])(?:[ \t]+#(?=[\w/-]*[^\W\d_])[\w/-]+)+[ \t]*$")
_SENTENCE_END = re.compile(r"(?:[.!?。！？:;)\]]|^\s*#{1,6}\s.*)$")
# What ``content_text`` leaves out changed: an index of its texts is built again.
CONTENT_RULES = 2
# an item with nothing in it, or only a template's placeholder word ("- TODO", "- DONE",
# "- NOTE", "- ...")
_EMPTY_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?:\s+\[.\])?"
                         r"(?:\s+(?:TODO|DONE|NOTE|TBD|WIP|FIXME|XXX|N/?A|\.{3}|…))?\s*$")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# No bracket inside a link's parts: "[[" or "[a](" repeated without a close made each
# start scan the rest of the line (a 60 KB line: 6 s).
_LINK = re.compile(r"!?\[\[[^\[\]\n]*\]\]|!?\[[^\[\]\n]*\]\([^)\[\]\n]*\)")
_NAV_REST = re.compile(r"^[\s<>|/\\\-–—=:,.·•()\[\]←→↑↓⬅➡⇐⇒«»‹›⟵⟶]*$")
_NAV_WORDS = re.compile(r"\b(?:prev|previous|next|yesterday|tomorrow|back|forward|up|home|"
                        r"index|last|week|day|month)\b", re.IGNORECASE)
_ARROWS = re.compile(r"<|>|←|→|⬅|➡|⇐|⇒|«|»|‹|›|⟵|⟶")


def content_text(text: str, keep_embeds: bool = False) -> str:
    """``text`` with everything that is not its owner's content blanked or cut, line for
    line (see the module's docstring); the front matter and fenced code are kept."""
    _, _, skip = split_frontmatter(text)
    lines = text.split("\n")
    head, body = lines[:skip], unwrap_callouts(lines[skip:])
    out: list[str] = []
    fence: tuple[str, bool] | None = None  # (its marker, a query block)
    hidden = ""  # inside a comment ("%%") or a Templater tag ("%>") that spans lines
    for line in body:
        if fence is not None:
            out.append("" if fence[1] else line)
            stripped = line.strip()
            if stripped.startswith(fence[0]) and not stripped.strip(fence[0][0]):
                fence = None
            continue
        m = _FENCE.match(line) if not hidden else None
        if m:
            fence = (m.group(1), m.group(2).lower() in QUERY_LANGUAGES)
            out.append("" if fence[1] else line)
            continue
        kept, hidden = _visible(line, hidden)
        out.append(_content_line(kept, line, keep_embeds))
    return "\n".join(head + out)


def _visible(line: str, hidden: str) -> tuple[str, str]:
    """A line with its comments, Templater tags and inline queries cut; code spans kept
    as written. ``hidden`` is what closes the span the line starts in ('' for none)."""
    parts: list[str] = []
    at = 0
    while at < len(line):
        if hidden:
            end = line.find(hidden, at)
            if end < 0:
                return "".join(parts), hidden
            at, hidden = end + len(hidden), ""
            continue
        m = _OPENER.search(line, at)
        if m is None:
            parts.append(line[at:])
            break
        parts.append(line[at:m.start()])
        token = m.group(0)
        if token.startswith("`"):
            close = line.find(token, m.end())
            if close < 0:  # no span: the backticks are text
                parts.append(line[m.start():])
                break
            inner = line[m.end():close]
            parts.append("" if _INLINE_QUERY.match(inner) else line[m.start():close + len(token)])
            at = close + len(token)
        else:
            hidden, at = ("%%" if token == "%%" else "%>"), m.end()
    return "".join(parts), hidden


def _content_line(line: str, written: str = "", keep_embeds: bool = False) -> str:
    """One line (outside code) less what is not content: fields, navigation, embeds,
    block ids, tags that are not words of a sentence, empty list items; ``written``
    (the line as in the file) when nothing is cut from it."""
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    out = re.sub(r"(`+)[^`]*?\1", keep, line)
    if _FIELD_LINE.match(out) or is_navigation(out):
        return ""
    out = _PAREN_FIELD.sub("", _BRACKET_FIELD.sub("", out))
    out = out if keep_embeds else _EMBED.sub("", out)
    out = _BLOCK_ID.sub("", out)
    if not _TAG.sub("", _LIST_MARK.sub("", out)).strip(" \t,;"):
        return ""  # a line of tags only
    tags = _TAGS_AT_END.search(out)
    if tags and (tags.group(0).count("#") >= 2 or _SENTENCE_END.search(out[:tags.start()])):
        out = out[:tags.start()]
    out = re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], out)
    if _EMPTY_ITEM.match(out) or not out.strip():
        return ""
    if out == line and line == (written or line):
        return line
    indent = re.match(r"[ \t]*", written or line).group(0)  # type: ignore[union-attr]
    return indent + re.sub(r"[ \t]{2,}", " ", out.strip())


def is_navigation(line: str) -> bool:
    """A line that only leads to other notes: links with arrows, separators or words
    like "previous" and "next" around them (``<< [[2022-08-04]] | [[2022-08-06]] >>``)."""
    body = _LIST_MARK.sub("", line)
    links = _LINK.findall(body)
    if not links:
        return False
    rest = _LINK.sub(" ", body)
    bare = _NAV_WORDS.sub(" ", rest)
    if not _NAV_REST.match(bare):
        return False
    return len(links) >= 2 or bool(_ARROWS.search(rest)) or bare != rest


_HAS_LINK = re.compile(r"\[\[|\]\(|https?://")
_URL_OR_HEADING_MARK = re.compile(r"https?://\S+|^#+\s*", re.MULTILINE)


def besides_links(text: str) -> str | None:
    """What a text says besides its links (wiki, Markdown, bare addresses), list marks
    and heading marks; None when it has no link."""
    if not _HAS_LINK.search(text):
        return None
    unmarked = "\n".join(_LIST_MARK.sub("", ln) for ln in text.split("\n"))
    return _URL_OR_HEADING_MARK.sub(" ", _LINK.sub(" ", unmarked))


def unwrap_callouts(lines: list[str]) -> list[str]:
    """Lines with each callout (``> [!type] Title`` and its ``> `` lines) unwrapped, line
    for line: the title leads the body's first paragraph ("Title: body ..."), a callout
    without a title keeps its body; fenced code outside callouts is left alone."""
    for _ in range(MAX_NESTING):
        out, changed, fence = list(lines), False, ""
        i = 0
        while i < len(lines):
            line = lines[i]
            m = _FENCE.match(line)
            if fence:
                if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                    fence = ""
                i += 1
                continue
            if m:
                fence = m.group(1)
                i += 1
                continue
            c = _CALLOUT.match(line)
            if c is None:
                i += 1
                continue
            changed = True
            end = i + 1
            while end < len(lines) and _QUOTED.match(lines[end]):
                end += 1
            body = [_QUOTED.sub("", ln, count=1) for ln in lines[i + 1:end]]
            out[i + 1:end] = body
            first = next((n for n, ln in enumerate(body) if ln.strip()), None)
            title = c.group(2).strip()
            out[i] = title if first is None else ""
            if title and first is not None:  # on the line just above the body's first
                out[i + first] = title if re.search(r"[.:!?。：！？]$", title) else title + ":"
            i = end
        lines = out
        if not changed:
            break
    return lines


def readable_text(text: str) -> str:
    """``content_text`` for a reader that does not count lines (a model's prompt): runs
    of blank lines are one blank line."""
    return re.sub(r"\n[ \t]*(?:\n[ \t]*){2,}", "\n\n", content_text(text)).strip("\n")


def aliases_of(meta: dict[str, Any]) -> tuple[str, ...]:
    """A note's other names from its front matter: ``aliases`` (or ``alias``), a string
    or a list, each one bounded line; '' and non-strings are left out."""
    raw = meta.get("aliases", meta.get("alias"))
    values = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    out = []
    for value in values[:50]:
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            name = " ".join(str(value).split())[:200]
            if name and name not in out:
                out.append(name)
    return tuple(out)
