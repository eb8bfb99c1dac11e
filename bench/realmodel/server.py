"""A small Ollama-compatible HTTP server backed by llama-cpp-python: one model, one call at a time.

Run from the repository root (llama-cpp-python installed, see requirements.txt)::

    python -m bench.realmodel.server --model PATH --port 11435 [--threads 2] [--ctx 8192]

It answers what the official ``ollama`` Python client uses: ``GET /api/version``,
``GET /api/tags``, ``POST /api/show``, ``POST /api/chat`` (messages, tools, format,
options, stream), ``GET /api/ps`` and ``GET /``; ``POST /api/embed`` answers 501.
What it does the way Ollama does (see the Ollama sources named in each docstring):

- the prompt is the model's own chat template (``tokenizer.chat_template`` from the
  GGUF) rendered with ``messages``, ``tools`` and ``add_generation_prompt=True``;
- a prompt longer than ``num_ctx`` loses whole messages from the front, system
  messages kept, the last message always kept (``server/prompt.go``); if that is
  still too long the tokens after the first ``num_keep`` are cut
  (``llm/llama_server.go``); both are logged;
- with ``tools``, the answer goes through Ollama's generic tool-call parser
  (``toolcalls.py``); without them the text is passed through untouched;
- ``format`` ("json" or a JSON schema) constrains sampling with a grammar;
- a different ``num_ctx`` reloads the model with that context, as Ollama does.

It is a bench tool, not a product: no auth, no model management, loopback only.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import hashlib
import json
import logging
import random
import secrets
import string
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.realmodel.fetch_model import spec_for_file
from bench.realmodel.gguf import read_metadata
from bench.realmodel.toolcalls import ToolCallParser, tag_for_template

try:
    import llama_cpp
    from llama_cpp import Llama, LlamaGrammar
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from llama_cpp.llama_grammar import JSON_GBNF
except ImportError:  # pragma: no cover - the bench needs it, vaultlink does not
    sys.exit("llama-cpp-python is not installed: see bench/realmodel/requirements.txt")

log = logging.getLogger("bench.server")

# Ollama's defaults (api/types.go DefaultOptions) where the request has none
DEFAULTS: dict[str, Any] = {
    "temperature": 0.8, "top_k": 40, "top_p": 0.9, "min_p": 0.0, "repeat_penalty": 1.0,
    "presence_penalty": 0.0, "frequency_penalty": 0.0, "num_predict": -1, "num_keep": 4,
    "seed": -1,
}
# general.file_type -> Ollama's quantization_level names (the common ones)
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
              10: "Q2_K", 12: "Q3_K_M", 14: "Q4_K_S", 15: "Q4_K_M", 17: "Q5_K_M", 18: "Q6_K"}


def now_iso() -> str:
    """Current time the way Go marshals ``time.Time`` in UTC."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def full_name(name: str) -> str:
    """``name`` with Ollama's default ``:latest`` tag when it has none."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


class ApiError(Exception):
    """An error answered as ``{"error": message}`` with an HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Stats:
    """Counts and timings of one generation (durations in seconds)."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    dropped_messages: int = 0
    cut_tokens: int = 0
    eval_count: int = 0
    prompt_seconds: float = 0.0
    eval_seconds: float = 0.0
    done_reason: str = "stop"
    started: float = field(default_factory=time.perf_counter)


@contextlib.contextmanager
def _model_params(extra_bufts: bool) -> Iterator[None]:
    """Load with ``use_extra_bufts`` set: ``Llama()`` has no argument for it.

    The extra buffer types (weight repacking, and AMX on CPUs that have it) are what
    crash on AMX machines; ``llama-cli --no-repack`` clears the same flag.
    """
    original = llama_cpp.llama_cpp.llama_model_default_params

    def patched() -> Any:
        params = original()
        params.use_extra_bufts = extra_bufts
        return params

    llama_cpp.llama_cpp.llama_model_default_params = patched
    try:
        yield
    finally:
        llama_cpp.llama_cpp.llama_model_default_params = original


class Model:
    """One GGUF model behind a lock, loaded with the context the last request asked for."""

    def __init__(self, path: Path, name: str, threads: int, n_ctx: int,
                 extra_bufts: bool) -> None:
        self.path = path
        self.name = name
        self.threads = threads
        self.extra_bufts = extra_bufts
        self.meta = read_metadata(path)
        self.arch = str(self.meta["general.architecture"])
        self.context_length = int(self.meta.get(f"{self.arch}.context_length") or n_ctx)  # type: ignore[call-overload]
        self.template = str(self.meta.get("tokenizer.chat_template") or "")
        if not self.template:
            raise SystemExit(f"{path}: no tokenizer.chat_template in the GGUF header")
        self.capabilities = ["completion"] + (["tools"] if "tools" in self.template else [])
        self.tool_tag = tag_for_template(self.template)
        spec = spec_for_file(path)
        self.digest = spec.sha256 if spec and spec.sha256 else _sha256(path)
        self.lock = threading.Lock()
        self.llm: Llama | None = None
        self.formatter: Jinja2ChatFormatter | None = None
        self.load(n_ctx)

    def load(self, n_ctx: int) -> None:
        """(Re)load the model with context ``n_ctx`` (capped at the model's own)."""
        n_ctx = min(n_ctx, self.context_length)
        if self.llm is not None and self.llm.n_ctx() == n_ctx:
            return
        if self.llm is not None:
            log.info("reloading with num_ctx=%d (was %d)", n_ctx, self.llm.n_ctx())
            self.llm.close()
        t0 = time.perf_counter()
        with _model_params(self.extra_bufts):
            self.llm = Llama(str(self.path), n_ctx=n_ctx, n_batch=512, n_threads=self.threads,
                             n_threads_batch=self.threads, verbose=False)
        vocab = self.llm._model
        bos, eos = self.llm.token_bos(), self.llm.token_eos()
        self.formatter = Jinja2ChatFormatter(
            self.template,
            eos_token=vocab.token_get_text(eos) if eos != -1 else "",
            bos_token=vocab.token_get_text(bos) if bos != -1 else "",
        )
        self.add_bos = bool(vocab.add_bos_token())
        log.info("loaded %s (num_ctx=%d, threads=%d, extra buffer types %s) in %.1f s",
                 self.path.name, n_ctx, self.threads, "on" if self.extra_bufts else "off",
                 time.perf_counter() - t0)

    # --- prompt ------------------------------------------------------------------------

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
        """The prompt: the model's chat template over ``messages`` and ``tools``."""
        assert self.formatter is not None
        return self.formatter(messages=messages, tools=tools or None).prompt  # type: ignore[arg-type]

    def tokenize(self, prompt: str) -> list[int]:
        """Tokens of a rendered prompt (special tokens parsed, BOS as the model wants)."""
        assert self.llm is not None
        return self.llm.tokenize(prompt.encode("utf-8"), add_bos=self.add_bos, special=True)

    def fit(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
            num_ctx: int, num_keep: int, stats: Stats) -> list[int]:
        """Render and tokenize, dropping messages from the front as Ollama's chatPrompt does."""
        last = len(messages) - 1
        tokens: list[int] = []
        for i in range(last + 1):
            system = [m for m in messages[:i] if m.get("role") == "system"]
            tokens = self.tokenize(self.render(system + messages[i:], tools))
            if len(tokens) <= num_ctx or i == last:
                stats.dropped_messages = i - len(system)
                break
        if stats.dropped_messages:
            log.warning("prompt over num_ctx=%d: dropped %d message(s) from the front "
                        "(system messages kept), %d tokens left",
                        num_ctx, stats.dropped_messages, len(tokens))
        if len(tokens) > num_ctx - 1:  # the runner's context shift (llm/llama_server.go)
            keep = min(num_keep + (1 if self.add_bos else 0), num_ctx - 1)
            limit = num_ctx - max((num_ctx - keep) // 2, 1)
            discard = len(tokens) - limit
            log.warning("truncating input prompt: limit=%d prompt=%d keep=%d new=%d",
                        limit, len(tokens), keep, limit)
            tokens = tokens[:keep] + tokens[keep + discard :]
            stats.cut_tokens = discard
        return tokens

    # --- generation ----------------------------------------------------------------------

    def generate(self, tokens: list[int], opts: dict[str, Any], grammar: LlamaGrammar | None,
                 stats: Stats) -> Iterator[str]:
        """Yield the answer's text piece by piece (one token each), filling ``stats``."""
        llm = self.llm
        assert llm is not None
        n_ctx = llm.n_ctx()
        cached = 0
        for a, b in zip(llm._input_ids[: llm.n_tokens], tokens, strict=False):
            if a != b:
                break
            cached += 1
        stats.prompt_tokens, stats.cached_tokens = len(tokens), cached
        room = n_ctx - len(tokens)
        num_predict = int(opts["num_predict"])
        limit = room if num_predict < 0 else min(num_predict, room)
        seed = int(opts["seed"])
        llm.set_seed(seed if seed >= 0 else random.randrange(2**31))
        stops = [s for s in (opts.get("stop") or []) if s]
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text = ""
        t0 = time.perf_counter()
        t_first: float | None = None
        stats.done_reason = "length"
        if limit <= 0:
            return
        gen = llm.generate(
            tokens, top_k=int(opts["top_k"]), top_p=float(opts["top_p"]),
            min_p=float(opts["min_p"]), temp=float(opts["temperature"]),
            repeat_penalty=float(opts["repeat_penalty"]),
            presence_penalty=float(opts["presence_penalty"]),
            frequency_penalty=float(opts["frequency_penalty"]), grammar=grammar)
        try:
            for tok in gen:
                if t_first is None:
                    t_first = time.perf_counter()
                    stats.prompt_seconds = t_first - t0
                if llama_cpp.llama_vocab_is_eog(llm._model.vocab, tok):
                    stats.done_reason = "stop"
                    break
                stats.eval_count += 1
                piece = decoder.decode(llm.detokenize([tok]))
                if stops:
                    hit = min((i for s in stops if (i := (text + piece).find(s)) >= 0),
                              default=-1)
                    if hit >= 0:
                        piece = (text + piece)[len(text) : hit]
                        stats.done_reason = "stop"
                        if piece:
                            yield piece
                        break
                text += piece
                if piece:
                    yield piece
                if stats.eval_count >= limit:
                    break
        finally:
            gen.close()
            end = time.perf_counter()
            if t_first is None:
                stats.prompt_seconds = end - t0
            else:
                stats.eval_seconds = end - t_first


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _call_id() -> str:
    return "call_" + "".join(secrets.choice(string.ascii_lowercase + string.digits)
                             for _ in range(8))


def _messages(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list) or not all(isinstance(m, dict) for m in raw):
        raise ApiError(400, "messages must be a list of objects")
    out = []
    for m in raw:
        m = dict(m)
        if m.get("content") is None:
            m["content"] = ""
        out.append(m)
    return out


class Handler(BaseHTTPRequestHandler):
    """The routes; one instance per request, the model shared through the server."""

    protocol_version = "HTTP/1.1"
    server: Server

    # --- plumbing ----------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        """Route http.server's access log through logging (debug level)."""
        log.debug("%s - %s", self.address_string(), format % args)

    def _send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw:
            raise ApiError(400, "missing request body")
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise ApiError(400, f"invalid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ApiError(400, "request body must be a JSON object")
        return body

    def _model_for(self, name: Any) -> Model:
        model = self.server.model
        if not name:
            raise ApiError(400, "model is required")
        if full_name(str(name)) not in {full_name(model.name), full_name(model.path.stem)}:
            raise ApiError(404, f'model "{name}" not found, try pulling it first')
        return model

    def _dispatch(self, routes: dict[str, Any]) -> None:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        route = routes.get(path)
        try:
            if route is None:
                raise ApiError(404, f"404 page not found: {self.command} {path}")
            route()
        except ApiError as exc:
            self._send_json(exc.status, {"error": str(exc)})
        except (BrokenPipeError, ConnectionResetError):
            log.info("client went away during %s %s", self.command, path)

    def do_GET(self) -> None:
        """GET routes."""
        self._dispatch({"/": self._root, "/api/version": self._version,
                        "/api/tags": self._tags, "/api/ps": self._ps})

    def do_HEAD(self) -> None:
        """HEAD / as Ollama answers it."""
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        """POST routes."""
        self._dispatch({"/api/show": self._show, "/api/chat": self._chat,
                        "/api/embed": self._embed, "/api/embeddings": self._embed,
                        "/api/generate": self._generate})

    # --- routes ------------------------------------------------------------------------

    def _root(self) -> None:
        data = b"Ollama is running"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _version(self) -> None:
        self._send_json(200, {"version": f"0.0.0-bench (llama-cpp-python {llama_cpp.__version__})"})

    def _details(self, m: Model) -> dict[str, Any]:
        return {
            "parent_model": "", "format": "gguf", "family": m.arch, "families": [m.arch],
            "parameter_size": str(m.meta.get("general.size_label") or ""),
            "quantization_level": FILE_TYPES.get(int(m.meta.get("general.file_type", -1)),  # type: ignore[call-overload]
                                                 "unknown"),
        }

    def _modified(self, m: Model) -> str:
        mtime = datetime.fromtimestamp(m.path.stat().st_mtime, UTC)
        return mtime.isoformat().replace("+00:00", "Z")

    def _tags(self) -> None:
        m = self.server.model
        self._send_json(200, {"models": [{
            "name": m.name, "model": m.name, "modified_at": self._modified(m),
            "size": m.path.stat().st_size, "digest": m.digest, "details": self._details(m),
        }]})

    def _ps(self) -> None:
        m = self.server.model
        self._send_json(200, {"models": [{
            "name": m.name, "model": m.name, "size": m.path.stat().st_size,
            "digest": m.digest, "details": self._details(m), "expires_at": "0001-01-01T00:00:00Z",
            "size_vram": 0, "context_length": m.llm.n_ctx() if m.llm else 0,
        }]})

    def _show(self) -> None:
        body = self._body()
        m = self._model_for(body.get("model") or body.get("name"))
        info = {k: v for k, v in m.meta.items()
                if not k.startswith("GGUF.") and k != "tokenizer.chat_template"
                and not (isinstance(v, str) and v.startswith("<array of"))}
        self._send_json(200, {
            "license": str(m.meta.get("general.license") or ""),
            "modelfile": f"# bench server: {m.path}\nFROM {m.path}\n",
            "parameters": "", "template": m.template, "details": self._details(m),
            "model_info": info, "capabilities": m.capabilities, "modified_at": self._modified(m),
        })

    def _embed(self) -> None:
        raise ApiError(501, "the vaultlink bench server does not compute embeddings; vaultlink "
                            "embeds with its bundled ONNX model (embedding.provider: local)")

    def _generate(self) -> None:
        raise ApiError(501, "the vaultlink bench server implements /api/chat only")

    def _chat(self) -> None:
        body = self._body()
        m = self._model_for(body.get("model"))
        messages = _messages(body.get("messages") or [])
        tools = body.get("tools") or None
        stream = body.get("stream", True) is not False
        if body.get("think"):
            raise ApiError(400, f'"{m.name}" does not support thinking')
        if tools and "tools" not in m.capabilities:
            raise ApiError(400, f"registry.ollama.ai/library/{m.name} does not support tools")
        opts = {**DEFAULTS, **(body.get("options") or {})}
        fmt = body.get("format")
        grammar = None
        if fmt == "json":
            grammar = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        elif isinstance(fmt, dict):
            try:
                grammar = LlamaGrammar.from_json_schema(json.dumps(fmt), verbose=False)
            except Exception as exc:
                raise ApiError(400, f"invalid JSON schema in format: {exc}") from None
        elif fmt not in (None, ""):
            raise ApiError(400, f"invalid format: {fmt!r}: expected \"json\" or a JSON schema")
        if not messages:
            self._send_json(200, {"model": body["model"], "created_at": now_iso(),
                                  "message": {"role": "assistant", "content": ""},
                                  "done": True, "done_reason": "load"})
            return
        with m.lock:
            stats = Stats()
            m.load(int(opts.get("num_ctx") or self.server.default_ctx))
            assert m.llm is not None
            num_ctx = m.llm.n_ctx()
            tokens = m.fit(messages, tools, num_ctx, int(opts["num_keep"]), stats)
            chunks = self._chunks(m, body["model"], tokens, opts, grammar, tools, stats)
            if self.server.transcript is not None:
                chunks = _recorded(chunks, messages, stats, self.server.transcript)
            if stream:
                self._stream(chunks)
            else:
                self._send_json(200, _aggregate(list(chunks), bool(tools)))
            total = time.perf_counter() - stats.started
            log.info("chat %s: prompt %d tok (%d cached, %d msgs dropped) %.2f s = %.1f tok/s; "
                     "answer %d tok %.2f s = %.1f tok/s; %s; total %.2f s%s",
                     m.name, stats.prompt_tokens, stats.cached_tokens, stats.dropped_messages,
                     stats.prompt_seconds, _rate(stats.prompt_tokens - stats.cached_tokens,
                                                 stats.prompt_seconds),
                     stats.eval_count, stats.eval_seconds,
                     _rate(stats.eval_count, stats.eval_seconds), stats.done_reason, total,
                     " (stream)" if stream else "")

    def _chunks(self, m: Model, model_name: str, tokens: list[int], opts: dict[str, Any],
                grammar: LlamaGrammar | None, tools: list[dict[str, Any]] | None,
                stats: Stats) -> Iterator[dict[str, Any]]:
        """The response objects, as Ollama's ChatHandler sends them (tool parsing included)."""
        parser = ToolCallParser(tools, m.tool_tag) if tools else None

        def chunk(message: dict[str, Any], done: bool = False) -> dict[str, Any]:
            return {"model": model_name, "created_at": now_iso(),
                    "message": {"role": "assistant", **message}, "done": done}

        for piece in m.generate(tokens, opts, grammar, stats):
            if parser is None:
                yield chunk({"content": piece})
                continue
            calls, content = parser.add(piece)
            if content:
                yield chunk({"content": content})  # Ollama drops calls that arrive with content
            elif calls:
                for c in calls:
                    c["id"] = _call_id()
                yield chunk({"content": "", "tool_calls": calls})
        last = chunk({"content": parser.content() if parser else ""}, done=True)
        ns = 1_000_000_000
        last.update({
            "done_reason": stats.done_reason,
            "total_duration": int((time.perf_counter() - stats.started) * ns),
            "load_duration": 0,
            "prompt_eval_count": stats.prompt_tokens,
            "prompt_eval_duration": int(stats.prompt_seconds * ns),
            "eval_count": stats.eval_count,
            "eval_duration": int(stats.eval_seconds * ns),
        })
        yield last

    def _stream(self, chunks: Iterator[dict[str, Any]]) -> None:
        """NDJSON with chunked transfer encoding, one object a line."""
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for obj in chunks:
            line = json.dumps(obj).encode() + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _aggregate(chunks: list[dict[str, Any]], with_tools: bool) -> dict[str, Any]:
    """One non-streamed answer from the chunks, as Ollama's writeChatResponse builds it."""
    final = dict(chunks[-1])
    content = "".join(c["message"].get("content", "") for c in chunks)
    calls = [tc for c in chunks for tc in c["message"].get("tool_calls", [])]
    final["message"] = {"role": "assistant", "content": content}
    if with_tools and calls:
        final["message"]["tool_calls"] = calls
    return final


def _recorded(chunks: Iterator[dict[str, Any]], messages: list[dict[str, Any]], stats: Stats,
              path: Path) -> Iterator[dict[str, Any]]:
    """The chunks, passed on; once the answer is done, one JSON line appended to ``path``:
    the request's last message, the answer as sent (content and tool calls) and its cost.
    A bench reads it to see what the model answered, including what vaultlink then drops."""
    content: list[str] = []
    calls: list[Any] = []
    for c in chunks:
        content.append(c["message"].get("content", ""))
        calls.extend(c["message"].get("tool_calls", []))
        yield c
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    record = {"at": now_iso(), "system_head": str(system)[:80],
              "messages": len(messages), "last": messages[-1].get("content", ""),
              "answer": "".join(content), "tool_calls": calls,
              "prompt_tokens": stats.prompt_tokens, "cached_tokens": stats.cached_tokens,
              "answer_tokens": stats.eval_count, "done_reason": stats.done_reason,
              "prompt_seconds": round(stats.prompt_seconds, 3),
              "eval_seconds": round(stats.eval_seconds, 3),
              "seconds": round(time.perf_counter() - stats.started, 2)}
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")


def _rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else 0.0


class Server(ThreadingHTTPServer):
    """The HTTP server, holding the one model."""

    daemon_threads = True

    def __init__(self, addr: tuple[str, int], model: Model, default_ctx: int,
                 transcript: Path | None = None) -> None:
        super().__init__(addr, Handler)
        self.model = model
        self.default_ctx = default_ctx
        self.transcript = transcript


def main(argv: list[str] | None = None) -> int:
    """Command line: load the model and serve until interrupted."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, required=True, help="a GGUF file")
    p.add_argument("--name", help="the name /api/tags advertises (default: from fetch_model's "
                                  "table, e.g. qwen2.5-coder:0.5b, else FILE-STEM:latest)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=11435)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--ctx", type=int, default=8192, help="num_ctx when a request has none")
    p.add_argument("--extra-bufts", action="store_true",
                   help="keep llama.cpp's extra buffer types (weight repacking, AMX); off by "
                        "default because they crash on AMX CPUs with the default build")
    p.add_argument("--transcript", type=Path,
                   help="append each chat's last message, answer and cost to this JSONL file")
    p.add_argument("-v", "--verbose", action="store_true", help="log every HTTP request too")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    spec = spec_for_file(args.model)
    name = args.name or (spec.ollama_name if spec else full_name(args.model.stem))
    model = Model(args.model, name, args.threads, args.ctx, args.extra_bufts)
    server = Server((args.host, args.port), model, args.ctx, args.transcript)
    log.info("serving %s as %r on http://%s:%d (capabilities: %s)", args.model.name, name,
             args.host, server.server_address[1], ", ".join(model.capabilities))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
