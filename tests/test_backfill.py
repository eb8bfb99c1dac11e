"""Backfill is a choice: a vault's first start integrates its recent notes only; the
older ones wait in the backlog, visible in status, until ``vaultlink backfill`` queues
them after an estimate; the daemon then works them oldest first, new notes first."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.vaults import write_note
from tests.waiting import wait_for
from vaultlink.cli import app
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.service import Daemon
from vaultlink.errors import ConfigError
from vaultlink.options import Provider
from vaultlink.pipeline.backfill import DAY, estimate
from vaultlink.pipeline.compose import close_models, dream_context, open_parts
from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.events import BacklogHeld, RunEvent
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.vault.backlog import Backlog, Rates
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import Checkpoint, State

TOPICS = ["postgres replica", "garden tomatoes", "marathon taper", "sourdough starter",
          "zfs scrub", "tls certificates", "drip irrigation", "bicycle brakes"]


def text_of(topic: str) -> str:
    """A note the offline extractor makes a unit of (a paragraph of substance)."""
    return (f"## {topic.title()}\n\nToday I worked on the {topic} for most of the "
            f"afternoon. The {topic} needed a careful look because last week the {topic} "
            f"went wrong twice, and I wrote down every step I took so the {topic} work can "
            "be repeated next time without guessing, including what to check first.\n")


def put(root: Path, rel: str, text: str, days_ago: float = 0.0) -> None:
    """``write_note``, its mtime set ``days_ago``: backfill picks notes by age."""
    path = write_note(root, rel, text)
    if days_ago:
        when = time.time() - days_ago * DAY
        os.utime(path, (when, when))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """Four notes from 20-50 days ago, two from this week."""
    root = tmp_path / "vault"
    for i, topic in enumerate(TOPICS[:4]):
        put(root, f"daily/2026-0{i + 1}-01.md", text_of(topic), days_ago=50 - 10 * i)
    put(root, "daily/2026-11-30.md", text_of(TOPICS[4]), days_ago=3)
    put(root, "resource/clip.md", text_of(TOPICS[5]), days_ago=1)
    (root / "digest").mkdir()
    return root


def dream(root: Path, **overrides: Any) -> tuple[RunState, list[RunEvent]]:
    """One offline run; returns it with its progress events."""
    settings = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "offline", **overrides})
    parts = open_parts(Vault(root), settings.pipeline())
    events: list[RunEvent] = []
    try:
        ctx = dream_context(parts, settings.pipeline(), Provider.OFFLINE,
                            progress=events.append)
        try:
            return run_dream(ctx, build_steps(settings.get("auto_dream.steps"))), events
        finally:
            close_models(ctx)
    finally:
        parts.close()


def backlog_of(root: Path) -> dict[str, float | None]:
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        return {b.path: b.queued_at for b in Backlog(state).items()}
    finally:
        state.close()


OLD = {"daily/2026-01-01.md", "daily/2026-02-01.md", "daily/2026-03-01.md",
       "daily/2026-04-01.md"}


def test_a_first_start_integrates_the_window_and_holds_back_older_notes(vault: Path) -> None:
    run, events = dream(vault)
    assert set(run.extraction.changed) == {"daily/2026-11-30.md", "resource/clip.md"}
    assert BacklogHeld(count=4, days=14) in events
    assert backlog_of(vault) == dict.fromkeys(OLD)
    again, events = dream(vault)
    assert again.extraction.changed == {} and not [e for e in events if isinstance(e, BacklogHeld)]


def test_a_held_note_that_changes_and_a_new_old_note_are_integrated(vault: Path) -> None:
    dream(vault)
    put(vault, "daily/2026-02-01.md", text_of("bicycle brakes"), days_ago=40)  # edited
    put(vault, "resource/old-paper.md", text_of("drip irrigation"), days_ago=400)  # new
    run, _ = dream(vault)
    assert set(run.extraction.changed) == {"daily/2026-02-01.md", "resource/old-paper.md"}
    assert set(backlog_of(vault)) == OLD - {"daily/2026-02-01.md"}


def test_a_vault_integrated_before_the_backlog_keeps_working_as_it_did(vault: Path) -> None:
    state = State(vault / ".vaultlink" / "state.sqlite")  # as an older vaultlink left it
    try:
        state.set_checkpoints([Checkpoint("daily/2026-01-01.md", "old hash", ())])
    finally:
        state.close()
    run, _ = dream(vault)
    assert len(run.extraction.changed) == 6 and backlog_of(vault) == {}


def test_a_dry_run_at_the_first_start_shows_the_window_and_records_nothing(
        vault: Path) -> None:
    settings = load_settings(vault, environ={}).with_overrides({"llm.provider": "offline"})
    parts = open_parts(Vault(vault), settings.pipeline())
    try:
        ctx = dream_context(parts, settings.pipeline(), Provider.OFFLINE, dry_run=True)
        run = run_dream(ctx, build_steps(settings.get("auto_dream.steps")))
        assert set(run.extraction.changed) == {"daily/2026-11-30.md", "resource/clip.md"}
        assert Backlog(parts.state).adopted_at() is None
    finally:
        parts.close()


def test_the_first_dream_says_how_many_older_notes_wait_and_how_to_take_them(
        vault: Path) -> None:
    result = CliRunner().invoke(app, ["dream", "--llm", "offline", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    assert ("first start: 4 older note(s), unchanged for 14 day(s) or more, wait in the "
            "backlog") in result.output
    assert "`vaultlink backfill --all` or --since YYYY-MM-DD takes them" in result.output
    again = CliRunner().invoke(app, ["dream", "--llm", "offline", "--vault", str(vault)])
    assert "first start" not in again.output


def test_status_shows_the_backlog_and_how_to_take_it(vault: Path) -> None:
    dream(vault)
    result = CliRunner().invoke(app, ["status", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    assert "backlog: 4 older note(s) wait, indexed for search but not integrated" in (
        result.output)
    assert "vaultlink backfill --all (or --since YYYY-MM-DD) queues them" in result.output
    data = json.loads(CliRunner().invoke(app, ["status", "--vault", str(vault),
                                               "--json"]).output)
    assert (data["backlog"]["waiting"], data["backlog"]["queued"]) == (4, 0)
    assert data["backlog"]["waiting_estimate"]["notes"] == 4


def test_backfill_prints_the_estimate_before_it_queues_and_asks(vault: Path) -> None:
    dream(vault)
    runner = CliRunner()
    said_no = runner.invoke(app, ["backfill", "--all", "--vault", str(vault)], input="n\n")
    assert "backlog (all): 4 note(s), about" in said_no.output
    assert "with the offline integrator at" in said_no.output
    assert set(backlog_of(vault).values()) == {None}  # nothing queued
    since = runner.invoke(app, ["backfill", "--since", "1970-01-01", "--vault", str(vault)],
                          input="y\n")
    assert since.exit_code == 0, since.output
    out = since.output
    assert out.index("4 note(s), about") < out.index("Queue them?") < out.index("queued 4")
    assert all(v is not None for v in backlog_of(vault).values())


def test_backfill_since_a_day_takes_the_notes_changed_from_then(vault: Path) -> None:
    dream(vault)
    day = time.strftime("%Y-%m-%d", time.localtime(time.time() - 35 * DAY))
    result = CliRunner().invoke(app, ["backfill", "--since", day, "--yes", "--json",
                                      "--vault", str(vault)])
    assert json.loads(result.output)["queued"] == 2  # 30 and 20 days ago
    queued = {p for p, q in backlog_of(vault).items() if q is not None}
    assert queued == {"daily/2026-03-01.md", "daily/2026-04-01.md"}


def test_backfill_refuses_a_bad_date_and_both_choices(vault: Path) -> None:
    bad = CliRunner().invoke(app, ["backfill", "--since", "last week", "--vault", str(vault)])
    assert isinstance(bad.exception, ConfigError) and "YYYY-MM-DD" in str(bad.exception)
    both = CliRunner().invoke(app, ["backfill", "--all", "--since", "2026-01-01",
                                    "--vault", str(vault)])
    assert isinstance(both.exception, ConfigError)
    assert "--since DATE or --all, not both" in str(both.exception)


def test_dream_works_a_queued_backlog_a_batch_at_a_time_oldest_first(vault: Path) -> None:
    dream(vault)
    CliRunner().invoke(app, ["backfill", "--all", "--yes", "--vault", str(vault)])
    state = State(vault / ".vaultlink" / "state.sqlite")
    size = (vault / "daily/2026-01-01.md").stat().st_size
    try:  # one unit per note measured: a batch of two notes fills two units
        Backlog(state).record("offline", Rates(100, 100 * size, 100, 0, 0.0))
    finally:
        state.close()
    run, _ = dream(vault, **{"auto_dream.max_units": 2})
    assert set(run.extraction.changed) == {"daily/2026-01-01.md", "daily/2026-02-01.md"}
    run, _ = dream(vault, **{"auto_dream.max_units": 2})
    assert set(run.extraction.changed) == {"daily/2026-03-01.md", "daily/2026-04-01.md"}
    assert backlog_of(vault) == {}


def test_the_estimate_uses_the_measured_pace_once_there_is_one(tmp_path: Path) -> None:
    state = State(tmp_path / "state.sqlite")
    try:
        assumed = estimate(state, "ollama", 10, 15_000)
        assert (assumed.measured, assumed.seconds_per_unit) == (False, 60.0)
        assert assumed.units == 27  # 1.8 units per KB until measured
        Backlog(state).record("ollama", Rates(10, 20_000, 20, 8, 400.0))
        measured = estimate(state, "ollama", 10, 15_000)
        assert (measured.measured, measured.units, measured.seconds) == (True, 15, 750.0)
        assert "about 12 min with the ollama integrator at 50.0 s per unit" in measured.words()
    finally:
        state.close()


# -- the daemon ----------------------------------------------------------------------


@pytest.fixture
def started() -> Iterator[Callable[[Path], Daemon]]:
    daemons: list[Daemon] = []

    def start(root: Path) -> Daemon:
        options = load_settings(root, environ={}).with_overrides(
            {"llm.provider": "offline", "api.port": 0, "watch.quiet_seconds": 0.2}).daemon()
        daemon = Daemon(root, options)
        daemon.start()
        daemons.append(daemon)
        return daemon

    yield start
    for d in daemons:
        d.stop()


def post(daemon: Daemon, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    token = (daemon.vault.state_dir / "token").read_text().strip()
    req = urllib.request.Request(f"http://127.0.0.1:{daemon.port}{path}", method="POST",
                                 data=json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {token}",
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.slow
def test_the_daemon_works_the_backlog_oldest_first_after_new_notes(
        vault: Path, started: Callable[[Path], Daemon]) -> None:
    first = started(vault)
    wait_for(lambda: {"daily/2026-11-30.md", "resource/clip.md"} <= set(
        first.state.checkpoints()), timeout=60.0)
    status = first.status()["backlog"]
    assert (status["waiting"], status["queued"]) == (4, 0)
    assert post(first, "/backfill", {"since": "yesterday"})[0] == 400
    code, answer = post(first, "/backfill", {"since": None, "queue": False})
    assert (code, answer["queued"], answer["estimate"]["notes"]) == (200, 0, 4)
    first.stop()
    CliRunner().invoke(app, ["backfill", "--all", "--yes", "--vault", str(vault)])
    put(vault, "daily/2026-12-01.md", text_of(TOPICS[6]))  # written while it was off
    daemon = started(vault)
    wait_for(lambda: not backlog_of(vault) and not daemon.state.queue(), timeout=60.0)
    order = []
    for entry in reversed(daemon.state.journal(limit=100)):
        for path in entry.unit.get("paths", []):
            if path not in order and path not in {"daily/2026-11-30.md", "resource/clip.md"}:
                order.append(path)
    assert order == ["daily/2026-12-01.md", *sorted(OLD)]
    assert daemon.status()["backlog"] == {**daemon.status()["backlog"], "waiting": 0,
                                          "queued": 0, "eta_seconds": 0}
