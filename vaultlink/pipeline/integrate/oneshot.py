"""The one-shot integrate mode: one structured answer per unit instead of a tool loop.

Small local models rarely drive a tool loop (they answer a tool turn with a copy of
the unit), but they fill a JSON schema well, because ``format`` constrains what they
can write. So: recall the closest digest nodes here (``node_search``, as the tool
session would), show them with the unit (each marked very close, related or distant by
its similarity), and ask for one decision in the shape of ``DECISION_SCHEMA``: target,
action, and for CORRECT the superseded sentence (``old``). The text written is the
unit's summary (or the model's title, description, body and sources sentence, when it
gives them), linked where it names a listed node. The decision is carried out by the
same tools under the same guard; only the Markdown around the words (the ``## Sources``
line, the links by mention, the strike-through) is written here.

What the model gets wrong is repaired when the intent is clear (a link without
``.md``, a link to nothing, a ``## Sources`` it wrote itself) and sent back as a short
correction turn otherwise, at most ``MAX_CORRECTIONS`` times.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vaultlink.errors import AnswerCut, GuardRefusal, ModelOutputError
from vaultlink.llm.chat import ChatModel, extract_json
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.sections import (
    append_source_sentence,
    cited_sources,
    without_sources,
)
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.session import MAX_CORRECTIONS, Ending, SessionOutcome
from vaultlink.prose.node_names import node_names
from vaultlink.prose.node_text import (
    SENTENCE,
    clip,
    compose,
    coverage,
    insert_before_sources,
    lead_sentence,
    new_sentences,
    new_values,
    says_correction,
    strike,
    title_of,
    weave_mentions,
    without_dangling_lead,
)
from vaultlink.prose.shared_subject import shared_subject, subject_names
from vaultlink.prose.units import Receipt, Unit, slugify
from vaultlink.prose.wording import wording_of
from vaultlink.prose.writing import cite, listing, phrase_of, source_sentence
from vaultlink.vault.actions import DECISIONS, Action, decision_of
from vaultlink.vault.notes import parse_note

if TYPE_CHECKING:
    from vaultlink.pipeline.integrate.tools import Toolbox

CANDIDATES = 6  # nodes shown with name and description
BODIES = 2  # of which the closest are shown with the opening of their text
BODY_CHARS = 600
# A node below this similarity is never offered as the target (it stays listed, as a
# possible link). On bench/quality's labelled pairs (data/dedup_pairs.json) 0.45 keeps
# 58 of 59 same-abstraction pairs and drops 71% of the others; small models otherwise
# "refine" whatever node is listed first. With no node this close the unit is created
# without asking the model: it could only answer CREATE.
TARGET_FLOOR = 0.45
# Only nodes this close to the best one are offered as the target: on the same labelled
# pairs the same-abstraction node is the best hit for 56 of 59 units and within 0.05 of
# it for all 59, while the 1.5B model picked a lower-ranked node now and then.
TARGET_MARGIN = 0.05
# Share of the unit's content words the target already holds from which the unit adds
# nothing (CORROBORATE) and below which it adds something (REFINE). The model's word is
# taken for the target and for CORRECT; small models answer REFINE for nearly every
# update, which would copy a known fact again, and a CORROBORATE that drops new words
# would lose them. Measured in bench/realmodel (decisions.json): restatements hold
# 0.83-0.92 of their words, additions 0.42-0.64.
HOLDS = 0.7

_S = {"type": "string"}
# Only what the model must decide. The text is the unit's summary, which the model
# wrote when it extracted the unit: asking for it again doubled the answer, and answer
# tokens are what a CPU pays most for (1-4 tokens/s for a 1.5B model on two cores).
# No links either: they are made where the text names a node (half of the links the
# 1.5B chose on sample_vault named another subject), and they were a third of the answer.
# A model that adds title, description, body or sources anyway has them used.
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


def own_node(toolbox: Toolbox, unit: Unit) -> str:
    """The node at the path this unit's CREATE takes, if it exists and cites the unit's
    note (an earlier attempt at the unit wrote it); else ''."""
    for slug in dict.fromkeys((slugify(unit.name), node_names(unit)[0][1])):
        path = f"{toolbox.guard.digest}/{unit.bucket}/{slug}.md"
        if slug and path in toolbox.guard.existed and cites(toolbox, path, unit.paths):
            return path
    return ""


def candidate_at(toolbox: Toolbox, path: str, similarity: float) -> Candidate:
    """``path`` as a listed node, with its name, description and opening."""
    try:
        note = parse_note(path, toolbox.text_of(path).encode("utf-8"))
    except Exception:  # unreadable: listed by its path alone
        return Candidate(path, "", "", "", similarity)
    meta = note.frontmatter
    return Candidate(path, str(meta.get("name") or ""), str(meta.get("description") or ""),
                     clip(without_sources(note.body), BODY_CHARS), similarity)


def cites(toolbox: Toolbox, path: str, sources: list[str]) -> bool:
    """Whether the node at ``path`` lists one of ``sources`` under ``## Sources``."""
    try:
        return cited_by(toolbox.text_of(path), sources)
    except Exception:  # an unreadable node is not a target anyway
        return False


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


