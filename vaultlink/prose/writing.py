"""How the offline integrator writes: a unit's summary as a node body, links woven in
where the text mentions another node, and Sources sentences that say what they back.

The summary of an offline unit is a small Markdown document, one sentence, item or step
per line, blank lines between paragraphs and ``## Heading`` lines for the aspects of a
document. Rendering only regroups those lines (sentences of a paragraph on one line,
steps numbered in order); it never adds a claim. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultlink.markdown.language import UNSPACED_RUN, join_sentences, stop_words_of
from vaultlink.markdown.names import cjk_words
from vaultlink.markdown.text import KEPT_TASK, LIST_MARK
from vaultlink.prose.phrase_names import key_phrase, opening_phrase
from vaultlink.prose.sentences import STEP_MARK, delink, readable, summary_lines
from vaultlink.prose.subject_names import FUNCTION, GENERIC, capitalized, name_words, same_name
from vaultlink.prose.wording import WORDINGS, Wording, wording_of
from vaultlink.vault.actions import Action

ENGLISH = WORDINGS["en"]
MAX_MENTIONS = 5      # links woven into one node's text by mention
MAX_SEE_ALSO = 2      # nodes in the one sentence on what the source note also names
# Not prose, so no mention of a node: code (fenced or inline), links and embeds, URLs of
# any scheme, bare domains, e-mail addresses and file paths (docs/quality.md, "links by
# mention").
_PROTECTED = re.compile(
    r"(?ms)^ {0,3}(```|~~~).*?(?:^ {0,3}\1|\Z)"  # a fenced block, to its fence or the end
    r"|(`+)[^`].*?\2|!?\[\[[^\]]*\]\]|!?\[[^\]]*\]\([^)]*\)"
    r"|\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+\.[\w.]+"
    r"|(?<!\S)(?:~|\.{1,2})?/\S+|\b[A-Za-z]:\\\S+|\S+/\S+\.\w{1,5}\b|\S+/\S+/\S+",
    re.IGNORECASE)


def prose_only(text: str) -> str:
    """``text`` with everything that is not prose blanked out, offsets kept."""
    return _PROTECTED.sub(lambda m: " " * len(m.group(0)), text)


@dataclass
class Para:
    """A paragraph of a summary: a heading, prose sentences, list items or steps."""

    kind: str
    lines: list[str]


def paragraphs(summary: str) -> list[Para]:
    """The summary's paragraphs, in order (a lead-in and its list stay apart)."""
    out: list[Para] = []
    for raw in summary.split("\n"):
        line = raw.strip()
        if not line:
            out.append(Para("break", []))
            continue
        kind = ("heading" if line.startswith("## ") else "steps" if STEP_MARK.match(line)
                else "list" if LIST_MARK.match(line) else "prose")
        if out and out[-1].kind == kind and kind != "heading":
            out[-1].lines.append(line)
        else:
            out.append(Para(kind, [line]))
    return [p for p in out if p.kind != "break"]


def render(paras: list[Para]) -> list[str]:
    """Paragraphs as Markdown blocks (one string per block)."""
    blocks: list[str] = []
    for p in paras:
        if p.kind == "heading":
            blocks.append(p.lines[0])
        elif p.kind == "prose":
            blocks.append(join_sentences([delink(s, keep_full=True) for s in p.lines]))
        elif p.kind == "steps":
            blocks.append("\n".join(f"{i}. {delink(STEP_MARK.sub('', s), keep_full=True)}"
                                    for i, s in enumerate(p.lines, 1)))
        else:
            blocks.append("\n".join(f"- {delink(LIST_MARK.sub('', s), keep_full=True)}"
                                    for s in p.lines))
    return blocks


def aspects(summary: str) -> list[str]:
    """The ``## Heading`` lines of a summary, as written."""
    return [line.strip()[3:] for line in summary.split("\n") if line.strip().startswith("## ")]


def alias(path: str, words: Wording = ENGLISH) -> str:
    """How a source reads inside a sentence: ``daily/2026-06-17/retro.md`` -> "the
    2026-06-17 retro", ``resource/rrf-paper-notes.md`` -> "rrf paper notes"; a day note
    in the words of the note's language ("2026-06-20 的笔记")."""
    said = readable(path)
    if words is ENGLISH:
        return said
    if said.startswith("the note of "):
        return words.day_note.format(day=said.removeprefix("the note of "))
    return said.removeprefix("the ")


def cite(path: str, words: Wording = ENGLISH) -> str:
    """A source link with its reading as alias."""
    return f"[[{path}|{alias(path, words)}]]"


def listing(items: list[str], words: Wording = ENGLISH) -> str:
    """``a``, ``a and b``, ``a, b and c`` (in the words of a language)."""
    return items[0] if len(items) == 1 else \
        words.comma.join(items[:-1]) + words.and_ + items[-1]


def lower_first(text: str) -> str:
    """A name inside a sentence: its first letter in lower case unless it is a name."""
    word = text.split(" ", 1)[0]
    return text if word[1:] != word[1:].lower() or len(word) <= 1 else text[:1].lower() + text[1:]


