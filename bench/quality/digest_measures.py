"""What a person keeping notes would notice in a dreamed digest, counted.

Every measure reads the vault as written (files, not the pipeline's own account of
them), with rules of its own rather than the integrator's, so the integrator cannot
pass by agreeing with itself:

* nodes per source note: digest nodes citing a note under ``## Sources``, averaged over
  the notes cited at all;
* names that are generic (every word is a word like Overview, Notes, Key, Formula) or
  fragments (a broken contraction, a repeated word, a function word at an edge, or words
  that are not one or two phrases of the node's own sources);
* bodies whose first line does not start a sentence (lowercase, "This ...", an embed, a
  footnote, a table), and embeds or site-relative links left in bodies;
* append-log lines ("Added from", "Further steps from", ...);
* two nodes created from one source on one subject (their names and openings embed at
  or above the integrator's same-abstraction threshold);
* the share of link sentences, and of Sources sentences, that open with the same three
  words (links counted as one word);
* woven links (digest to digest, outside Sources) against the human links of the real
  documents: precision, recall, links per node;
* paragraphs of the source notes neither used (a run of five words in common with a node
  citing them, or with a journaled unit cut from them) nor reported as passed over (the
  state's ``passed_over`` table, when it has one; a note ``status`` lists as unreadable
  counts as reported whole).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from vaultlink.index.embed import Embedder
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.sections import find_sources_section, without_sources
from vaultlink.vault.graph import build_graph, check_vault
from vaultlink.vault.notes import Vault, parse_note

SAME_SUBJECT = 0.60  # integrate.same_threshold as shipped: the integrator's own "same"
APPEND = re.compile(r"^\s*(?:[-*]\s+)?(Added from|Further steps from|The added detail comes from"
                    r"|The same point came up again)\b", re.IGNORECASE | re.MULTILINE)
WORD = re.compile(r"[a-z0-9]+(?:['’-][a-z0-9]+)*")
FUNCTION = frozenset("""a an the of to in on at by for from with and or but as is are was be
you your yours i me my we our us it its this that these those he she they them their
there here where when which who what how why if then so not no do does did""".split())
GENERIC = frozenset("""overview introduction intro description descriptions example examples
note notes usage summary key formula practical guidance what paper claims claim background
detail details context misc miscellaneous general basics basic reference tips caveats
conclusion discussion question questions open decision decisions todo standup status update
updates log ideas thoughts today every document documents section sections page part
things stuff more info information option options setting settings installation install
setup configuration config how to getting started quick start first steps other use case
cases about why""".split())
CONTRACTION_BITS = frozenset("ll t s re ve d m".split())
ANAPHORA = frozenset("""this that these those it its also however but and so such then
thus therefore here there they which where""".split())
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'*\[(])")
LINK_WORD = re.compile(r"!?\[\[[^\]]*\]\]")
DANGLING = re.compile(r"!\[\[|!\[[^\]]*\]\(|\]\((?:\.\.?/|/|#)[^)]*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Node:
    """A digest node as a reader meets it."""

    path: str
    name: str
    description: str
    main: str  # body without ## Sources
    sources: list[str]  # lines of ## Sources
    cited: list[str]  # source notes cited, in order


def load_nodes(vault: Vault) -> dict[str, Node]:
    """The digest's nodes (topics pages are day summaries, not nodes)."""
    nodes = {}
    for rel in sorted(vault.iter_files([vault.digest])):
        if not rel.endswith(".md") or rel.startswith(f"{vault.digest}/topics/"):
            continue
        note = parse_note(rel, (vault.root / rel).read_bytes())
        body = note.body
        sec = find_sources_section(body)
        lines = body.split("\n")
        src_lines = [ln for ln in lines[sec.start + 1:sec.end] if ln.strip()] if sec else []
        cited = []
        for ln in src_lines:
            for link in find_wikilinks(ln):
                target = link.target if link.target.endswith(".md") else link.target + ".md"
                if not target.startswith(vault.digest) and target not in cited:
                    cited.append(target)
        nodes[rel] = Node(rel, str(note.frontmatter.get("name") or ""),
                          str(note.frontmatter.get("description") or ""),
                          without_sources(body), src_lines, cited)
    return nodes


_MARKUP = re.compile(r"<[^<>\n]{1,200}>|:(?:material|octicons|fontawesome|simple)-[a-z0-9-]+:")


def words(text: str) -> list[str]:
    """Lowercase word tokens (hyphenated words and contractions whole) of the text as a
    reader sees it (HTML tags and icon shortcodes are markup, not words)."""
    return WORD.findall(_MARKUP.sub(" ", text).lower())


