"""The offline integrator: a deterministic chat model that works the six tools.

``OfflinePolicy`` answers ``chat`` the way a tool-calling model would, so the offline
path runs through the same agent loop, toolbox and guard as Ollama, and nothing it
writes skips a check. It keeps no state: each turn it re-reads the conversation and
takes the next step of one plan (search, classify by similarity, read, then CREATE,
REFINE, CORROBORATE, or CORRECT where a unit gives one of the node's sentences a new
value: ``prose/update.py``). The plan step by step: docs/pipeline.md.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from vaultlink.errors import Refusal
from vaultlink.llm.chat import ChatReply, ToolCall
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.sections import cites_all
from vaultlink.markdown.text import task_list
from vaultlink.pipeline.offline.growth import fresh_lines, may_grow, naming
from vaultlink.prose.node_names import (
    holder_of,
    node_description,
    node_names,
    node_title,
    without_page_digests,
)
from vaultlink.prose.sentences import (
    STEP_MARK,
    Turn,
    delink,
    read_turns,
    read_unit,
    summary_lines,
    title_of,
)
from vaultlink.prose.subject_names import name_words
from vaultlink.prose.units import Unit, slugify
from vaultlink.prose.update import Linkable, plan_update
from vaultlink.prose.wording import wording_of
from vaultlink.prose.writing import (
    also_covered,
    namesake,
    paragraphs,
    render,
    source_sentence,
    weave,
    what_it_backs,
)
from vaultlink.vault.actions import Action
from vaultlink.vault.notes import parse_note

log = logging.getLogger(__name__)

SEARCH_LIMIT = 20
MAX_RELATED = 3       # links in a new node beyond its mentions (bench.quality's best F1)
MAX_SAME_READS = 3    # same-abstraction candidates read to find the one citing the source
PAGE_LINES = 40       # read in pages: a tool answer over 6,000 characters is cut
# Same abstraction below same_threshold (a young digest scores the same topic from
# another angle at 0.45-0.6): a close best hit with nothing near it, or a close namesake.
CLOSE = 0.45
STANDS_ALONE_GAP = 0.25
REPLAY_READS = 4     # closest related nodes read to find a unit already integrated
RESERVED_STEPS = 5   # turns a session keeps for the write after its optional reads
# Pages of one node read at most (a longer one counts as unread): 2,000 lines, a node
# confirmed by a note a day for five years; steps cost nothing offline.
MAX_PAGES = 50
# The fewest turns a session needs: the search, every page of the best target, the
# write (a model's budget, llm.max_steps, is sized for a model, whose turns cost).
MIN_STEPS = 1 + MAX_PAGES + RESERVED_STEPS
# Refusals a CREATE is tried once more for, elsewhere or plainer (another path, no links).
_TAKEN = frozenset({Refusal.EXISTS, Refusal.NOT_EXISTING, Refusal.SHADOWS_NAME,
                    Refusal.NUMBERED_NAME})
_LINK_TROUBLE = frozenset({Refusal.UNRESOLVED_LINK, Refusal.BARE_SOURCE_LINE,
                           Refusal.NOT_ADDITIVE})
_RETRY_CREATE = frozenset({Refusal.NOT_A_NODE_PATH, Refusal.SHADOWS_NAME,
                           Refusal.NUMBERED_NAME}) | _TAKEN | _LINK_TROUBLE


def unit_query(unit: Unit) -> str:
    """The node_search query for a unit: its name words, then its summary.

    bench/quality calibrates the thresholds with this same query, so change both.
    """
    lines = [STEP_MARK.sub("", delink(line)) for line in summary_lines(unit.summary)]
    return (unit.name.replace("-", " ") + ": " + " ".join(lines))[:1500]


class OfflinePolicy:
    """A ``ChatModel`` with no model behind it: the deterministic integrate plan above."""

    def __init__(self, same_threshold: float, related_threshold: float,
                 digest: str = "digest", max_steps: int = 12) -> None:
        if related_threshold > same_threshold:
            raise ValueError("related_threshold must not exceed same_threshold")
        self.same_threshold = same_threshold
        self.related_threshold = related_threshold
        self.digest = digest
        self.max_steps = max_steps  # the session's turns (llm.max_steps): reads must leave room

    # -- the chat interface ------------------------------------------------------------

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             schema: dict[str, Any] | None = None) -> ChatReply:
        """The next tool call of the plan, or the final receipt as JSON text."""
        if schema is not None:  # not an extractor: the offline extractor does that job
            return ChatReply(json.dumps({"units": []}))
        unit = read_unit(messages)
        if unit is None:
            return ChatReply("offline integrator: no ```json unit in the user message")
        if sum(1 for m in messages[2:] if m.get("role") == "user"):
            log.warning("offline integrator: the guard refused the result of %s", unit.name)
        step = self.decide(unit, read_turns(messages))
        if isinstance(step, ToolCall):
            return ChatReply("", [step])
        return ChatReply(json.dumps(step, ensure_ascii=False))

    def decide(self, unit: Unit, turns: list[Turn]) -> ToolCall | dict[str, Any]:
        """The next step given everything answered so far."""
        searches = [t for t in turns if t.name == "node_search"]
        if not searches:
            return ToolCall("node_search", {"query": unit_query(unit), "limit": SEARCH_LIMIT})
        hits = self._hits(searches)
        classes = {p: self._classify(h["similarity"]) for p, h in hits.items()}
        slug = slugify(unit.name)
        for p, c in classes.items():
            if (c == "related" and p.rsplit("/", 1)[-1] == f"{slug}.md"
                    and hits[p]["similarity"] >= CLOSE):
                classes[p] = "same_abstraction"  # named alike and close: not a `<slug>-2`
        ranked = sorted(hits, key=lambda p: -hits[p]["similarity"])
        if ranked and classes[ranked[0]] == "related":
            top = hits[ranked[0]]["similarity"]
            runner = hits[ranked[1]]["similarity"] if len(ranked) > 1 else 0.0
            if top >= CLOSE and top - runner >= STANDS_ALONE_GAP:
                classes[ranked[0]] = "same_abstraction"
        same = sorted((p for p, c in classes.items() if c == "same_abstraction"),
                      key=lambda p: -hits[p]["similarity"])[:MAX_SAME_READS]
        # Where this unit went before, if anywhere: a replay after lost state must not
        # write it again, and the node it grew may since have drifted below the cut.
        nearby = [p for p in ranked if classes[p] == "related"][:REPLAY_READS]
        texts: dict[str, str] = {}
        for path in [*same, *nearby]:
            text, call = self._read_node(turns, path)
            if call is not None and path not in same[:1] and \
                    len(turns) + 1 + RESERVED_STEPS > self.max_steps:
                break  # only the best target must be read; the write needs the turns left
            if call is not None:
                return call
            if text is not None:
                texts[path] = text
            elif path in same:
                classes[path] = "related"  # unreadable: adapt by not updating it
        # Citing alone is no sign: other units of the same note cite it too.
        done = next((p for p in texts if cites_all(texts[p], unit.paths)
                     and not fresh_lines(unit, texts[p])), None)
        if done is not None:
            return self._update(unit, turns, done, texts[done], hits, classes)
        nearest = max(hits.values(), key=lambda h: h["similarity"], default=None)
        for p in [p for p in same if p in texts and not may_grow(
                unit, str(hits[p].get("name") or ""), hits[p]["similarity"], texts[p],
                nearest=hits[p] is nearest)]:
            classes[p] = "related"
        grows = [p for p in same if p in texts and classes[p] == "same_abstraction"]
        # the node named as the unit is ("Hybrid search" for a correction of the hybrid
        # search note), then one its text names, before a nearer one
        target = min(grows, key=lambda p: naming(unit, str(hits[p].get("name") or "")),
                     default=None)
        if target is not None:
            return self._update(unit, turns, target, texts[target], hits, classes)
        return self._create(unit, turns, hits, classes)

    # -- recall ------------------------------------------------------------------------

    def _hits(self, searches: list[Turn]) -> dict[str, dict[str, Any]]:
        """Every recalled node once, with its best similarity (errors recall nothing)."""
        best: dict[str, dict[str, Any]] = {}
        for turn in searches:
            for hit in (turn.answer or {}).get("hits") or []:
                path, sim = str(hit.get("path", "")), float(hit.get("similarity") or 0.0)
                if path and (path not in best or sim > best[path]["similarity"]):
                    best[path] = {**hit, "similarity": sim}
        return best

    def _classify(self, similarity: float) -> str:
        if similarity >= self.same_threshold:
            return "same_abstraction"
        return "related" if similarity >= self.related_threshold else "unrelated"

    # -- update (CORROBORATE / REFINE) ---------------------------------------------------

    def _read_node(self, turns: list[Turn], path: str) -> tuple[str | None, ToolCall | None]:
        """The node's full text once all pages are read, or the next read; (None, None): failed."""
        reads = [t for t in turns if t.name == "read" and t.args.get("path") == path]
        pages: dict[int, str] = {}
        start, size, total = 1, PAGE_LINES, None
        for t in reads:
            if t.error or len(reads) >= MAX_PAGES:
                return None, None
            if t.answer is None:  # cut short: the same lines in a smaller page
                size = max(1, (int(t.args.get("end_line", size)) - start + 1) // 2)
                if size == 1 and int(t.args.get("end_line", 0)) == start:
                    return None, None
                continue
            pages[int(t.answer["start_line"])] = str(t.answer["text"])
            total = int(t.answer["total_lines"])
            start = int(t.answer["end_line"]) + 1
        if total is not None and start > total:
            return "\n".join(pages[k] for k in sorted(pages)), None
        return None, ToolCall("read", {"path": path, "start_line": start,
                                       "end_line": start + size - 1})

    def _update(self, unit: Unit, turns: list[Turn], path: str, text: str,
                hits: dict[str, dict[str, Any]], classes: dict[str, str]
                ) -> ToolCall | dict[str, Any]:
        _, body, _ = split_frontmatter(text)
        meta = parse_note(path, text.encode("utf-8")).frontmatter
        title = str(meta.get("name") or title_of(path.rsplit("/", 1)[-1][:-3]))
        cites = cites_all(text, unit.paths)
        plan = plan_update(body, unit.summary, unit.paths[0], title, cites,
                           Linkable(tuple(self._named(hits, path, title, unit)),
                                    frozenset(self._context(unit)), title))
        sim = hits[path]["similarity"]
        if plan is None:
            return self._receipt(Action.CORROBORATE, path, "offline: already integrated; the node "
                                 "cites this source and holds its sentences", classes)
        writes = [t for t in turns if t.name in ("edit", "write") and t.args.get("path") == path]
        if writes and writes[-1].ok:
            return self._receipt(plan.action, path, f"offline: same abstraction (similarity "
                                 f"{sim:.2f}); {plan.did}", classes)
        if len(writes) >= 2:
            return self._give_up(plan.action, path, writes[-1].error, classes)
        if not writes and body.strip():
            return ToolCall("edit", {"path": path, "old": body, "new": plan.body})
        # adapt once: the whole body in one write (an edit's `old` can go stale)
        return ToolCall("write", {"path": path, "name": title, "description": str(
            meta.get("description") or node_description(unit)), "content": plan.body})

    # -- create --------------------------------------------------------------------------

    def _create(self, unit: Unit, turns: list[Turn], hits: dict[str, dict[str, Any]],
                classes: dict[str, str]) -> ToolCall | dict[str, Any]:
        writes = [t for t in turns if t.name == "write"]
        if writes and writes[-1].ok:
            path = str(writes[-1].args.get("path"))
            linked = {w.target for w in find_wikilinks(str(writes[-1].args.get("content")))
                      if w.target.startswith(f"{path.split('/')[0]}/")}
            return self._receipt(Action.CREATE, path, f"offline: new {unit.bucket} node; "
                                 f"{len(linked)} related node(s) linked", classes)
        last = writes[-1] if writes else None
        error, code = (last.error, last.code) if last is not None else ("", "")
        # The guard names the digest folder when it refuses a path outside it (the
        # vault may call it something else, and an empty vault has no hits to tell).
        folder = str(last.answer.get("digest", "")) if last is not None and last.answer else ""
        if len(writes) >= 2 or (error and code not in _RETRY_CREATE):
            return self._give_up(Action.CREATE, str(writes[-1].args.get("path")), error, classes)
        digest = folder or next((p.split("/")[0] for p in hits), self.digest)
        # A file name no other file of the vault has, nor an alias of the owner's notes,
        # never a date or an id; qualified by the unit's subject when a node on another
        # subject has the name; a name only the owner's files have is kept in a numbered
        # file (prose/node_names.py: the last ones are always free in practice).
        taken = set(hits) | {str(t.args.get("path")) for t in writes if t.code in _TAKEN}
        path, title = "", ""
        read = {str(t.args.get("path")): t for t in turns if t.name == "frontmatter_read"}
        first = read.get(f"{digest}/{unit.bucket}/{slugify(node_title(unit))}.md")
        named_by = (first.answer or {}).get("named_by", []) if first is not None else []
        names = node_names(unit, holder=holder_of(unit, named_by, digest))
        for name, slug in names:
            candidate = f"{digest}/{unit.bucket}/{slug}.md"
            if candidate in taken:
                continue
            seen = read.get(candidate)  # the last read of it
            if seen is None:
                return ToolCall("frontmatter_read", {"path": candidate})
            answer = seen.answer
            if answer is not None and not seen.error and not answer.get("exists") \
                    and not answer.get("taken"):
                path, title = candidate, name
                break
            if seen.code == Refusal.PATH_REFUSED:  # not a read folder: the guard's
                path, title = candidate, name        # answer to the write names the digest
                break
        if not path:
            return self._give_up(Action.CREATE, f"{digest}/{unit.bucket}/{names[0][1]}.md",
                                 "every name tried is taken", classes)
        linkable = [] if code in _LINK_TROUBLE else [h for p, h in hits.items() if p != path]
        return ToolCall("write", {"path": path, "name": title,
                                  "description": node_description(unit),
                                  "content": self._body(unit, linkable, title)})

    def _body(self, unit: Unit, hits: list[dict[str, Any]], name: str = "") -> str:
        """The new node: the unit's lines, links where they name nodes, a line on nodes its
        note names that they leave out, and Sources."""
        blocks = render(paragraphs(unit.summary))
        title = name or unit.title or title_of(unit.name)
        named = self._named({str(h["path"]): h for h in hits}, "", title, unit)
        blocks, linked = weave(blocks, named, self._context(unit), own=title)
        also = "" if task_list(unit.summary.splitlines()) else also_covered(
            unit.context, [c for c in named if c[0] not in linked])  # a day's chores name none
        if also:
            lead = next((i for i, b in enumerate(blocks) if b.startswith("#")), len(blocks))
            blocks.insert(lead, also)
        source = source_sentence(Action.CREATE, what_it_backs(title, unit.summary), unit.paths,
                                 words=wording_of(unit.summary), as_written=True)
        blocks.append(f"## Sources\n\n{source}")
        return "\n\n".join(b for b in blocks if b.strip()) + "\n"

    def _named(self, hits: dict[str, dict[str, Any]], exclude: str, own: str, unit: Unit
               ) -> list[tuple[str, str]]:
        """(path, name) of the recalled nodes a text of the node ``own`` may link where it
        names them: never its namesakes, whose name it says of itself, nor the digest of
        a page the unit links."""
        return without_page_digests([
            (p, str(h.get("name") or "")) for p, h in hits.items() if p != exclude and
            h.get("name") and h["similarity"] >= self.related_threshold
            and not namesake(str(h["name"]), own)], unit)

    @staticmethod
    def _context(unit: Unit) -> set[str]:
        """What the unit's note belongs to: its folders and the first word of its title."""
        return {w for p in unit.paths for w in p.lower().split("/")[1:-1]} | set(
            name_words(unit.title)[:1])

    # -- endings -------------------------------------------------------------------------

    @staticmethod
    def _receipt(action: Action, path: str, note: str, classes: dict[str, str]) -> dict[str, Any]:
        return {"action": action, "target_path": path, "note": note, "classification": classes}

    def _give_up(self, action: Action, path: str, error: str,
                 classes: dict[str, str]) -> dict[str, Any]:
        log.warning("offline integrator gives up on %s: %s", path, error)
        return self._receipt(action, path, f"offline: nothing written; the tools refused "
                             f"twice: {error}", classes)
