"""A competent scripted model for the fake Ollama server, planned from the sample vault.

It plays every role an Ollama model has in vaultlink. For extract (a ``format`` asking
for ``units``) it reads the note path and the ``## section`` headings it was sent and
returns the planned unit of each section it knows. For integrate with tools it works
like a careful model would: ``node_search``, ``read`` the target, then ``write`` or
``edit`` through the tools, and a receipt. For a one-shot decision (a ``format`` asking
for ``action``) it answers the planned action and text. Everything it does goes through
the real client, the real agent loop or one-shot mode, and the real guard.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fakes.ollama_server import reply
from tests.vaults import SAMPLE_VAULT

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "sample_vault_cases.json"


@dataclass(frozen=True)
class Plan:
    """What the model will do with one unit."""

    source: str
    section: str
    name: str
    bucket: str
    summary: str
    action: str
    target: str = ""
    old_claim: str = ""


def sample_plans() -> list[Plan]:
    """One plan per case of tests/fixtures/sample_vault_cases.json."""
    cases = json.loads(CASES.read_text())
    plans = []
    for c in cases["create"]:
        plans.append(Plan(c["source"], c["section"], c["slug_hint"], c["bucket"],
                          c["topic"] + ".", "CREATE"))
    for kind in ("corroborate", "refine", "correct"):
        for c in cases[kind]:
            slug = c["target"].rsplit("/", 1)[-1][:-3]
            # a unit says what it is about, as an extractor writes it: an update must
            # name its node's subject (issue 40) or it is a new node
            summary = {"corroborate": _restated(c["target"]),
                       "refine": f"{_name(c['target'])}: {c.get('new_facts', '')}.",
                       "correct": f"{_name(c['target'])}: {c.get('new_claim', '')}"}[kind]
            plans.append(Plan(c["source"], c["section"], f"{slug}-{kind}",
                              c["target"].split("/")[1], summary, kind.upper(), c["target"],
                              c.get("old_claim", "")))
    return plans


def _name(target: str) -> str:
    """The target node's name, as its front matter gives it."""
    text = (SAMPLE_VAULT / target).read_text(encoding="utf-8")
    found = re.search(r"^name: (.*)$", text, flags=re.MULTILINE)
    assert found, target
    return found.group(1).strip()


def _restated(target: str) -> str:
    """What a corroborating note says again: the target node's name and description."""
    text = (SAMPLE_VAULT / target).read_text(encoding="utf-8")
    found = re.search(r"^description: (.*)$", text, flags=re.MULTILINE)
    assert found, target
    return f"{_name(target)}: {found.group(1).strip()}"


