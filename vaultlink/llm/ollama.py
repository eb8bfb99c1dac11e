"""The Ollama implementation of ``llm.chat.ChatModel``, and whether a server answers.

``OllamaChat`` wraps the official client, always as ``ollama.Client(host=...)`` (the
module-level functions read ``OLLAMA_HOST`` once at import); it checks each prompt
against ``num_ctx`` *before* sending (Ollama silently cuts a longer one, losing notes),
retries connection errors and 5xx only, and maps every failure onto ``ModelError`` with
the fix in plain words. No configuration is read here. The client libraries are
imported on first use, so a start that never talks to Ollama does not pay for them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from vaultlink.errors import (
    AnswerCut,
    ModelError,
    ModelOutputError,
    ModelTimeout,
    ModelUnavailable,
    PromptTooLarge,
)
from vaultlink.llm.arbiter import MODEL, Arbiter
from vaultlink.llm.chat import (
    ChatReply,
    ToolCall,
    budget_tokens,
    parse_arguments,
    prompt_tokens,
)
from vaultlink.llm.toolcalls import calls_from_text
from vaultlink.options import redact_url

if TYPE_CHECKING:
    import ollama

log = logging.getLogger(__name__)

DEFAULT_HOST = "http://127.0.0.1:11434"
MAX_BACKOFF_SECONDS = 8.0
CONNECT_SECONDS = 10.0
PROGRESS_SECONDS = 1.0
Progress = Callable[[int, float], None]  # (answer tokens so far, seconds since the call)
_THINK = re.compile(r"<think>.*?</think>\s*", re.DOTALL)


# --- Ollama ----------------------------------------------------------------------------


def _down(host: str) -> ModelUnavailable:
    return ModelUnavailable(f"no Ollama server answers at {redact_url(host)}; start it with "
                            "`ollama serve`, or set llm.provider: offline")


def _not_pulled(host: str, model: str, detail: str) -> ModelUnavailable:
    return ModelUnavailable(f"model {model!r} is not available on {redact_url(host)} "
                            f"({detail}); run `ollama pull {model}`")


class _Retry(Exception):
    """A failure worth another try; carries the error to raise if tries run out."""

    def __init__(self, error: ModelError) -> None:
        super().__init__(str(error))
        self.error = error


class OllamaChat:
    """``ChatModel`` backed by an Ollama server through the official client.

    Answers are streamed: a call gives up when the server sends nothing for
    ``silence_seconds`` (reading the prompt counts), or when the whole answer takes over
    ``timeout_seconds`` (0: no limit). ``progress`` hears ``(tokens so far, seconds)``
    about once a second. ``retries`` extra attempts follow connection errors and 5xx,
    after 0.5 s, 1 s, 2 s ... (at most 8 s). ``arbiter``, given when the server runs on
    this machine, is held while each request is answered (not while retries wait).
    """

    def __init__(self, host: str, model: str, num_ctx: int, timeout_seconds: float,
                 retries: int, *, silence_seconds: float, max_answer_tokens: int = 1024,
                 progress: Progress | None = None, progress_every: float = PROGRESS_SECONDS,
                 sleep: Callable[[float], None] = time.sleep,
                 arbiter: Arbiter | None = None) -> None:
        self.host = host  # the client's, credentials included
        self.where = redact_url(host)  # what messages show of it
        self.arbiter = arbiter
        self.model = model
        self.num_ctx = num_ctx
        self.retries = max(0, retries)
        self.timeout_seconds = timeout_seconds
        self.silence_seconds = silence_seconds
        self.max_answer_tokens = max_answer_tokens
        self.progress = progress
        self.progress_every = progress_every
        self._sleep = sleep
        self._made: ollama.Client | None = None  # by the first call: a run may make none

    @property
    def _client(self) -> ollama.Client:
        if self._made is None:
            # ollama, httpx, pydantic: 0.25 s of CPU, paid by the first call to the model
            import httpx
            import ollama

            # A read waits at most the silence limit, and never past the total limit:
            # that one is checked between streamed parts, so a server that sends
            # nothing at all (not even headers) is bounded by this read timeout alone.
            wait = (min(self.silence_seconds, self.timeout_seconds) if self.timeout_seconds
                    else self.silence_seconds)
            self._made = ollama.Client(host=self.host, timeout=httpx.Timeout(
                wait, connect=min(wait, CONNECT_SECONDS)))
        return self._made

    @property
    def budget_tokens(self) -> int:
        """Tokens a prompt may use with this model's ``num_ctx``."""
        return budget_tokens(self.num_ctx)

    def close(self) -> None:
        """Close the client's connections (a daemon makes one model per run)."""
        if self._made is not None:
            self._made.close()  # type: ignore[no-untyped-call]

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             schema: dict[str, Any] | None = None) -> ChatReply:
        """One chat call; raises a ``ModelError`` subclass, never a client exception."""
        need = prompt_tokens(messages, tools)
        if need > self.budget_tokens:
            raise PromptTooLarge(need, self.budget_tokens)
        attempt = 0
        while True:
            try:
                with self.arbiter.job(MODEL) if self.arbiter else contextlib.nullcontext():
                    return self._once(messages, tools, schema)
            except _Retry as exc:
                if attempt >= self.retries:
                    raise exc.error from None
                delay = min(0.5 * 2**attempt, MAX_BACKOFF_SECONDS)
                attempt += 1
                log.warning("model call failed (%s); try %d of %d in %.1f s",
                            exc.error, attempt + 1, self.retries + 1, delay)
                self._sleep(delay)

    def _once(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
              schema: dict[str, Any] | None) -> ChatReply:
        client = self._client
        # already imported by ``_client`` (0.25 s there): the errors to tell apart
        import httpx
        import ollama
        from pydantic import ValidationError

        answer = _Answer(time.monotonic())
        try:
            stream = client.chat(
                model=self.model, messages=messages, tools=tools, format=schema, stream=True,
                options={"num_ctx": self.num_ctx, "temperature": 0,
                         "num_predict": self.max_answer_tokens})
            for part in stream:
                answer.add(part)
                self._tick(answer)
        except httpx.ConnectTimeout:
            raise _Retry(_down(self.host)) from None
        except httpx.TimeoutException:
            if self.timeout_seconds and self.timeout_seconds < self.silence_seconds:
                raise self._past_limit(answer) from None
            raise ModelTimeout(
                f"the model {self.model!r} at {self.where} sent nothing for "
                f"{self.silence_seconds:.0f} s ({answer.tokens} token(s) after "
                f"{answer.elapsed():.0f} s); raise llm.silence_seconds or use a smaller "
                "model") from None
        except (ConnectionError, httpx.ConnectError):  # the client maps only non-streaming
            raise _Retry(_down(self.host)) from None
        except httpx.TransportError as exc:  # connection dropped mid-answer
            raise _Retry(ModelUnavailable(
                f"the connection to Ollama at {self.where} broke ({exc.__class__.__name__}); "
                "is the server restarting?")) from None
        except ollama.ResponseError as exc:
            raise self._response_error(exc) from None
        except ValidationError as exc:
            if exc.title != "ChatResponse":  # our request did not validate: a caller bug
                raise ModelError(f"malformed chat request ({exc.title}): {exc}") from None
            raise ModelOutputError(f"the model's answer does not have the expected shape "
                                   f"(e.g. tool arguments not a JSON object): {exc}") from None
        except ValueError as exc:  # a line of the body was not JSON
            raise ModelOutputError(f"Ollama answered with invalid JSON: {exc}") from None
        return self._reply(answer, tools, schema)

    def _tick(self, answer: _Answer) -> None:
        """Report progress about once a second; stop an answer past the total limit."""
        now = time.monotonic()
        if self.timeout_seconds and now - answer.started > self.timeout_seconds:
            raise self._past_limit(answer)
        if self.progress is not None and now - answer.reported >= self.progress_every:
            answer.reported = now
            self.progress(answer.tokens, now - answer.started)

    def _past_limit(self, answer: _Answer) -> ModelTimeout:
        return ModelTimeout(
            f"the model {self.model!r} was still answering after "
            f"{self.timeout_seconds:.0f} s ({answer.tokens} tokens); raise "
            "llm.timeout_seconds (0: no limit) or use a smaller model")

    def _response_error(self, exc: ollama.ResponseError) -> Exception:
        status, text = exc.status_code, str(exc.error)
        if status == -1:  # an error line in the middle of a streamed answer
            return _Retry(ModelError(f"Ollama at {self.where} failed mid-answer ({text}) on "
                                     "every try; see the Ollama server log"))
        if status >= 500:
            return _Retry(ModelError(f"Ollama at {self.where} failed ({status}: {text}) on every "
                                     f"try; see the Ollama server log"))
        if status == 404:
            return _not_pulled(self.host, self.model, text)
        if "does not support tools" in text:
            return ModelUnavailable(f"model {self.model!r} cannot call tools; set llm.model to a "
                                    "tool-capable model such as qwen2.5-coder:1.5b")
        return ModelError(f"Ollama refused the request ({status}: {text})")

    def _reply(self, answer: _Answer, tools: list[dict[str, Any]] | None,
               schema: dict[str, Any] | None) -> ChatReply:
        content = _THINK.sub("", "".join(answer.content)).strip()
        calls = answer.calls
        if tools and not calls:  # small models write their calls as text
            calls = calls_from_text(content, {t["function"]["name"] for t in tools})
        if answer.done_reason == "length" and schema is not None:
            raise AnswerCut(f"the answer was cut at its length cap of {self.max_answer_tokens} "
                            f"tokens: {content[:120]!r}...", answer.tokens)
        if answer.done_reason == "length":
            log.warning("the answer was cut at its length cap (%d tokens)",
                        self.max_answer_tokens)
        elif schema is not None and not calls:
            try:
                json.loads(content)
            except ValueError:
                raise ModelOutputError(f"asked for JSON matching a schema, got {content[:200]!r}"
                                       ) from None
        if answer.prompt_tokens >= self.num_ctx:
            # our estimate was too low: Ollama has probably cut the prompt
            log.warning("prompt filled the whole context (%d tokens); it may have been cut",
                        answer.prompt_tokens)
        return ChatReply(content, calls, answer.prompt_tokens, answer.eval_tokens or
                         answer.tokens, answer.done_reason, answer.elapsed(),
                         (answer.first or time.monotonic()) - answer.started)


