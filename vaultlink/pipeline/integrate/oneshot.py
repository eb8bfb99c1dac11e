"""The one-shot integrate mode: one structured answer per unit instead of a tool loop.

``decision.py`` recalls the nodes the unit meets and asks for one decision; this module
carries it out. The text written is the unit's summary (or the model's title,
description, body and sources sentence, when it gives them), linked where it names a
listed node. The decision is carried out by the same tools under the same guard; only
the Markdown around the words (the ``## Sources`` line, the links by mention, the
strike-through) is written here.

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
from vaultlink.markdown.sections import append_source_sentence, cites_any, without_sources
from vaultlink.markdown.text import clip
from vaultlink.pipeline.integrate.decision import (
    CREATE,
    TARGET_FLOOR,
    TARGET_MARGIN,
    Candidate,
    Decision,
    candidate_at,
    decision_schema,
    named_target,
    parse_decision,
    recall,
    tamed,
    user_prompt,
)
from vaultlink.pipeline.integrate.holds import (
    HOLDS,
    held_share,
    holds_words,
    node_cites,
    own_node,
    unshared,
)
from vaultlink.pipeline.integrate.session import MAX_CORRECTIONS, Ending, SessionOutcome
from vaultlink.prose.node_names import (
    holder_of,
    node_names,
    node_title,
    title_slugs,
    without_page_digests,
)
from vaultlink.prose.node_text import (
    SENTENCE,
    compose,
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
from vaultlink.prose.turns import told_by
from vaultlink.prose.units import Receipt, Unit, slugify
from vaultlink.prose.wording import wording_of
from vaultlink.prose.writing import cite, listing, phrase_of, source_sentence
from vaultlink.vault.actions import Action
from vaultlink.vault.notes import parse_note

if TYPE_CHECKING:
    from vaultlink.pipeline.integrate.tools import Toolbox


@dataclass(frozen=True)
class Written:
    """A decision's write, made and not yet checked: the decision as carried out, the
    node, and the ``write`` tool's answer."""

    decision: Decision
    path: str
    answer: str


def offered(toolbox: Toolbox, unit: Unit, same: float) -> tuple[list[Candidate], list[str]]:
    """The nodes shown with the unit, and those of them it may update (the targets)."""
    floor = min(TARGET_FLOOR, same)
    candidates = recall(toolbox, unit, floor)
    best = max((c.similarity for c in candidates), default=0.0)
    targets = [c.path for c in candidates
               if c.similarity >= floor and c.similarity >= best - TARGET_MARGIN]
    # A close node that already cites the unit's note may be where an earlier, killed
    # attempt wrote it: it stays a target even when a sibling node scores higher.
    targets += [c.path for c in candidates if c.similarity >= floor
                and c.path not in targets and node_cites(toolbox, c.path, unit.paths)]
    own = own_node(toolbox, unit)
    if own and own not in targets:
        # This unit's CREATE would go there and is refused: an earlier attempt wrote it
        # (killed before the note was checkpointed). Recall need not rank it close:
        # offer it anyway, or every retry of the unit fails.
        if own not in [c.path for c in candidates]:
            candidates = [*candidates, candidate_at(toolbox, own, best)]
        targets.append(own)
    return candidates, targets


def run_oneshot(model: ChatModel, toolbox: Toolbox, system: str, unit: Unit, focus: str,
                hint: str = "", same: float = 0.6, related: float = 0.24) -> SessionOutcome:
    """Ask once for a decision, carry it out; correct the model at most twice.

    ``same`` and ``related`` are the similarity thresholds (``integrate.*_threshold``)
    by which each listed node is called very close, related or distant."""
    outcome = SessionOutcome(Ending.ERROR)
    candidates, targets = offered(toolbox, unit, same)
    if not targets:  # nothing close enough to update: CREATE (linked where it names one)
        problem = carry_out(toolbox, unit, CREATE, candidates, outcome)
        outcome.usage.refusals += toolbox.refusals
        if problem:
            outcome.status, outcome.error = Ending.ERROR, problem
        return outcome
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user_prompt(unit, candidates, focus, hint, same, related)}]
    if _ask(model, toolbox, unit, messages, candidates, targets, outcome):
        outcome.usage.refusals += toolbox.refusals
        return outcome
    outcome.usage.refusals += toolbox.refusals
    outcome.status = Ending.UNUSABLE if toolbox.guard.target is None else Ending.ERROR
    return outcome


