"""``vaultlink doctor``'s model checks: is Ollama up, is the model pulled, does it take
tools, does the context fit. Each check says its fix."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import ollama

from vaultlink.errors import ModelUnavailable
from vaultlink.llm.ollama import server_version


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


def probe(host: str, model: str, timeout: float = 5.0, num_ctx: int = 8192) -> ProbeReport:
    """Check the server, the model, its tool capability and its context length."""
    checks: list[Check] = []

    def add(name: str, ok: bool, detail: str, fix: str = "") -> None:
        checks.append(Check(name, _TITLES[name], ok, detail, "" if ok else fix))

    def skip_rest(reason: str) -> None:
        done = {c.name for c in checks}
        checks.extend(Check(n, t, False, f"not checked: {reason}", "", True)
                      for n, t in _TITLES.items() if n not in done)

    try:
        version = server_version(host, timeout)
    except ModelUnavailable:  # its message carries a fix too: say each thing once
        add("reachable", False, f"no Ollama server answers at {host}",
            "start Ollama with `ollama serve`, or set llm.provider: auto to fall back to "
            "the offline integrator while it is down")
        skip_rest("Ollama is not reachable")
        return ProbeReport(host, model, checks)
    add("reachable", True, f"Ollama {version} at {host}")
    client = ollama.Client(host=host, timeout=timeout)
    try:
        pulled = [m.model or "" for m in client.list().models]
        info = client.show(model) if any(_same_model(model, p) for p in pulled) else None
    except (ConnectionError, httpx.HTTPError, ollama.ResponseError, ValueError) as exc:
        add("pulled", False, f"Ollama failed to list models: {exc}", "see the Ollama server log")
        skip_rest("listing models failed")
        return ProbeReport(host, model, checks, version)
    if info is None:
        add("pulled", False, f"{model} is not among {', '.join(pulled) or 'no models'}",
            f"run `ollama pull {model}`, or set llm.model to a pulled model")
        skip_rest("the model is not pulled")
        return ProbeReport(host, model, checks, version)
    add("pulled", True, model)
    caps = list(info.capabilities) if info.capabilities is not None else None
    if caps is None:
        add("tools", True, "this Ollama does not report capabilities; assuming tools work")
    else:
        add("tools", "tools" in caps, f"capabilities: {', '.join(caps) or 'none'}",
            "set llm.model to a tool-capable model, e.g. qwen3:4b (`ollama pull qwen3:4b`)")
    ctx = next((int(v) for k, v in (info.modelinfo or {}).items()
                if k.endswith(".context_length") and isinstance(v, int)), None)
    if ctx is None:
        add("context", True, "the model does not report its context length")
    else:
        add("context", ctx >= num_ctx, f"model context {ctx}, llm.num_ctx {num_ctx}",
            f"set llm.num_ctx to {ctx} or less, or choose a model with a longer context")
    return ProbeReport(host, model, checks, version, caps, ctx)
