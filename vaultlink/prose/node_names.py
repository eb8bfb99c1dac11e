"""A new node's name, and the owner's links it carries, for both integrators.

A node is named by the first sound of the name proposed, the unit's title and its
handle, else by what its summary says; never by a date, a number, a numbered, generic
or references heading (``subject_names.node_name_flaw``). :func:`node_names` lists the
names a CREATE tries, down to one qualified by a hash, so no unit fails for want of a
slug; the guard refuses those the owner's links use. :func:`carried_links` writes an
owner's link a node quotes as the path it resolves to in the owner's note
(docs/pipeline.md).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import replace
from enum import Enum

from vaultlink.errors import VaultlinkError
from vaultlink.markdown.language import is_unspaced
from vaultlink.markdown.links import LinkResolver, find_wikilinks, link_targets, render_link
from vaultlink.markdown.names import (
    INDEX_PAGES,
    file_keys,
    file_title,
    is_stamp,
    name_key,
    without_dated_lead,
)
from vaultlink.markdown.text import task_list, task_text
from vaultlink.prose.phrase_names import opening_words, subject_name
from vaultlink.prose.sentences import STEP_MARK, delink, link_text, short, summary_lines
from vaultlink.prose.subject_names import FUNCTION, clean_heading, node_name_flaw, same_name
from vaultlink.prose.units import Unit, slugify
from vaultlink.prose.wording import wording_of

MAX_DESCRIPTION = 280
MAX_NUMBERED = 9  # "<name> (2)" .. "(9)": past them, a name qualified by a hash


def _handle_title(handle: str, text: str) -> str:
    """A unit's handle as a name, each word as its summary writes it when it writes it
    one way with capitals ("sqlite-fts5" -> "SQLite FTS5"): else only the first capital."""
    out = []
    for word in handle.replace("-", " ").split():
        forms = {m.group(0) for m in re.finditer(
            rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", text, re.IGNORECASE)}
        out.append(forms.pop() if len(forms) == 1 and not next(iter(forms | {""}))
                   .islower() else word)
    name = " ".join(out)
    return name[:1].upper() + name[1:]


def _folders(unit: Unit) -> set[str]:
    """The folders of the unit's notes, less a folder its note stands for: a folder note
    ("Impresión 3D/Impresión 3D.md") or its index page ("python-markdown/index.md")."""
    out = set()
    for path in unit.paths:
        *folders, name = path.split("/")
        own = slugify(file_title(name))
        out |= {slugify(f) for f in folders}
        if folders and (own == slugify(folders[-1]) or own in INDEX_PAGES):
            out.discard(slugify(folders[-1]))
    return out


def sound(name: str, unit: Unit) -> str:
    """``name`` as a node's name ('' when it may not be one): its number mark gone."""
    if is_stamp(name):
        return ""
    words = without_dated_lead(name).split()
    if words != name.split():  # what is left of "<stamp> with Smartphone Capture"
        while words and words[0].lower() in FUNCTION:
            words.pop(0)
    text = " ".join(words).strip(" ,;:-")
    if not text:
        return ""
    if node_name_flaw(text) == "a numbered heading":
        text = clean_heading(text)
    if node_name_flaw(text) or slugify(text) in _folders(unit):
        return ""
    return text


MAX_TASK_NAME = 24  # characters of Chinese or Japanese: a task said whole, as a name


def _said_lines(unit: Unit) -> list[str]:
    """The summary's lines as they read: links as the words they show (a carried link's
    path is no subject), headings as their words."""
    lines = [delink(ln[3:] if ln.startswith("## ") else ln) for ln in summary_lines(unit.summary)]
    return [ln for ln in lines if ln.strip()]


def _is_plan(lines: list[str]) -> bool:
    """Whether lines are a Chinese or Japanese day's list of tasks."""
    return task_list(lines) and is_unspaced(" ".join(lines))


def subject_of(unit: Unit) -> str:
    """The unit's subject from what its summary says ('' when it says none)."""
    lines = _said_lines(unit)
    if not lines:
        return ""
    if _is_plan(lines):
        # a day's plan is named by its first task, as an English one is ("Finish the
        # report"): a phrase picked from it ("方法论") names a subject it is not about
        said = task_text(lines[0])
        said = re.split(r"[，。！？；：,.!?;:]", said)[0]
        said = " ".join(re.sub(r"[*_`]", "", said).split())
        first = sound(said if len(said) <= MAX_TASK_NAME else opening_words(said, 4), unit)
        if first:
            return first
    name = sound(subject_name(lines, []), unit)
    if not name and is_unspaced(" ".join(lines)):
        name = sound(opening_words(" ".join(lines)), unit)
    return name


def node_title(unit: Unit, proposed: str = "") -> str:
    """The name a new node of ``unit`` takes (see the module's docstring)."""
    handle = without_dated_lead(unit.name).strip("-") or unit.name
    if not proposed and _is_plan(_said_lines(unit)):
        first = subject_of(unit)  # its first task, not a phrase the reader picked from it
        if first:
            return first
    for name in (proposed, unit.title, _handle_title(handle, unit.summary)):
        ok = sound(name, unit) if name else ""
        if ok:
            return ok
    subject = subject_of(unit)
    if subject:
        return subject
    words = opening_words(unit.summary) or opening_words(unit.description)
    return sound(words, unit) or "Note"