def plain_case(heading: str) -> str:
    """A Title Case heading in a sentence: "Getters and Setters" -> "getters and setters";
    names with capitals inside ("CodeHilite", "API") keep them."""
    return " ".join(w if w[1:] != w[1:].lower() else w.lower() for w in heading.split())


def what_it_backs(title: str, summary: str) -> str:
    """The part of a node a source supports: its subject and the aspects it covers."""
    parts = [plain_case(a) for a in aspects(summary)[:3]]
    if parts:
        return f"{title} ({'; '.join(parts)})"
    return title


def source_sentence(action: Action, what: str, paths: list[str], extra: str = "",
                    words: Wording = ENGLISH, as_written: bool = False) -> str:
    """One ``## Sources`` line that says what its source backs, opening with it:
    "Candidate depth is now 200 (was 100): corrected in [[daily/2026-06-20.md|...]]."
    (in the words of the note's language). A node's name opens it ``as_written`` (a
    name in lower case is a command: "npm-ci"); a phrase gets a capital."""
    links = listing([cite(p, words) for p in paths], words) + extra
    what = what if as_written else capitalized(what)
    said = {Action.CORROBORATE: words.confirmed, Action.CORRECT: words.corrected}.get(
        action, words.taken)
    return "- " + said.format(what=what, links=links)


def phrase_of(lines: list[str]) -> str:
    """What some added sentences are about, in a few of their own words."""
    plain = [delink(STEP_MARK.sub("", LIST_MARK.sub("", ln))) for ln in lines]
    return key_phrase(plain) or (opening_phrase(plain[0]) if plain else "")


# -- links by mention -------------------------------------------------------------------
#
# A node's full name in the text is a mention; its name without the qualifier it shares
# with the text ("plugins" for "Fastify plugins") only when the text keeps coming back to
# it and the word names something (measured: docs/quality.md, "links by mention").

SHORT_MENTIONS = 3   # times a name without its qualifier must recur to count as a mention


def mention_forms(name: str, context: set[str], text: str,
                  stops: frozenset[str] = FUNCTION) -> list[str]:
    """The ways ``text`` mentions a node named ``name``: the name, singular or plural, and,
    when its first word is a qualifier the text shares ("Fastify" in a page of the
    fastify docs, given in ``context``), its other words if the text keeps using them.
    A name of nothing but ``stops`` (the function words of the text's language: "Hoy
    fue", "today was") is no mention."""
    ws = name.split()
    forms = [name] if [w for w in name_words(name) if w not in stops] else []
    if len(ws) >= 2 and ws[0].lower() in context:
        rest = " ".join(ws[1:])
        named = [w for w in name_words(rest) if w not in stops and w.rstrip("s") not in
                 _GENERIC_STEMS]
        if named and len(_pattern(rest).findall(text)) >= SHORT_MENTIONS:
            forms.append(rest)
    return forms


_GENERIC_STEMS = frozenset(w.rstrip("s") for w in GENERIC)


def _pattern(form: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in form.split()]
    # Chinese and Japanese words touch their neighbours: no word edge where they are
    unspaced_start, unspaced_end = (bool(UNSPACED_RUN.match(form[:1])),
                                    bool(UNSPACED_RUN.match(form[-1:])))
    if not unspaced_end:
        words[-1] = words[-1].removesuffix("s") + "s?"
    return re.compile(("" if unspaced_start else r"(?<![\w\[|/-])") + r"\s+".join(words)
                      + ("" if unspaced_end else r"(?![\w\]-]|[.,]\d)"), re.IGNORECASE)


def part_forms(name: str, taken: set[str], stops: frozenset[str] = FUNCTION) -> list[str]:
    """Runs of two or more words inside a longer name that name something on their own
    ("focus time" in "Morning focus time", "search index" in "Rebuild the search index"),
    longest first; never another node's whole name (``taken``, lowercased), nor a run
    that opens or ends on a function word of the text's language (``stops``: "de la" in
    "Nacidos de la Bruma")."""
    ws = name.split()
    out = []
    for size in range(len(ws) - 1, 1, -1):
        for i in range(len(ws) - size + 1):
            part = ws[i:i + size]
            low = [w.lower().strip(",:") for w in part]
            if low[0] in stops or low[-1] in stops or " ".join(low) in taken:
                continue
            if all(w in stops or w.rstrip("s") in _GENERIC_STEMS for w in low):
                continue
            out.append(" ".join(part))
    return out


