"""The status API against a real daemon on a copy of the sample vault (offline provider).

Checks the contract of docs/status-api.md field by field, the token, the loopback-only
bind, and that no request can read outside the vault.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.vaults import copy_sample_vault
from tests.waiting import wait_for
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.api import ApiServer
from vaultlink.daemon.indexes import SECTIONS_RECHECK_SECONDS, SectionsSynced
from vaultlink.daemon.service import Daemon
from vaultlink.errors import DaemonError, VaultBusy
from vaultlink.vault.graph import build_graph, check_vault

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
NODE_REF = {"path", "name", "description"}
DECISION = {"id", "at", "run_id", "unit", "action", "target", "note", "diff", "undone",
            "undoable"}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = copy_sample_vault(tmp_path_factory.mktemp("api") / "vault")
    (root / "notes").mkdir()
    (root / "notes/readme.md").write_text("# Not a daily note\n")
    settings = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "offline", "api.port": 0, "watch.quiet_seconds": 0.2})
    d = Daemon(root, settings.daemon())
    d.start()
    wait_for(lambda: not d.state.queue() and d.state.last_run() and d.status()["state"] == "idle",
             timeout=600, what="the sample vault to be integrated")  # a loaded CI box
    yield d
    d.stop()


def call(d: Daemon, method: str, path: str, body: Any = None, token: str | None = "ok",
         raw: bytes | None = None, headers: dict[str, str] | None = None,
         timeout: float = 60) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=timeout)
    hdrs = dict(headers or {})
    if token == "ok":
        token = (d.vault.state_dir / "token").read_text().strip()
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    payload = json.loads(resp.read())
    conn.close()
    assert resp.getheader("Content-Type", "").startswith("application/json")
    return resp.status, payload


def assert_decision(d: dict[str, Any]) -> None:
    assert set(d) >= DECISION, d.keys()
    assert ISO.match(d["at"])
    assert {"name", "bucket", "summary", "paths"} <= set(d["unit"])
    assert d["action"] in {"CREATE", "CORROBORATE", "REFINE", "CORRECT", "UNDO", "SKIP",
                           "FAILED"}
    assert isinstance(d["undone"], bool) and isinstance(d["undoable"], bool)


# -- security --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("token", [None, "wrong", ""])
def test_no_or_wrong_token_is_401(daemon: Daemon, token: str | None) -> None:
    status, body = call(daemon, "GET", "/status", token=token)
    assert status == 401 and "token" in body["error"]


@pytest.mark.slow
def test_other_auth_schemes_are_401(daemon: Daemon) -> None:
    token = (daemon.vault.state_dir / "token").read_text().strip()
    status, _ = call(daemon, "GET", "/status", token=None,
                     headers={"Authorization": f"Basic {token}"})
    assert status == 401
    assert call(daemon, "GET", "/nowhere", token=None)[0] == 401  # no route probing either


@pytest.mark.slow
def test_token_file_is_owner_only_and_bind_is_loopback(daemon: Daemon) -> None:
    mode = stat.S_IMODE(os.stat(daemon.vault.state_dir / "token").st_mode)
    assert mode == 0o600
    assert daemon._api._httpd.server_address[0] == "127.0.0.1"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", ""])
def test_non_loopback_bind_is_refused(host: str) -> None:
    with pytest.raises(DaemonError, match=r"127\.0\.0\.1 only"):
        ApiServer(None, host, 0)  # type: ignore[arg-type]


def test_daemon_with_a_public_host_does_not_start(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir()
    settings = load_settings(tmp_path, environ={}).with_overrides(
        {"llm.provider": "offline", "api.port": 0})
    with pytest.raises(DaemonError):
        Daemon(tmp_path, settings.daemon(), host="0.0.0.0").start()
    d = Daemon(tmp_path, settings.daemon())  # the failed start released the lock
    d.start()
    d.stop()


@pytest.mark.slow
@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd", "daily/../../outside.md",
                                  "daily/escape.md", "C:/x.md", "daily\\x.md", ""])
def test_paths_outside_the_vault_are_400(daemon: Daemon, path: str) -> None:
    outside = daemon.vault.root.parent / "outside.md"
    outside.write_text("secret\n")
    link = daemon.vault.root / "daily/escape.md"
    if not link.is_symlink():
        link.symlink_to(outside)
    from urllib.parse import quote

    status, body = call(daemon, "GET", f"/note?path={quote(path)}")
    assert status == 400, body
    assert "secret" not in json.dumps(body)


@pytest.mark.slow
def test_limits_and_routes(daemon: Daemon) -> None:
    status, body = call(daemon, "POST", "/rerun", raw=b"{" + b" " * (65 * 1024) + b"}")
    assert status == 413 and "64 KiB" in body["error"]
    assert call(daemon, "GET", "/nope")[0] == 404
    assert call(daemon, "GET", "/rerun")[0] == 405
    assert call(daemon, "POST", "/status", body={})[0] == 405
    assert call(daemon, "DELETE", "/note")[0] == 405
    assert call(daemon, "POST", "/undo", raw=b"not json")[0] == 400
    assert call(daemon, "POST", "/undo", body=[1])[0] == 400
    assert call(daemon, "POST", "/undo", body={"id": "31"})[0] == 400
    assert call(daemon, "GET", "/note")[0] == 400
    assert call(daemon, "GET", "/decisions?limit=0")[0] == 400
    assert call(daemon, "GET", "/decisions?limit=abc")[0] == 400


def test_a_stopping_daemon_answers_503(tmp_path: Path) -> None:
    """While the daemon stops, a search (which needs its indexes) is told to retry."""
    from vaultlink.vault.notes import Vault

    class Stopping:
        vault, generation = Vault(tmp_path), 0

        @property
        def parts(self) -> Any:
            raise DaemonError("the daemon is not running (starting or stopping); try again")

    api = ApiServer(Stopping(), "127.0.0.1", 0)  # type: ignore[arg-type]
    api.start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=10)
        token = (tmp_path / ".vaultlink/token").read_text().strip()
        conn.request("GET", "/search?q=x", headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        assert resp.status == 503 and "try again" in json.loads(resp.read())["error"]
        conn.close()
    finally:
        api.stop()


def test_stop_hangs_up_an_idle_keep_alive_connection(tmp_path: Path) -> None:
    """A client that keeps its connection open between requests (HTTP/1.1 keep-alive)
    does not hold the daemon's stop for the handler's 30 s read timeout."""
    import threading

    from vaultlink.vault.notes import Vault

    class Idle:
        vault, generation = Vault(tmp_path), 0

        def status(self) -> dict[str, str]:
            return {"state": "idle"}

    api = ApiServer(Idle(), "127.0.0.1", 0)  # type: ignore[arg-type]
    api.start()
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=60)
    token = (tmp_path / ".vaultlink/token").read_text().strip()
    conn.request("GET", "/status", headers={"Authorization": f"Bearer {token}"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("Connection") != "close"
    resp.read()
    stopper = threading.Thread(target=api.stop)
    stopper.start()
    stopper.join(timeout=15)  # half the handler's timeout: a hang, not a speed, is measured
    try:
        assert not stopper.is_alive(), "stop() waited for the idle client"
    finally:
        conn.close()
        stopper.join()


def test_a_port_taken_by_another_vaults_daemon_is_named_as_such(tmp_path: Path) -> None:
    """Two vaults with the default api.port: the second daemon says who holds the port."""
    from vaultlink.vault.notes import Vault

    class Idle:
        generation = 0

        def __init__(self, root: Path) -> None:
            root.mkdir()
            self.vault = Vault(root)

    first = ApiServer(Idle(tmp_path / "a"), "127.0.0.1", 0)  # type: ignore[arg-type]
    first.start()
    try:
        with pytest.raises(DaemonError, match=r"another vaultlink daemon \(of another vault\) "
                                              r"uses it\. Give this vault its own api.port"):
            ApiServer(Idle(tmp_path / "b"), "127.0.0.1", first.port)  # type: ignore[arg-type]
    finally:
        first.stop()


def test_a_body_cut_short_is_a_retryable_503(tmp_path: Path) -> None:
    """A body that stops before its Content-Length (the client hung up, or stop() stopped
    reading) is not the client's bad JSON: 503, try again."""
    import socket

    from vaultlink.vault.notes import Vault

    class Plain:
        vault, generation = Vault(tmp_path), 0

    api = ApiServer(Plain(), "127.0.0.1", 0)  # type: ignore[arg-type]
    api.start()
    try:
        token = (tmp_path / ".vaultlink/token").read_text().strip()
        with socket.create_connection(("127.0.0.1", api.port), timeout=30) as sock:
            sock.sendall(f"POST /undo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         f"Authorization: Bearer {token}\r\n"
                         "Content-Length: 20\r\n\r\n{\"id\"".encode())
            sock.shutdown(socket.SHUT_WR)
            answer = sock.makefile("rb").read().decode()
        assert answer.startswith("HTTP/1.1 503") and "try again" in answer
    finally:
        api.stop()


