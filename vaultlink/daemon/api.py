"""The status API for the Obsidian plugin: loopback HTTP, one bearer token.

The contract is ``docs/status-api.md``. The server binds 127.0.0.1 only; the token lives
in ``.vaultlink/token`` (owner-only) and is compared in constant time. Every answer is
JSON, errors included. Notes are named by vault path only, through ``Vault.rel`` and
``Vault.abs``, so no file outside the vault is read. Before the token is looked at, a
request must name this server (a loopback ``Host``, against DNS rebinding), come from
no web page but Obsidian's or a loopback one (``Origin``), and frame its body with one
plain ``Content-Length``.
"""

from __future__ import annotations

import hmac
import http.client
import json
import logging
import os
import re
import selectors
import socket
import threading
from contextlib import suppress
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from vaultlink.daemon.process import ensure_token
from vaultlink.daemon.views import ApiError, ServedDaemon, Views
from vaultlink.errors import (
    DaemonError,
    NoteNotFound,
    NoteUnreadable,
    PathRefused,
    VaultlinkError,
)

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
LOOPBACK = "127.0.0.1"
# The names a Host header may give this server, with its port or none.
LOOPBACK_NAMES = (LOOPBACK, "localhost", "[::1]")
# Obsidian's requestUrl sends Origin: app://obsidian.md (desktop); its mobile apps are
# capacitor://localhost (iOS) and http://localhost (Android).
OBSIDIAN_ORIGINS = frozenset({"app://obsidian.md", "capacitor://localhost", "http://localhost"})
_LOOPBACK_ORIGIN = re.compile(r"http://(127\.0\.0\.1|localhost|\[::1\])(:[0-9]{1,5})?")
_LENGTH = re.compile(r"[0-9]{1,18}")  # int() would also take "+5", " 5 " and "5_0"


ROUTES = {"/status": "GET", "/note": "GET", "/decisions": "GET", "/search": "GET",
          "/rerun": "POST", "/undo": "POST", "/redo": "POST", "/backfill": "POST",
          "/proposals": "GET"}
# POST /proposals/{id}/approve | reject | new: settle a proposal held for review
_SETTLE = re.compile(r"/proposals/([0-9]{1,12})/(approve|reject|new)")


def allowed_method(path: str) -> str | None:
    """The one method a route takes (None: no such route)."""
    return "POST" if _SETTLE.fullmatch(path) else ROUTES.get(path)


def body_length(headers: Message) -> int:
    """The body's length as its one ``Content-Length`` header gives it (0 without one).

    ``ApiError`` 400 for a header that is no plain number or comes twice, 411 for a
    ``Transfer-Encoding``: either way the body's end is unknown, so the connection closes.
    """
    if headers.get("Transfer-Encoding") is not None:
        raise ApiError(411, "send the body with a Content-Length, not a Transfer-Encoding")
    values = headers.get_all("Content-Length") or []
    if not values:
        return 0
    if len(values) > 1 or not _LENGTH.fullmatch(values[0].strip()):
        raise ApiError(400, "malformed Content-Length: send one header with the body's "
                            "size in bytes, a whole number")
    return int(values[0])


def host_allowed(headers: Message, port: int) -> bool:
    """Whether the one ``Host`` header names this server: loopback, with our port or none.

    A page that rebinds its own domain to 127.0.0.1 reaches this port, but its browser
    still sends the page's domain as the Host.
    """
    hosts = headers.get_all("Host") or []
    allowed = {*LOOPBACK_NAMES, *(f"{name}:{port}" for name in LOOPBACK_NAMES)}
    return len(hosts) == 1 and hosts[0].strip().lower() in allowed


def origin_allowed(headers: Message) -> bool:
    """Whether the request comes from no web page, from Obsidian, or from a loopback page.

    Browsers send ``Origin`` with every cross-site POST (and fetch); a page elsewhere
    must not drive the daemon even if it somehow holds the token.
    """
    origins = headers.get_all("Origin") or []
    if not origins:
        return True  # curl, the CLI, urllib: no browser involved
    origin = origins[0].strip().lower()
    return len(origins) == 1 and (origin in OBSIDIAN_ORIGINS
                                  or _LOOPBACK_ORIGIN.fullmatch(origin) is not None)


