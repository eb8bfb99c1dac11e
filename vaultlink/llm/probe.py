"""``vaultlink doctor``'s model checks: is Ollama up, is the model pulled, does it take
tools, does the context fit, does it answer a tool call, and how long a unit will take
on this machine. Each check says its fix."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx
import ollama

from vaultlink.errors import ModelError, ModelUnavailable
from vaultlink.llm.chat import ChatModel
from vaultlink.llm.ollama import server_version
from vaultlink.options import redact_url


@dataclass(frozen=True)
class Check:
    """One doctor check: ``ok``, what was found, and the fix in plain words."""

    name: str
    title: str
    ok: bool
    detail: str
    fix: str = ""
    skipped: bool = False  # not run because an earlier check failed


@dataclass(frozen=True)
class ProbeReport:
    """The model checks of ``vaultlink doctor``, in order."""

    host: str
    model: str
    checks: list[Check]
    version: str | None = None
    capabilities: list[str] | None = None
    context_length: int | None = None

    @property
    def ok(self) -> bool:
        """All checks passed."""
        return all(c.ok for c in self.checks)

    def check(self, name: str) -> Check:
        """The check called ``name`` (reachable, pulled, tools, context)."""
        return next(c for c in self.checks if c.name == name)


_TITLES = {"reachable": "Ollama reachable", "pulled": "model pulled",
           "tools": "model can call tools", "context": "context length >= llm.num_ctx"}


def _same_model(a: str, b: str) -> bool:
    def full(n: str) -> str:
        return n if ":" in n.rsplit("/", 1)[-1] else f"{n}:latest"
    return full(a) == full(b)


def probe(host: str, model: str, timeout: float = 5.0, *, num_ctx: int) -> ProbeReport:
    """Check the server, the model, its tool capability and its context length. The
    report shows ``host`` redacted (``options.redact_url``): doctor prints it."""
    checks: list[Check] = []
    shown = redact_url(host)

    def add(name: str, ok: bool, detail: str, fix: str = "") -> None:
        checks.append(Check(name, _TITLES[name], ok, detail, "" if ok else fix))

    def skip_rest(reason: str) -> None:
        done = {c.name for c in checks}
        checks.extend(Check(n, t, False, f"not checked: {reason}", "", True)
                      for n, t in _TITLES.items() if n not in done)

    try:
        version = server_version(host, timeout)
    except ModelUnavailable:  # its message carries a fix too: say each thing once
        add("reachable", False, f"no Ollama server answers at {shown}",
            "start Ollama with `ollama serve`, or set llm.provider: auto to fall back to "
            "the offline integrator while it is down")
        skip_rest("Ollama is not reachable")
        return ProbeReport(shown, model, checks)
    add("reachable", True, f"Ollama {version} at {shown}")
    client = ollama.Client(host=host, timeout=timeout)
    try:
        pulled = [m.model or "" for m in client.list().models]
        info = client.show(model) if any(_same_model(model, p) for p in pulled) else None
    except (ConnectionError, httpx.HTTPError, ollama.ResponseError, ValueError) as exc:
        add("pulled", False, f"Ollama failed to list models: {redact_url(str(exc))}",
            "see the Ollama server log")
        skip_rest("listing models failed")
        return ProbeReport(shown, model, checks, version)
    if info is None:
        add("pulled", False, f"{model} is not among {', '.join(pulled) or 'no models'}",
            f"run `ollama pull {model}`, or set llm.model to a pulled model")
        skip_rest("the model is not pulled")
        return ProbeReport(shown, model, checks, version)
    add("pulled", True, model)
    caps = list(info.capabilities) if info.capabilities is not None else None
    if caps is None:
        add("tools", True, "this Ollama does not report capabilities; assuming tools work")
    else:
        add("tools", "tools" in caps, f"capabilities: {', '.join(caps) or 'none'}",
            "set llm.model to a tool-capable model, e.g. qwen2.5-coder:1.5b "
            "(`ollama pull qwen2.5-coder:1.5b`)")
    ctx = next((int(v) for k, v in (info.modelinfo or {}).items()
                if k.endswith(".context_length") and isinstance(v, int)), None)
    if ctx is None:
        add("context", True, "the model does not report its context length")
    else:
        add("context", ctx >= num_ctx, f"model context {ctx}, llm.num_ctx {num_ctx}",
            f"set llm.num_ctx to {ctx} or less, or choose a model with a longer context")
    return ProbeReport(shown, model, checks, version, caps, ctx)


# --- does the model answer a tool call, and how fast is it? ----------------------------

PROBE_TOOL = {"type": "function", "function": {
    "name": "node_search", "description": "Find notes of the vault about a subject.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                   "required": ["query"]}}}
_PARAGRAPH = ("Sift is the team's document search service: a Python API in front of a BM25 "
              "index and a vector column in Postgres. The index rebuild stops the service for "
              "about thirty minutes, so it is announced in the ops channel first, and the "
              "latency alert is silenced until the smoke queries pass. ")
# What a unit costs a model on average (bench/realmodel, sample_vault, one-shot mode): the
# extraction call's share plus the decision call, in prompt and answer tokens.
UNIT_PROMPT_TOKENS = 1300
UNIT_ANSWER_TOKENS = 110


@dataclass(frozen=True)
class Speed:
    """What one ~1,000-token call took: prompt reading and answer writing rates."""

    prompt_tokens: int
    answer_tokens: int
    wait_seconds: float  # until the first token: reading the prompt
    seconds: float  # the whole call

    @property
    def prompt_rate(self) -> float:
        """Prompt tokens read per second."""
        return self.prompt_tokens / max(self.wait_seconds, 1e-3)

    @property
    def answer_rate(self) -> float:
        """Answer tokens written per second."""
        return self.answer_tokens / max(self.seconds - self.wait_seconds, 1e-3)

    def unit_seconds(self) -> float:
        """The expected model time of one unit at these rates."""
        return UNIT_PROMPT_TOKENS / self.prompt_rate + UNIT_ANSWER_TOKENS / self.answer_rate


def tool_call_check(chat: ChatModel) -> Check:
    """Whether the model answers a plain request with a tool call (native or as text)."""
    try:
        reply = chat.chat([{"role": "user", "content": "Find my notes about the search index "
                            "rebuild. Use the node_search tool."}], tools=[PROBE_TOOL])
    except ModelError as exc:
        return Check("tool_call", "model answers a tool call", False, str(exc),
                     "see the message; `vaultlink doctor` checks the rest")
    calls = [c for c in reply.tool_calls if c.name == "node_search"]
    if calls and calls[0].form == "native":
        return Check("tool_call", "model answers a tool call", True, "node_search, as a call")
    if calls:
        return Check("tool_call", "model answers a tool call", True,
                     f"node_search, written in its text ({calls[0].form}): vaultlink reads "
                     "it, but a small model like this integrates better with "
                     "llm.integrate_mode: oneshot (the default, auto, picks it)")
    return Check("tool_call", "model answers a tool call", False,
                 f"it answered text, no call: {reply.content[:100]!r}",
                 "keep llm.integrate_mode auto or oneshot: one structured answer per unit "
                 "needs no tool calls")


def speed_check(chat: ChatModel, words: int = 600) -> tuple[Check, Speed | None]:
    """Time a ~1,000-token prompt with a short answer; say what that means per unit."""
    text = (_PARAGRAPH * (words // len(_PARAGRAPH.split()) + 1))
    messages = [{"role": "user", "content": f"{time.time():.0f}. Notes:\n{text}\n"
                 "Summarise these notes in three sentences."}]
    try:
        reply = chat.chat(messages)
    except ModelError as exc:
        return Check("speed", "time per unit", False, str(exc),
                     "raise llm.silence_seconds, or choose a smaller model"), None
    speed = Speed(reply.prompt_tokens, max(reply.eval_tokens, 1), reply.wait_seconds,
                  reply.seconds)
    per_unit = speed.unit_seconds()
    detail = (f"a {speed.prompt_tokens}-token prompt took {speed.wait_seconds:.0f} s to read "
              f"({speed.prompt_rate:.0f} tokens/s), the answer {speed.answer_rate:.1f} "
              f"tokens/s: about {_duration(per_unit)} per unit")
    slow = per_unit > SLOW_UNIT_SECONDS
    return Check("speed", "time per unit", not slow, detail,
                 "a smaller model is faster (qwen2.5-coder:0.5b about 3x, with weaker "
                 "decisions), or run vaultlink on a machine with a GPU; the README's "
                 "Models section has measured figures"), speed


SLOW_UNIT_SECONDS = 600.0


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