@dataclass
class _Answer:
    """A streamed answer as it comes in."""

    started: float
    content: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    tokens: int = 0  # chunks so far: one token each while streaming
    reported: float = 0.0
    first: float = 0.0  # when the first token came
    prompt_tokens: int = 0
    eval_tokens: int = 0
    done_reason: str = "stop"

    def add(self, part: ollama.ChatResponse) -> None:
        msg = part.message
        if msg.content or msg.thinking or msg.tool_calls:
            self.tokens += 1
            self.first = self.first or time.monotonic()
        self.content.append(msg.content or "")
        for tc in msg.tool_calls or []:
            args, form = parse_arguments(tc.function.arguments)
            self.calls.append(ToolCall(tc.function.name, args, form))
        if part.done:
            self.prompt_tokens = part.prompt_eval_count or 0
            self.eval_tokens = part.eval_count or 0
            self.done_reason = part.done_reason or "stop"

    def elapsed(self) -> float:
        return time.monotonic() - self.started


# --- probes for doctor and for choosing model vs offline ---------------------------------


def base_url(host: str) -> str:
    """``host`` as a URL the way the ollama client reads it (scheme and port 11434 default)."""
    host = host.strip() or DEFAULT_HOST
    if "://" not in host:
        parts = urlsplit("http://" + host)
        if parts.port is None:
            parts = parts._replace(netloc=f"{parts.netloc}:11434")
        host = urlunsplit(parts)
    return host.rstrip("/")


