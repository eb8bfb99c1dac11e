"""The one-shot mode's question and answer: which nodes a unit meets, the prompt that
shows them, the schema the answer fills, and the answer read back as a ``Decision``.

Small local models rarely drive a tool loop, but they fill a JSON schema well, because
``format`` constrains what they can write. So the closest digest nodes are recalled
here (``node_search``, as the tool session would), shown with the unit (each marked
very close, related or distant by its similarity), and one decision is asked for in
the shape of :func:`decision_schema`: target, action, and for CORRECT the superseded
sentence (``old``). ``oneshot.py`` carries it out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.sections import without_sources
from vaultlink.markdown.text import clip
from vaultlink.prose.units import Unit
from vaultlink.vault.actions import DECISIONS, Action, decision_of
from vaultlink.vault.notes import parse_note

if TYPE_CHECKING:
    from vaultlink.pipeline.integrate.guard import Guard
    from vaultlink.pipeline.integrate.tools import Toolbox

CANDIDATES = 6  # nodes shown with name and description
BODIES = 2  # of which the closest are shown with the opening of their text
BODY_CHARS = 600
# A node below this similarity is never offered as the target (it stays listed, as a
# possible link); with none this close the unit is created without asking the model.
# Measured on bench/quality's labelled pairs: docs/quality.md, "one-shot decisions".
TARGET_FLOOR = 0.45
# Only nodes this close to the best one are offered as the target (same measurement).
TARGET_MARGIN = 0.05

_S = {"type": "string"}
# Only what the model must decide: the text is the unit's summary, and links are made
# where the text names a node (why: docs/performance.md, "one-shot answers").
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "target": _S, "action": {"type": "string", "enum": list(DECISIONS)}, "old": _S,
    },
    "required": ["target", "action", "old"],
}


def decision_schema(targets: list[str]) -> dict[str, Any]:
    """``DECISION_SCHEMA`` held to what can be meant: ``target`` one of the close nodes,
    ``old`` only with CORRECT. A server that constrains answers by the schema (Ollama,
    llama.cpp) cannot name another node, and a small model does not spend a minute
    copying a paragraph into ``old``."""
    target = {"type": "string", "enum": ["", *targets]}
    plain = {"type": "object", "required": ["target", "action"], "properties": {
        "target": target, "action": {"type": "string", "enum": [a for a in DECISIONS
                                                                if a != Action.CORRECT]}}}
    fix = {"type": "object", "required": ["target", "action", "old"], "properties": {
        "target": target, "action": {"type": "string", "enum": [Action.CORRECT]}, "old": _S}}
    return {"anyOf": [plain, fix]}


@dataclass(frozen=True)
class Decision:
    """One parsed one-shot answer."""

    action: Action
    target: str
    title: str
    description: str
    body: str
    old: str
    links: list[str]
    sources: str


CREATE = Decision(Action.CREATE, "", "", "", "", "", [], "")  # a new node, nothing asked


@dataclass(frozen=True)
class Candidate:
    """A recalled node as the prompt shows it."""

    path: str
    name: str
    description: str
    text: str = ""  # the opening of its body, for the closest ones
    similarity: float = 0.0  # cosine similarity to the unit (node_search)


def parse_decision(data: Any) -> Decision | str:
    """The decision in ``data``, or what is wrong with it, in words for the model."""
    if not isinstance(data, dict):
        return "the answer is not a JSON object with the fields asked for"
    action = decision_of(data.get("action", ""))
    if action is None:
        return f"action must be one of {', '.join(DECISIONS)}"
    links = data.get("links")
    return Decision(action, str(data.get("target") or "").strip(),
                    str(data.get("title") or "").strip(),
                    " ".join(str(data.get("description") or "").split()),
                    str(data.get("body") or "").strip(), str(data.get("old") or "").strip(),
                    [str(x) for x in links] if isinstance(links, list) else [],
                    " ".join(str(data.get("sources") or "").split()))


def recall(toolbox: Toolbox, unit: Unit, floor: float = TARGET_FLOOR) -> list[Candidate]:
    """The closest digest nodes for the unit, through the journaled ``node_search``; the
    opening of their text only for the closest that may be the target (``floor``)."""
    query = f"{unit.name.replace('-', ' ')}. {unit.summary}"[:500]
    answer = json.loads(toolbox.call("node_search", {"query": query, "limit": CANDIDATES}))
    scores = {str(h["path"]): float(h.get("similarity") or 0.0)
              for h in (toolbox.queries[-1]["hits"] if toolbox.queries else [])}
    out = []
    for i, hit in enumerate(answer.get("hits", [])[:CANDIDATES]):
        text = ""
        if i < BODIES and scores.get(hit["path"], 0.0) >= floor:
            try:
                _, body, _ = split_frontmatter(toolbox.text_of(hit["path"]))
                text = clip(without_sources(body), BODY_CHARS)
            except Exception:  # an unreadable node is shown without its text
                text = ""
        out.append(Candidate(hit["path"], str(hit.get("name", "")),
                             str(hit.get("description", "")), text,
                             scores.get(hit["path"], 0.0)))
    return out


def candidate_at(toolbox: Toolbox, path: str, similarity: float) -> Candidate:
    """``path`` as a listed node, with its name, description and opening."""
    try:
        note = parse_note(path, toolbox.text_of(path).encode("utf-8"))
    except Exception:  # unreadable: listed by its path alone
        return Candidate(path, "", "", "", similarity)
    meta = note.frontmatter
    return Candidate(path, str(meta.get("name") or ""), str(meta.get("description") or ""),
                     clip(without_sources(note.body), BODY_CHARS), similarity)


def closeness(similarity: float, same: float, related: float) -> str:
    """How close a node is to the unit, in words a small model can use."""
    return ("very close" if similarity >= same else
            "close" if similarity >= min(TARGET_FLOOR, same) else
            "related" if similarity >= related else "distant")


def user_prompt(unit: Unit, candidates: list[Candidate], focus: str, hint: str = "",
                same: float = 0.6, related: float = 0.24) -> str:
    """The unit, the nodes it meets (with how close each is), the bucket's focus."""
    lines = [f"Unit `{unit.name}` (bucket {unit.bucket}), from "
             + ", ".join(unit.paths) + ":", unit.summary, ""]
    if candidates:
        lines.append("Closest existing digest nodes:")
        for c in candidates:
            near = closeness(c.similarity, same, related)
            lines.append(f"- {c.path} ({near}): {c.name}. {c.description}")
            if c.text:
                lines.append(f"  Text: {c.text}")
    else:
        lines.append("There are no digest nodes yet: CREATE.")
    if focus:
        lines += ["", focus]
    if hint:
        lines += ["", f"An earlier attempt failed ({hint}); avoid that."]
    return "\n".join(lines)


def tamed(guard: Guard, d: Decision, unit: Unit) -> tuple[Decision, Unit]:
    """The decision and the unit without what the guard refuses in a node: a remote image
    or a tag that loads or runs (a clipped page's, or a prompt-injected model's), a URL
    the unit's sources do not hold (a link keeps its label). ``old`` names node text."""
    clean = guard.without_remote
    return (replace(d, title=clean(d.title), description=clean(d.description),
                    body=clean(d.body), sources=clean(d.sources)),
            replace(unit, summary=clean(unit.summary), title=clean(unit.title),
                    description=clean(unit.description)))


def named_target(raw: str, listed: list[str]) -> str | None:
    """The node a decision names: a listed path, with or without brackets or ``.md``,
    or its number in the list."""
    text = raw.strip().strip("[]").split("|")[0].strip()
    if text.isdigit() and 1 <= int(text) <= len(listed):
        return listed[int(text) - 1]
    for path in listed:
        if text in (path, path.removesuffix(".md"), path.rsplit("/", 1)[-1],
                    path.rsplit("/", 1)[-1].removesuffix(".md")):
            return path
    return text if text.endswith(".md") else None