def weave(blocks: list[str], candidates: list[tuple[str, str]], context: set[str],
          limit: int = MAX_MENTIONS, own: str = "", known: frozenset[str] = frozenset()
          ) -> tuple[list[str], list[str]]:
    """Turn the first mention of each candidate node (path, name) in the prose blocks
    into a link ``[[path|mention]]``; headings, code, existing links and a day's task
    list (its words name the day's chores, not subjects) are left alone.
    Whole names come first, longest first ("environment configuration" before
    "environment"), then names without their qualifier, then runs inside a name.
    The node's ``own`` name is itself: its namesakes are not linked, nor a one-word name
    inside it ("Optimization" in "Link-time Optimization"). Returns the blocks and the
    paths linked. ``known``: names (lowercased) of other nodes, linked already, that
    are no part of a longer name either."""
    candidates = [(p, n) for p, n in candidates if not namesake(n, own)]
    bare = _QUALIFIER.sub("", own).split()
    itself = re.compile(r"[\s-]+".join(map(re.escape, bare)), re.IGNORECASE) \
        if len(bare) > 1 else None  # a one-word name holds no other
    linked: list[str] = []
    out = list(blocks)
    text = " ".join(b for b in blocks if not b.startswith("#"))
    # the node's own name is no part of another's ("Hybrid search" of "Hybrid search
    # design doc" in the Hybrid search node is itself)
    taken = {name.lower() for _, name in candidates} | known | {" ".join(bare).lower()}
    ranked = sorted(candidates, key=lambda c: -len(c[1]))
    stops = FUNCTION | stop_words_of(text)
    mentions = [(p, mention_forms(n, context, text, stops)) for p, n in ranked]
    rounds = [[(p, said[:1]) for p, said in mentions], [(p, said[1:]) for p, said in mentions],
              [(p, part_forms(n, taken, stops)) for p, n in ranked]]
    for forms_of in rounds:
        for path, forms in forms_of:
            if len(linked) >= limit or path in linked:
                continue
            for form in forms:
                # one word inside the node's own name is a part of it ("Optimization" in
                # "Link-time Optimization"); a longer name there is still a mention
                keep = itself if len(form.split()) == 1 else None
                hit = next((i for i, b in enumerate(out) if not b.startswith(("#", "```", "~~~"))
                            and not all(map(KEPT_TASK.match, filter(None, b.split("\n"))))
                            and _link_first(b, _pattern(form), path, keep) != b), None)
                if hit is not None:
                    out[hit] = _link_first(out[hit], _pattern(form), path, keep)
                    linked.append(path)
                    break
    return out, linked


_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


def namesake(name: str, own: str) -> bool:
    """Whether a node named ``name`` is a namesake of the node named ``own``, their
    qualifiers aside: "Project Description" in "Project Description (2)" names itself."""
    return bool(own) and same_name(_QUALIFIER.sub("", name), _QUALIFIER.sub("", own), whole=True)


def _link_first(text: str, pattern: re.Pattern[str], path: str,
                itself: re.Pattern[str] | None = None) -> str:
    """``text`` with the first match of ``pattern`` outside code, links and the node's
    own name (``itself``) made a link."""
    spans = [(m.start(), m.end()) for m in _PROTECTED.finditer(text)]
    if itself is not None:
        spans += [(m.start(), m.end()) for m in itself.finditer(text)]
    for m in pattern.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in spans):
            continue
        if not on_word_edges(text, m.start(), m.end()):
            continue
        return f"{text[:m.start()]}[[{path}|{m.group(0)}]]{text[m.end():]}"
    return text


_MADE_VERB = re.compile(r"(?:する|して|した|しな|しま|され|させ|できる|できな)")


def on_word_edges(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` begins and ends on words of the Chinese or Japanese
    around it (a name's characters inside a longer word are no mention of it: "音" in
    "半音", "ある" in "あるいは"); spaced scripts have their edges in the pattern. A
    Japanese noun made a verb by する ("意識する", to be aware of) is no mention of it."""
    if _MADE_VERB.match(text, end):
        return False
    for at in (start, end):
        run = next((r for r in UNSPACED_RUN.finditer(text) if r.start() < at < r.end()), None)
        if run is None:
            continue
        edges, pos = {run.start()}, run.start()
        for word in cjk_words(run.group()):
            pos += len(word)
            edges.add(pos)
        if at not in edges:
            return False
    return True


def also_covered(page: str, candidates: list[tuple[str, str]]) -> str:
    """One sentence for nodes the source note names where the node's own text does not:
    "Context formatting is covered in [[...|Context formatting]]." Worded from the
    mention itself; '' when the note names none of ``candidates`` (path, name)."""
    found: list[tuple[str, str, str]] = []
    prose = prose_only(page)
    for path, name in candidates:
        m = next((m for m in _pattern(name).finditer(prose)
                  if on_word_edges(prose, m.start(), m.end())), None) \
            if name_words(name) else None
        if m is not None:
            found.append((path, name, " ".join(m.group(0).split())))
        if len(found) == MAX_SEE_ALSO:
            break
    if not found:
        return ""
    words = wording_of(page)
    said = listing([lower_first(f) if i else f[:1].upper() + f[1:]
                    for i, (_, _, f) in enumerate(found)], words)
    links = listing([f"[[{p}|{n}]]" for p, n, _ in found], words)
    said_as = words.covered_one if len(found) == 1 else words.covered_many
    return said_as.format(said=said, links=links)


def unit_lines(summary: str) -> list[str]:
    """The unit's sentences, items and steps (headings left out)."""
    return [ln for ln in summary_lines(summary) if not ln.startswith("## ")]