class Slow:
    """A daemon whose status takes until ``release`` is set."""

    def __init__(self, root: Path) -> None:
        import threading

        from vaultlink.vault.notes import Vault
        self.vault, self.generation = Vault(root), 0
        self.entered, self.release = threading.Event(), threading.Event()

    def status(self) -> dict[str, str]:
        self.entered.set()
        self.release.wait(30)
        return {"state": "idle"}


def _ask_status_in_background(api: ApiServer, root: Path) -> tuple[Any, list[int]]:
    import threading

    got: list[int] = []
    token = (root / ".vaultlink/token").read_text().strip()

    def ask() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=60)
        conn.request("GET", "/status", headers={"Authorization": f"Bearer {token}"})
        got.append(conn.getresponse().status)
        conn.close()

    asker = threading.Thread(target=ask)
    asker.start()
    return asker, got


def test_stop_lets_a_request_in_flight_answer_before_returning(tmp_path: Path) -> None:
    """The daemon closes its indexes after the API stops, so stop() must not return while
    a request still runs: that request would read closed indexes and answer 500."""
    import threading

    slow = Slow(tmp_path)
    api = ApiServer(slow, "127.0.0.1", 0)  # type: ignore[arg-type]
    api.start()
    asker, got = _ask_status_in_background(api, tmp_path)
    assert slow.entered.wait(10)
    result: list[bool] = []
    stopper = threading.Thread(target=lambda: result.append(api.stop()))
    stopper.start()
    stopper.join(timeout=0.5)
    assert stopper.is_alive(), "stop() returned while a request was still being answered"
    slow.release.set()
    stopper.join(timeout=30)
    asker.join(timeout=30)
    assert result == [True] and got == [200]


