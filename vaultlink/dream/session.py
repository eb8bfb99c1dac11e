"""The tool-calling loop of one integrate session.

The model (an ``llm.ChatModel``: Ollama, a scripted fake, or the offline policy) calls
the six tools until it answers with a receipt ``{action, target_path, note}``. Tool
errors and guard refusals go back to the model as tool answers, so it can fix its
proposal within the step limit. The loop never writes by itself: the toolbox does,
through the guard.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from vaultlink.dream.tools import TOOL_SCHEMAS, Toolbox
from vaultlink.dream.units import Receipt, parse_receipt
from vaultlink.errors import GuardRefusal, ModelOutputError
from vaultlink.markdown.links import split_frontmatter
from vaultlink.markdown.sections import sources_links

log = logging.getLogger(__name__)


class ChatModelLike(Protocol):
    """A chat model with tools (see ``vaultlink.llm.ollama.ChatModel``)."""

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             schema: dict[str, Any] | None = None) -> Any:
        """One assistant turn."""
        ...


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


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON object in a model's text (fenced or bare), or None."""
    m = _JSON_OBJECT.search(text or "")
    if not m:
        return None
    try:
        return json.loads(m.group(0))
    except json.JSONDecodeError:
        return None


def run_session(model: ChatModelLike, toolbox: Toolbox, system: str, user: str,
                max_steps: int) -> SessionOutcome:
    """Drive one unit's session to a receipt, within ``max_steps`` model turns."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": user}]
    outcome = SessionOutcome("error")
    for step in range(1, max_steps + 1):
        outcome.steps = step
        reply = model.chat(messages, tools=TOOL_SCHEMAS)
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
    _, body, _ = split_frontmatter(text)
    cited = {link.target for link in sources_links(body)}
    return set(toolbox.guard.unit.paths) <= cited


def require_content(reply: Any) -> str:
    """The text of a reply that must be text (structured output)."""
    content = getattr(reply, "content", "")
    if not isinstance(content, str) or not content.strip():
        raise ModelOutputError("the model answered with no content")
    return content
