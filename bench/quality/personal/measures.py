"""What the owner of a personal vault would notice in its dreamed digest, counted.

Every measure reads the vault as written (files), with rules of its own, not the
integrator's. Words are vaultlink's own (``vaultlink.markdown.language``): ``subject_words``
(stemmed content words; Chinese and Japanese as character pairs, so CJK text is compared as
such) and ``count_words`` (one word per two CJK characters).

* **The template.** A vault's day-note template is the file its settings name
  (``.obsidian/daily-notes.json`` ``template``, Periodic Notes' ``daily.template``), else a
  file of its template folder (``templates.json``, Templater's ``templates_folder``) whose
  name says day/daily/diary/日; its lines (Templater ``<% %>`` and ``{{ }}`` placeholders
  match anything) are template lines, and so is any line found in 30% or more of the day
  notes (when there are five or more). A day note's **own text** is its body without front
  matter, template lines, lines of markup alone (``-``, ``- [ ]``, ``---``, a fence, an empty
  heading) and query blocks (dataview, dataviewjs, tasks, query). **Template headings** are
  the headings of the template and headings found in 30%+ of the day notes.
* **Owner links changed.** Every ``[[link]]`` (embeds included) in every owner note (a
  ``.md`` outside ``digest/`` and dot-folders) is resolved with
  ``vaultlink.markdown.links.LinkResolver`` over the vault's files (not dot-folders) before
  the first dream and after the last; a link counts when its target differs (retargeted,
  ambiguous now, or resolved now where it was not, e.g. a date link meeting a date-named
  node). Obsidian resolves by basename, case-insensitive, any folder: so does the resolver.
* **Bad names.** A node's ``name`` (or file stem) that starts with a date (2022-08-05,
  2022 08 05, 2025-W10, 20220805), holds a run of 8+ digits (a file id or timestamp), is a
  number or starts with a numbering (1. / 1、/ (1)), or equals a template heading
  (compared without case, emoji and punctuation).
* **Duplicate names.** Nodes sharing a ``name`` compared without case: each node beyond the
  first counts.
* **Template-only day notes cited.** A day note whose own text is empty, cited by any
  node's ``## Sources``.
* **Sources lines not backed.** For each Sources line and each owner note it cites: the
  node text that line supports is the node's paragraphs that came from that note, i.e. the
  prose paragraphs of the node (outside Sources; 3+ content words) of which at least half
  the content words are in the note's own text (template lines removed for a day note).
  The line is backed when there is at least one such paragraph; a line citing a day note
  whose own text is empty is never backed.
* **Day paragraphs landed.** The owner's paragraphs of day notes (blocks between blank
  lines or headings, own text only, 12+ words by ``count_words``: links as shown, list
  marks, task boxes and the Tasks plugin's date stamps not counted, since ``2026-12-06``;
  before, "- [x] Deploy ✅ 2025-02-09" counted four) land when at least half their content
  words appear in one node that cites that day note; the share of them.
* **Failed units.** Unit results with status ``failed`` across all runs (distinct units).
* **Parked notes.** Notes whose extraction failed until parked and that wait so after
  the last run (since ``2026-12-07``; before, a parked note counted nowhere: its words
  reached no node while the failed units said 0).
* **Labelled samples.** Woven links (digest to digest, outside Sources; key
  ``node path -> target``) and merges (REFINE / CORROBORATE of a unit into a node; key
  ``node path <- source note``) are looked up in ``labels.json``: link precision over the
  labelled links present, wrong merges among the labelled merges present, and how many
  present ones carry no label.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.quality.digest_measures import Node, load_nodes
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import count_words, subject_words
from vaultlink.markdown.links import LinkResolver, find_wikilinks
from vaultlink.markdown.text import heading_title
from vaultlink.pipeline.context import RunState
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

RECUR = 0.30
HALF = 0.5
LABELS = Path(__file__).resolve().parent / "labels.json"
PLACEHOLDER = re.compile(r"<%.*?%>|\{\{.*?\}\}")
QUERY_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(dataview|dataviewjs|tasks|query)\b", re.I)
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
MARKUP_ONLY = re.compile(r"^\s*(?:[-*+]|\d+[.)]|[-*+]\s*\[.?\]|-{3,}|\*{3,}|_{3,}|#{1,6}|>|%%)?"
                         r"\s*$")
# A line right under a quote that goes on with it without a ">" (lazy continuation):
# Obsidian shows it inside the callout, so a template's "> <% quote %>" line matches it.
LAZY = re.compile(r"^\s{0,3}>")
LAZY_STOP = re.compile(r"^\s{0,3}(?:#{1,6}\s|>|[-*+]\s|\d+[.)]\s|`{3}|~{3}|<)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")  # title: heading_title(group 2)
DATE_NAME = re.compile(r"^\W*(?:\d{4}[-_ ./年]\d{1,2}[-_ ./月]\d{1,2}|\d{4}-?W\d{1,2}|\d{8})"
                       r"(?!\d)")
FILE_ID = re.compile(r"\d{8,}")
NUMBERED = re.compile(r"^\W*(?:\d+\W*$|\d+\s*[.、)）:]|\(\d+\))")
LINKTEXT = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
DOTFOLDERS = (".vaultlink", ".obsidian", ".trash", ".git")


def norm_line(line: str) -> str:
    return re.sub(r"\s+", " ", line.strip())


def norm_heading(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def prose(text: str) -> str:
    """Links as the words a reader sees (alias, else target name)."""
    return LINKTEXT.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1], text)


# what a list item wears, not what it says: its mark, a task's box, the Tasks plugin's
# stamps ("✅ 2025-02-09"); none is the owner's word
ITEM_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[.\]\s*)?", re.MULTILINE)
TASK_STAMP = re.compile(r"[✅📅🗓⏳🛫➕❌]\ufe0f?\s*\d{4}-\d{2}-\d{2}")


def said_words(para: str) -> int:
    """The words a paragraph says, as a reader counts them: links as shown, markup none."""
    return count_words(TASK_STAMP.sub(" ", ITEM_MARK.sub("", prose(para))))


def words_of(text: str) -> set[str]:
    return set(subject_words(prose(text)))


def owner_files(root: Path) -> list[str]:
    """Every file Obsidian lists: not in a dot-folder."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(root).parts))