def run_oneshot(model: ChatModel, toolbox: Toolbox, system: str, unit: Unit, focus: str,
                hint: str = "", same: float = 0.6, related: float = 0.24) -> SessionOutcome:
    """Ask once for a decision, carry it out; correct the model at most twice.

    ``same`` and ``related`` are the similarity thresholds (``integrate.*_threshold``)
    by which each listed node is called very close, related or distant."""
    outcome = SessionOutcome(Ending.ERROR)
    usage = outcome.usage
    floor = min(TARGET_FLOOR, same)
    candidates = recall(toolbox, unit, floor)
    best = max((c.similarity for c in candidates), default=0.0)
    targets = [c.path for c in candidates
               if c.similarity >= floor and c.similarity >= best - TARGET_MARGIN]
    # A close node that already cites the unit's note may be where an earlier, killed
    # attempt wrote it: it stays a target even when a sibling node scores higher.
    targets += [c.path for c in candidates if c.similarity >= floor
                and c.path not in targets and cites(toolbox, c.path, unit.paths)]
    own = own_node(toolbox, unit)
    if own and own not in targets:
        # This unit's CREATE would go there and is refused: the node exists and cites the
        # unit's note, so an earlier attempt wrote it (killed before the note was
        # checkpointed). Recall need not rank it close (look-alike nodes, a description
        # of the model's own): offer it anyway, or every retry of the unit fails.
        if own not in [c.path for c in candidates]:
            candidates = [*candidates, candidate_at(toolbox, own, best)]
        targets.append(own)
    if not targets:  # nothing close enough to update: CREATE (linked where it names one)
        problem = carry_out(toolbox, unit, Decision(Action.CREATE, "", "", "", "", "", [], ""),
                            candidates, outcome)
        usage.refusals += toolbox.refusals
        if problem:
            outcome.status, outcome.error = Ending.ERROR, problem
        return outcome
    schema = decision_schema(targets)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user_prompt(unit, candidates, focus, hint, same, related)}]
    for turn in range(1 + MAX_CORRECTIONS):
        outcome.steps = turn + 1
        usage.corrections = turn
        try:
            reply = model.chat(messages, schema=schema)
        except AnswerCut:
            usage.calls["malformed"] += 1
            messages.append({"role": "user", "content": "Your answer was cut off: answer "
                             "again with a shorter body (at most five sentences)."})
            outcome.error = "the answer was cut at its length cap"
            continue
        except ModelOutputError as exc:
            usage.calls["malformed"] += 1
            messages.append({"role": "user", "content": "Answer with the JSON object only."})
            outcome.error = str(exc)
            continue
        usage.add(reply)
        decision = parse_decision(extract_json(reply.content))
        problem = (decision if isinstance(decision, str)
                   else carry_out(toolbox, unit, decision, candidates, outcome, targets))
        if not problem:
            usage.refusals += toolbox.refusals
            return outcome
        outcome.error = problem
        if toolbox.guard.target is not None:
            break  # a write landed but the result was refused: this attempt is over
        messages += [{"role": "assistant", "content": reply.content},
                     {"role": "user", "content": f"Not accepted: {problem}. Answer again "
                                                 "with the corrected JSON object."}]
    usage.refusals += toolbox.refusals
    outcome.status = Ending.UNUSABLE if toolbox.guard.target is None else Ending.ERROR
    return outcome