def test_stop_gives_up_on_a_request_that_outlives_the_wait(tmp_path: Path) -> None:
    """stop() says so (False) when a request is still running at its timeout; the daemon
    then leaves its indexes open rather than close them under that request."""
    slow = Slow(tmp_path)
    api = ApiServer(slow, "127.0.0.1", 0)  # type: ignore[arg-type]
    api.start()
    asker, got = _ask_status_in_background(api, tmp_path)
    assert slow.entered.wait(10)
    try:
        assert api.stop(timeout=0.2) is False
    finally:
        slow.release.set()
        asker.join(timeout=30)
    assert got == [200]


# -- the contract --------------------------------------------------------------------------


@pytest.mark.slow
def test_status_shape(daemon: Daemon) -> None:
    status, s = call(daemon, "GET", "/status")
    assert status == 200
    assert {"api_version", "version", "vault", "pid", "started_at", "state", "model", "queue",
            "current", "last_run", "failed", "unreadable"} <= set(s)
    assert s["api_version"] == 1 and s["pid"] == os.getpid() and ISO.match(s["started_at"])
    assert s["vault"] == str(daemon.vault.root)
    assert s["state"] in {"idle", "working", "waiting-for-model", "stopping"}
    assert {"provider", "host", "model", "reachable"} <= set(s["model"])
    assert s["model"]["provider"] == "offline" and s["model"]["reachable"] is True
    run = s["last_run"]
    assert {"id", "started_at", "finished_at", "counts", "changes"} <= set(run)
    assert ISO.match(run["started_at"]) and ISO.match(run["finished_at"])
    assert set(run["counts"]) == {"scanned", "changed", "extracted", "integrated", "skipped",
                                  "failed", "checkpointed", "held"}
    for c in run["changes"]:
        assert set(c) == {"target", "action", "note"}
    assert isinstance(s["queue"], list) and isinstance(s["failed"], list)
    # the sample vault plants a note with broken YAML: the plugin must be able to show it
    broken = next(u for u in s["unreadable"] if u["path"] == "daily/2026-06-15.md")
    assert set(broken) == {"path", "since", "reason"} and ISO.match(broken["since"])
    assert "YAML" in broken["reason"]
    status, note = call(daemon, "GET", "/note?path=daily/2026-06-15.md")
    assert status == 200 and note["state"] == "failed" and note["error"] == broken["reason"]