def server_version(host: str, timeout: float = 2.0) -> str:
    """The Ollama version at ``host``; ``ModelUnavailable`` when nothing (Ollama) answers.

    The standard library's client, not httpx: ``dream`` with ``llm.provider: auto`` asks
    this on every run, and importing httpx cost 0.1 s of CPU, more than the rest of a
    run that finds nothing changed. Like httpx it takes proxies from the environment
    (``HTTP_PROXY``, ``NO_PROXY``); an answer other than 2xx is no Ollama."""
    # urllib.request, http.client: 0.02 s, paid only when a server is asked
    import http.client
    import urllib.request

    try:
        with urllib.request.urlopen(base_url(host) + "/api/version", timeout=timeout) as resp:
            return str(json.loads(resp.read())["version"])
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
        raise _down(host) from None


def is_reachable(host: str, timeout: float = 2.0) -> bool:
    """Whether an Ollama server answers at ``host`` (a cheap ``/api/version``)."""
    try:
        server_version(host, timeout)
    except ModelUnavailable:
        return False
    return True




_SIZE = re.compile(r"^\s*([\d.]+)\s*([KMBT]?)\s*$", re.IGNORECASE)
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def parameter_count(host: str, model: str, timeout: float = 5.0) -> float | None:
    """The model's parameter count as Ollama reports it (``/api/show``), or None when the
    server does not say (or does not answer)."""
    # ollama, httpx, pydantic: 0.25 s of CPU, paid only when an Ollama model is about to run
    import httpx
    import ollama

    try:
        info = ollama.Client(host=host, timeout=timeout).show(model)
    except (ConnectionError, httpx.HTTPError, ollama.ResponseError, ValueError):
        return None
    count = (info.modelinfo or {}).get("general.parameter_count")
    if isinstance(count, int | float) and count > 0:
        return float(count)
    m = _SIZE.match(str(getattr(info.details, "parameter_size", "") or ""))
    return float(m.group(1)) * _SCALE[m.group(2).upper()] if m else None