def carry_out(toolbox: Toolbox, unit: Unit, d: Decision, candidates: list[Candidate],
              outcome: SessionOutcome, targets: list[str] | None = None) -> str:
    """Write the decision through the tools; '' when done, else the problem in words.
    ``targets``: the nodes close enough to be updated (default: every listed one)."""
    guard = toolbox.guard
    d, unit = tamed(guard, d, unit)
    digest = guard.digest
    listed = [c.path for c in candidates]
    targets = listed if targets is None else targets
    why = ""
    if d.action != Action.CREATE and (near := _target(d.target, listed)) in targets:
        why = unshared(toolbox, unit, d, near)
        if why:  # no evidence of a shared subject: a node of its own, linked by mention
            outcome.warnings.append(why)
            d = replace(d, action=Action.CREATE, target="", old="")
    if d.action == Action.CREATE and d.target in listed and d.target in guard.existed:
        return (f"CREATE makes a new node, but you named {d.target} as the target: to add "
                "to it answer CORROBORATE, REFINE or CORRECT; for a new node the target is \"\"")
    if d.action == Action.CREATE:
        # a name from what the note says, that no file of the vault nor an alias of the
        # owner's notes has (never a date or an id): else qualified by its subject
        path, title = "", ""
        for name, slug in node_names(unit, d.title):
            candidate = f"{digest}/{unit.bucket}/{slug}.md"
            if candidate not in guard.existed and not guard.name_taken(candidate):
                path, title = candidate, name
                break
        if not path:
            return ("every name this unit could take is taken: to add to a node, answer "
                    "REFINE or CORROBORATE with its path; else choose another title")
        body = weave_mentions(_prose(toolbox, d.body or unit.summary, path, ""),
                              _mentionable(candidates, path, ""))
        text = compose(body, _source_line(d, unit, Action.CREATE, title, body))
        answer = toolbox.call("write", {"path": path, "name": title,
                                        "description": d.description or clip(
                                            lead_sentence(unit.summary), 200),
                                        "content": text})
    else:
        named = _target(d.target, listed)
        if named is None or named not in guard.existed or named not in targets:
            return (f"the target of {d.action} must be one of {', '.join(targets)}; or "
                    'answer CREATE with target ""')
        path = named
        _, old_body, _ = split_frontmatter(toolbox.text_of(path))
        # A CORRECT needs a claim to supersede: the unit says it corrects, or the model's
        # `old` is a sentence of the node and the unit brings a value the node lacks (the
        # 1.5B also answered CORRECT, with a real `old`, for plain restatements). Else it
        # is judged like the other updates.
        evident = says_correction(unit.summary) or (
            d.action == Action.CORRECT and bool(d.old) and strike(old_body, d.old, "") is not None
            and new_values(unit.summary, old_body))
        if d.action != Action.CORRECT or not evident:
            held = coverage(unit.summary, without_sources(old_body))
            # a value the node lacks ("25 minutes") is news, however many words it shares
            repeats = held >= HOLDS and not new_values(unit.summary, old_body)
            action = Action.CORROBORATE if repeats else Action.REFINE
            if evident:
                action, held = Action.CORRECT, 0.0  # the unit says so: it corrects the node
            if action != d.action:
                outcome.warnings.append(
                    f"the model said {d.action}; the unit says it corrects {path}: CORRECT"
                    if action == Action.CORRECT else f"the model said {d.action}; {path} holds "
                    f"{held:.0%} of the unit's words: {action}")
                d = replace(d, action=action)
        old_text = toolbox.text_of(path)
        note = parse_note(path, old_text.encode("utf-8"))
        title = str(note.frontmatter.get("name") or title_of(unit.name, unit.summary))
        body, action = _updated(toolbox, note.body, d, unit, path, title,
                                _mentionable(candidates, path, note.body))
        if action != d.action:
            outcome.warnings.append(f"{path} holds every sentence of the unit: {action}")
            d = replace(d, action=action)
        if (action == Action.CORROBORATE and _adds_no_line(note.body, body)
                and coverage(unit.summary, old_text) >= HOLDS):
            # One page whose units confirm a node twice gave it the same "confirmed
            # again by" line twice: the node says it already, citing this very note.
            outcome.status = Ending.UNCHANGED
            outcome.receipt = Receipt(Action.CORROBORATE, path,
                                      f"corroborate: {clip(unit.summary, 100)}", {})
            return ""
        answer = toolbox.call("write", {"path": path, "name": title,
                                        "description": str(note.frontmatter.get("description")
                                                           or d.description),
                                        "content": body})
    result = json.loads(answer)
    if "error" in result:
        return str(result["error"])
    before, after = toolbox.before.get(path), toolbox.current[path]
    classes = {p: ("same_abstraction" if p == path else "related" if f"[[{p}" in after
                   else "unrelated") for p in listed}
    receipt = Receipt(d.action, path, f"{d.action.lower()}: {clip(unit.summary, 100)}"
                      + (f" ({why})" if why else ""), classes)
    try:
        outcome.receipt = guard.check_result(receipt, before, after)
    except GuardRefusal as exc:
        outcome.usage.refusals.append(exc.code.value)
        return str(exc)
    outcome.status = Ending.DONE
    return ""