@pytest.mark.slow
def test_queue_items_in_status(daemon: Daemon) -> None:
    daemon.state.enqueue("daily/zz-later.md", time.time(), 300)
    try:
        q = next(i for i in call(daemon, "GET", "/status")[1]["queue"]
                 if i["path"] == "daily/zz-later.md")
        assert q["state"] == "settling" and 290 < q["settles_in_seconds"] <= 300
    finally:
        daemon.state.dequeue([i for i in daemon.state.queue() if i.path == "daily/zz-later.md"])


@pytest.mark.slow
def test_note_digest_shape(daemon: Daemon) -> None:
    status, n = call(daemon, "GET", "/note?path=digest/wiki/hybrid-search.md")
    assert status == 200
    assert n["kind"] == "digest" and n["name"] and n["description"]
    assert n["sources"] and all(set(s) == {"path", "sentence"} for s in n["sources"])
    assert all(f"[[{s['path']}" in s["sentence"] or "[[" in s["sentence"]
               for s in n["sources"])
    assert any(s["path"].startswith(("daily/", "resource/")) for s in n["sources"])
    for ref in n["related"] + n["backlinks"]:
        assert set(ref) == NODE_REF
    assert all(r["path"].startswith("digest/") for r in n["related"])
    assert n["decisions"]
    for d in n["decisions"]:
        assert_decision(d)


@pytest.mark.slow
def test_note_source_and_other_shapes(daemon: Daemon) -> None:
    fed_by = {e.unit["paths"][0] for e in daemon.state.journal(limit=200)
              if e.action in ("CREATE", "REFINE", "CORROBORATE", "CORRECT")}
    source = sorted(fed_by)[0]
    status, n = call(daemon, "GET", f"/note?path={source}")
    assert status == 200
    assert set(n) == {"path", "kind", "state", "settles_in_seconds", "error", "fed", "decisions"}
    assert n["kind"] == "source" and n["state"] == "integrated"
    assert n["settles_in_seconds"] is None and n["error"] is None
    assert n["fed"] and all(set(r) == NODE_REF for r in n["fed"])
    for d in n["decisions"]:
        assert_decision(d)
    assert call(daemon, "GET", "/note?path=notes/readme.md")[1] == {
        "path": "notes/readme.md", "kind": "other"}
    assert call(daemon, "GET", "/note?path=daily/missing.md")[0] == 404
    (daemon.vault.root / "daily/2099-01-01.md").write_text("## New\n\nSomething new.\n")
    wait_for(lambda: "daily/2099-01-01.md" in daemon.state.checkpoints()
             and not daemon.state.queue(), what="the new note to be taken up")
    daemon.state.enqueue("daily/2099-01-01.md", time.time(), 300)  # as if just edited
    n = call(daemon, "GET", "/note?path=daily/2099-01-01.md")[1]
    assert n["state"] == "settling" and n["settles_in_seconds"] > 200


@pytest.mark.slow
def test_decisions(daemon: Daemon) -> None:
    status, body = call(daemon, "GET", "/decisions?limit=3")
    assert status == 200 and len(body["decisions"]) == 3
    ids = [d["id"] for d in body["decisions"]]
    assert ids == sorted(ids, reverse=True)
    for d in body["decisions"]:
        assert_decision(d)
    target = body["decisions"][0]["target"] or "digest/wiki/hybrid-search.md"
    only = call(daemon, "GET", f"/decisions?limit=50&path={target}")[1]["decisions"]
    assert only and all(d["target"] == target or target in d["unit"]["paths"] for d in only)
    assert call(daemon, "GET", "/decisions?path=../x.md")[0] == 400


