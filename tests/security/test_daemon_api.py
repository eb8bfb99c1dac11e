"""The status API refuses what is not a request of its own client (issue 36, finding 7).

Before the token is looked at: a body of unknown length (malformed ``Content-Length``,
``Transfer-Encoding``) is a JSON 400/411 that closes the connection, a Host other than
loopback is a 421 (DNS rebinding), an Origin other than Obsidian's or a loopback page's
is a 403 (a web page driving the daemon), and no answer names the Python version.

The requests are written byte for byte on a socket, so each header is exactly what the
test says, and the server is a real ``ApiServer`` over a stub daemon that answers
``/status`` only.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vaultlink.daemon.api import ApiServer
from vaultlink.vault.notes import Vault


class _StatusOnly:
    """The little of a daemon that ``GET /status`` reads."""

    generation = 0

    def __init__(self, root: Path) -> None:
        self.vault = Vault(root)

    def status(self) -> dict[str, Any]:
        return {"api_version": 1, "state": "idle"}


@dataclass
class Api:
    port: int
    token: str


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: Any
    raw_body: bytes


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    root = tmp_path_factory.mktemp("vault")
    server = ApiServer(_StatusOnly(root), "127.0.0.1", 0)  # type: ignore[arg-type]
    server.start()
    try:
        yield Api(server.port, (root / ".vaultlink/token").read_text().strip())
    finally:
        server.stop()


def send(api: Api, head: str, body: bytes = b"", *, token: bool = True) -> Answer:
    """Send ``head`` (request line and headers, ``\\n``-separated, ``{port}`` filled in)
    with the token or without, then read one answer."""
    lines = head.format(port=api.port).split("\n")
    if token:
        lines.append(f"Authorization: Bearer {api.token}")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    with socket.create_connection(("127.0.0.1", api.port), timeout=30) as sock:
        sock.sendall(raw)
        resp = http.client.HTTPResponse(sock)
        resp.begin()
        data = resp.read()
    parsed = json.loads(data) if data else None
    return Answer(resp.status, resp.headers, parsed, data)


def status_with(api: Api, headers: list[str], *, token: bool = True) -> Answer:
    """``GET /status`` with ``Host: 127.0.0.1:<port>`` unless ``headers`` has a Host."""
    host = [] if any(h.lower().startswith("host:") for h in headers) else [
        "Host: 127.0.0.1:{port}"]
    return send(api, "\n".join(["GET /status HTTP/1.1", *host, *headers]), token=token)


def assert_json_error(answer: Answer, status: int, *words: str) -> None:
    assert answer.status == status, answer.raw_body
    assert answer.headers.get("Content-Type", "").startswith("application/json")
    assert isinstance(answer.body, dict) and answer.body["error"]
    for word in words:
        assert word in answer.body["error"], answer.body


# -- finding 1: Content-Length ------------------------------------------------------------


@pytest.mark.parametrize("token", [False, True], ids=["no-token", "token"])
@pytest.mark.parametrize("value", ["abc", "12abc", "-1", "+5", "5_0", "1e3", "5, 5"])
def test_a_malformed_content_length_is_a_json_400_that_closes(
        api: Api, value: str, token: bool) -> None:
    """A Content-Length that is no plain number is answered 400 in JSON, with or without
    the token (it used to raise ValueError and drop the connection, or pass as a length),
    and the connection closes: where the body ends is unknown."""
    answer = status_with(api, [f"Content-Length: {value}"], token=token)
    assert_json_error(answer, 400, "Content-Length")
    assert answer.headers.get("Connection") == "close"


def test_two_content_lengths_are_a_400(api: Api) -> None:
    """Two Content-Length headers (the first one used to win) are refused: a proxy that
    reads the other one would see another request in the body."""
    answer = send(api, "POST /undo HTTP/1.1\nHost: 127.0.0.1:{port}\nContent-Length: 2\n"
                       "Content-Length: 9", b"{}")
    assert_json_error(answer, 400, "Content-Length")
    assert answer.headers.get("Connection") == "close"


def test_a_transfer_encoding_is_411_on_any_route(api: Api) -> None:
    """A chunked body is refused on a GET too (it was answered 200 and the connection
    kept, so the chunks would have been read as the next request)."""
    answer = status_with(api, ["Transfer-Encoding: chunked"])
    assert_json_error(answer, 411, "Content-Length")
    assert answer.headers.get("Connection") == "close"


# -- finding 2: Host and Origin -----------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:{port}", "localhost:{port}",
                                  "LOCALHOST", "[::1]:{port}", "[::1]"])
def test_a_loopback_host_with_this_port_or_none_is_served(api: Api, host: str) -> None:
    """What the plugin, the CLI and curl send (Host 127.0.0.1:<port>, localhost:<port>)
    is still answered."""
    assert status_with(api, [f"Host: {host}"]).status == 200


@pytest.mark.parametrize("hosts", [
    ["Host: evil.example"], ["Host: evil.example:{port}"], ["Host: 127.0.0.1:1"],
    ["Host: localhost.evil.example:{port}"], ["Host: 127.0.0.1.nip.io:{port}"],
    ["Host: localhost:{port}", "Host: evil.example"], ["Host: "], [],
], ids=["name", "name-port", "other-port", "suffix", "nip-io", "two", "empty", "none"])
@pytest.mark.parametrize("token", [False, True], ids=["no-token", "token"])
def test_any_other_host_is_421_before_the_token(
        api: Api, hosts: list[str], token: bool) -> None:
    """A page that rebinds its own name to 127.0.0.1 sends that name as Host: refused 421
    with the address to use, token or not (it used to be 401, or 200 with the token)."""
    request = "\n".join(["GET /status HTTP/1.1", *hosts])
    answer = send(api, request, token=token)
    assert_json_error(answer, 421, f"http://127.0.0.1:{api.port}")


@pytest.mark.parametrize("origin", ["app://obsidian.md", "capacitor://localhost",
                                    "http://localhost", "http://127.0.0.1:3000",
                                    "http://localhost:{port}", "http://[::1]:8080"])
def test_obsidian_and_loopback_origins_are_served(api: Api, origin: str) -> None:
    """Obsidian's requestUrl sends Origin app://obsidian.md (its mobile apps
    capacitor://localhost and http://localhost); a loopback page may ask too."""
    assert status_with(api, [f"Origin: {origin}"]).status == 200