# -- the template --------------------------------------------------------------


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def template_files(root: Path) -> list[str]:
    """The day-note template(s) the vault's settings name."""
    obs = root / ".obsidian"
    named = [_json(obs / "daily-notes.json").get("template", "")]
    daily = _json(obs / "plugins/periodic-notes/data.json").get("daily")
    if isinstance(daily, dict):
        named.append(daily.get("template", ""))
    found = []
    for ref in filter(None, named):
        ref = ref.strip("/")
        for cand in (ref, ref + ".md"):
            if (root / cand).is_file():
                found.append(cand)
    if found:
        return sorted(set(found))
    folders = [_json(obs / "templates.json").get("folder", ""),
               _json(obs / "plugins/templater-obsidian/data.json").get("templates_folder", "")]
    for folder in filter(None, folders):
        base = root / folder.strip("/")
        if base.is_dir():
            found += [p.relative_to(root).as_posix() for p in base.rglob("*.md")
                      if re.search(r"day|daily|diary|journal|日", p.stem, re.I)]
    if not found:  # a template kept among the notes ("Daily/Daily Template.md")
        found = [p.relative_to(root).as_posix() for p in root.rglob("*.md")
                 if re.search(r"template", p.stem, re.I)
                 and re.search(r"day|daily|diary|journal|日", p.stem, re.I)
                 and not p.relative_to(root).as_posix().startswith(("digest/", "."))]
    return sorted(set(found))


@dataclass
class Template:
    """A vault's template lines and headings."""

    files: list[str]
    patterns: list[re.Pattern[str]] = field(default_factory=list)
    recurring: set[str] = field(default_factory=set)
    headings: set[str] = field(default_factory=set)

    def is_template(self, line: str) -> bool:
        n = norm_line(line)
        return n in self.recurring or any(p.fullmatch(n) for p in self.patterns)