def node_description(unit: Unit) -> str:
    """A new node's description: the unit's own, else its first sentence, else what its
    steps are for, in the language of its summary."""
    if unit.description:
        return unit.description
    lines = summary_lines(unit.summary)
    prose = [s for s in lines if not STEP_MARK.match(s) and not s.rstrip().endswith(":")
             and not s.startswith("## ")]
    if prose:
        return short(prose[0], MAX_DESCRIPTION)
    first = STEP_MARK.sub("", lines[0]) if lines else unit.name
    steps = wording_of(unit.summary).steps_for.format(title=unit.name.replace("-", " "))
    return short(f"{steps}: {first}", MAX_DESCRIPTION)


# A unit of this many lines or fewer is said in a breath: the subject it names once is
# what it is about ("Swam forty lengths at the lido" -> "Exercise (Lido)").
SHORT_LINES = 3


def _recurs(phrase: str, text: str) -> bool:
    """Whether ``text`` says ``phrase`` twice or more, or in a heading."""
    # Chinese and Japanese words touch their neighbours: no word edge where they are
    unspaced = is_unspaced(phrase)
    before, gap, after = ("", r"\s*", "") if unspaced else (r"(?<!\w)", r"\s+", r"(?!\w)")
    said = re.compile(before + gap.join(map(re.escape, phrase.split())) + after, re.IGNORECASE)
    return len(said.findall(text)) >= 2 or any(
        said.search(ln) for ln in text.splitlines() if ln.startswith("#"))


def qualifiers(unit: Unit, title: str) -> list[str]:
    """What sets this unit apart from another subject called ``title``: the subject its
    summary says, else the title of its note (never a date)."""
    out: list[str] = []
    subject = subject_of(unit)
    if subject and title.lower() not in subject.lower() and len(_said_lines(unit)) > \
            SHORT_LINES and not _recurs(subject, unit.summary):
        subject = ""  # a phrase a page says once ("Either data") does not set it apart
    if subject and not same_name(subject, title) and title.lower() not in subject.lower():
        out.append(subject)
    elif subject and title.lower() in subject.lower() and subject.lower() != title.lower():
        out.append(subject)  # already the qualified name itself: "Morning exercise"
    for path in unit.paths[:1]:
        stem = file_title(path).replace("-", " ")
        ok = sound(stem, unit)
        if ok and not same_name(ok, title) and ok not in out:
            out.append(ok)
    return out[:2]


def title_slugs(slug: str) -> list[str]:
    """The file names a node given the name of ``slug`` may have: it, then numbered."""
    return [slug] + [f"{slug}-{n}" for n in range(2, MAX_NUMBERED + 1)]


class Holder(Enum):
    """Who has the file name a new node's title would take, and so what the node is called."""

    NODE = "node"  # a node (or nobody): another name, qualified, else numbered
    OWNER = "owner"  # only the owner's files: qualified first, then the name in a numbered file
    SOURCE = "source"  # the unit's own page: the name, kept, in a numbered file first


def holder_of(unit: Unit, files: Iterable[str], digest: str) -> Holder:
    """``files``: the vault's files that answer to the title's file names (``title_slugs``)."""
    files = list(files)
    if not files or any(f.startswith(f"{digest}/") for f in files):
        return Holder.NODE
    return Holder.SOURCE if set(files) & set(unit.paths) else Holder.OWNER


def without_page_digests(named: list[tuple[str, str]], unit: Unit) -> list[tuple[str, str]]:
    """``named`` (path, name) less the nodes called as a note the unit links or comes
    from: such a node is that page's digest ("Binary Heap" of binary-heap.md), and the
    owner's own link beside it already leads to the page."""
    pages = {slugify(name_key(t)) for t in [*link_targets(unit.summary), *unit.paths]}
    return [(p, n) for p, n in named if slugify(n) not in pages]


def node_names(unit: Unit, proposed: str = "",
               holder: Holder = Holder.NODE) -> list[tuple[str, str]]:
    """(name, slug) pairs a new node of ``unit`` tries, in order, each slug once.

    A name no node has keeps its words in a numbered file (the file name alone must differ
    from the owner's): a page digested under its own title is "Binary Heap" at
    ``binary-heap-2.md``, not "Binary Heap (2)"."""
    title = node_title(unit, proposed)
    base = slugify(title)
    names = [(title, base)]
    numbered = [(title if holder is not Holder.NODE else f"{title} ({slug.rsplit('-', 1)[1]})",
                 slug) for slug in title_slugs(base)[1:]]
    longer, qualified = [], []  # "Git branching model" for "Git"; "Git (Branches)"
    for q in qualifiers(unit, title):
        if q.lower().startswith(title.lower()):
            longer.append((q, slugify(q)))
            qualified.append((q, slugify(q)))  # (kept in its place among the others)
        else:
            qualified.append((f"{title} ({q})", slugify(f"{title} {q}")))
    if holder is Holder.SOURCE:  # the page's own name says more than a word picked from it
        names += longer + numbered + qualified
    else:
        names += qualified + numbered
    mark = hashlib.sha1("\n".join([*unit.paths, unit.summary]).encode("utf-8")).hexdigest()
    names.append((f"{title} ({mark[:6]})", f"{base}-{mark[:6]}"))
    seen: set[str] = set()
    out = []
    for name, slug in names:
        if slug not in seen:
            seen.add(slug)
            out.append((name, slug))
    return out