def test_cli_undo_goes_through_the_daemon(daemon: Daemon) -> None:
    """A CREATE other nodes link to since: refused (naming them), then undone with
    --cascade as one group without a broken link, then brought back by redo."""
    root = daemon.vault.root
    graph = build_graph(daemon.vault)
    newest: dict[str, Any] = {}
    for e in daemon.state.journal(limit=500):  # newest first
        newest.setdefault(e.target, e)
    def linked_by_later_decisions(e: Any) -> bool:
        # nodes link to it, and each of them was last changed by a later decision (a link
        # no decision wrote, e.g. in a hand-written node, cannot be cascaded: refused)
        sources = {b.source for b in graph.backlinks.get(e.target, [])
                   if b.source.startswith("digest/") and "/topics/" not in b.source}
        return bool(sources) and all(
            s in newest and newest[s].id > e.id and newest[s].undone_by is None
            and newest[s].action in ("CREATE", "CORROBORATE", "REFINE", "CORRECT")
            for s in sources)

    entry = next(e for e in newest.values() if e.public()["undoable"] and e.action == "CREATE"
                 and "user added" not in (root / e.target).read_text()  # test_undo's edit
                 and linked_by_later_decisions(e))
    before = digest_files(root)
    refused = cli("undo", str(entry.id), "--vault", str(root))
    assert isinstance(refused.exception, DaemonError), refused.output
    assert "--cascade" in str(refused.exception)
    assert digest_files(root) == before  # refused: nothing written
    status, body = call(daemon, "POST", "/undo", body={"id": entry.id})
    assert status == 409 and body["needs"], body
    assert all(isinstance(n["id"], int) and n["path"].startswith("digest/")
               for n in body["needs"])

    result = cli("undo", str(entry.id), "--cascade", "--vault", str(root))
    assert result.exit_code == 0, result.output
    assert f"undid decision #{entry.id}" in result.output
    assert not (root / entry.target).exists()  # a CREATE undone is removed
    assert [p for p in check_vault(daemon.vault) if p.level == "error"] == []
    name = entry.target.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ")
    assert entry.target not in [h.path for h in daemon.parts.index.node_search(name)]
    again = cli("undo", str(entry.id), "--vault", str(root))
    assert isinstance(again.exception, DaemonError) and "refused" in str(again.exception)

    redone = cli("redo", str(entry.id), "--vault", str(root))
    assert redone.exit_code == 0, redone.output
    assert digest_files(root) == before  # every file of the group is back
    assert [p for p in check_vault(daemon.vault) if p.level == "error"] == []
    assert entry.target in [h.path for h in daemon.parts.index.node_search(name)]


@pytest.mark.slow
def test_undo(daemon: Daemon) -> None:
    # updates: undoing one puts the node's text back (undoing a CREATE deletes the node)
    entries = [e for e in daemon.state.journal(limit=500)
               if e.public()["undoable"] and e.before_text is not None]
    newest_by_target: dict[str, int] = {}
    for e in entries:
        newest_by_target.setdefault(e.target, e.id)
    target, entry_id = next(iter(newest_by_target.items()))
    before = (daemon.vault.root / target).read_text()
    status, body = call(daemon, "POST", "/undo", body={"id": entry_id})
    assert status == 200, body
    assert body["undone"] == entry_id and body["decision"]["action"] == "UNDO"
    assert_decision(body["decision"])
    assert (daemon.vault.root / target).read_text() != before
    assert call(daemon, "POST", "/undo", body={"id": entry_id})[0] == 409  # already undone
    assert call(daemon, "POST", "/undo", body={"id": 10**9})[0] == 404
    # the user edited the node since a decision: 409, and the user's file is left alone
    other = next(e for e in entries if e.id != entry_id)
    path = daemon.vault.root / other.target
    path.write_text(path.read_text() + "\nA line the user added.\n")
    edited = path.read_text()
    status, body = call(daemon, "POST", "/undo", body={"id": other.id})
    assert status == 409 and "changed" in body["error"]
    assert path.read_text() == edited


@pytest.mark.slow
def test_rerun(daemon: Daemon) -> None:
    source = "daily/2026-06-08.md"  # (06-20's correction waits for review, unchecked)
    assert source in daemon.state.checkpoints()
    runs = daemon.runs
    status, body = call(daemon, "POST", "/rerun", body={"path": source})
    assert status == 200 and body == {"queued": [source]}
    wait_for(lambda: daemon.runs > runs and source in daemon.state.checkpoints()
             and not [i for i in daemon.state.queue() if i.path == source],
             what="the rerun to be integrated")
    assert call(daemon, "POST", "/rerun", body={"failed": True}) == (200, {"queued": []})
    assert call(daemon, "POST", "/rerun", body={"path": "digest/wiki/hybrid-search.md"})[0] == 400
    assert call(daemon, "POST", "/rerun", body={"path": "daily/nope.md"})[0] == 404
    assert call(daemon, "POST", "/rerun", body={"path": "../x.md"})[0] == 400
    assert call(daemon, "POST", "/rerun", body={})[0] == 400