def find_template(root: Path, days: dict[str, str]) -> Template:
    tpl = Template(template_files(root))
    for rel in tpl.files:
        body = split_frontmatter((root / rel).read_text(errors="replace"))[1]
        for line in body.split("\n"):
            n = norm_line(line)
            if not n or MARKUP_ONLY.match(n):
                continue
            parts = PLACEHOLDER.split(n)
            if not re.search(r"[^\W_]|[#>:*\[-]", "".join(parts)):
                continue  # only a script or a cursor: where the owner writes, any line
            tpl.patterns.append(re.compile(".*".join(re.escape(p) for p in parts)))
            h = HEADING.match(line)
            if h and norm_heading(PLACEHOLDER.sub("", heading_title(h.group(2)))):
                tpl.headings.add(norm_heading(PLACEHOLDER.sub("", heading_title(h.group(2)))))
    if len(days) >= 5:
        lines: Counter[str] = Counter()
        heads: Counter[str] = Counter()
        for text in days.values():
            body = split_frontmatter(text)[1].split("\n")
            lines.update({norm_line(ln) for ln in body if norm_line(ln)})
            heads.update({norm_heading(heading_title(h.group(2)))
                          for ln in body if (h := HEADING.match(ln))})
        cut = RECUR * len(days)
        tpl.recurring = {ln for ln, c in lines.items() if c >= cut and c >= 2}
        tpl.headings |= {h for h, c in heads.items() if c >= cut and c >= 2 and h}
    return tpl


def own_text(text: str, tpl: Template | None) -> str:
    """A note's body as the owner wrote it: no front matter, queries, markup-only lines,
    and (for a day note) no template lines."""
    out, fence, query, above = [], None, False, ""
    for line in split_frontmatter(text)[1].split("\n"):
        lazy = LAZY.match(above) is not None and LAZY_STOP.match(line) is None \
            and not MARKUP_ONLY.match(line)
        above = line
        if fence is not None:
            if FENCE.match(line) and line.strip().startswith(fence):
                fence, query = None, False
            elif not query:
                out.append(line)
            continue
        m = FENCE.match(line)
        if m:
            fence, query = m.group(1), bool(QUERY_FENCE.match(line))
            continue
        if tpl is not None and (tpl.is_template(line) or (lazy and tpl.is_template("> " + line))):
            out.append("")
            continue
        if MARKUP_ONLY.match(line):
            out.append("")
            continue
        h = HEADING.match(line)
        if h and tpl is not None and norm_heading(heading_title(h.group(2))) in tpl.headings:
            out.append("")
            continue
        out.append(line)
    return "\n".join(out)


def paragraphs(text: str) -> list[str]:
    """Blocks between blank lines, a heading starting a new one."""
    blocks, cur = [], []
    for line in text.split("\n"):
        if not line.strip() or HEADING.match(line):
            if cur:
                blocks.append("\n".join(cur))
            cur = []
            continue
        cur.append(line)
    if cur:
        blocks.append("\n".join(cur))
    return blocks


# -- the measures ----------------------------------------------------------------