def prose_of(text: str) -> str:
    """A note's text without frontmatter and code blocks, links as their words."""
    out, fenced = [], False
    for line in split_frontmatter(text)[1].split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and not line.startswith(("    ", "\t")):
            out.append(line)
    return "\n".join(out)


def _norm(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") else w


def _in_sequence(part: list[str], tokens: list[str]) -> bool:
    n = len(part)
    return any(tokens[i:i + n] == part for i in range(len(tokens) - n + 1))


def name_problem(name: str, source_tokens: list[str], headings: set[str] | None = None) -> str:
    """Why ``name`` does not say its subject, or ``""``. ``source_tokens`` are the words of
    the node's sources (their paths included), ``headings`` their titles and headings: a
    name that is one of them, as the author wrote it, is sound unless it is generic."""
    ws = words(name)
    if not ws:
        return "empty"
    if len(ws) > 8:
        return "a sentence, not a name"
    if any(w in CONTRACTION_BITS for w in ws):
        return "fragment: a broken contraction"
    if any(ws.count(w) > 1 for w in ws if w not in FUNCTION):
        return "fragment: a repeated word"
    content = [w for w in ws if w not in FUNCTION]
    if all(w in GENERIC or w.isdigit() or re.fullmatch(r"[\d-]+", w) for w in content):
        return "generic"
    if headings and " ".join(ws) in headings:
        return ""
    if ws[0] in FUNCTION or ws[-1] in FUNCTION:
        return "fragment: a function word at an edge"
    toks = [_norm(t) for t in source_tokens]
    parts = [_norm(w) for w in ws]
    if source_tokens and not any(_in_sequence(parts[:i], toks) and _in_sequence(parts[i:], toks)
                                 for i in range(1, len(parts) + 1)):
        return "fragment: not one or two phrases of its sources"
    return ""


def first_line(main: str) -> str:
    """The first line of prose a reader sees (headings skipped)."""
    for line in main.split("\n"):
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()
    return ""


def bad_start(line: str) -> str:
    """Why a body's first line does not start a sentence, or ``""``."""
    text = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
    if not text:
        return "empty body"
    if text.startswith(("![", "[^", "|", "```", "<")):
        return "starts with markup"
    head = text.lstrip("*_`\"'“(")
    if head[:1].islower():
        return "starts lowercase"
    first = words(head)[:1]
    if first and first[0] in ANAPHORA:
        return "starts with a reference back"
    return ""


def sentences(text: str) -> list[str]:
    """Sentences of a text, line by line (list items are sentences)."""
    out = []
    for line in text.split("\n"):
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).strip()
        if line and not line.startswith("#"):
            out += [s for s in SENTENCE_END.split(line) if s.strip()]
    return out


def opening(sentence: str) -> str:
    """The first three words, every link one word."""
    return " ".join(words(LINK_WORD.sub(" link ", sentence))[:3])


def top_share(openings: list[str]) -> tuple[float, str, int]:
    """Share, wording and count of the most common opening."""
    if not openings:
        return 0.0, "", 0
    wording, count = Counter(openings).most_common(1)[0]
    return count / len(openings), wording, len(openings)


@dataclass
class Measures:
    """Everything one settled vault scores."""

    nodes: int = 0
    sources_cited: int = 0
    nodes_per_source: float = 0.0
    max_per_source: int = 0
    bad_names: list[tuple[str, str, str]] = field(default_factory=list)
    bad_starts: list[tuple[str, str, str]] = field(default_factory=list)
    dangling: list[tuple[str, str]] = field(default_factory=list)
    append_lines: int = 0
    same_subject: list[tuple[str, str, float]] = field(default_factory=list)
    link_share: tuple[float, str, int] = (0.0, "", 0)
    source_share: tuple[float, str, int] = (0.0, "", 0)
    woven: int = 0
    woven_right: int = 0
    woven_same_source: int = 0
    truth_pairs: int = 0
    truth_found: int = 0
    paragraphs: int = 0
    unaccounted: list[tuple[str, int, str]] = field(default_factory=list)
    reported: int = 0
    errors: list[str] = field(default_factory=list)
    no_source: int = 0
    broken: int = 0
    topics_bad_keywords: list[str] = field(default_factory=list)
    topics_keyword_counts: list[int] = field(default_factory=list)
    topic_titles: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        """Woven links between nodes whose sources a human linked (or that share one)."""
        return self.woven_right / self.woven if self.woven else 0.0

    @property
    def recall(self) -> float:
        """Human-linked page pairs (both with nodes) joined by at least one woven link."""
        return self.truth_found / self.truth_pairs if self.truth_pairs else 0.0


