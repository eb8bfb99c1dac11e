"""A corpus of real, interlinked Markdown documentation pages for quality benchmarks.

The pages were copied from the documentation that three open-source packages ship in
their published archives (see SOURCES.md); nobody on the vaultlink team wrote them.
Each page keeps its original relative Markdown links; ``MANIFEST.json`` resolves them
into ``links`` (corpus paths), which is the human ground truth of which pages relate.

Stdlib only, and no import of vaultlink, so the corpus can be inspected on its own::

    python -m bench.quality.realdocs

``write_as_vault`` lays the pages out as an Obsidian vault with the answer removed:
every relative link to another documentation page becomes the plain text of its label.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

__all__ = [
    "ROOT",
    "Page",
    "load_corpus",
    "markdown_links",
    "resolve_target",
    "resolved_links",
    "strip_links",
    "truth_pairs",
    "unlink",
    "write_as_vault",
]

ROOT = Path(__file__).resolve().parent
MANIFEST = "MANIFEST.json"


@dataclass(frozen=True)
class Page:
    """One documentation page of the corpus."""

    set: str
    path: str  # corpus path, "<set>/<slug>.md", relative to the corpus root
    title: str
    text: str
    links: tuple[str, ...]  # corpus paths this page links to (same set, no self-link)
    license: str
    source: str  # "<package> <version>: <path in the archive>"
    original_path: str = ""  # path inside the package's docs folder, for link resolution


def load_corpus(root: Path | str | None = None) -> list[Page]:
    """Read MANIFEST.json and the page files under ``root`` (this folder by default)."""
    base = Path(root) if root is not None else ROOT
    entries = json.loads((base / MANIFEST).read_text(encoding="utf-8"))
    pages = []
    for e in entries:
        pages.append(
            Page(
                set=e["set"],
                path=e["path"],
                title=e["title"],
                text=(base / e["path"]).read_text(encoding="utf-8"),
                links=tuple(e["links"]),
                license=e["license"],
                source=e["source"],
                original_path=e["original_path"],
            )
        )
    return pages


def truth_pairs(pages: Iterable[Page]) -> set[frozenset[str]]:
    """Undirected related pairs: ``{a, b}`` when a links to b or b links to a."""
    pages = list(pages)
    known = {p.path for p in pages}
    pairs: set[frozenset[str]] = set()
    for p in pages:
        for q in p.links:
            if q in known and q != p.path:
                pairs.add(frozenset((p.path, q)))
    return pairs


# ---------------------------------------------------------------- Markdown links

_FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_LABEL = r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
_INLINE = re.compile(
    r"(!?)" + _LABEL + r"\(\s*(<[^>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_REF_DEF = re.compile(
    r"^ {0,3}\[([^\]\n]+)\]:[ \t]*(<[^>\n]*>|\S+)(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?"
    r"[ \t]*(?:\n|\Z)",
    re.M,
)
_REF_USE = re.compile(r"(!?)" + _LABEL + r"(?:\[([^\[\]\n]*)\])?(?![(:\[])")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks and inline code spans."""
    ranges: list[tuple[int, int]] = []
    pos = 0
    fence: str | None = None
    start = 0
    prose_start = 0
    for line in text.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None:
            if m:
                _add_inline(text, prose_start, pos, ranges)
                fence, start = m.group(1), pos
        elif (
            m
            and m.group(1)[0] == fence[0]
            and len(m.group(1)) >= len(fence)
            and not line[m.end() :].strip()
        ):
            ranges.append((start, pos + len(line)))
            fence = None
            prose_start = pos + len(line)
        pos += len(line)
    if fence is not None:
        ranges.append((start, len(text)))
    else:
        _add_inline(text, prose_start, len(text), ranges)
    return ranges


def _add_inline(text: str, lo: int, hi: int, ranges: list[tuple[int, int]]) -> None:
    for m in _CODE_SPAN.finditer(text, lo, hi):
        # a code span does not cross a blank line
        if "\n\n" not in m.group(0):
            ranges.append((m.start(), m.end()))


def _inside(ranges: list[tuple[int, int]], lo: int, hi: int) -> bool:
    return any(a < hi and lo < b for a, b in ranges)


def _in_code(code: list[tuple[int, int]], m: re.Match[str]) -> bool:
    """Whether the link's opening or closing bracket is in code (code inside a label is fine)."""
    if "\n\n" in m.group(0) or m.group(0).startswith("[^"):
        return True  # a label never crosses a blank line; "[^1]" is a footnote
    close = m.end(2)  # the "]" that ends the label
    return any(a <= m.start() < b or a <= close < b for a, b in code)


def _norm_label(label: str) -> str:
    # a label wrapped inside a blockquote carries the next line's ">" markers
    return " ".join(re.sub(r"\n[ \t]*(?:>[ \t]?)*", " ", label).lower().split())


def _ref_defs(text: str, code: list[tuple[int, int]]) -> dict[str, tuple[str, re.Match[str]]]:
    defs: dict[str, tuple[str, re.Match[str]]] = {}
    for m in _REF_DEF.finditer(text):
        if _inside(code, m.start(), m.end()):
            continue
        key = _norm_label(m.group(1))
        if key and not key.startswith("^"):  # "[^1]:" is a footnote
            defs.setdefault(key, (m.group(2).strip("<>"), m))
    return defs


@dataclass(frozen=True)
class _Link:
    start: int
    end: int
    label: str
    target: str
    kind: str  # "inline", "ref" (a use of a reference) or "def" (a reference definition)