@dataclass
class Report:
    """One vault's figures and the lists behind them."""

    name: str
    notes: int = 0
    day_notes: int = 0
    template_files: list[str] = field(default_factory=list)
    template_only_days: int = 0
    nodes: int = 0
    node_names: list[tuple[str, str]] = field(default_factory=list)  # (path, name)
    owner_links: int = 0
    links_changed: list[dict[str, str]] = field(default_factory=list)
    bad_names: list[dict[str, str]] = field(default_factory=list)
    duplicates: list[list[str]] = field(default_factory=list)
    template_only_cited: list[str] = field(default_factory=list)
    sources_lines: int = 0
    unbacked: list[dict[str, str]] = field(default_factory=list)
    day_paragraphs: int = 0
    landed: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    parked: list[dict[str, str]] = field(default_factory=list)
    woven: list[str] = field(default_factory=list)
    merges: list[str] = field(default_factory=list)
    links_right: int = 0
    links_wrong: int = 0
    links_unlabelled: int = 0
    merges_same: int = 0
    merges_wrong: int = 0
    merges_unlabelled: int = 0
    settled: bool = False
    runs: int = 0
    seconds: float = 0.0
    outside_digest_untouched: bool = True

    def figures(self) -> dict[str, object]:
        share = self.landed / self.day_paragraphs if self.day_paragraphs else None
        lab_links = self.links_right + self.links_wrong
        return {
            "notes": self.notes, "day_notes": self.day_notes,
            "template_only_days": self.template_only_days, "nodes": self.nodes,
            "owner_links": self.owner_links, "owner_links_changed": len(self.links_changed),
            "bad_names": len(self.bad_names),
            "duplicate_names": sum(len(d) - 1 for d in self.duplicates),
            "template_only_cited": len(self.template_only_cited),
            "sources_lines": self.sources_lines, "sources_unbacked": len(self.unbacked),
            "unbacked_share": (round(len(self.unbacked) / self.sources_lines, 3)
                               if self.sources_lines else None),
            "day_paragraphs": self.day_paragraphs, "landed": self.landed,
            "landed_share": round(share, 3) if share is not None else None,
            "failed_units": len(self.failed), "parked_notes": len(self.parked),
            "woven_links": len(self.woven), "links_labelled": lab_links,
            "link_precision": round(self.links_right / lab_links, 3) if lab_links else None,
            "links_unlabelled": self.links_unlabelled,
            "merges": len(self.merges), "merges_labelled": self.merges_same + self.merges_wrong,
            "wrong_merges": self.merges_wrong, "merges_unlabelled": self.merges_unlabelled,
            "settled": self.settled, "runs": self.runs, "seconds": round(self.seconds, 1),
            "outside_digest_untouched": self.outside_digest_untouched,
        }


def bad_name(name: str, stem: str, headings: set[str]) -> str:
    for label, text in (("name", name), ("file name", stem)):
        if DATE_NAME.match(text):
            return f"{label} is a date"
        if FILE_ID.search(text):
            return f"{label} holds a file id (8+ digits)"
        if NUMBERED.match(text):
            return f"{label} is a number or a numbered heading"
    if norm_heading(name) in headings:
        return "name is a template heading"
    return ""


def links_changed(before: dict[str, bytes], root: Path) -> tuple[int, list[dict[str, str]]]:
    """Owner links whose resolution differs after the dream."""
    files_before = [p for p in before if not any(part.startswith(".") for part in p.split("/"))]
    old, new = LinkResolver(files_before), LinkResolver(owner_files(root))
    total, changed = 0, []
    for rel in files_before:
        if not rel.endswith(".md") or rel.startswith("digest/"):
            continue
        text = before[rel].decode("utf-8", "replace")
        for link in find_wikilinks(text):
            if not link.target:
                continue
            total += 1
            a, b = old.resolve(link.target, rel), new.resolve(link.target, rel)
            if a.path != b.path:
                changed.append({"note": rel, "link": link.raw, "before": a.path or a.reason,
                                "after": b.path or b.reason})
    return total, changed


def node_paragraphs(node: Node) -> list[tuple[str, set[str]]]:
    out = []
    for para in paragraphs(node.main):
        if para.lstrip().startswith(("#", "|", "```")):
            continue
        ws = words_of(para)
        if len(ws) >= 3:
            out.append((para, ws))
    return out


def parked_notes(root: Path) -> list[dict[str, str]]:
    """The notes whose extraction failed until parked, as the vault's state keeps them."""
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        return [{"notes": ", ".join(f["paths"]), "error": str(f["error"])[:300]}
                for f in state.failures() if f["kind"] == "note" and f["parked"]]
    finally:
        state.close()