def unshared(toolbox: Toolbox, unit: Unit, d: Decision, path: str) -> str:
    """Why the update ``d`` of ``path`` is made a CREATE, or '' when it stands: the unit
    names the node's subject (name, alias, the phrase its description opens with) or
    states its facts (``subject.shared_subject``), or the node is the unit's own (an
    earlier attempt wrote it). The model's word and nearness are no evidence."""
    if path not in toolbox.guard.existed or path == own_node(toolbox, unit):
        return ""
    try:
        note = parse_note(path, toolbox.text_of(path).encode("utf-8"))
    except Exception:  # unreadable: the update fails on its own
        return ""
    text = f"{unit.title or unit.name.replace('-', ' ')}\n{unit.summary}"
    if shared_subject(text, note.frontmatter, without_sources(note.body), unit.summary):
        return ""
    return (f"the model said {d.action} {path}, but the unit neither names its subject "
            f"({', '.join(subject_names(note.frontmatter)) or path}) nor states its facts: "
            f"{Action.CREATE}")


def tamed(guard: Guard, d: Decision, unit: Unit) -> tuple[Decision, Unit]:
    """The decision and the unit without what the guard refuses in a node: a remote image
    or a tag that loads or runs (a clipped page's, or a prompt-injected model's), a URL
    the unit's sources do not hold (a link keeps its label). ``old`` names node text."""
    clean = guard.without_remote
    return (replace(d, title=clean(d.title), description=clean(d.description),
                    body=clean(d.body), sources=clean(d.sources)),
            replace(unit, summary=clean(unit.summary), title=clean(unit.title),
                    description=clean(unit.description)))


# -- composing the Markdown around the model's words ---------------------------------


def _mentionable(candidates: list[Candidate], path: str, body: str) -> list[tuple[str, str]]:
    """The listed nodes a new text may link by mention: not the node itself, nor one
    its body links already."""
    return [(c.path, c.name) for c in candidates
            if c.path != path and f"[[{c.path}" not in body]