# -- links carried over from the owner's notes -------------------------------------------


class OwnerLinks:
    """Obsidian's resolution of a link as written in a given note of the vault."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = frozenset(unicodedata.normalize("NFC", f) for f in files)
        self.resolver = LinkResolver(self.files)
        self._by_name: dict[str, list[str]] = {}
        for path in self.files:
            for key in file_keys(path):
                self._by_name.setdefault(key, []).append(path)

    def resolve_from(self, target: str, source: str) -> str | None:
        """Where ``[[target]]`` written in ``source`` points: a path relative to the note's
        folder first, then the vault's own resolution, and among several files of that
        name the one nearest the note (its folder, else the deepest folder they share)."""
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        t = unicodedata.normalize("NFC", target.strip())
        if folder and not t.startswith("/"):
            parts: list[str] = folder.split("/")
            for piece in t.split("/"):
                if piece == "..":
                    parts = parts[:-1]
                elif piece not in (".", ""):
                    parts.append(piece)
            near = "/".join(parts)
            for path in (near, near + ".md"):
                if path in self.files:
                    return path
        found = self.resolver.resolve(t, source)
        if found.path:
            return found.path
        suffix = t.lstrip("/").lower()
        matches = [p for p in self._by_name.get(name_key(t), [])
                   if p.lower().removesuffix(".md").endswith(suffix.removesuffix(".md"))]
        if not matches:
            return None

        def nearness(path: str) -> tuple[int, int, str]:
            shared = 0
            for a, b in zip(path.split("/")[:-1], source.split("/")[:-1], strict=False):
                if a != b:
                    break
                shared += 1
            return (-shared, path.count("/"), path)
        return min(matches, key=nearness)


def carried_links(text: str, sources: list[str], links: OwnerLinks) -> str:
    """``text`` (quoted from the owner's ``sources``) with each link written as the full
    path it resolves to in the first source that resolves it, showing what it showed; a
    link none resolves becomes its text."""
    out = text
    for link in find_wikilinks(text):
        if link.target in links.files:
            continue  # a full vault path means the same from anywhere
        full = next((p for s in sources if (p := links.resolve_from(link.target, s))), None)
        shown = link.alias or link.target.rsplit("/", 1)[-1].removesuffix(".md") or link.anchor
        if full is None:
            fresh = shown
        else:
            fresh = ("!" if link.embed else "") + render_link(full, link.anchor, shown)
        out = out.replace(link.raw, fresh)
    return out


def carried_unit(unit: Unit, files: Iterable[str],
                 read: Callable[[str], str] | None = None) -> Unit:
    """The unit as a session writes it: the owner's links carried over with the targets
    they have in its notes (the journal keeps the unit as extracted). A link still in the
    summary is written as its full path; a link the extractor turned into its text
    (``prose/blocks.py`` keeps a note's words) is found again by that text in the
    summary, first place only, and linked to what it named in the note (``read`` reads
    a source note)."""
    links = OwnerLinks(files)
    summary = carried_links(unit.summary, unit.paths, links) if "[[" in unit.summary \
        else unit.summary
    for source in unit.paths:
        if read is None:
            break
        try:
            text = read(source)
        except VaultlinkError:
            continue
        # the longest first: "Test Project" linked inside "Test Project 2" made the
        # owner's link to the second project one to the first, followed by " 2"
        for link in sorted(find_wikilinks(text), key=lambda k: -len(k.alias or k.target)):
            shown = " ".join((link.alias or link_text(link.target)).split())
            full = links.resolve_from(link.target, source) if link.target else None
            if link.embed or len(shown) < 2 or full is None:
                continue
            summary = _link_first(summary, shown, render_link(full, link.anchor, shown))
    return unit if summary == unit.summary else replace(unit, summary=summary)


_KEPT = re.compile(r"`[^`\n]*`|!?\[\[[^\]\n]*\]\]|\[[^\]\n]*\]\([^)\n]*\)|https?://\S+")


def _link_first(text: str, shown: str, link: str) -> str:
    """``text`` with the first ``shown`` outside code and links made ``link``."""
    pattern = re.compile(rf"(?<![^\W_]){re.escape(shown)}(?![^\W_])")
    pos = 0
    for kept in [*_KEPT.finditer(text), None]:
        end = kept.start() if kept is not None else len(text)
        m = pattern.search(text, pos, end)
        if m is not None:
            return text[:m.start()] + link + text[m.end():]
        if kept is None:
            break
        pos = kept.end()
    return text
