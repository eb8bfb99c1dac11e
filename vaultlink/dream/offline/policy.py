"""The offline integrator: a deterministic chat model that works the six tools.

``OfflinePolicy`` answers ``chat`` the way a tool-calling model would, so the offline
path runs through the same agent loop, toolbox and guard as Ollama, and nothing it
writes skips a check. It keeps no state: every turn it re-reads the conversation
(the unit from the user message, earlier tool answers from the ``tool`` messages) and
takes the next step of one plan:

1. ``node_search`` with the unit's name words and summary (limit 20).
2. Classify hits by cosine ``similarity``: ``same_abstraction`` at or above
   ``same_threshold`` (the best one is the update target), ``related`` at or above
   ``related_threshold``, else ``unrelated``. A related best hit at 0.45 or more with
   nothing within 0.25 of it counts as the same abstraction too: in a young digest,
   the same topic from another angle scores there, and without neighbours it is no
   neighbour. So does a related node at 0.45 or more named exactly as the unit (else
   the CREATE would be ``<slug>-2``); a namesake further off is another topic.
3. ``read`` the targets and the two closest related nodes (in pages, the latter only
   while ``max_steps`` leaves five turns for the write): one that already cites the
   source and holds every sentence is where the unit went before (a replay, or a node
   that since drifted below the cut). With a target:
   - the node already cites the source and holds every sentence: a replay; answer
     CORROBORATE without writing (the agent loop records it as already integrated);
   - the unit brings sentences the node lacks: REFINE, one ``edit`` that inserts them
     before ``## Sources`` with the source cited, plus a source sentence;
   - otherwise CORROBORATE: one ``edit`` that appends a source sentence.
4. Without one: CREATE ``digest/<bucket>/<slug>.md`` (``frontmatter_read`` finds a
   free slug), body shaped by bucket, related nodes woven in as sentences, and a
   ``## Sources`` section.

It never answers CORRECT: telling that a note contradicts a node needs understanding
that word overlap cannot give, so a correction arrives as REFINE (the new statement
is added beside the old one, with its source) and waits for a model or the user.
A tool error is adapted to once (a write without related links, another slug, a
whole-body ``write`` after a failed ``edit``, CREATE after a failed ``read``); a
second one ends the session with a receipt that explains.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from vaultlink.dream.offline.text import (
    STEP_MARK,
    Turn,
    content_words,
    delink,
    edit_pair,
    links_text,
    read_turns,
    read_unit,
    short,
    summary_lines,
    title_of,
)
from vaultlink.dream.units import Unit, slugify
from vaultlink.errors import Refusal
from vaultlink.llm.chat import ChatReply, ToolCall
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.sections import cited_sources
from vaultlink.vault.notes import parse_note

log = logging.getLogger(__name__)

SEARCH_LIMIT = 20
MAX_RELATED = 3       # links woven into a new node (best F1 in bench.quality); an update: 2
MAX_SAME_READS = 3    # same-abstraction candidates read to find the one citing the source
PAGE_LINES = 40       # read in pages: a tool answer over 6,000 characters is cut
COVERED = 0.7         # share of a sentence's words the node must hold to already say it
MAX_DESCRIPTION = 280
# Same abstraction below same_threshold (a young digest scores the same topic from
# another angle at 0.45-0.6): a close best hit with nothing near it, or a close namesake.
CLOSE = 0.45
STANDS_ALONE_GAP = 0.25
REPLAY_READS = 2     # closest related nodes read to find a unit already integrated
RESERVED_STEPS = 5   # turns a session keeps for the write after its optional reads
_WHY = re.compile(r"\bbecause\b|\bthe only way\b|^(that's|this is) why\b|^the reason\b",
                  re.IGNORECASE)
_HOW = re.compile(r"^(if|when|whenever)\b", re.IGNORECASE)  # a condition: how to apply
# A CREATE the guard refused is tried once more, elsewhere or plainer, for these codes
# only: another path (not a node path, or taken), or no links (a link it refused).
_TAKEN = frozenset({Refusal.EXISTS, Refusal.NOT_EXISTING})
_LINK_TROUBLE = frozenset({Refusal.UNRESOLVED_LINK, Refusal.BARE_SOURCE_LINE,
                           Refusal.NOT_ADDITIVE})
_RETRY_CREATE = frozenset({Refusal.NOT_A_NODE_PATH}) | _TAKEN | _LINK_TROUBLE
_DEFINITION = re.compile(r"^[^.:;]{0,80}?\b(is|are|means|refers to)\s+(a|an|the|our)\b")


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
        done = next((p for p in texts if set(unit.paths) <= cited_sources(texts[p])
                     and not self._fresh(unit, texts[p])), None)
        if done is not None:
            return self._update(unit, turns, done, texts[done], hits, classes)
        target = next((p for p in same if p in texts), None)
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

    def _related(self, hits: dict[str, dict[str, Any]], exclude: str,
                 already: set[str]) -> list[str]:
        """Related-node sentences, most similar first, for nodes not yet linked."""
        ranked = sorted((h for p, h in hits.items() if p != exclude and p not in already
                         and h["similarity"] >= self.related_threshold),
                        key=lambda h: -h["similarity"])[:MAX_RELATED]
        out = []
        for h in ranked:
            path, name = h["path"], short(str(h.get("name") or ""), 80) or h["path"]
            # a short gloss: a long one would pull this node's embedding towards its neighbours
            about = f"{name}: {short(str(h.get('description') or ''), 60)}".rstrip(": ")
            kind = path.split("/")[1] if path.count("/") == 2 else "wiki"
            if h["similarity"] >= self.same_threshold:
                out.append(f"It overlaps closely with [[{path}]] ({about}).")
            elif kind == "procedure":
                out.append(f"A related procedure is [[{path}]] ({about}).")
            elif kind == "personal":
                out.append(f"A related preference is recorded in [[{path}]] ({about}).")
            else:
                out.append(f"Related background is in [[{path}]] ({about}).")
        return out

    # -- update (CORROBORATE / REFINE) ---------------------------------------------------

    def _read_node(self, turns: list[Turn], path: str) -> tuple[str | None, ToolCall | None]:
        """The node's full text once all pages are read, or the next read; (None, None): failed."""
        reads = [t for t in turns if t.name == "read" and t.args.get("path") == path]
        pages: dict[int, str] = {}
        start, size, total = 1, PAGE_LINES, None
        for t in reads:
            if t.error or len(reads) > 8:
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
        missing = [p for p in unit.paths if p not in cited_sources(text)]
        fresh = self._fresh(unit, text)
        sim = hits[path]["similarity"]
        if not missing and not fresh:
            return self._receipt("CORROBORATE", path, "offline: already integrated; the node "
                                 "cites this source and holds its sentences", classes)
        action = "REFINE" if fresh else "CORROBORATE"
        linked = {link.target for link in find_wikilinks(body)}
        writes = [t for t in turns if t.name in ("edit", "write") and t.args.get("path") == path]
        if writes and writes[-1].ok:
            did = (f"added {len(fresh)} sentence(s) and the source" if fresh
                   else "added the source")
            return self._receipt(action, path, f"offline: same abstraction (similarity "
                                 f"{sim:.2f}); {did}", classes)
        if len(writes) >= 2:
            return self._give_up(action, path, writes[-1].error, classes)
        related = [] if writes or not fresh else self._related(hits, path, linked)[:2]
        old, new = edit_pair(body, self._insertion(unit, fresh, related),
                              self._source_line(action, missing))
        if not writes and old:
            return ToolCall("edit", {"path": path, "old": old, "new": new})
        # adapt once: the whole body in one write (an edit's `old` can go stale)
        meta = parse_note(path, text.encode("utf-8")).frontmatter
        return ToolCall("write", {"path": path, "name": str(meta.get("name") or title_of(
            path.rsplit("/", 1)[-1][:-3])), "description": str(meta.get("description") or
            self._description(unit)), "content": body.replace(old, new, 1) if old else new})

    def _fresh(self, unit: Unit, text: str) -> list[str]:
        """The unit's sentences the node does not already say."""
        have = set(content_words(delink(split_frontmatter(text)[1])))
        return [line for line in summary_lines(unit.summary) if not self._covered(line, have)]

    @staticmethod
    def _covered(line: str, have: set[str]) -> bool:
        words = set(content_words(delink(STEP_MARK.sub("", line))))
        if len(words) < 3:
            return True  # too little to be worth adding on its own
        return len(words & have) >= COVERED * len(words)

    def _insertion(self, unit: Unit, fresh: list[str], related: list[str]) -> str:
        if not fresh:
            return ""
        steps = [STEP_MARK.sub("", delink(s)) for s in fresh if STEP_MARK.match(s)]
        prose = [delink(s) for s in fresh if not STEP_MARK.match(s)]
        parts = []
        if prose:
            parts.append(f"Added from {links_text(unit.paths)}: " + " ".join(prose))
        if steps:
            parts.append(f"Further steps from {links_text(unit.paths)}:\n\n"
                         + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)))
        if related:
            parts.append(" ".join(related))
        return "\n\n".join(parts)

    @staticmethod
    def _source_line(action: str, paths: list[str]) -> str:
        if not paths:
            return ""
        if action == "CORROBORATE":
            return f"- The same point came up again in {links_text(paths)}."
        if action == "REFINE":
            return f"- The added detail comes from {links_text(paths)}."
        return f"- The points above are taken from {links_text(paths)}."

    # -- create --------------------------------------------------------------------------

    def _create(self, unit: Unit, turns: list[Turn], hits: dict[str, dict[str, Any]],
                classes: dict[str, str]) -> ToolCall | dict[str, Any]:
        writes = [t for t in turns if t.name == "write"]
        if writes and writes[-1].ok:
            path = str(writes[-1].args.get("path"))
            linked = {w.target for w in find_wikilinks(str(writes[-1].args.get("content")))
                      if w.target.startswith(f"{path.split('/')[0]}/")}
            return self._receipt("CREATE", path, f"offline: new {unit.bucket} node; "
                                 f"{len(linked)} related node(s) linked", classes)
        last = writes[-1] if writes else None
        error, code = (last.error, last.code) if last is not None else ("", "")
        # The guard names the digest folder when it refuses a path outside it (the
        # vault may call it something else, and an empty vault has no hits to tell).
        folder = str(last.answer.get("digest", "")) if last is not None and last.answer else ""
        if len(writes) >= 2 or (error and code not in _RETRY_CREATE):
            return self._give_up("CREATE", str(writes[-1].args.get("path")), error, classes)
        digest = folder or next((p.split("/")[0] for p in hits), self.digest)
        base = slugify(unit.name)
        taken = set(hits) | {str(t.args.get("path")) for t in writes if t.code in _TAKEN}
        path = ""
        for n in range(1, 6):
            candidate = f"{digest}/{unit.bucket}/{base if n == 1 else f'{base}-{n}'}.md"
            if candidate in taken:
                continue
            seen = [t for t in turns if t.name == "frontmatter_read"
                    and t.args.get("path") == candidate]
            if not seen:
                return ToolCall("frontmatter_read", {"path": candidate})
            answer = seen[-1].answer
            if answer is not None and not seen[-1].error and not answer.get("exists"):
                path = candidate
                break
        if not path:
            return self._give_up("CREATE", f"{digest}/{unit.bucket}/{base}.md",
                                 "no free slug", classes)
        related = [] if code in _LINK_TROUBLE else self._related(hits, path, set())
        return ToolCall("write", {"path": path, "name": title_of(base),
                                  "description": self._description(unit),
                                  "content": self._body(unit, related)})

    def _description(self, unit: Unit) -> str:
        lines = summary_lines(unit.summary)
        prose = [s for s in lines if not STEP_MARK.match(s) and not s.rstrip().endswith(":")]
        if unit.bucket == "wiki":  # a definition says best what the node is
            prose.sort(key=lambda s: 0 if _DEFINITION.search(s) else 1)
        if prose:
            return short(prose[0], MAX_DESCRIPTION)
        first = STEP_MARK.sub("", lines[0]) if lines else unit.name
        return short(f"Steps for {unit.name.replace('-', ' ')}, starting with: {first}",
                      MAX_DESCRIPTION)

    def _body(self, unit: Unit, related: list[str]) -> str:
        """The new node's body in the bucket's shape, quoting only the unit's sentences."""
        lines = [delink(s) for s in summary_lines(unit.summary)]
        steps = [STEP_MARK.sub("", s) for s in lines if STEP_MARK.match(s)]
        prose = [s for s in lines if not STEP_MARK.match(s)]
        parts: list[str] = []
        if unit.bucket == "personal":
            why = [s for s in prose if _WHY.search(s)]
            how = [s for s in prose if _HOW.search(s) and s not in why]
            rule = [s for s in prose if s not in why and s not in how] or (why + how)[:1]
            why, how = [s for s in why if s not in rule], [s for s in how if s not in rule]
            parts.append(" ".join(rule))
            if why:
                parts.append("**Why:** " + " ".join(why))
            if how:
                parts.append("**How to apply:** " + " ".join(how))
        else:
            if unit.bucket == "wiki":  # definition first
                prose.sort(key=lambda s: 0 if _DEFINITION.search(s) else 1)
            if prose:
                parts.append(" ".join(prose))
        if steps:
            parts.append("\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)))
        if related:
            parts.append(" ".join(related))
        parts.append("## Sources\n\n" + self._source_line("CREATE", unit.paths))
        return "\n\n".join(p for p in parts if p.strip()) + "\n"

    # -- endings -------------------------------------------------------------------------

    @staticmethod
    def _receipt(action: str, path: str, note: str, classes: dict[str, str]) -> dict[str, Any]:
        return {"action": action, "target_path": path, "note": note, "classification": classes}

    def _give_up(self, action: str, path: str, error: str,
                 classes: dict[str, str]) -> dict[str, Any]:
        log.warning("offline integrator gives up on %s: %s", path, error)
        return self._receipt(action, path, f"offline: nothing written; the tools refused "
                             f"twice: {error}", classes)