def _updated(toolbox: Toolbox, body: str, d: Decision, unit: Unit, path: str, title: str,
             mentionable: list[tuple[str, str]]) -> tuple[str, Action]:
    """The node's body after an update (additive, the source line last) and the action
    it carries out: a REFINE whose every sentence the node holds is a CORROBORATE."""
    new = weave_mentions(_prose(toolbox, d.body or unit.summary, path, body), mentionable)
    if d.action == Action.REFINE and not new:
        d = replace(d, action=Action.CORROBORATE)
    cited = cited_by(body, unit.paths)
    # A corroboration from a note the node cites already says which part it confirms
    # (three units of one page gave three identical "confirmed again by" lines).
    line = _source_line(d, unit, d.action, title, unit.summary if cited else new)
    if d.action == Action.REFINE:
        body = insert_before_sources(body, new)
        if cited:  # the note is credited already: one Sources line per note
            return body, d.action
    elif d.action == Action.CORRECT:
        fixed = clip(new or unit.summary, 500)
        said = f"Corrected: {fixed} ({listing([cite(p) for p in unit.paths])})."
        struck = (strike(body, d.old, said) if d.old
                  else strike(body, unit.summary, said, within=True))
        body = struck if struck is not None else insert_before_sources(
            body, said)
    return append_source_sentence(body, line), d.action


def _adds_no_line(old: str, new: str) -> bool:
    """Whether every line of ``new`` is already a line of ``old``."""
    have = set(old.splitlines())
    return all(line in have for line in new.splitlines())


def _source_line(d: Decision, unit: Unit, action: Action, title: str, added: str) -> str:
    """A source list item saying what the source backs: the model's sentence about it
    when it wrote one, else the node's subject (what a new or confirmed node rests on)
    or the words of what an update added ("Reciprocal rank fusion paper: taken from
    [[daily/2026-06-08.md|the 2026-06-08 note]].")."""
    sentence = re.sub(r"\[\[[^\]]*\]\]", "", d.sources).strip().rstrip(".")
    cites = listing([cite(p) for p in unit.paths])
    if len(re.findall(r"[^\W_]+", sentence)) >= 3:
        return f"- {sentence[:1].upper()}{sentence[1:]} ({cites})."
    what = title
    if added:  # what an update added (or a repeat confirms): in its own words
        what = phrase_of([s for s in SENTENCE.split(" ".join(added.split())) if s]) or title
    return source_sentence(action, what, unit.paths, words=wording_of(unit.summary),
                           as_written=what == title)


def _prose(toolbox: Toolbox, text: str, path: str, known: str) -> str:
    """The model's text as new prose for a node whose body is ``known``: cleaned, no
    sentence the node holds or the text repeats, no closing lead-in to nothing."""
    return without_dangling_lead(new_sentences(_clean(toolbox, text, path),
                                               without_sources(known)))


def cited_by(body: str, sources: list[str]) -> bool:
    """Whether the body's ``## Sources`` already cites one of ``sources``."""
    cited = {t.removesuffix(".md") for t in cited_sources(body)}
    return any(s.removesuffix(".md") in cited for s in sources)


def _clean(toolbox: Toolbox, text: str, path: str) -> str:
    """The model's prose as a body part: no frontmatter, no Sources section of its
    own, headings demoted below the node's, links made full paths or plain text."""
    head, body, _ = split_frontmatter(text.strip() + "\n")
    body = without_sources(body if head else text)
    body = re.sub(r"(?m)^#{1,2} ", "### ", body).strip()
    for link in find_wikilinks(body):
        full = toolbox.guard.link_target(link.target, path)
        body = body.replace(link.raw, f"[[{full}]]" if full else link.target.rsplit("/", 1)[-1]
                            .removesuffix(".md"))
    return body


def _target(raw: str, listed: list[str]) -> str | None:
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
