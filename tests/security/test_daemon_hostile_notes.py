"""The daemon beside hostile notes (findings 1, 2 and 5 of the security review, end to
end): the 424-byte YAML alias bomb is reported unreadable and the daemon keeps serving
within 50 MB of its memory before it; ``GET /note`` shows nothing of .vaultlink/ or
.git/ and no note behind a symlink that leaves the read folders.

A real daemon (watchdog, State, the offline integrator, the status API) in this process.
"""

from __future__ import annotations

import gc
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.test_frontmatter_limits import alias_bomb
from tests.test_daemon import get
from tests.waiting import wait_for
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.service import Daemon

pytestmark = pytest.mark.slow


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        line = next(ln for ln in fh if ln.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.fixture()
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    root = tmp_path / "v"
    for folder in ("daily", "resource", "digest/wiki", ".git"):
        (root / folder).mkdir(parents=True)
    (root / ".git/config").write_text("url = https://user:ghp_secret@example.org/v.git\n")
    (root / "daily/2026-06-01.md").write_text(
        "# Index rebuild\n\nWe rebuilt the search index online; the service stayed up "
        "during the whole rebuild, which took twelve minutes.\n")
    settings = load_settings(root, environ={}).with_overrides({
        "llm.provider": "offline", "api.port": 0, "watch.quiet_seconds": 0.3}).daemon()
    d = Daemon(root, settings)
    d.start()
    try:
        yield d
    finally:
        d.stop()


def test_the_alias_bomb_is_reported_unreadable_and_the_daemon_keeps_serving(
        daemon: Daemon) -> None:
    wait_for(lambda: "daily/2026-06-01.md" in daemon.state.checkpoints(), what="the first note")
    assert get(daemon, "/search?q=rebuild")[0] == 200  # the models are loaded: a baseline
    gc.collect()
    baseline = rss_mb()
    (daemon.vault.root / "resource/bomb.md").write_bytes(alias_bomb(7))
    unread = wait_for(lambda: [u for u in daemon.state.unread_notes()
                               if u["path"] == "resource/bomb.md"], what="the bomb reported")
    assert "aliases" in unread[0]["reason"]
    status, answer = get(daemon, "/status")
    assert status == 200
    assert any(u["path"] == "resource/bomb.md" for u in answer["unreadable"])
    # a search after it (the review's daemon died on the first one after a restart)
    assert get(daemon, "/search?q=rebuild")[0] == 200
    (daemon.vault.root / "daily/2026-06-02.md").write_text(
        "# Backups\n\nThe nightly backup now keeps thirty days of snapshots on the NAS "
        "instead of seven, since the March restore needed an older one.\n")
    wait_for(lambda: "daily/2026-06-02.md" in daemon.state.checkpoints(), what="a later note")
    gc.collect()
    assert rss_mb() - baseline < 50, f"RSS {baseline:.0f} -> {rss_mb():.0f} MB"


@pytest.mark.parametrize("path", [".vaultlink/token", ".git/config", "resource/t.md",
                                  ".vaultlink/config.yaml"])
def test_get_note_shows_nothing_outside_the_read_policy(daemon: Daemon, path: str) -> None:
    token = (daemon.vault.state_dir / "token").read_text().strip()
    (daemon.vault.root / "resource/t.md").symlink_to(daemon.vault.state_dir / "token")
    status, answer = get(daemon, "/note?path=" + urllib.parse.quote(path))
    assert status in (400, 403, 404), (status, answer)
    assert token not in json.dumps(answer) and "ghp_secret" not in json.dumps(answer)
