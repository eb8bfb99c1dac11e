"""A fake Ollama server for tests: real HTTP on 127.0.0.1, answered by scripted models.

The real ``ollama.Client(host=server.url)`` talks to it, so the client's request
building and response parsing are exercised exactly as in production. It serves
``GET /api/version``, ``GET /api/tags``, ``POST /api/show``, ``POST /api/embed`` and
``POST /api/chat``, streamed as Ollama does when the request asks for it (NDJSON, one
line per token-sized piece, tool calls in one piece, the counts on the last line).
Chat answers come from a *scripted model*::

    def model(request: dict) -> dict | Action: ...

``request`` is the parsed JSON the client sent (``model``, ``messages``, ``tools``,
``format``, ``options``); the model returns the assistant message
(``{"role": "assistant", "content": ..., "tool_calls": [{"function": {"name": ...,
"arguments": {...}}}]}``) or an action (``HTTPError``, ``Hang``, ``Malformed``,
``Stall``). A message may carry ``"done_reason": "length"`` to play an answer cut at
its length cap. The server adds the envelope (``model``, ``created_at``, ``done``,
token counts).

Every request is recorded in ``server.requests`` (``RecordedRequest``), so tests can
assert on what the client really sent, e.g. ``options.num_ctx`` on every chat call.

    with FakeOllama(model=Scripted([reply("hi")])) as server:
        ollama.Client(host=server.url).chat(model="qwen3:4b", messages=[...])
        assert server.chat_requests()[0]["options"]["num_ctx"] == 8192
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_VERSION = "0.9.6"
EMBED_DIM = 64
# What real Ollama uses when the client sends no num_ctx: prompts beyond it are cut silently.
DEFAULT_SERVER_NUM_CTX = 4096


# --- actions a scripted model can return instead of a message -------------------------

@dataclass(frozen=True)
class HTTPError:
    """Answer with this status and body (a dict is sent as JSON, a str as given)."""

    status: int = 500
    body: dict[str, Any] | str = field(default_factory=lambda: {"error": "internal error"})


@dataclass(frozen=True)
class Hang:
    """Wait ``seconds`` before answering with ``then`` (a message or another action).

    The wait ends early when the server stops, so a hanging answer never blocks
    shutdown; a client that gave up meanwhile just sees its own timeout.
    """

    seconds: float
    then: dict[str, Any] | HTTPError | Malformed | None = None


@dataclass(frozen=True)
class Malformed:
    """Answer 200 with a body that is not valid JSON (a truncated document)."""

    body: bytes = b'{"model": "fake", "message": {"role": "assistant", "content": "cut off'


@dataclass(frozen=True)
class Stall:
    """Stream the first ``after`` pieces of ``then``, go silent for ``seconds`` (a model
    stuck mid-answer), then finish the answer. Ends early when the server stops."""

    seconds: float
    then: dict[str, Any]
    after: int = 3


Action = HTTPError | Hang | Malformed | Stall
ScriptedModel = Callable[[dict[str, Any]], "dict[str, Any] | Action"]


def reply(content: str = "", tool_calls: Iterable[tuple[str, Any]] = ()) -> dict[str, Any]:
    """An assistant message; ``tool_calls`` are ``(name, arguments)`` pairs."""
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    calls = [{"function": {"name": name, "arguments": args}} for name, args in tool_calls]
    if calls:
        msg["tool_calls"] = calls
    return msg


class Scripted:
    """Plays ``replies`` in order, one per chat call; when they run out, answers 500.

    Running out is a test bug (the code under test called the model more often than
    scripted), so the 500 body says so and ``exhausted`` counts the extra calls.
    """

    def __init__(self, replies: Iterable[dict[str, Any] | Action]) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []
        self.exhausted = 0
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any] | Action:
        with self._lock:
            self.calls.append(request)
            index = len(self.calls) - 1
            if index < len(self.replies):
                return self.replies[index]
            self.exhausted += 1
        return HTTPError(500, {"error": f"scripted model has no reply for call {index + 1}"})


def echo(request: dict[str, Any]) -> dict[str, Any]:
    """The default model: repeats the last user message."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    return reply(f"echo: {users[-1].get('content', '')}" if users else "echo")


# --- models the server pretends to have pulled ------------------------------------------

@dataclass(frozen=True)
class ModelSpec:
    """A pulled model as /api/tags and /api/show describe it."""

    name: str
    capabilities: tuple[str, ...] = ("completion", "tools")
    context_length: int = 40960
    family: str = "qwen3"
    parameters: int = 4_000_000_000


