"""The daemon end to end: real watchdog observer, real State, Chroma and files.

The model is the fake Ollama server (real ``ollama.Client``) playing a simple model
that makes one unit per note and creates one digest node per unit, so the tests can
switch it off, slow it down or make it talk garbage. Every wait polls for its effect
with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.ollama_server import FakeOllama, Hang, HTTPError, Malformed, reply
from tests.fakes.ollama_server import _Handler as FakeHandler
from tests.fakes.ports import HeldPort
from tests.fakes.sample_vault_model import extract_request, unit_of
from tests.waiting import wait_for
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.client import daemon_status
from vaultlink.daemon.process import VaultLock
from vaultlink.daemon.service import Daemon
from vaultlink.errors import DaemonError, VaultBusy
from vaultlink.options import DaemonOptions
from vaultlink.vault.notes import parse_note
from vaultlink.vault.state import State

NOTE = "daily/2026-07-01.md"


def note_model(request: dict[str, Any]) -> Any:
    """Extract one unit per note, named "sift-<date as digits>" and saying "Sift notes:"
    (a name of a note's date with hyphens, "note" alone, or a name its summary does not
    say names no subject: vaultlink would name it from its summary); integrate by CREATE."""
    if request.get("format"):
        path, _ = extract_request(request)
        text = request["messages"][1]["content"].split("\n", 1)[1]
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        summary = " ".join(re.sub(r"#+ .*", "", text).split())[:200]
        units = [{"name": f"sift-{stem.replace('-', '')}", "bucket": "wiki",
                  "summary": f"Sift notes: {summary}"}] if summary else []
        return reply(json.dumps({"units": units}))
    return note_integrate(request)


def note_integrate(request: dict[str, Any]) -> Any:
    """Write digest/<bucket>/<name>.md citing the source: CREATE; on a replay, a REFINE
    that adds the summary and a Sources line and keeps what the node said."""
    unit = unit_of(request["messages"])
    target = f"digest/{unit['bucket']}/{unit['name']}.md"
    tools = [m for m in request["messages"] if m["role"] == "tool"]
    source = f"- This comes from [[{unit['paths'][0]}]], where it was written down.\n"
    if not tools:
        return reply(tool_calls=[("frontmatter_read", {"path": target})])
    answer = json.loads(tools[-1]["content"])
    if len(tools) == 1 and answer.get("exists"):
        return reply(tool_calls=[("edit", {"path": target, "old": "## Sources\n\n",
                                           "new": f"{unit['summary']}\n\n## Sources\n\n"
                                                  + source})])
    if len(tools) == 1:
        body = f"{unit['summary']}\n\n## Sources\n\n{source}"
        return reply(tool_calls=[("write", {"path": target, "name": unit["name"],
                                            "description": unit["summary"][:120],
                                            "content": body})])
    action = "CREATE" if answer.get("created") else "REFINE"
    return reply(json.dumps({"action": action, "target_path": target, "note": "from the note"}))


class Flaky:
    """Misbehaves (``bad``) for the first ``n`` chat calls, then acts as ``good``."""

    def __init__(self, n: int, bad: Any, good: Callable[[dict[str, Any]], Any] = note_model):
        self.n, self.bad, self.good, self.calls = n, bad, good, 0

    def __call__(self, request: dict[str, Any]) -> Any:
        self.calls += 1
        return self.bad if self.calls <= self.n else self.good(request)


class PortFake(FakeOllama):
    """The fake Ollama server on a fixed port, so it can go away and come back."""

    def __init__(self, port: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.port = port

    def start(self) -> PortFake:
        import threading

        handler = type("Handler", (FakeHandler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self


def make_vault(root: Path) -> Path:
    """The smallest vault a daemon integrates: one note, and the folders it watches."""
    for folder in ("daily", "resource", "digest/wiki"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "daily/2026-06-01.md").write_text("## Rebuild\n\nWe rebuilt the index online.\n")
    return root


def settings_for(root: Path, host: str, **overrides: Any) -> DaemonOptions:
    return load_settings(root, environ={}).with_overrides({
        "llm.provider": "ollama", "llm.host": host, "llm.retries": 0, "llm.max_steps": 4,
        "llm.silence_seconds": 5, "llm.integrate_mode": "tools", "api.port": 0,
        "watch.quiet_seconds": 0.3, **overrides}
    ).daemon()


def get(daemon: Daemon, path: str, token: str | None = None) -> tuple[int, Any]:
    token = token if token is not None else (daemon.vault.state_dir / "token").read_text().strip()
    req = urllib.request.Request(f"http://127.0.0.1:{daemon.port}{path}",
                                 headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture()
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(model=note_model) as server:
        yield server


@pytest.fixture()
def started() -> Iterator[Callable[..., Daemon]]:
    daemons: list[Daemon] = []

    def start(root: Path, settings: DaemonOptions, **kw: Any) -> Daemon:
        d = Daemon(root, settings, **kw)
        d.start()
        daemons.append(d)
        return d

    yield start
    for d in daemons:
        d.stop()


def integrated(daemon: Daemon, path: str) -> bool:
    return path in daemon.state.checkpoints() and not daemon.state.queue()


# -- lock ------------------------------------------------------------------------------


def test_second_daemon_on_a_vault_is_refused_naming_the_pid(tmp_path: Path, fake: FakeOllama,
                                                            started: Any) -> None:
    root = make_vault(tmp_path)
    started(root, settings_for(root, fake.url))
    with pytest.raises(DaemonError, match=rf"pid {os.getpid()}\b"):
        Daemon(root, settings_for(root, fake.url)).start()


def test_one_writer_between_the_daemon_and_cli_commands(
        tmp_path: Path, fake: FakeOllama, caplog: pytest.LogCaptureFixture) -> None:
    """A command holding the vault (a long reindex) keeps other commands out, told who
    holds it, and makes a starting daemon wait (a service must not give up on it)."""
    from typer.testing import CliRunner

    from vaultlink.cli import app

    root = make_vault(tmp_path)
    command = VaultLock(root / ".vaultlink", "reindex")
    command.acquire()
    daemon = Daemon(root, settings_for(root, fake.url))
    starter = threading.Thread(target=daemon.start)
    try:
        result = CliRunner().invoke(app, ["node-search", "x", "--vault", str(root)])
        assert isinstance(result.exception, VaultBusy)
        assert f"`vaultlink reindex` (pid {os.getpid()})" in str(result.exception)
        assert "wait for it to finish" in str(result.exception)
        with caplog.at_level(logging.WARNING, logger="vaultlink.daemon.process"):
            starter.start()
            assert wait_for(lambda: "waiting for it before starting" in caplog.text,
                            what="the daemon to wait for the command")
        assert starter.is_alive() and not (root / ".vaultlink/daemon.json").exists()
        command.release()
        starter.join(60)
        assert not starter.is_alive() and (root / ".vaultlink/daemon.json").exists()
    finally:
        command.release()
        starter.join(60)
        daemon.stop()


def test_a_daemon_waiting_for_the_lock_stops_cleanly(tmp_path: Path, fake: FakeOllama) -> None:
    """Stopped while waiting (Ctrl-C, systemctl stop): start returns, nothing held."""
    root = make_vault(tmp_path)
    command = VaultLock(root / ".vaultlink", "dream")
    command.acquire()
    daemon = Daemon(root, settings_for(root, fake.url))
    try:
        threading.Timer(0.3, daemon.stop).start()
        daemon.start()  # returns once stopped, without an error
        assert not (root / ".vaultlink/daemon.json").exists()
    finally:
        command.release()
    stopping = threading.Event()
    stopping.set()
    assert VaultLock(root / ".vaultlink").acquire_after_commands(stopping) is False
    other = VaultLock(root / ".vaultlink")
    other.acquire()
    try:  # another daemon: no waiting, an error at once (exit 3)
        deadline = threading.Event()
        threading.Timer(5, deadline.set).start()  # a regression fails, never hangs
        with pytest.raises(VaultBusy, match="daemon"):
            VaultLock(root / ".vaultlink").acquire_after_commands(deadline)
    finally:
        other.release()


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (tmp_path / ".vaultlink").mkdir()
    (tmp_path / ".vaultlink/writer.lock").write_text(dead.stdout.strip() + " daemon\n")
    lock = VaultLock(tmp_path / ".vaultlink")
    lock.acquire()
    assert (tmp_path / ".vaultlink/writer.lock").read_text() == f"{os.getpid()} daemon\n"
    lock.release()


# -- the main loop -----------------------------------------------------------------------


@pytest.mark.slow
def test_new_note_settles_is_integrated_and_own_writes_cause_no_work(
        tmp_path: Path, fake: FakeOllama, started: Any) -> None:
    root = make_vault(tmp_path)
    d = started(root, settings_for(root, fake.url))
    wait_for(lambda: integrated(d, "daily/2026-06-01.md"), what="start-up reconcile")
    runs_before = d.runs
    (root / NOTE).write_text("## Search\n\nHybrid search fuses BM25 and vectors by rank.\n")
    node = root / "digest/wiki/sift-20260701.md"
    wait_for(node.exists, what="the digest node")
    status = wait_for(lambda: (s := get(d, "/status")[1])["last_run"]
                      and s["last_run"]["changes"]
                      and s["last_run"]["changes"][0]["target"] == "digest/wiki/sift-20260701.md"
                      and s, what="last_run in /status")
    assert status["last_run"]["changes"][0]["action"] == "CREATE"
    assert NOTE in d.state.checkpoints()
    assert "## Sources" in node.read_text() and f"[[{NOTE}]]" in node.read_text()
    # last_run is recorded by the run's last step, before the worker counts the run
    # and dequeues the note: wait for both.
    wait_for(lambda: d.runs == runs_before + 1 and not d.state.queue(),
             what="the run to be counted and its note dequeued")
    # The run's own writes (node, topics file) must start nothing: watch a while. A late
    # duplicate event for the user's note may queue it again; it drains without a run.
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        assert all(i.path == NOTE for i in d.state.queue()), "own writes were queued"
        assert d.runs == runs_before + 1, "own writes caused a second run"
        assert not d.user_digest_edits, "own writes were taken for user edits"
        time.sleep(0.05)
    wait_for(lambda: not d.state.queue(), what="a duplicate event for the note to drain")
    assert d.runs == runs_before + 1, "the duplicate event caused a second run"
    assert get(d, "/status")[1]["state"] == "idle"


@pytest.mark.slow
def test_user_edit_of_a_digest_node_is_reindexed(tmp_path: Path, fake: FakeOllama,
                                                 started: Any) -> None:
    root = make_vault(tmp_path)
    d = started(root, settings_for(root, fake.url))
    node = root / "digest/wiki/sift-20260601.md"
    wait_for(node.exists)
    node.write_text(node.read_text().replace("rebuilt", "rebuilt (zebra-crossing)"))
    wait_for(lambda: d.user_digest_edits, what="the user's edit to be seen")
    hits = wait_for(lambda: d._parts and d._parts.index.node_search("zebra-crossing"),
                    what="the edit in the node index")
    assert hits[0].path == "digest/wiki/sift-20260601.md"


@pytest.mark.slow
def test_startup_reconcile_queues_what_changed_while_off(tmp_path: Path, fake: FakeOllama,
                                                         started: Any) -> None:
    root = make_vault(tmp_path)
    (root / "daily/2026-06-02.md").write_text("## Deploy\n\nDeploys go out on Tuesdays.\n")
    d = started(root, settings_for(root, fake.url))
    wait_for(lambda: integrated(d, "daily/2026-06-02.md"))
    d.stop()
    # while the daemon is off: one note changes, one appears, one stays as it was
    (root / "daily/2026-06-02.md").write_text("## Deploy\n\nDeploys go out on Wednesdays.\n")
    (root / "resource/paper.md").write_text("## RRF\n\nRank fusion uses k = 60.\n")
    # a long quiet period: only reconcile's "ready at once" gets them integrated quickly
    d2 = started(root, settings_for(root, fake.url, **{"watch.quiet_seconds": 600}))
    queued = {i.path for i in d2.state.queue()}
    assert queued <= {"daily/2026-06-02.md", "resource/paper.md"}
    wait_for(lambda: integrated(d2, "resource/paper.md")
             and integrated(d2, "daily/2026-06-02.md"), timeout=30)
    journal = d2.state.journal(limit=100)
    assert not [e for e in journal if "daily/2026-06-01.md" in e.unit.get("paths", [])
                and e.run_id and e.run_id > 1], "an unchanged note was integrated again"


@pytest.mark.slow
def test_rename_keeps_the_checkpoint(tmp_path: Path, fake: FakeOllama, started: Any) -> None:
    root = make_vault(tmp_path)
    d = started(root, settings_for(root, fake.url))
    wait_for(lambda: integrated(d, "daily/2026-06-01.md"))
    runs = d.runs
    (root / "daily/2026-06-01.md").rename(root / "daily/rebuild.md")
    wait_for(lambda: "daily/rebuild.md" in d.state.checkpoints()
             and "daily/2026-06-01.md" not in d.state.checkpoints() and not d.state.queue())
    assert d.runs == runs


# -- concurrency with the user -------------------------------------------------------------


@pytest.mark.slow
def test_user_edit_during_an_update_survives_and_the_edit_is_retried(
        tmp_path: Path, fake: FakeOllama, started: Any) -> None:
    root = make_vault(tmp_path)
    target = root / "digest/wiki/search.md"
    target.write_text("---\nname: Search\ndescription: How search works.\n---\n"
                      "Search finds notes.\n\n## Sources\n\n"
                      "- First described in [[daily/2026-06-01.md]].\n")
    seen: list[str] = []

    def integrate(request: dict[str, Any]) -> Any:
        tools = [m for m in request["messages"] if m["role"] == "tool"]
        if "2026-07-02" not in request["messages"][1]["content"]:
            return note_integrate(request)
        if not tools:
            return reply(tool_calls=[("read", {"path": "digest/wiki/search.md"})])
        last = "- First described in [[daily/2026-06-01.md]]."
        edit = ("edit", {"path": "digest/wiki/search.md", "old": last,
                         "new": last + "\n- Ranking by RRF was settled in "
                                       "[[daily/2026-07-02.md]] that morning."})
        if len(tools) == 1:  # the user saves the node while the model is thinking
            target.write_text(target.read_text() + "- USER: my own line stays.\n")
            return reply(tool_calls=[edit])
        seen.append(tools[-1]["content"])
        if len(tools) == 2:  # the write was refused (compare-and-swap): try again
            return reply(tool_calls=[edit])
        return reply(json.dumps({"action": "REFINE", "target_path": "digest/wiki/search.md",
                                 "note": "ranking rule"}))

    def model(request: dict[str, Any]) -> Any:
        return note_model(request) if request.get("format") else integrate(request)

    fake.model = model
    d = started(root, settings_for(root, fake.url))
    wait_for(lambda: integrated(d, "daily/2026-06-01.md"))
    # the note names the node's subject: an update needs that evidence (or it is held)
    (root / "daily/2026-07-02.md").write_text("## Ranking\n\nWe settled on RRF for search.\n")
    wait_for(lambda: integrated(d, "daily/2026-07-02.md"), what="integration")
    text = target.read_text()
    assert "- USER: my own line stays." in text
    assert "[[daily/2026-07-02.md]]" in text
    assert "changed on disk" in seen[0]
    assert d.state.journal(path="digest/wiki/search.md")[0].action == "REFINE"


# -- the model: down, slow, garbage, back ------------------------------------------------------


@pytest.mark.slow
def test_ollama_down_waits_then_resumes_when_it_returns(tmp_path: Path, started: Any,
                                                        held_port: HeldPort) -> None:
    root = make_vault(tmp_path)
    port = held_port.port  # held, not listening: connections are refused until the fake binds
    d = started(root, settings_for(root, f"http://127.0.0.1:{port}"),
                model_backoff=(0.2, 1.0))
    wait_for(lambda: get(d, "/status")[1]["state"] == "waiting-for-model")
    (root / NOTE).write_text("## Search\n\nHybrid search fuses two rankings.\n")
    wait_for(lambda: NOTE in {i.path for i in d.state.queue()})
    status = get(d, "/status")[1]
    assert status["model"]["reachable"] is False and len(status["queue"]) == 2
    server = PortFake(port, model=note_model).start()
    try:
        wait_for(lambda: integrated(d, NOTE) and integrated(d, "daily/2026-06-01.md"),
                 what="work to resume")
    finally:
        server.stop()
    assert (root / "digest/wiki/sift-20260701.md").exists()


@pytest.mark.slow
@pytest.mark.parametrize("bad", [HTTPError(500), Malformed(), Hang(3.0),
                                 reply("this is not json at all")],
                         ids=["500", "malformed", "slow", "garbage"])
def test_bad_model_answers_lose_nothing_and_work_resumes(tmp_path: Path, started: Any,
                                                         bad: Any) -> None:
    root = make_vault(tmp_path)
    with FakeOllama(model=Flaky(3, bad)) as server:
        d = started(root, settings_for(root, server.url, **{"llm.silence_seconds": 1}),
                    retry_backoff=(0.2, 1.0))
        wait_for(lambda: integrated(d, "daily/2026-06-01.md"), timeout=60,
                 what="integration after the model recovers")
    assert (root / "digest/wiki/sift-20260601.md").exists()
    parse_note("x.md", (root / "digest/wiki/sift-20260601.md").read_bytes())


# -- shutdown and status without a daemon --------------------------------------------------


def test_status_without_a_daemon_reads_state_sqlite(tmp_path: Path, fake: FakeOllama) -> None:
    root = make_vault(tmp_path)
    assert daemon_status(root / ".vaultlink")["running"] is False
    command = VaultLock(root / ".vaultlink", "reindex")
    command.acquire()
    try:  # a command at work is named, read without taking the lock
        data = daemon_status(root / ".vaultlink")
        assert data["writer"] == {"pid": os.getpid(), "holder": "reindex"}
        assert "no daemon answers" in data["reason"]
    finally:
        command.release()
    assert daemon_status(root / ".vaultlink")["writer"] is None
    d = Daemon(root, settings_for(root, fake.url, **{"watch.quiet_seconds": 600}))
    d.start()
    assert daemon_status(root / ".vaultlink")["running"] is True
    d.state.enqueue("daily/x.md", time.time(), 600)
    d.stop()
    data = daemon_status(root / ".vaultlink")
    assert data["running"] is False and "daily/x.md" in [q["path"] for q in data["queue"]]
    assert not (root / ".vaultlink/daemon.json").exists()


@pytest.mark.slow
def test_burst_of_notes_drains(tmp_path: Path, fake: FakeOllama, started: Any) -> None:
    root = make_vault(tmp_path)
    d = started(root, settings_for(root, fake.url, **{"watch.quiet_seconds": 0.2}))
    wait_for(lambda: integrated(d, "daily/2026-06-01.md"))
    burst = root / "daily/burst"
    burst.mkdir()
    for i in range(1000):  # one-liners: nothing to extract, so no model call either
        (burst / f"n{i:04d}.md").write_text("\n")
    wait_for(lambda: len(d.state.checkpoints()) == 1001 and not d.state.queue(), timeout=120,
             what="the burst to drain")
    assert all("daily/burst" not in json.dumps(r) for r in fake.chat_requests())


@pytest.mark.slow
def test_stop_finishes_the_current_unit_and_keeps_the_rest(tmp_path: Path,
                                                          fake: FakeOllama) -> None:
    root = make_vault(tmp_path)
    for day in ("02", "03", "04"):
        (root / f"daily/2026-07-{day}.md").write_text(
            f"## Day {day}\n\nWe shipped part {day} of the release.\n")

    def slow(request: dict[str, Any]) -> Any:
        if not request.get("format"):
            time.sleep(0.5)  # a model that takes its time over each turn
        return note_model(request)

    fake.model = slow
    d = Daemon(root, settings_for(root, fake.url))
    d.start()
    wait_for(lambda: (d.status()["current"] or {}).get("stage") == "integrate",
             what="a unit to start")
    d.stop()  # the current unit finishes; the ones not started wait (asserted below)
    state = State(root / ".vaultlink/state.sqlite")
    try:
        decided = len([e for e in state.journal(limit=50) if e.action == "CREATE"])
        waiting = len(state.pending_units())
        assert decided >= 1 and waiting >= 1 and decided + waiting == 4
        assert state.queue(), "the notes not integrated stay queued"
    finally:
        state.close()
    fake.model = note_model
    d2 = Daemon(root, settings_for(root, fake.url))
    d2.start()
    try:
        wait_for(lambda: len(d2.state.checkpoints()) == 4 and not d2.state.queue()
                 and not d2.state.pending_units(), what="the rest after a restart")
    finally:
        d2.stop()


def test_cli_status_with_and_without_a_daemon(tmp_path: Path, fake: FakeOllama) -> None:
    from typer.testing import CliRunner

    from vaultlink.cli import app

    root = make_vault(tmp_path)
    runner = CliRunner()
    out = runner.invoke(app, ["status", "--vault", str(root)])
    assert out.exit_code == 0 and "daemon not running" in out.output
    d = Daemon(root, settings_for(root, fake.url, **{"watch.quiet_seconds": 600}))
    d.start()
    try:
        out = runner.invoke(app, ["status", "--vault", str(root), "--json"])
        data = json.loads(out.output)
        assert data["running"] is True and data["api_version"] == 1
        assert data["pid"] == os.getpid()
        out = runner.invoke(app, ["status", "--vault", str(root)])
        assert f"daemon pid {os.getpid()}" in out.output
    finally:
        d.stop()


def test_next_schedule() -> None:
    import datetime as dt

    from vaultlink.daemon.process import next_schedule

    now = dt.datetime(2026, 7, 1, 10, 30).timestamp()
    assert next_schedule("", now) is None
    assert next_schedule("11:00", now) == dt.datetime(2026, 7, 1, 11, 0).timestamp()
    assert next_schedule("10:30", now) == dt.datetime(2026, 7, 2, 10, 30).timestamp()
    assert next_schedule("03:15", now) == dt.datetime(2026, 7, 2, 3, 15).timestamp()
    for bad in ("25:00", "noon", "7"):
        with pytest.raises(DaemonError, match="HH:MM"):
            next_schedule(bad, now)


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["ollama", "auto"])
def test_a_model_not_pulled_is_retried_with_backoff_not_in_a_loop(tmp_path: Path,
                                                                   provider: str) -> None:
    from tests.fakes.ollama_server import ModelSpec

    root = make_vault(tmp_path)
    with FakeOllama(models=("other:1b",), model=note_model) as server:
        d = Daemon(root, settings_for(root, server.url, **{"llm.provider": provider}),
                   model_backoff=(0.3, 1.0))
        d.start()
        waits: list[float] = []
        down = d.gate.down

        def recorded(now: float, why: str) -> None:
            down(now, why)
            waits.append(d.gate.wait)

        d.gate.down = recorded  # type: ignore[method-assign]
        try:
            wait_for(lambda: len(waits) >= 3, timeout=20)
            # every failed try is followed by a longer wait, never a tight loop
            assert waits[:3] == [0.3, 0.6, 1.0], waits
            assert d.state.queue() and not d.state.checkpoints()
            server.models = [ModelSpec("qwen2.5-coder:1.5b")]  # `ollama pull` the default
            wait_for(lambda: integrated(d, "daily/2026-06-01.md"), what="work to resume")
        finally:
            d.stop()


@pytest.mark.slow
def test_a_note_moved_out_of_the_vault_is_forgotten_without_a_run(
        tmp_path: Path, fake: FakeOllama, started: Any) -> None:
    root = make_vault(tmp_path / "v")
    d = started(root, settings_for(root, fake.url))
    wait_for(lambda: integrated(d, "daily/2026-06-01.md"))
    runs = d.runs
    (root / "daily/2026-06-01.md").rename(tmp_path / "moved-out.md")
    wait_for(lambda: "daily/2026-06-01.md" not in d.state.checkpoints()
             and not d.state.queue(), what="the checkpoint to be dropped")
    assert d.runs == runs


def test_an_unreadable_note_leaves_status_when_deleted_without_a_run(
        tmp_path: Path, fake: FakeOllama, started: Any) -> None:
    """The daemon drops a deleted note from the queue without a run: it must still leave
    the 'unreadable' list the plugin shows."""
    root = make_vault(tmp_path)
    d = started(root, settings_for(root, fake.url, **{"watch.quiet_seconds": 0.2}))
    odd = root / "daily/C# notes.md"
    odd.write_text("## A\n\nThe deploy window moved to Tuesday.\n")
    wait_for(lambda: [u["path"] for u in d.status()["unreadable"]] == ["daily/C# notes.md"]
             and d.status()["state"] == "idle" and not d.state.queue(),
             what="the note no link can name to be listed, and its run over")
    runs = d.runs
    odd.unlink()
    wait_for(lambda: d.status()["unreadable"] == [], what="the deleted note to leave the list")
    assert d.runs == runs