def measure(root: Path, embedder: Embedder, truth: set[frozenset[str]] | None = None,
            created_only: set[str] | None = None) -> Measures:
    """Score the settled vault at ``root``; ``created_only``: nodes present before to skip
    in the name check (written by a person)."""
    vault = Vault(root)
    nodes = load_nodes(vault)
    m = Measures(nodes=len(nodes))
    texts = {p: (root / p).read_text() for n in nodes.values() for p in n.cited
             if (root / p).is_file()}
    per_source = Counter(p for n in nodes.values() for p in n.cited)
    m.sources_cited = len(per_source)
    m.nodes_per_source = sum(per_source.values()) / len(per_source) if per_source else 0.0
    m.max_per_source = max(per_source.values(), default=0)
    for n in nodes.values():
        if created_only is None or n.path not in created_only:
            toks = [t for p in n.cited if p in texts
                    for t in [*words(prose_of(texts[p])), *words(p.replace("/", " "))]]
            heads = {" ".join(words(h)) for p in n.cited if p in texts
                     for h in re.findall(r"^#+\s*(.+)$|^<h\d[^>]*>(.+)</h\d>",
                                         prose_of(texts[p]), re.M) for h in h if h}
            # the title a page's frontmatter gives is the author's title too
            heads |= {" ".join(words(t)) for p in n.cited if p in texts
                      for t in re.findall(r"\A---\n(?:.*\n)*?title:\s*[\"']?(.+?)[\"']?\s*\n",
                                          texts[p])}
            why = name_problem(n.name, toks, heads)
            if why:
                m.bad_names.append((n.path, n.name, why))
            why = bad_start(first_line(n.main))
            if why:
                m.bad_starts.append((n.path, first_line(n.main)[:70], why))
        m.dangling += [(n.path, d.group(0)) for d in DANGLING.finditer(n.main)]
        m.append_lines += len(APPEND.findall(n.main + "\n" + "\n".join(n.sources)))
    _same_subject(m, nodes, embedder, created_only)
    link_open = [opening(s) for n in nodes.values() for s in sentences(n.main)
                 if any(w.target.startswith(vault.digest + "/") for w in find_wikilinks(s))]
    m.link_share = top_share(link_open)
    m.source_share = top_share([opening(s) for n in nodes.values() for s in n.sources
                                if find_wikilinks(s)])
    _woven(m, nodes, vault, truth)
    _paragraphs(m, nodes, root, texts)
    _checks(m, vault)
    return m


def _same_subject(m: Measures, nodes: dict[str, Node], embedder: Embedder,
                  created_only: set[str] | None) -> None:
    by_source: dict[str, list[Node]] = {}
    for n in nodes.values():
        if n.cited and (created_only is None or n.path not in created_only):
            by_source.setdefault(n.cited[0], []).append(n)
    for group in by_source.values():
        if len(group) < 2:
            continue
        vecs = embedder.embed([f"{n.name}: {n.description}" for n in group])
        for i, a in enumerate(group):
            for j in range(i + 1, len(group)):
                sim = sum(x * y for x, y in zip(vecs[i], vecs[j], strict=True))
                if sim >= SAME_SUBJECT:
                    m.same_subject.append((a.path, group[j].path, round(sim, 2)))


def _woven(m: Measures, nodes: dict[str, Node], vault: Vault,
           truth: set[frozenset[str]] | None) -> None:
    pairs: set[frozenset[str]] = set()
    for n in nodes.values():
        for link in find_wikilinks(n.main):
            target = link.target if link.target.endswith(".md") else link.target + ".md"
            if target in nodes and target != n.path:
                pairs.add(frozenset((n.path, target)))
    m.woven = len(pairs)
    if truth is None:
        return
    found: set[frozenset[str]] = set()
    for pair in pairs:
        a, b = (nodes[p] for p in pair)
        hits = {frozenset((x, y)) for x in a.cited for y in b.cited if x != y} & truth
        shared = set(a.cited) & set(b.cited)
        m.woven_right += bool(hits or shared)
        m.woven_same_source += bool(shared and not hits)
        found |= hits
    cited = {p for n in nodes.values() for p in n.cited}
    reachable = {t for t in truth if t <= cited}
    m.truth_pairs = len(reachable)
    m.truth_found = len(found & reachable)