def _shown(value: str | None) -> str:
    """A header value quoted for an error message, cut short."""
    return repr((value or "")[:80])


class _Handler(BaseHTTPRequestHandler):
    api: ApiServer
    server_version = "vaultlink"
    protocol_version = "HTTP/1.1"
    timeout = 30  # a client that stops talking does not hold a thread forever
    _body_read = False
    _length: int | None = None  # the request's body length; None: its end is unknown

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("api %s: " + format, self.client_address[0], *args)

    def version_string(self) -> str:
        # the default adds "Python/3.x.y", told to anyone before the token is checked
        return self.server_version

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The base class's own refusals (a request line or header it cannot parse, an
        unknown method), answered in JSON as every other error instead of in HTML."""
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True  # the request was not read to its end
        words = message or self.responses.get(code, ("refused",))[0]
        self._answer(code, {"error": f"{words}; see docs/status-api.md"})

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def _dispatch(self, method: str) -> None:
        self._body_read = False
        self._length = None
        try:
            self._screen()
            status, data = 200, self._route(method)
        except ApiError as exc:
            status, data = exc.status, {"error": exc.message, **exc.detail}
        except PathRefused as exc:
            status, data = 400, {"error": str(exc)}
        except NoteNotFound as exc:
            status, data = 404, {"error": str(exc)}
        except NoteUnreadable as exc:
            status, data = 422, {"error": str(exc)}
        except DaemonError as exc:  # stopping, or not started: the client may retry
            status, data = 503, {"error": str(exc)}
        except VaultlinkError as exc:
            log.warning("api %s %s: %s", method, self.path, exc)
            status, data = 500, {"error": str(exc)}
        except Exception:
            log.exception("api %s %s failed", method, self.path)
            status, data = 500, {"error": "internal error; see .vaultlink/logs/vaultlink.log"}
        if not self._body_read and self._length != 0:
            self.close_connection = True  # the unread body must not pass for a request
        self._answer(status, data)

    def _answer(self, status: int, data: Any) -> None:
        payload = json.dumps(data, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        if status == 405:
            self.send_header("Allow", allowed_method(urlsplit(self.path).path) or "GET")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _screen(self) -> None:
        """Refuse, before the token is checked, what is not a request of ours: a body of
        unknown length (400, 411), another Host (421), a web page's Origin (403)."""
        self._length = body_length(self.headers)
        port = self.api.port
        if not host_allowed(self.headers, port):
            raise ApiError(421, f"this API answers requests to 127.0.0.1:{port} or "
                                f"localhost:{port} only, not to Host "
                                f"{_shown(self.headers.get('Host'))}; use "
                                f"http://127.0.0.1:{port}")
        if not origin_allowed(self.headers):
            raise ApiError(403, f"requests from web pages are refused (Origin "
                                f"{_shown(self.headers.get('Origin'))}); use the vaultlink "
                                "Obsidian plugin or the vaultlink CLI")

    def _route(self, method: str) -> Any:
        if not self.api.authorised(self.headers.get("Authorization", "")):
            raise ApiError(401, "missing or wrong token: send 'Authorization: Bearer <token>' "
                                "with the content of .vaultlink/token")
        url = urlsplit(self.path)
        allowed = allowed_method(url.path)
        if allowed is None:
            raise ApiError(404, f"no route {url.path}; see docs/status-api.md")
        if method != allowed:
            raise ApiError(405, f"{url.path} takes {allowed}, not {method}")
        query = parse_qs(url.query, keep_blank_values=True)
        views = self.api.views
        if url.path == "/status":
            return self.api.daemon.status()
        if url.path == "/note":
            if not query.get("path"):
                raise ApiError(400, "give the note as ?path=<vault-relative path>")
            return views.note(query["path"][-1])
        if url.path == "/decisions":
            return views.decisions(query)
        if url.path == "/search":
            return views.search(query)
        if url.path == "/proposals":
            return views.proposals(query)
        body = self._json_body()
        if settle := _SETTLE.fullmatch(url.path):
            return views.settle(int(settle[1]), settle[2])
        if url.path == "/rerun":
            return views.rerun(body)
        if url.path == "/backfill":
            return views.backfill(body)
        return views.redo(body) if url.path == "/redo" else views.undo(body)

    def _json_body(self) -> dict[str, Any]:
        length = self._length or 0  # _screen() checked the header
        if length > MAX_BODY:
            raise ApiError(413, f"the body is over {MAX_BODY // 1024} KiB")
        raw = self.rfile.read(length) if length > 0 else b""
        self._body_read = True
        if len(raw) < length:  # the client hung up, or stop() stopped reading: retryable
            raise DaemonError("the body was cut short (the daemon may be stopping); try again")
        try:
            body = json.loads(raw or b"null")
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "the body is not JSON") from None
        if not isinstance(body, dict):
            raise ApiError(400, "the body must be a JSON object")
        return body