def _iter_links(text: str) -> Iterator[_Link]:
    code = _code_spans(text)
    defs = _ref_defs(text, code)
    taken: list[tuple[int, int]] = []
    for m in _INLINE.finditer(text):
        if m.group(1) or _in_code(code, m):
            continue
        taken.append((m.start(), m.end()))
        yield _Link(m.start(), m.end(), m.group(2), m.group(3).strip("<>"), "inline")
    def_spans = [(m.start(), m.end()) for _, m in defs.values()]
    for m in _REF_USE.finditer(text):
        if m.group(1) or _in_code(code, m) or _inside(taken, m.start(), m.end()):
            continue
        if _inside(def_spans, m.start(), m.end()):
            continue
        ref = m.group(3)
        key = _norm_label(ref if ref else m.group(2))
        if key in defs:
            yield _Link(m.start(), m.end(), m.group(2), defs[key][0], "ref")
    for target, m in defs.values():
        yield _Link(m.start(), m.end(), m.group(1), target, "def")


def markdown_links(text: str) -> list[str]:
    """Targets of the links in ``text`` (inline links and reference definitions).

    Images and anything inside code (fenced blocks, inline code) are left out.
    """
    return [link.target for link in _iter_links(text) if link.kind != "ref"]


def resolve_target(
    original_path: str, target: str, known: Iterable[str], site_prefixes: Sequence[str] = ()
) -> str | None:
    """The original path among ``known`` that ``target``, written in ``original_path``, names.

    ``None`` for external URLs, same-page anchors and pages that are not in ``known``.
    An absolute site path (``/commands/npm-install``) resolves only when it starts with
    one of ``site_prefixes`` (the longest that fits): the rest of it is read from the
    docs folder (``"/"`` for a site served from the docs folder itself); with no
    prefixes, as in realdocs, absolute paths resolve to nothing.
    """
    path = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
    if not path or _SCHEME.match(path) or path.startswith("//"):
        return None
    base_dir = posixpath.dirname(original_path)
    if path.startswith("/"):
        prefix = max((p for p in site_prefixes if path.startswith(p)), key=len, default=None)
        if prefix is None:
            return None
        path, base_dir = path[len(prefix) :], ""
        if not path or path.startswith("/"):
            return None
    joined = posixpath.normpath(posixpath.join(base_dir, path))
    if joined.startswith("../") or joined == "..":
        return None
    known_set = set(known)
    base = joined.rstrip("/")
    # a site that serves x.md as x.html links to "x.html" (React's docs)
    html: tuple[str, ...] = (base.removesuffix(".html") + ".md",) if base.endswith(".html") else ()
    for cand in (base, base + ".md", base + "/index.md", *html):
        if cand in known_set:
            return cand
    return None


def _is_page_target(target: str) -> bool:
    """A relative link to another documentation page (not an image, URL or anchor)."""
    path = unquote(target.split("#", 1)[0].split("?", 1)[0]).strip()
    if not path or _SCHEME.match(path) or path.startswith("//"):
        return False
    last = posixpath.basename(path.rstrip("/"))
    return path.endswith((".md", ".html", "/")) or "." not in last


def strip_links(text: str, goes: Callable[[str], bool]) -> str:
    """``text`` with every link whose target satisfies ``goes`` replaced by its label.

    Covers inline links and reference-style links; the reference definitions of such
    links are deleted. Images and code are never touched.
    """
    edits: list[tuple[int, int, str]] = []
    for link in _iter_links(text):
        if goes(link.target):
            edits.append((link.start, link.end, "" if link.kind == "def" else link.label))
    out = []
    pos = 0
    for start, end, repl in sorted(edits):
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append(repl)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def unlink(
    text: str, original_path: str, known: Iterable[str], site_prefixes: Sequence[str] = ()
) -> str:
    """``text`` with its links to other documentation pages replaced by their labels.

    A link goes when it resolves to a page in ``known`` (original paths of the set) or,
    more generally, when it is a relative or site-absolute link to a documentation page
    (``x.md``, ``x/``, ``/commands/npm-install``): in a vault those would either give the
    answer away or dangle, so no ``site_prefixes`` are needed to remove them. Reference
    definitions of such links are deleted. External links, images and same-page
    anchors stay.
    """
    known_set = set(known)

    def goes(target: str) -> bool:
        found = resolve_target(original_path, target, known_set, site_prefixes)
        return found is not None or _is_page_target(target)

    return strip_links(text, goes)


def write_as_vault(
    pages: Iterable[Page], dest: Path | str, folder: str = "resource"
) -> dict[str, str]:
    """Write the pages as ``dest/<folder>/<set>/<slug>.md``, without their page links.

    Returns corpus path -> vault-relative path (POSIX separators). The links between
    pages stay only in the manifest, as the truth to score against.
    """
    pages = list(pages)
    dest = Path(dest)
    by_set: dict[str, set[str]] = {}
    for p in pages:
        by_set.setdefault(p.set, set()).add(p.original_path)
    written: dict[str, str] = {}
    for p in pages:
        rel = posixpath.join(folder, p.path) if folder else p.path
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(unlink(p.text, p.original_path, by_set[p.set]), encoding="utf-8")
        written[p.path] = rel
    return written


def resolved_links(
    text: str,
    original_path: str,
    to_corpus: Mapping[str, str],
    site_prefixes: Sequence[str] = (),
) -> list[str]:
    """Corpus paths linked from ``text`` (deduplicated, in order, no self-link)."""
    own = to_corpus.get(original_path)
    out: list[str] = []
    for target in markdown_links(text):
        orig = resolve_target(original_path, target, to_corpus, site_prefixes)
        if orig is None:
            continue
        path = to_corpus[orig]
        if path != own and path not in out:
            out.append(path)
    return out
