"""The tool-calling loop of one integrate session (what it spent: ``pipeline/usage.py``).

The model (an ``llm.ChatModel``: Ollama, a scripted fake, or the offline policy) calls
the six tools until it answers with a receipt ``{action, target_path, note}``. Tool
errors and guard refusals go back to the model as tool answers, so it can fix its
proposal within the step limit. An answer that is no call and no usable receipt (a
copy of the unit, prose, a call it could not write) gets a short correction turn, at
most ``MAX_CORRECTIONS`` of them, before the session gives up. The loop never writes by
itself: the toolbox does, through the guard.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from vaultlink.errors import AnswerCut, GuardRefusal, ModelOutputError
from vaultlink.llm.chat import MALFORMED, ChatModel, extract_json
from vaultlink.markdown.sections import cites_all
from vaultlink.pipeline.usage import Usage
from vaultlink.prose.units import Receipt, parse_receipt
from vaultlink.vault.actions import Action

if TYPE_CHECKING:  # the session drives a toolbox it is handed, whatever its tools
    from vaultlink.pipeline.integrate.tools import Toolbox

log = logging.getLogger(__name__)

MAX_CORRECTIONS = 2
NOTHING_WRITTEN = (
    "Nothing was written yet, so the unit is not integrated. Do not copy the unit or a "
    "receipt. Call a tool now: `write` to create digest/{bucket}/<slug>.md, or `edit` to "
    "update a node that node_search found. Write the call as a tool call.")


class Ending(StrEnum):
    """How a session ended."""

    DONE = "done"  # a checked receipt
    UNCHANGED = "unchanged"  # the model says the node holds the unit: the caller checks
    UNUSABLE = "unusable"  # no usable receipt and nothing written
    ERROR = "error"


@dataclass
class SessionOutcome:
    """How a session ended, with its receipt and what it spent."""

    status: Ending
    receipt: Receipt | None = None
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    steps: int = 0
    usage: Usage = field(default_factory=Usage)

    @property
    def prompt_tokens(self) -> list[int]:
        """Prompt tokens of each model call (as the journal showed them before)."""
        return self.usage.prompt_tokens


def run_session(model: ChatModel, toolbox: Toolbox, system: str, user: str,
                max_steps: int) -> SessionOutcome:
    """Drive one unit's session to a receipt, within ``max_steps`` model turns."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": user}]
    outcome = SessionOutcome(Ending.ERROR)
    usage = outcome.usage
    for step in range(1, max_steps + 1):
        outcome.steps = step
        try:
            reply = model.chat(messages, tools=toolbox.schemas)
        except AnswerCut as exc:
            usage.calls[MALFORMED] += 1
            if not _correct(outcome, messages, "Your answer was cut off at its length limit. "
                                               "Make the call again with a shorter text."):
                raise ModelOutputError(f"the answers stayed unreadable: {exc}") from None
            continue
        except ModelOutputError as exc:  # e.g. a call whose arguments are no object
            usage.calls[MALFORMED] += 1
            if not _correct(outcome, messages, "Your last answer could not be read "
                                               f"({str(exc)[:160]}). Call one tool, with "
                                               "a JSON object as its arguments."):
                raise
            continue
        usage.add(reply)
        calls = list(reply.tool_calls or [])
        messages.append({"role": "assistant", "content": reply.content or "",
                         "tool_calls": [{"function": {"name": c.name, "arguments": c.arguments}}
                                        for c in calls]})
        if calls:
            for call in calls:
                answer = toolbox.call(call.name, call.arguments)
                messages.append({"role": "tool", "tool_name": call.name, "content": answer})
            continue
        done, feedback = _finish(toolbox, reply.content or "", outcome)
        if done:
            return outcome
        if not _correct(outcome, messages, feedback):
            if toolbox.guard.target is None:
                outcome.status = Ending.UNUSABLE
                # the offline integrator runs this loop too: no word of a model here
                outcome.error = (f"nothing was written after {usage.corrections} "
                                 f"correction(s): {(reply.content or '')[:120]!r}")
                return outcome
            break
    outcome.status = Ending.ERROR
    outcome.error = outcome.error or f"no valid receipt after {outcome.steps} steps"
    return outcome


def _correct(outcome: SessionOutcome, messages: list[dict[str, Any]], text: str) -> bool:
    """Send one correction turn if any is left; False when they are used up."""
    if outcome.usage.corrections >= MAX_CORRECTIONS:
        outcome.error = text
        return False
    outcome.usage.corrections += 1
    messages.append({"role": "user", "content": text})
    return True


def _finish(toolbox: Toolbox, content: str, outcome: SessionOutcome) -> tuple[bool, str]:
    """Judge a final answer; returns (session over, feedback for the model if not)."""
    guard = toolbox.guard
    receipt = parse_receipt(extract_json(content))
    if guard.target is None:
        if receipt is not None and receipt.action != Action.CREATE and _already_holds(toolbox,
                                                                                     receipt):
            outcome.status, outcome.receipt = Ending.UNCHANGED, receipt
            return True, ""
        return False, NOTHING_WRITTEN.replace("{bucket}", guard.unit.bucket)
    before = toolbox.before.get(guard.target)
    after = toolbox.current[guard.target]
    if receipt is None or receipt.target_path != guard.target:
        inferred = Receipt(Action.CREATE if before is None else Action.REFINE, guard.target,
                           "receipt missing or wrong; inferred from the one file written")
        outcome.warnings.append(f"bad receipt {content[:120]!r}; accepted the one changed "
                                f"file {guard.target} as {inferred.action}")
        receipt = inferred
    try:
        outcome.receipt = guard.check_result(receipt, before, after)
    except GuardRefusal as exc:
        outcome.usage.refusals.append(exc.code.value)
        return False, (f"Not accepted: {exc}. Fix the node with the tools, then answer "
                       'again with {"action": ..., "target_path": ..., "note": ...}.')
    outcome.status = Ending.DONE
    return True, ""


def _already_holds(toolbox: Toolbox, receipt: Receipt) -> bool:
    """True when the named node already cites every source of the unit (a replay)."""
    if receipt.target_path not in toolbox.guard.existed:
        return False
    try:
        text = toolbox.text_of(receipt.target_path)
    except Exception:  # any read problem means we cannot vouch for it
        return False
    return cites_all(text, toolbox.guard.unit.paths)