def _ask(model: ChatModel, toolbox: Toolbox, unit: Unit, messages: list[dict[str, Any]],
         candidates: list[Candidate], targets: list[str], outcome: SessionOutcome) -> bool:
    """The model's turns: True once a decision is carried out, False when the turns are
    used up or a write landed and was refused (``outcome.error`` says why)."""
    usage = outcome.usage
    schema = decision_schema(targets)
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
            return True
        outcome.error = problem
        if toolbox.guard.target is not None:
            return False  # a write landed but the result was refused: this attempt is over
        messages += [{"role": "assistant", "content": reply.content},
                     {"role": "user", "content": f"Not accepted: {problem}. Answer again "
                                                 "with the corrected JSON object."}]
    return False


def carry_out(toolbox: Toolbox, unit: Unit, d: Decision, candidates: list[Candidate],
              outcome: SessionOutcome, targets: list[str] | None = None) -> str:
    """Write the decision through the tools; '' when done, else the problem in words.
    ``targets``: the nodes close enough to be updated (default: every listed one)."""
    guard = toolbox.guard
    d, unit = tamed(guard, d, unit)
    listed = [c.path for c in candidates]
    targets = listed if targets is None else targets
    why = ""
    if d.action != Action.CREATE and (near := named_target(d.target, listed)) in targets:
        why = unshared(toolbox, unit, d, near)
        if why:  # no evidence of a shared subject: a node of its own, linked by mention
            outcome.warnings.append(why)
            d = replace(d, action=Action.CREATE, target="", old="")
    if d.action == Action.CREATE and d.target in listed and d.target in guard.existed:
        return (f"CREATE makes a new node, but you named {d.target} as the target: to add "
                "to it answer CORROBORATE, REFINE or CORRECT; for a new node the target is \"\"")
    written = (_create(toolbox, unit, d, candidates) if d.action == Action.CREATE
               else _update(toolbox, unit, d, candidates, targets, outcome))
    if isinstance(written, str):  # a problem, or '' for a node that holds the unit
        return written
    return _checked(toolbox, unit, written, listed, why, outcome)


def _create(toolbox: Toolbox, unit: Unit, d: Decision,
            candidates: list[Candidate]) -> Written | str:
    """A new node under a name from what the note says, that no file of the vault nor
    an alias of the owner's notes has (never a date or an id): else qualified by its
    subject."""
    guard = toolbox.guard
    path, title = "", ""
    holders = guard.files_named(title_slugs(slugify(node_title(unit, d.title))))
    for name, slug in node_names(unit, d.title, holder_of(unit, holders, guard.digest)):
        candidate = f"{guard.digest}/{unit.bucket}/{slug}.md"
        if candidate not in guard.existed and not guard.name_taken(candidate):
            path, title = candidate, name
            break
    if not path:
        return ("every name this unit could take is taken: to add to a node, answer "
                "REFINE or CORROBORATE with its path; else choose another title")
    body = weave_mentions(_prose(toolbox, d.body or unit.summary, path, ""),
                          _mentionable(candidates, path, "", unit), title)
    text = compose(body, _source_line(d, unit, Action.CREATE, title, body))
    answer = toolbox.call("write", {"path": path, "name": title,
                                    "description": d.description or clip(
                                        lead_sentence(unit.summary), 200),
                                    "content": text})
    return Written(d, path, answer)


