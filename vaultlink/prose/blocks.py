"""A note's body as blocks: what a reader sees as one paragraph, list, code block or table.

The offline extractor decides per block, so every block carries its kind, its heading
path and the lines of the file it spans (1-based, frontmatter included), which is how a
passed-over paragraph is reported back to the user. Headings are ATX (``## x``), Setext
(a line underlined with ``===`` or ``---``) or an HTML ``<h1>``; a fenced block is one
block whatever it holds. Pure functions over text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import is_unspaced
from vaultlink.markdown.text import ICON_SHORTCODE, KEPT_TASK, LIST_MARK, heading_title
from vaultlink.prose.sentences import STEP_MARK, link_text, split_sentences

# Kinds whose text is prose a unit can quote; every other kind is passed over.
PROSE_KINDS = frozenset({"prose", "list", "steps", "quote"})
# ... and what the owner writes besides: a list of tasks (a day note's may be kept)
WRITTEN_KINDS = PROSE_KINDS | {"tasks"}

# "##:LiFootprints: Steps" is a heading led by an icon plugin's shortcode, spaced or not
_ATX = re.compile(rf"^ {{0,3}}(#{{1,6}})(?:\s+|(?={ICON_SHORTCODE}))(?:{ICON_SHORTCODE}\s*)?"
                  r"(.*)$")  # closing hashes cut by ``heading_title``: see markdown/sections
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^\s{0,3}(?:>\s*)?(`{3,}|~{3,})\s*([\w+-]*)")
_HTML_HEADING = re.compile(r"^\s*<h([1-6])\b[^>]*>(.*?)</h\1>\s*$", re.IGNORECASE)
_HTML = re.compile(r"^\s*</?[A-Za-z][\w-]*(\s[^>]*)?/?>")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LINKDEF = re.compile(r"^\s{0,3}\[[^\]^][^\]]*\]:\s*\S+")
_FOOTNOTE = re.compile(r"^\s{0,3}\[\^[^\]]+\]:")
_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[[ xX]\]")
# A task's checkbox, and the state a node shows it in: a box of its own, never "- [ ]"
# (a copied open task would show in the owner's task queries, and ticking it there would
# change nothing); "[-]" is Obsidian Tasks' cancelled.
_TASK_BOX = re.compile(r"^\[([ xX/!?<>*-])\]\s*")
_TASK_STATE = {"x": "☑", "X": "☑", "-": "☒"}
OPEN_TASK = "☐"
_IMAGE_ONLY = re.compile(r"^\s*(!\[[^\]]*\]\([^)]*\)|!\[\[[^\]]*\]\])\s*$")
_DIAGRAMS = frozenset({"mermaid", "plantuml", "dot", "graphviz", "ditaa"})

# Inline markup that must not reach a digest node, or reads as noise there.
# Spans are bounded (a run of spaces before one too: "\s*" tried at each space of a long
# run is quadratic), and stop at the next link's bracket: "[a](", "[^" or "![" repeated
# with no closing mark made each start scan the rest of the text (16 KB: 1.3 s).
_IMAGE = re.compile(r"!\[\[[^\]]{0,1000}\]\]|!\[[^\]]{0,1000}\]\([^)]{0,2000}\)")
_MD_LINK = re.compile(r"(?<!!)\[([^\]\[]+)\]\(([^)\s\[\]]{0,2000})(?:\s+\"[^\"\n]{0,500}\")?\)")
# A reference link names its definition in a second pair of brackets ("[text][ref]",
# "[text][]"); a lone "[text]" is literal unless its note defines it, so it stays as
# written ("[shares a photo: a sunset]" in a chat log lost its brackets).
_REF_LINK = re.compile(r"(?<![!\\])\[([^\]\[^]+)\]\[[^\]]*\](?![(:])")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\[\s]+\]")
_ATTR_LIST = re.compile(r"[ \t]{0,8}\{:?[ \t]{0,8}[#.][^{}\n]{0,500}\}"
                        r"|[ \t]{0,8}\{:[ \t]{0,8}[^{}\n]{0,500}\}")
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
_EMOJI = re.compile(r":(?:material|octicons|fontawesome|simple)-[a-z0-9-]+:")
_WIKI = re.compile(r"\[\[([^\[\]\n|#]*)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")
_CODE = re.compile(r"`[^`]*`")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
# A site generator's macro as published pages keep it: MDN's {{domxref("fetch()")}} reads
# as its first argument, a sidebar {{JSRef}} or a Hugo shortcode {{< note >}} as nothing.
_MACRO = re.compile(r"\{\{\s*[\w-]+\s*(?:\(\s*(?:\"([^\"]*)\"|'([^']*)')?[^{}]*\))?\s*\}\}"
                    r"|\{\{[<%][^{}]*[>%]\}\}")
_EXTERNAL = re.compile(r"^(https?:|mailto:)")
# A link in brackets right after the words it shows: "Tuesday's rebuild ([[2026-06-09|
# Tuesday's rebuild]])". As text it would say its words twice.
_ECHO_LINK = re.compile(r"[ \t]{0,8}\(\s*(?:\[\[([^\[\]\n|#]*)(?:#[^\[\]\n|]*)?"
                        r"(?:\|([^\[\]\n]*))?\]\]"
                        r"|(?<!!)\[([^\]\[]+)\]\([^)\s\[\]]{0,2000}\))\s*\)")


@dataclass
class Block:
    """One block of a note: its kind, heading path and file lines (1-based, inclusive)."""

    kind: str
    start: int
    end: int
    lines: list[str]
    heads: tuple[str, ...] = ()
    level: int = 0  # headings only
    levels: tuple[int, ...] = ()  # the level of each of ``heads``
    info: str = ""  # a fence's language; a heading's text
    items: list[str] = field(default_factory=list)  # sentences or list items, cleaned

    @property
    def text(self) -> str:
        """The raw text of the block."""
        return "\n".join(self.lines)

    @property
    def heading(self) -> str:
        """The nearest heading above the block ('' at the top of the note)."""
        return self.heads[-1] if self.heads else ""

    def head_at(self, level: int) -> str:
        """The heading of this level above the block ('' if there is none)."""
        return next((h for h, n in zip(self.heads, self.levels, strict=True) if n == level), "")


def clean_inline(text: str) -> str:
    """A line of Markdown as a digest node may quote it.

    Images and footnote marks go; relative and site links become their label; an
    external link stays; wikilinks become their display text (a node links with full
    paths, which the policy adds itself); HTML tags and attribute lists go. Inline code
    is left exactly as written.
    """
    spans: list[str] = []

    def keep(span: str) -> str:
        spans.append(span)
        return f"\x00{len(spans) - 1}\x00"

    out = _CODE.sub(lambda m: keep(m.group(0)), text)
    out = _MACRO.sub(lambda m: keep(m.group(1) or m.group(2) or ""), out)
    out = _IMAGE.sub("", out)
    out = _FOOTNOTE_REF.sub("", out)
    out = _ECHO_LINK.sub(_echo, out)
    out = _MD_LINK.sub(lambda m: m.group(0) if _EXTERNAL.match(m.group(2)) else m.group(1), out)
    out = _WIKI.sub(lambda m: (m.group(2) or link_text(m.group(1))).strip(), out)
    out = _REF_LINK.sub(lambda m: m.group(1), out)
    out = _TAG.sub("", _ATTR_LIST.sub("", _EMOJI.sub("", out)))
    out = re.sub(r"\(\s*\)", "", out)  # "(see )" after a link went; `f()` in code stays
    out = re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], out)
    return " ".join(out.split())


def _echo(m: re.Match[str]) -> str:
    """Nothing for a bracketed link that shows the words just before it (the words stay,
    and the owner's link is found again by them); else the match as it was."""
    shown = " ".join((m.group(3) or m.group(2) or link_text(m.group(1) or "")).split())
    # only the words just before it: the whole text before each link made a text of
    # links quadratic ("x ([[a]]) " x 8,000: 2 s)
    before = " ".join(m.string[max(0, m.start() - 2 * len(shown) - 16):m.start()].split())
    edge = is_unspaced(shown) or not before[:len(before) - len(shown)][-1:].isalnum()
    if shown and before.casefold().endswith(shown.casefold()) and edge:
        return ""
    return m.group(0)


def parse_blocks(text: str) -> list[Block]:
    """The blocks of a note's text, frontmatter left out, in order."""
    _, _, skip = split_frontmatter(text)
    # An HTML comment is not shown (Obsidian, every Markdown renderer): its lines read
    # as blank, and a node never quotes a "<!--" that would hide the rest of the node.
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines = text.split("\n")
    blocks: list[Block] = []
    heads: list[tuple[int, str]] = []
    i = skip
    while i < len(lines):
        line = lines[i]
        if not line.strip() or (_RULE.match(line) and _is_break(lines, i, bool(blocks))):
            i += 1
            continue
        fence = _FENCE.match(line)
        atx = _ATX.match(line)
        html_head = _HTML_HEADING.match(line)
        if atx or html_head:
            level = len(atx.group(1)) if atx else int(html_head.group(1))  # type: ignore[union-attr]
            title = clean_inline(heading_title(atx.group(2)) if atx
                                 else html_head.group(2))  # type: ignore[union-attr]
            kind = "heading" if atx else "banner"
            heads = [h for h in heads if h[0] < level] + [(level, title)]
            blocks.append(Block(kind, i + 1, i + 1, [line], _path(heads[:-1]), level,
                                _levels(heads[:-1]), info=title))
            i += 1
            continue
        if fence:
            end = _fence_end(lines, i, fence.group(1))
            kind = "diagram" if fence.group(2).lower() in _DIAGRAMS else "code"
            blocks.append(Block(kind, i + 1, end + 1, lines[i:end + 1], _path(heads),
                                levels=_levels(heads), info=fence.group(2)))
            i = end + 1
            continue
        if line.startswith(("    ", "\t")) and not LIST_MARK.match(line):
            end = _indented_end(lines, i)
            blocks.append(Block("code", i + 1, end + 1, lines[i:end + 1], _path(heads),
                                levels=_levels(heads)))
            i = end + 1
            continue
        end = i
        while end + 1 < len(lines) and lines[end + 1].strip() and not _breaks(lines[end + 1]):
            end += 1
        chunk = lines[i:end + 1]
        if len(chunk) == 2 and _SETEXT.match(chunk[1]) and not LIST_MARK.match(chunk[0]):
            level = 1 if chunk[1].strip()[0] == "=" else 2
            heads = [h for h in heads if h[0] < level] + [(level, clean_inline(chunk[0]))]
            blocks.append(Block("heading", i + 1, end + 1, chunk, _path(heads[:-1]), level,
                                _levels(heads[:-1]), info=heads[-1][1]))
        else:
            block = Block(kind_of(chunk), i + 1, end + 1, chunk, _path(heads),
                          levels=_levels(heads))
            block.items = items_of(block)
            blocks.append(block)
        i = end + 1
    for n, block in enumerate(blocks):  # a banner over prose is the page's own title
        if block.kind == "banner" and n + 1 < len(blocks) and blocks[n + 1].kind != "heading":
            block.kind = "heading"
    return blocks


def _indented_end(lines: list[str], start: int) -> int:
    """The last line of the indented code block opening at ``start``."""
    end = start
    while end + 1 < len(lines) and (lines[end + 1].startswith(("    ", "\t"))
                                    or not lines[end + 1].strip()):
        end += 1
    while not lines[end].strip():
        end -= 1
    return end


def _path(heads: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(h for _, h in heads)


def _levels(heads: list[tuple[int, str]]) -> tuple[int, ...]:
    return tuple(n for n, _ in heads)


def _breaks(line: str) -> bool:
    """A line that starts a block of its own, even without a blank line before it."""
    return bool(_ATX.match(line) or _FENCE.match(line) or _HTML_HEADING.match(line))


def _fence_end(lines: list[str], start: int, fence: str) -> int:
    for j in range(start + 1, len(lines)):
        if lines[j].strip().lstrip("> ").startswith(fence[:3]) and \
                lines[j].strip().lstrip("> ").strip(fence[0]) == "":
            return j
    return len(lines) - 1


def kind_of(chunk: list[str]) -> str:
    """What a run of non-blank lines is."""
    first = chunk[0]
    if len(chunk) >= 2 and "|" in first and _TABLE_SEP.match(chunk[1]):
        return "table"
    if first.lstrip().startswith("|"):
        return "table"
    if all(_LINKDEF.match(ln) or ln.startswith((" ", "\t")) for ln in chunk):
        return "linkdefs"
    if _FOOTNOTE.match(first):
        return "footnote"
    if all(_IMAGE_ONLY.match(ln) for ln in chunk):
        return "image"
    if _HTML.match(first) and not clean_inline(" ".join(chunk)).strip():
        return "html"
    if _HTML.match(first) and first.strip().startswith("<") and not first.strip().startswith(
            ("<b", "<i", "<em", "<strong", "<code", "<kbd")):
        return "html"
    if first.lstrip().startswith(">"):
        return "quote"
    marks = [ln for ln in chunk if LIST_MARK.match(ln)]
    if (len(marks) == len(chunk) - 1 and first.rstrip().endswith(":")
            and _link_list(marks)):
        return "links"  # "See also:" or a callout's "index:" over a list of [[links]]
    if marks and LIST_MARK.match(first):
        if all(_CHECKBOX.match(ln) for ln in marks):
            return "tasks"
        if _link_list(marks):
            return "links"
        if sum(1 for ln in marks if STEP_MARK.match(ln)) >= 2 and STEP_MARK.match(first):
            return "steps"
        return "list"
    return "prose"


def _link_list(items: list[str]) -> bool:
    """Items that are links and little else: a list of pointers, not of facts."""
    bare = 0
    for item in items:
        rest = _MD_LINK.sub("", _WIKI.sub("", LIST_MARK.sub("", item)))
        bare += len(re.findall(r"[^\W\d_]{2,}", rest)) <= 3 and rest != LIST_MARK.sub("", item)
    return bare >= max(2, int(0.7 * len(items)))


def items_of(block: Block) -> list[str]:
    """The block's sentences (prose) or items (lists), cleaned for quoting.

    A list item and its indented continuation lines are one item; a numbered step keeps
    its number; a blockquote loses its ``>`` marks and an admonition's bold title line.
    """
    if block.kind not in WRITTEN_KINDS:
        return []
    lines = [re.sub(r"^\s*>\s?", "", ln) for ln in block.lines] if block.kind == "quote" \
        else list(block.lines)
    if block.kind == "quote":
        lines = [ln for ln in lines if not re.fullmatch(r"\s*(\*\*[^*]+\*\*|\[![\w-]+\].*)\s*",
                                                        ln)]
    items: list[str] = []
    prose: list[str] = []
    current: list[str] | None = None
    for line in lines:
        if LIST_MARK.match(line):
            if prose:
                items += split_sentences(clean_inline(" ".join(prose)))
                prose = []
            if current:
                items.append(_item(current))
            current = [line]
        elif current is not None and (line.startswith((" ", "\t")) or not line.strip()):
            current.append(line)
        else:
            if current:
                items.append(_item(current))
                current = None
            prose.append(line)
    if current:
        items.append(_item(current))
    if prose:
        items += split_sentences(clean_inline(" ".join(prose)))
    return [i for i in items if re.search(r"[^\W_]", i)]


def is_task(item: str) -> bool:
    """Whether a line is a task item as a node keeps it (``- ☑ ...``, ``- ☐ ...``)."""
    return task_said(item) != item


def task_done(item: str) -> bool:
    """Whether a task item as kept is ticked or cancelled ("- ☑ ...", "- ☒ ...")."""
    box = KEPT_TASK.match(item)
    return box is not None and OPEN_TASK not in box.group(0)


def _is_break(lines: list[str], i: int, after_blocks: bool) -> bool:
    """Whether a rule line is a thematic break, not a paragraph's setext underline: at the
    top, after a blank line, or under a heading ("# Compilers" then "---" then the text:
    "--- A compiler is ..." opened 21 nodes of one vault)."""
    return not after_blocks or not lines[i - 1].strip() or bool(_ATX.match(lines[i - 1]))


def task_said(item: str) -> str:
    """What a task item says, without its list mark and box ("- ☑ Finish the report" ->
    "Finish the report"): its verb is then read as the instruction it is."""
    return KEPT_TASK.sub("", item)


def _item(lines: list[str]) -> str:
    """One list item as a line: ``- text`` or ``3. text`` (its own number kept); a task
    keeps its state as a box (``- ☑ text``, ``- ☐ text``)."""
    head = lines[0]
    step = STEP_MARK.match(head)
    bare = LIST_MARK.sub("", head)
    box = _TASK_BOX.match(bare)
    state = _TASK_STATE.get(box.group(1), OPEN_TASK) + " " if box else ""
    text = clean_inline(" ".join([bare[box.end():] if box else bare,
                                  *(ln.strip() for ln in lines[1:])]))
    return f"{step.group(1)}. {state}{text}" if step else f"- {state}{text}"


def joined(blocks: list[Block]) -> list[Block]:
    """Blocks that read as one: a lead-in ending in ':' with what it introduces, and a
    paragraph that starts in lower case (it goes on from the one before: "where k is ...")."""
    # runs gathered first, each joined once: joining block by block copied the run so
    # far every time (a note of 50,000 "Term: text" paragraphs took 25 s)
    runs: list[tuple[str, list[Block]]] = []
    for block in blocks:
        kind, run = runs[-1] if runs else ("", [])
        prev = run[-1] if run else None
        if prev is not None and prev.heads == block.heads and block.items and prev.items \
                and block.start <= prev.end + 2 and (
                prev.items[-1].rstrip().endswith(":") or block.items[0][:1].islower()):
            run.append(block)
            runs[-1] = (kind if kind != "prose" else block.kind, run)
        else:
            runs.append((block.kind, [block]))
    return [run[0] if len(run) == 1 else
            Block(kind, run[0].start, run[-1].end, [ln for b in run for ln in b.lines],
                  run[0].heads, levels=run[0].levels, items=[i for b in run for i in b.items])
            for kind, run in runs]
