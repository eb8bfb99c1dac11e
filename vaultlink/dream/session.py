"""The tool-calling loop of one integrate session.

The model (an ``llm.ChatModel``: Ollama, a scripted fake, or the offline policy) calls
the six tools until it answers with a receipt ``{action, target_path, note}``. Tool
errors and guard refusals go back to the model as tool answers, so it can fix its
proposal within the step limit. The loop never writes by itself: the toolbox does,
through the guard.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vaultlink.dream.units import Receipt, parse_receipt
from vaultlink.errors import GuardRefusal
from vaultlink.llm.chat import ChatModel, extract_json
from vaultlink.markdown.sections import cited_sources

if TYPE_CHECKING:  # the session drives a toolbox it is handed, whatever its tools
    from vaultlink.dream.tools import Toolbox

log = logging.getLogger(__name__)


@dataclass
class SessionOutcome:
    """How a session ended.

    ``status`` is ``done`` (a checked receipt), ``unchanged`` (the node already holds
    the unit), ``unusable`` (no usable receipt and nothing written) or ``error``.
    """

    status: str
    receipt: Receipt | None = None
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    steps: int = 0
    prompt_tokens: list[int] = field(default_factory=list)




def run_session(model: ChatModel, toolbox: Toolbox, system: str, user: str,
                max_steps: int) -> SessionOutcome:
    """Drive one unit's session to a receipt, within ``max_steps`` model turns."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": user}]
    outcome = SessionOutcome("error")
    for step in range(1, max_steps + 1):
        outcome.steps = step
        reply = model.chat(messages, tools=toolbox.schemas)
        outcome.prompt_tokens.append(int(getattr(reply, "prompt_tokens", 0) or 0))
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
        messages.append({"role": "user", "content": feedback})
    outcome.status = "error"
    outcome.error = f"no valid receipt after {max_steps} steps"
    return outcome


def _finish(toolbox: Toolbox, content: str, outcome: SessionOutcome) -> tuple[bool, str]:
    """Judge a final answer; returns (session over, feedback for the model if not)."""
    guard = toolbox.guard
    receipt = parse_receipt(extract_json(content))
    if guard.target is None:
        if receipt is not None and _already_holds(toolbox, receipt):
            outcome.status, outcome.receipt = "unchanged", receipt
            return True, ""
        outcome.status = "unusable"
        outcome.error = ("the model wrote nothing and gave no usable receipt"
                         if receipt is None else
                         f"the receipt says {receipt.action} {receipt.target_path}, "
                         "but nothing was written")
        return True, ""
    before = toolbox.before.get(guard.target)
    after = toolbox.current[guard.target]
    if receipt is None or receipt.target_path != guard.target:
        inferred = Receipt("CREATE" if before is None else "REFINE", guard.target,
                           "receipt missing or wrong; inferred from the one file written")
        outcome.warnings.append(f"bad receipt {content[:120]!r}; accepted the one changed "
                                f"file {guard.target} as {inferred.action}")
        receipt = inferred
    try:
        outcome.receipt = guard.check_result(receipt, before, after)
    except GuardRefusal as exc:
        return False, (f"Not accepted: {exc}. Fix the node with the tools, then answer "
                       'again with {"action": ..., "target_path": ..., "note": ...}.')
    outcome.status = "done"
    return True, ""


def _already_holds(toolbox: Toolbox, receipt: Receipt) -> bool:
    """True when the named node already cites every source of the unit (a replay)."""
    if receipt.action == "CREATE" or receipt.target_path not in toolbox.guard.existed:
        return False
    try:
        text = toolbox.text_of(receipt.target_path)
    except Exception:  # any read problem means we cannot vouch for it
        return False
    return set(toolbox.guard.unit.paths) <= cited_sources(text)
