"""What the model spent: on one unit (``Usage``, across a session's turns and attempts)
and on one note's extraction (``NoteSpend``, as ``vaultlink dream --json`` shows it)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from vaultlink.llm.chat import ChatReply


@dataclass
class Usage:
    """What the model spent on one unit, across its turns and attempts."""

    prompt_tokens: list[int] = field(default_factory=list)  # one per model call
    answer_tokens: int = 0
    seconds: float = 0.0
    calls: Counter[str] = field(default_factory=Counter)  # tool calls by form
    refusals: list[str] = field(default_factory=list)  # guard refusal codes, in order
    corrections: int = 0  # correction turns sent

    def add(self, reply: ChatReply) -> None:
        """Count one model answer."""
        self.prompt_tokens.append(int(getattr(reply, "prompt_tokens", 0) or 0))
        self.answer_tokens += int(getattr(reply, "eval_tokens", 0) or 0)
        self.seconds += float(getattr(reply, "seconds", 0.0) or 0.0)
        for call in reply.tool_calls or []:
            self.calls[getattr(call, "form", "native")] += 1

    def merge(self, other: Usage) -> None:
        """Add another attempt's spending to this one."""
        self.prompt_tokens += other.prompt_tokens
        self.answer_tokens += other.answer_tokens
        self.seconds += other.seconds
        self.calls.update(other.calls)
        self.refusals += other.refusals
        self.corrections += other.corrections


@dataclass(frozen=True)
class NoteSpend:
    """One note's extraction: the units it gave, the tokens and seconds the model spent."""

    units: int
    prompt_tokens: int
    answer_tokens: int
    model_seconds: float