@pytest.mark.slow
def test_search_answers_nodes_and_sections(daemon: Daemon) -> None:
    status, body = call(daemon, "GET", "/search?q=rebuild+the+search+index&limit=3")
    assert status == 200 and 1 <= len(body["hits"]) <= 3
    hit = body["hits"][0]
    assert set(hit) == {"path", "score", "name", "description", "similarity", "keyword_rank"}
    assert hit["path"].startswith("digest/") and hit["path"].endswith(".md")
    # each run leaves the section index current, so this answers without indexing
    status, body = call(daemon, "GET", "/search?q=autovacuum&in=sections&limit=2",
                        timeout=120)
    assert status == 200 and body["hits"]
    # one entry per note; "via": the digest nodes whose lines the section backs (issue 39)
    assert set(body["hits"][0]) == {"path", "score", "breadcrumb", "text", "line",
                                    "similarity", "keyword_rank", "outlinks", "inlinks", "via"}
    assert all(set(r) == NODE_REF for h in body["hits"] for r in h["outlinks"] + h["inlinks"])
    for bad in ("/search", "/search?q=+", "/search?q=x&in=files", "/search?q=x&limit=0",
                "/search?q=x&limit=501"):
        status, body = call(daemon, "GET", bad)
        assert status == 400 and body["error"], bad


# -- the CLI while the daemon owns the vault ----------------------------------------------


def cli(*args: str) -> Any:
    from typer.testing import CliRunner

    from vaultlink.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.slow
def test_cli_search_asks_the_daemon_instead_of_opening_chroma(daemon: Daemon) -> None:
    """A second process on the embedded Chroma store can lose vectors: while the daemon
    holds the vault, search goes through its API and gives the same answer."""
    root = str(daemon.vault.root)
    result = cli("node-search", "rebuild the search index", "-n", "3", "--vault", root, "--json")
    assert result.exit_code == 0, result.output
    _, direct = call(daemon, "GET", "/search?q=rebuild+the+search+index&limit=3")
    assert json.loads(result.output)["hits"] == direct["hits"]
    result = cli("search", "autovacuum", "-n", "2", "--vault", root)
    assert result.exit_code == 0 and "1. " in result.output, result.output


@pytest.mark.slow
def test_cli_dream_and_reindex_refuse_while_the_daemon_runs(daemon: Daemon) -> None:
    root = str(daemon.vault.root)
    def digest() -> dict[Path, bytes]:
        return {p: p.read_bytes() for p in (daemon.vault.root / "digest").rglob("*.md")}

    before = digest()
    for command, advice in (("dream", "stop it first"), ("reindex", "stop it, reindex")):
        result = cli(command, "--vault", root, "--llm", "offline") if command == "dream" \
            else cli(command, "--vault", root)
        assert isinstance(result.exception, VaultBusy), result.output
        assert f"daemon (pid {os.getpid()})" in str(result.exception)
        assert advice in str(result.exception)
    assert digest() == before  # nothing written, nothing created


@pytest.mark.slow
def digest_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in (root / "digest").rglob("*.md")}


def test_a_search_syncs_the_sections_only_after_a_change_or_a_while() -> None:
    """Walking a large vault for changes was most of a daemon search's time: a search
    syncs the section index after the watcher saw a change (the generation moved), or
    once the last sync is ``SECTIONS_RECHECK_SECONDS`` old (a missed event)."""
    synced = SectionsSynced()
    assert synced.due(0, 100.0)  # never synced
    synced.done(3, 100.0)
    assert not synced.due(3, 100.0 + SECTIONS_RECHECK_SECONDS - 1)
    assert synced.due(4, 101.0)
    assert synced.due(3, 100.0 + SECTIONS_RECHECK_SECONDS)


@pytest.mark.slow
def test_a_section_search_finds_a_note_written_while_the_daemon_serves(daemon: Daemon) -> None:
    """A search right after the owner writes a note finds it: the watcher's event moves
    the generation, so the next search syncs first."""
    call(daemon, "GET", "/search?q=autovacuum&in=sections&limit=2", timeout=120)
    (daemon.vault.root / "daily/2026-03-02.md").write_text(
        "# Harbour\n\nThe quillwort survey at the harbour counted forty plants.\n")

    def found() -> bool:
        _, body = call(daemon, "GET", "/search?q=quillwort+survey&in=sections&limit=3",
                       timeout=120)
        return any(h["path"] == "daily/2026-03-02.md" for h in body["hits"])
    wait_for(found, timeout=60, what="the new note in search")