@pytest.mark.parametrize("origin", [
    "https://evil.example", "null", "http://127.0.0.1.evil.example",
    "http://localhost.evil.example:{port}", "https://localhost", "file://",
    "app://obsidian.md.evil.example", "chrome-extension://abcdef",
])
def test_a_web_pages_origin_is_403_even_with_the_token(api: Api, origin: str) -> None:
    """A request from any other page is refused, token or not (it was answered)."""
    answer = status_with(api, [f"Origin: {origin}"])
    assert_json_error(answer, 403, "Origin", "plugin")


def test_two_origins_are_403(api: Api) -> None:
    """An allowed Origin does not vouch for a second one beside it."""
    answer = status_with(api, ["Origin: app://obsidian.md", "Origin: https://evil.example"])
    assert_json_error(answer, 403, "Origin")


# -- finding 3: no version banner ---------------------------------------------------------


def test_the_server_header_is_plain_vaultlink(api: Api) -> None:
    """Unauthenticated answers name no Python version (it was 'vaultlink Python/3.x.y')."""
    answer = status_with(api, [], token=False)
    assert answer.status == 401
    assert answer.headers.get("Server") == "vaultlink"


@pytest.mark.parametrize(("head", "status"), [
    ("OPTIONS /status HTTP/1.1\nHost: 127.0.0.1:{port}", 501),
    ("GET /status <script> HTTP/1.1", 400),
    ("GET /status HTTP/1.1\nX-Long: " + "x" * 70_000, 431),
], ids=["unknown-method", "bad-request-line", "header-too-long"])
def test_the_http_servers_own_refusals_are_json_without_a_banner(
        api: Api, head: str, status: int) -> None:
    """What the request parser refuses itself (it answered an HTML page echoing the
    request) is JSON as every other error, and names no Python version."""
    answer = send(api, head, token=False)
    assert_json_error(answer, status, "docs/status-api.md")
    assert answer.headers.get("Server") == "vaultlink"