def _tool_answers(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    out = []
    for m in messages:
        if m.get("role") == "tool":
            try:
                out.append((m.get("tool_name", ""), json.loads(m["content"])))
            except (ValueError, TypeError):
                out.append((m.get("tool_name", ""), {"error": m.get("content")}))
    return out


_TOPIC_LINE = re.compile(r"^\[(\d+)\] (\S+) \((\w+) digest/(\w+)/", re.MULTILINE)


def is_topics_request(request: dict[str, Any]) -> bool:
    """The topics step's structured call (its schema asks for ``topics``)."""
    fmt = request.get("format")
    return isinstance(fmt, dict) and "topics" in fmt.get("properties", {})


def topics_by_bucket(request: dict[str, Any]) -> dict[str, Any]:
    """A topics answer as a model would group: one topic per bucket, named after it."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for n, name, _action, bucket in _TOPIC_LINE.findall(request["messages"][-1]["content"]):
        groups.setdefault(bucket, []).append((int(n), name))
    topics = [{"title": f"{bucket.capitalize()} work: {units[0][1].replace('-', ' ')}",
               "reason": f"The day's {bucket} material, {len(units)} unit(s).",
               "keywords": [bucket, *units[0][1].split("-")[:2]],
               "units": [n for n, _ in units]} for bucket, units in groups.items()]
    return reply(json.dumps({"topics": topics}))


def is_decision_request(request: dict[str, Any]) -> bool:
    """The one-shot integrate call (its schema, or each of its choices, has ``action``)."""
    fmt = request.get("format")
    if not isinstance(fmt, dict):
        return False
    return any("action" in f.get("properties", {}) for f in [fmt, *fmt.get("anyOf", [])])


def extract_request(request: dict[str, Any]) -> tuple[str, list[str]]:
    """The note path and the section headings of an extract call (its first user
    message: a repair turn comes after it)."""
    text = next(m["content"] for m in request["messages"] if m["role"] == "user")
    path = text.split("\n", 1)[0].removeprefix("Note ").strip()
    return path, re.findall(r"^#{1,6} (.*)$", text, flags=re.MULTILINE)


def oneshot_unit(messages: list[dict[str, Any]]) -> str:
    """The unit name a one-shot decision call is about."""
    found = re.search(r"^Unit `([^`]+)`", messages[1]["content"], flags=re.MULTILINE)
    assert found, "no unit in the one-shot prompt"
    return found.group(1)


def unit_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The unit an integrate conversation is about (the JSON block of the user message)."""
    for m in messages:
        if m.get("role") == "user":
            found = re.search(r"```json\n(.*?)\n```", m.get("content", ""), re.DOTALL)
            if found:
                data: dict[str, Any] = json.loads(found.group(1))
                return data
    raise AssertionError("no unit in the conversation")


class CompetentModel:
    """Scripted model: extracts the planned units and integrates them through the tools."""

    def __init__(self, plans: list[Plan] | None = None) -> None:
        self.plans = {p.name: p for p in (plans if plans is not None else sample_plans())}

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if is_topics_request(request):
            return topics_by_bucket(request)
        if is_decision_request(request):
            return self.decide(request["messages"])
        if request.get("format"):
            return self.extract(request)
        return self.integrate(request["messages"])

    def extract(self, request: dict[str, Any]) -> dict[str, Any]:
        path, new = extract_request(request)
        units = [{"name": plan.name, "bucket": plan.bucket, "summary": plan.summary}
                 for plan in self.plans.values()
                 if plan.source == path and any(c.endswith(plan.section) for c in new)]
        return reply(json.dumps({"units": units}))

    def decide(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The one-shot answer: the planned action, its text, a related listed node."""
        plan = self.plans[oneshot_unit(messages)]
        listed = re.findall(r"^- (digest/\S+\.md):", messages[1]["content"], re.MULTILINE)
        target = plan.target if plan.action != "CREATE" else ""
        return reply(json.dumps({
            "action": plan.action, "target": target,
            "title": plan.name.replace("-", " ").capitalize(),
            "description": plan.summary[:150],
            "body": "" if plan.action == "CORROBORATE" else plan.summary,
            "old": plan.old_claim, "links": [p for p in listed if p != target][:1],
            "sources": "This was worked out in the note, which records the details."}))

    def integrate(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        unit = unit_of(messages)
        plan = self.plans[unit["name"]]
        answers = _tool_answers(messages)
        source = unit["paths"][0]
        if not answers:
            return reply(tool_calls=[("node_search", {"query": unit["summary"], "limit": 20})])
        hits = answers[0][1].get("hits", [])
        if plan.action == "CREATE":
            target = f"digest/{plan.bucket}/{plan.name}.md"
            if len(answers) == 1:
                related = next((h["path"] for h in hits if h["path"] != target), None)
                body = plan.summary
                if related:
                    body += f"\n\nIt builds on [[{related}]], which covers the neighbouring ground."
                body += (f"\n\n## Sources\n\n- This was worked out in [[{source}]], "
                         "which records the details.\n")
                return reply(tool_calls=[("write", {
                    "path": target, "name": plan.name.replace("-", " ").capitalize(),
                    "description": plan.summary[:150], "content": body})])
            return self._receipt("CREATE", target, hits)
        target = plan.target
        if len(answers) == 1:
            return reply(tool_calls=[("read", {"path": target})])
        if len(answers) == 2:
            text = answers[1][1]["text"]
            return reply(tool_calls=self._edits(plan, text, source))
        return self._receipt(plan.action, target, hits)

    def _edits(self, plan: Plan, text: str, source: str) -> list[tuple[str, Any]]:
        last = [ln for ln in text.rstrip("\n").split("\n") if ln.strip()][-1]
        sentence = {"CORROBORATE": f"- The same preference was stated again in [[{source}]].",
                    "REFINE": f"- The additional steps and failure modes come from [[{source}]].",
                    "CORRECT": f"- The correction is recorded in [[{source}]]."}[plan.action]
        calls: list[tuple[str, Any]] = []
        if plan.action == "REFINE":
            calls.append(("edit", {"path": plan.target, "old": "## Sources",
                                   "new": f"{plan.summary} (added from [[{source}]])"
                                          "\n\n## Sources"}))
        if plan.action == "CORRECT":
            old = _closest_sentence(text, plan.old_claim)
            calls.append(("edit", {"path": plan.target, "old": old,
                                   "new": f"~~{old}~~ Corrected: {plan.summary} "
                                          f"(per [[{source}]])"}))
        calls.append(("edit", {"path": plan.target, "old": last, "new": f"{last}\n{sentence}"}))
        return calls

    @staticmethod
    def _receipt(action: str, target: str, hits: list[dict[str, Any]]) -> dict[str, Any]:
        classification = {h["path"]: ("same_abstraction" if h["path"] == target else "related")
                          for h in hits[:3]}
        return reply(json.dumps({"action": action, "target_path": target,
                                 "note": f"{action.lower()} from the scripted model",
                                 "classification": classification}))


def _closest_sentence(text: str, claim: str) -> str:
    """The body sentence sharing most words with ``claim`` (the one being corrected)."""
    body = text.split("\n---\n", 1)[-1]
    words = set(re.findall(r"[a-z]+", claim.lower()))
    best, score = "", -1
    for line in body.split("\n"):
        if line.startswith(("#", "-", "1", "2", "3", "4", "5", "6")):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            overlap = len(words & set(re.findall(r"[a-z]+", sentence.lower())))
            if overlap > score and sentence.strip():
                best, score = sentence, overlap
    return best