def _update(toolbox: Toolbox, unit: Unit, d: Decision, candidates: list[Candidate],
            targets: list[str], outcome: SessionOutcome) -> Written | str:
    """The update of a listed node, its action judged from the words the unit adds."""
    named = named_target(d.target, [c.path for c in candidates])
    if named is None or named not in toolbox.guard.existed or named not in targets:
        return (f"the target of {d.action} must be one of {', '.join(targets)}; or "
                'answer CREATE with target ""')
    path = named
    d = _judged(toolbox, unit, d, path, outcome)
    old_text = toolbox.text_of(path)
    note = parse_note(path, old_text.encode("utf-8"))
    title = str(note.frontmatter.get("name") or title_of(unit.name, unit.summary))
    body, action = _updated(toolbox, note.body, d, unit, path, title,
                            _mentionable(candidates, path, note.body, unit))
    if action != d.action:
        outcome.warnings.append(f"{path} holds every sentence of the unit: {action}")
        d = replace(d, action=action)
    if (action == Action.CORROBORATE and _adds_no_line(note.body, body)
            and holds_words(unit.summary, old_text)):
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
    return Written(d, path, answer)


def _judged(toolbox: Toolbox, unit: Unit, d: Decision, path: str,
            outcome: SessionOutcome) -> Decision:
    """The decision with the action the words say: the model's word is taken for the
    target and for a CORRECT with evidence; else CORROBORATE or REFINE by what the node
    holds (``held_share``)."""
    _, old_body, _ = split_frontmatter(toolbox.text_of(path))
    # A CORRECT needs a claim to supersede: the unit says it corrects, or the model's
    # `old` is a sentence of the node and the unit brings a value the node lacks.
    # (a conversation's "I used to be shy" tells of its speaker, not of the node: there
    # the model's `old` sentence is the evidence)
    talk = bool(told_by(unit.summary.split("\n")))
    evident = (says_correction(unit.summary) and not talk) or (
        d.action == Action.CORRECT and bool(d.old) and strike(old_body, d.old, "") is not None
        and new_values(unit.summary, old_body))
    if d.action == Action.CORRECT and evident:
        return d
    held = held_share(unit.summary, without_sources(old_body))
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
    return d


def _checked(toolbox: Toolbox, unit: Unit, w: Written, listed: list[str], why: str,
             outcome: SessionOutcome) -> str:
    """The write's receipt, checked by the guard; '' when it stands, else why not."""
    result = json.loads(w.answer)
    if "error" in result:
        return str(result["error"])
    d, path = w.decision, w.path
    before, after = toolbox.before.get(path), toolbox.current[path]
    classes = {p: ("same_abstraction" if p == path else "related" if f"[[{p}" in after
                   else "unrelated") for p in listed}
    receipt = Receipt(d.action, path, f"{d.action.lower()}: {clip(unit.summary, 100)}"
                      + (f" ({why})" if why else ""), classes)
    try:
        outcome.receipt = toolbox.guard.check_result(receipt, before, after)
    except GuardRefusal as exc:
        outcome.usage.refusals.append(exc.code.value)
        return str(exc)
    outcome.status = Ending.DONE
    return ""


# -- composing the Markdown around the model's words ---------------------------------


def _mentionable(candidates: list[Candidate], path: str, body: str,
                 unit: Unit) -> list[tuple[str, str]]:
    """The listed nodes a new text may link by mention: not the node itself, nor one
    its body links already, nor the digest of a page the unit links."""
    return without_page_digests([(c.path, c.name) for c in candidates
                                 if c.path != path and f"[[{c.path}" not in body], unit)


def _updated(toolbox: Toolbox, body: str, d: Decision, unit: Unit, path: str, title: str,
             mentionable: list[tuple[str, str]]) -> tuple[str, Action]:
    """The node's body after an update (additive, the source line last) and the action
    it carries out: a REFINE whose every sentence the node holds is a CORROBORATE."""
    new = weave_mentions(_prose(toolbox, d.body or unit.summary, path, body), mentionable,
                         title)
    if d.action == Action.REFINE and not new:
        d = replace(d, action=Action.CORROBORATE)
    cited = cites_any(body, unit.paths)
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