# vaultlink's default model (llm.model) and the one the tests were first written for
DEFAULT_MODELS = (ModelSpec("qwen2.5-coder:1.5b", context_length=32768, family="qwen2",
                            parameters=1_543_714_304), ModelSpec("qwen3:4b"))


def _full_name(name: str) -> str:
    # Ollama treats "qwen3" and "qwen3:latest" as the same model.
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def fake_embedding(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic unit vector: hashed bag of lowercase words (shared words -> closer)."""
    vec = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        vec[h % dim] += 1.0 if (h >> 32) & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def estimate_prompt_tokens(request: dict[str, Any]) -> int:
    """The fake's token count of a chat prompt: characters of all messages / 4."""
    chars = sum(len(str(m.get("content") or "")) for m in request.get("messages", []))
    return max(1, chars // 4)


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    body: dict[str, Any] | None
    # chat only: the prompt was longer than options.num_ctx (real Ollama cuts it silently)
    truncated: bool = False


class FakeOllama:
    """The fake server. Start with ``start()`` or ``with``; ``url`` is its base URL.

    ``models`` are the pulled models (names or ``ModelSpec``); ``model`` is the scripted
    chat model and may be replaced between calls (``server.model = Scripted([...])``).
    """

    def __init__(self, models: Iterable[str | ModelSpec] = DEFAULT_MODELS,
                 model: ScriptedModel = echo, embed_dim: int = EMBED_DIM,
                 version: str = FAKE_VERSION) -> None:
        self.models = [m if isinstance(m, ModelSpec) else ModelSpec(m) for m in models]
        self.model: ScriptedModel = model
        self.embed_dim = embed_dim
        self.version = version
        self.requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []  # exceptions raised by scripted models
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``; only valid while running."""
        if self._httpd is None:
            raise RuntimeError("FakeOllama is not running; call start() first")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> FakeOllama:
        """Bind a random port and serve in a daemon thread."""
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="fake-ollama", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging answers are released at once."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def requests_to(self, path: str) -> list[dict[str, Any]]:
        """The JSON bodies sent to ``path`` (e.g. ``"/api/chat"``), oldest first."""
        with self._lock:
            return [r.body or {} for r in self.requests if r.path == path]

    def chat_requests(self) -> list[dict[str, Any]]:
        """The bodies of every ``/api/chat`` request, oldest first."""
        return self.requests_to("/api/chat")

    def find_model(self, name: str) -> ModelSpec | None:
        """The pulled model called ``name`` (``x`` and ``x:latest`` are the same)."""
        wanted = _full_name(name)
        return next((m for m in self.models if _full_name(m.name) == wanted), None)

    # answers, called from handler threads
    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(rec)

    def _tags(self) -> dict[str, Any]:
        return {"models": [{
            "name": m.name, "model": m.name, "modified_at": "2025-06-01T10:00:00.0Z",
            "size": 2_600_000_000,
            "digest": hashlib.sha256(m.name.encode()).hexdigest(),
            "details": _details(m),
        } for m in self.models]}

    def _show(self, spec: ModelSpec) -> dict[str, Any]:
        return {
            "license": "", "modelfile": f"FROM {spec.name}\n", "parameters": "",
            "template": "{{ .Prompt }}",
            "details": _details(spec),
            "model_info": {"general.architecture": spec.family,
                           "general.parameter_count": spec.parameters,
                           f"{spec.family}.context_length": spec.context_length,
                           f"{spec.family}.embedding_length": 2560},
            "capabilities": list(spec.capabilities),
            "modified_at": "2025-06-01T10:00:00.0Z",
        }

    def _chat_envelope(self, request: dict[str, Any], message: dict[str, Any],
                       prompt_tokens: int) -> dict[str, Any]:
        message = dict(message)
        done_reason = message.pop("done_reason", "stop")
        out_chars = len(str(message.get("content") or "")) + len(
            json.dumps(message.get("tool_calls") or []))
        return {
            "model": request.get("model"),
            "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "message": message, "done": True, "done_reason": done_reason,
            "total_duration": 1_000_000, "load_duration": 100_000,
            "prompt_eval_count": prompt_tokens, "prompt_eval_duration": 500_000,
            "eval_count": max(1, out_chars // 4), "eval_duration": 400_000,
        }


def _details(spec: ModelSpec) -> dict[str, Any]:
    return {"parent_model": "", "format": "gguf", "family": spec.family,
            "families": [spec.family], "parameter_size": f"{spec.parameters / 1e9:.1f}B",
            "quantization_level": "Q4_K_M"}


def _not_found(name: str) -> HTTPError:
    return HTTPError(404, {"error": f'model "{name}" not found, try pulling it first'})


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOllama
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        if self.fake._stopping.is_set():
            # a kept-alive connection outliving stop(): behave like a dead server
            self.close_connection = True
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = RecordedRequest(method, self.path, body if isinstance(body, dict) else None)
        self.fake._record(rec)
        # a client that gave up (its timeout) closed the socket: nothing left to answer
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer(rec, rec.body or {})

    def _answer(self, rec: RecordedRequest, body: dict[str, Any]) -> None:
        fake, route = self.fake, (rec.method, rec.path)
        if route == ("GET", "/api/version"):
            return self._json(200, {"version": fake.version})
        if route == ("GET", "/api/tags"):
            return self._json(200, fake._tags())
        if route == ("POST", "/api/show"):
            name = str(body.get("model") or body.get("name") or "")
            spec = fake.find_model(name)
            if spec is None:
                return self._json(404, {"error": f"model '{name}' not found"})
            return self._json(200, fake._show(spec))
        if route == ("POST", "/api/embed"):
            return self._embed(body)
        if route == ("POST", "/api/chat"):
            return self._chat(rec, body)
        if route == ("GET", "/"):
            return self._send(200, b"Ollama is running")
        return self._send(404, b"404 page not found")

    def _embed(self, body: dict[str, Any]) -> None:
        name = str(body.get("model") or "")
        if self.fake.find_model(name) is None:
            return self._act(_not_found(name))
        texts = body.get("input", "")
        texts = [texts] if isinstance(texts, str) else list(texts)
        self._json(200, {
            "model": name,
            "embeddings": [fake_embedding(str(t), self.fake.embed_dim) for t in texts],
            "total_duration": 1_000_000, "load_duration": 100_000,
            "prompt_eval_count": sum(len(str(t)) // 4 + 1 for t in texts),
        })

    def _chat(self, rec: RecordedRequest, body: dict[str, Any]) -> None:
        name = str(body.get("model") or "")
        if self.fake.find_model(name) is None:
            return self._act(_not_found(name))
        prompt_tokens = estimate_prompt_tokens(body)
        num_ctx = (body.get("options") or {}).get("num_ctx") or DEFAULT_SERVER_NUM_CTX
        if prompt_tokens > num_ctx:
            rec.truncated = True  # real Ollama keeps the tail and says nothing
            prompt_tokens = num_ctx
        try:
            result = self.fake.model(body)
        except Exception as exc:  # a bug in a scripted model: surface it to the test
            self.fake.errors.append(exc)
            return self._json(500, {"error": f"scripted model raised {exc!r}"})
        while isinstance(result, Hang):
            if self.fake._stopping.wait(result.seconds):
                self.close_connection = True  # shutting down: hang up without an answer
                return
            result = result.then if result.then is not None else reply("")
        if isinstance(result, HTTPError | Malformed):
            return self._act(result)
        stall = result if isinstance(result, Stall) else None
        message = dict(stall.then if stall is not None else result)
        envelope = self.fake._chat_envelope(body, message, prompt_tokens)
        if body.get("stream") is False:
            return self._json(200, envelope)
        self._stream(envelope, stall)

    def _stream(self, envelope: dict[str, Any], stall: Stall | None) -> None:
        """The answer as Ollama streams it: pieces of content, then a closing line."""
        message = envelope["message"]
        content = str(message.get("content") or "")
        pieces = [content[i:i + 4] for i in range(0, len(content), 4)]
        lines = [{**envelope, "message": {"role": "assistant", "content": p}, "done": False}
                 for p in pieces]
        if message.get("tool_calls"):
            lines.append({**envelope, "message": {"role": "assistant", "content": "",
                                                  "tool_calls": message["tool_calls"]},
                          "done": False})
        lines.append({**envelope, "message": {"role": "assistant", "content": ""}})
        for line in lines[:-1]:
            for key in ("done_reason", "total_duration", "prompt_eval_count", "eval_count"):
                line.pop(key, None)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for n, line in enumerate(lines):
            if stall is not None and n == stall.after and self.fake._stopping.wait(stall.seconds):
                self.close_connection = True
                return
            data = json.dumps(line).encode() + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _act(self, action: HTTPError | Malformed) -> None:
        if isinstance(action, Malformed):
            return self._send(200, action.body, "application/json; charset=utf-8")
        if isinstance(action.body, str):
            return self._send(action.status, action.body.encode(), "text/plain; charset=utf-8")
        self._json(action.status, action.body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json; charset=utf-8")

    def _send(self, status: int, payload: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def down_url() -> str:
    """A URL where nothing listens: a port that was free a moment ago, now closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll ``predicate`` until true or ``timeout``; for assertions on async effects."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())