def bearer_matches(header: str, token: bytes) -> bool:
    """Whether an ``Authorization`` header is ``Bearer <token>`` (constant time)."""
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8", "replace"), token)


def _vaultlink_listens(port: int) -> bool:
    """Whether the program on ``port`` answers as vaultlink's API does."""
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=1)
    try:
        conn.request("GET", "/status")
        return (conn.getresponse().getheader("Server") or "").startswith("vaultlink")
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


class _Server(ThreadingHTTPServer):
    """Keeps track of its open connections, so stopping can hang up the idle ones and
    wait for the answers in flight before the daemon closes the indexes they read."""

    daemon_threads = True  # a request that outlives the wait must not keep the process up

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]
                 ) -> None:
        self._open: set[socket.socket] = set()
        self._settled = threading.Condition()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._settled:  # registered before its thread starts: stop() cannot miss it
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._settled:  # out of _open before it closes: its fd number may be reused
            self._open.discard(request)
            self._settled.notify_all()
        super().shutdown_request(request)

    def close_connections(self, timeout: float) -> bool:
        """Stop reading from every connection and wait for their threads to end.

        A keep-alive client waiting between requests reads end-of-file at once; a request
        being answered still gets its answer. False if some were still busy at ``timeout``.
        """
        with self._settled:
            for sock in self._open:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RD)
            return self._settled.wait_for(lambda: not self._open, timeout)


class ApiServer:
    """The HTTP server in its own thread; ``port`` is the bound port (api.port 0: any)."""

    def __init__(self, daemon: ServedDaemon, host: str, port: int) -> None:
        if host not in (LOOPBACK, "localhost"):
            raise DaemonError(f"the status API listens on 127.0.0.1 only, not {host!r}: it "
                              "serves your notes to anyone who has the token")
        self.daemon = daemon
        self.views = Views(daemon)
        self._token = ensure_token(daemon.vault.state_dir).encode("ascii")
        handler = type("Handler", (_Handler,), {"api": self})
        try:
            self._httpd = _Server((LOOPBACK, port), handler)
        except OSError as exc:
            who = ("another vaultlink daemon (of another vault) uses it."
                   if _vaultlink_listens(port) else "is another program using it?")
            raise DaemonError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); {who} "
                              "Give this vault its own api.port in .vaultlink/config.yaml"
                              ) from None
        self.port = int(self._httpd.server_address[1])
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None
        self._closed = False

    def authorised(self, header: str) -> bool:
        """Constant-time check of ``Authorization: Bearer <token>``."""
        return bearer_matches(header, self._token)

    def start(self) -> None:
        """Serve in a thread that sleeps until a request (or stop) arrives."""
        self._thread = threading.Thread(target=self._serve, name="vaultlink-api", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        # serve_forever() wakes every poll_interval to look for shutdown; a pipe lets
        # the thread sleep in select() until there is a request or a stop.
        with selectors.DefaultSelector() as sel:
            sel.register(self._httpd, selectors.EVENT_READ)
            sel.register(self._wake_r, selectors.EVENT_READ)
            while True:
                for key, _ in sel.select():
                    if key.fileobj == self._wake_r:
                        return
                    self._httpd.handle_request()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop accepting, let the requests in flight answer (up to ``timeout`` s), close.

        Idempotent. False if a request was still running at ``timeout``: the caller must
        not close what it reads.
        """
        if self._closed:
            return True
        self._closed = True
        if self._thread is not None:
            os.write(self._wake_w, b"x")
            self._thread.join(timeout=5)
            self._thread = None
        settled = self._httpd.close_connections(timeout)
        if not settled:
            log.warning("an API request was still running after %.0f s; stopping without it",
                        timeout)
        self._httpd.server_close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        return settled