def _paragraphs(m: Measures, nodes: dict[str, Node], root: Path,
                texts: dict[str, str]) -> None:
    reported = _reported(root)
    fed = _unit_texts(root)
    m.reported = sum(len(v) for v in reported.values())
    vault = Vault(root)
    for info in vault.scan([vault.daily, vault.resource]):
        path = info.path
        text = texts.get(path) or (root / path).read_text(errors="replace")
        citing = " ".join(" ".join(words(n.main)) for n in nodes.values() if path in n.cited)
        citing += " " + " ".join(words(fed.get(path, "")))
        spans = reported.get(path, [])
        for start, end, para in _source_paragraphs(text):
            m.paragraphs += 1
            ws = words(para)
            used = any(" ".join(ws[i:i + 5]) in citing for i in range(max(1, len(ws) - 4)))
            if not used and not any(a <= end and start <= b for a, b in spans):
                m.unaccounted.append((path, start, para[:70]))


def _source_paragraphs(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each blank-line separated block, 1-based lines of
    the file, frontmatter and headings left out, a fenced block as one paragraph."""
    _, _, skip = split_frontmatter(text)
    out: list[tuple[int, int, str]] = []
    lines = text.split("\n")
    start, buf, fenced = 0, [], False
    for i in range(skip, len(lines) + 1):
        line = lines[i] if i < len(lines) else ""
        if i < len(lines) and FENCE.match(line):
            fenced = not fenced
        heading = line.lstrip().startswith("#") or re.match(r"\s*<h\d[^>]*>.*</h\d>\s*$", line)
        if not fenced and (not line.strip() or heading) \
                and not (i < len(lines) and FENCE.match(line)):
            setext = len(buf) == 2 and re.fullmatch(r"\s*(=+|-+)\s*", buf[1]) is not None
            if buf and words(" ".join(buf)) and not setext \
                    and not re.fullmatch(r"[-*_=\s]+", "".join(buf)):
                out.append((start + 1, i, "\n".join(buf)))
            buf = []
            continue
        if not buf:
            start = i
        buf.append(line)
    return out


def _unit_texts(root: Path) -> dict[str, str]:
    """Note -> the summaries of the units the journal says were cut from it (a paragraph
    that fed a unit is used, even where the node already said it)."""
    out: dict[str, str] = {}
    try:
        con = sqlite3.connect(root / ".vaultlink" / "state.sqlite")
        rows = con.execute("SELECT unit FROM journal WHERE action != 'SKIP'").fetchall()
        con.close()
    except sqlite3.Error:
        return out
    for (raw,) in rows:
        unit = json.loads(raw)
        for path in unit.get("paths", []):
            out[path] = out.get(path, "") + "\n" + str(unit.get("summary", ""))
    return out


def _reported(root: Path) -> dict[str, list[tuple[int, int]]]:
    """Passed-over paragraphs the state records: note -> line spans (none if no table)."""
    db = root / ".vaultlink" / "state.sqlite"
    out: dict[str, list[tuple[int, int]]] = {}
    try:
        con = sqlite3.connect(db)
        rows = con.execute("SELECT path, line, end_line FROM passed_over").fetchall()
        # a note that could not be read at all is reported whole (status says why)
        rows += [(p, 1, 10**9) for (p,) in con.execute("SELECT path FROM unread_notes")]
        con.close()
    except sqlite3.Error:
        return out
    for path, line, end in rows:
        out.setdefault(path, []).append((int(line), int(end)))
    return out


def _checks(m: Measures, vault: Vault) -> None:
    graph = build_graph(vault)
    for problem in check_vault(vault, graph):
        if problem.level != "error":
            continue
        m.errors.append(str(problem))
        m.no_source += "no source link" in problem.message
        m.broken += problem.message.startswith("broken link")
    for rel in sorted(graph.texts):
        if not rel.startswith(f"{vault.digest}/topics/"):
            continue
        for topic in graph.meta[rel].get("topics") or []:  # type: ignore[attr-defined]
            kws = [str(k) for k in topic.get("keywords") or []]
            m.topics_keyword_counts.append(len(kws))
            m.topic_titles.append(str(topic.get("title")))
            m.topics_bad_keywords += [k for k in kws if k in FUNCTION or k in _STOP
                                      or re.fullmatch(r"[\d.,:%-]+", k)]


# Words that name nothing, beyond FUNCTION (a common English stop list).
_STOP = frozenset("""about above after again all also am any because been before being below
between both can could during each few further had has have having into just more most
much must new nor now off once only other over own same should some still such than too
under until up very was were will with would yet one two first make made get got""".split())