def measure(name: str, root: Path, before: dict[str, bytes], runs: list[RunState],
            labels: dict | None = None) -> Report:
    rep = Report(name)
    vault = Vault(root)
    days = {rel: data.decode("utf-8", "replace") for rel, data in before.items()
            if rel.startswith("daily/") and rel.endswith(".md")}
    owner_notes = {rel: data.decode("utf-8", "replace") for rel, data in before.items()
                   if rel.endswith(".md") and rel.startswith(("daily/", "resource/"))}
    rep.notes, rep.day_notes = len(owner_notes), len(days)
    tpl = find_template(root, days)
    rep.template_files = tpl.files
    own = {rel: own_text(text, tpl if rel in days else None) for rel, text in owner_notes.items()}
    own_words = {rel: words_of(t) for rel, t in own.items()}
    template_only = {rel for rel in days if not own_words[rel]}
    rep.template_only_days = len(template_only)

    nodes = load_nodes(vault)
    rep.nodes = len(nodes)
    rep.node_names = [(p, n.name) for p, n in nodes.items()]
    rep.owner_links, rep.links_changed = links_changed(before, root)
    for path, node in nodes.items():
        why = bad_name(node.name, Path(path).stem, tpl.headings)
        if why:
            rep.bad_names.append({"node": path, "name": node.name, "why": why})
    by_name: dict[str, list[str]] = {}
    for path, node in nodes.items():
        by_name.setdefault(node.name.casefold().strip(), []).append(path)
    rep.duplicates = [sorted(v) for v in by_name.values() if len(v) > 1]

    cited_by: dict[str, list[str]] = {}
    for path, node in nodes.items():
        for c in node.cited:
            cited_by.setdefault(c, []).append(path)
        paras = node_paragraphs(node)
        for line in node.sources:
            for link in find_wikilinks(line):
                target = link.target if link.target.endswith(".md") else link.target + ".md"
                if target.startswith("digest/") or target not in own_words:
                    continue
                rep.sources_lines += 1
                note_words = own_words[target]
                backed = bool(note_words) and any(
                    len(ws & note_words) >= HALF * len(ws) for _, ws in paras)
                if not backed:
                    rep.unbacked.append({"node": path, "line": line.strip(), "note": target})
    rep.template_only_cited = sorted(d for d in template_only if d in cited_by)

    node_words = {p: words_of(n.main) for p, n in nodes.items()}
    for rel in days:
        for para in paragraphs(own[rel]):
            if said_words(para) < 12:
                continue
            ws = words_of(para)
            if not ws:
                continue
            rep.day_paragraphs += 1
            if any(len(ws & node_words[n]) >= HALF * len(ws) for n in cited_by.get(rel, [])):
                rep.landed += 1

    rep.parked = parked_notes(root)
    seen = set()
    for run in runs:
        for r in run.report.results:
            key = (r.unit.name, tuple(r.unit.paths))
            if r.status == "failed" and key not in seen:
                seen.add(key)
                rep.failed.append({"unit": r.unit.name, "notes": ", ".join(r.unit.paths),
                                   "error": (r.error or r.note)[:300]})
            if r.status == "integrated" and r.action in ("REFINE", "CORROBORATE"):
                for p in r.unit.paths:
                    rep.merges.append(f"{r.target} <- {p}")
    rep.merges = sorted(set(rep.merges))
    for path, node in nodes.items():
        for link in find_wikilinks(node.main):
            target = link.target if link.target.endswith(".md") else link.target + ".md"
            if target.startswith("digest/") and target != path:
                rep.woven.append(f"{path} -> {target}")
    rep.woven = sorted(set(rep.woven))

    lab = (labels or {}).get(name, {})
    for key in rep.woven:
        label = lab.get("links", {}).get(key, {}).get("label")
        if label == "right":
            rep.links_right += 1
        elif label == "wrong":
            rep.links_wrong += 1
        else:
            rep.links_unlabelled += 1
    for key in rep.merges:
        label = lab.get("merges", {}).get(key, {}).get("label")
        if label == "same-subject":
            rep.merges_same += 1
        elif label == "different-subject":
            rep.merges_wrong += 1
        else:
            rep.merges_unlabelled += 1
    after = {p: (root / p).read_bytes() for p in before if (root / p).is_file()}
    rep.outside_digest_untouched = all(
        after.get(p) == data for p, data in before.items() if not p.startswith("digest/"))
    return rep


def load_labels() -> dict:
    return json.loads(LABELS.read_text()) if LABELS.exists() else {}
