"""Security issue 36, findings 5c and 6: the daemon's secrets stay its own.

- The files the daemon makes in ``.vaultlink/`` (API token, writer lock, log) are never
  opened through a symlink: a link planted there cannot make vaultlink chmod, overwrite
  or append to another file, nor hand another file's text out as the API token.
- Credentials in a URL setting (``llm.host`` as ``http://user:pass@host``, a ``?token=``
  query) reach neither the log, nor ``GET /status``, nor a command's output.
- Log files, rotated ones included, are owner-only (0600).
"""

from __future__ import annotations

import http.client
import json
import logging
import logging.handlers
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.ports import HeldPort
from tests.test_daemon import make_vault
from tests.waiting import wait_for
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.process import (
    VaultLock,
    ensure_token,
    read_token,
    setup_logging,
)
from vaultlink.daemon.service import Daemon
from vaultlink.errors import DaemonError
from vaultlink.llm.ollama import OllamaChat
from vaultlink.options import redact_url

PASSWORD = "s3cret"
ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _outside_file(tmp_path: Path, text: str) -> Path:
    """A file of the user's outside the vault, world-readable: what a planted link aims at."""
    target = tmp_path / "elsewhere" / "precious.txt"
    target.parent.mkdir()
    target.write_text(text)
    target.chmod(0o644)
    return target


def _secret_url(port: int) -> str:
    return f"http://user:{PASSWORD}@127.0.0.1:{port}/?token={PASSWORD}"


def _vault(root: Path) -> Path:
    """A small vault whose one note has frontmatter (a plain mapping)."""
    make_vault(root)
    (root / "daily/2026-06-01.md").write_text(
        "---\ntags: [ops]\n---\n## Rebuild\n\nWe rebuilt the search index online on "
        "Monday; it took thirty minutes.\n")
    return root


@pytest.fixture
def file_log() -> Iterator[None]:
    """Takes the file handlers ``setup_logging`` adds to the root logger off again."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)


# -- A: the token, the lock and the log are never opened through a link ------------------


def test_a_symlinked_token_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    """Neither the daemon (``ensure_token``) nor a client (``read_token``) reads the token
    through a link: the old code chmodded the target to 0600 and served its text as the
    token, and a client sent it in its Authorization header."""
    state_dir = tmp_path / "vault" / ".vaultlink"
    state_dir.mkdir(parents=True)
    target = _outside_file(tmp_path, "not a token: the user's own text\n")
    (state_dir / "token").symlink_to(target)

    with pytest.raises(DaemonError, match="symbolic link"):
        ensure_token(state_dir)
    with pytest.raises(DaemonError, match="symbolic link"):
        read_token(state_dir)

    assert _mode(target) == 0o644
    assert target.read_text() == "not a token: the user's own text\n"


def test_a_daemon_does_not_start_on_a_symlinked_token(tmp_path: Path) -> None:
    """A running daemon never uses the link's target as its API token: it refuses to
    start, saying what to do, and leaves the target as it was."""
    root = _vault(tmp_path / "vault")
    (root / ".vaultlink").mkdir()
    target = _outside_file(tmp_path, "the target's content\n")
    (root / ".vaultlink" / "token").symlink_to(target)
    settings = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "offline", "api.port": 0, "watch.quiet_seconds": 60})
    d = Daemon(root, settings.daemon())

    try:
        with pytest.raises(DaemonError, match="remove it"):
            d.start()
    finally:
        d.stop()  # a no-op when it refused; stops one that followed the link

    assert _mode(target) == 0o644
    assert target.read_text() == "the target's content\n"
    assert not (root / ".vaultlink" / "daemon.json").exists()


def test_the_writer_lock_is_not_written_through_a_link(tmp_path: Path) -> None:
    """The lock writes ``<pid> <holder>`` into its file: through a planted link, the old
    code overwrote (and truncated) the target."""
    state_dir = tmp_path / ".vaultlink"
    state_dir.mkdir()
    target = _outside_file(tmp_path, "keep me\n")
    (state_dir / "writer.lock").symlink_to(target)

    with pytest.raises(DaemonError, match="symbolic link"):
        VaultLock(state_dir, "dream").acquire()

    assert target.read_text() == "keep me\n"


@pytest.mark.usefixtures("file_log")
def test_the_log_is_not_appended_through_a_link(tmp_path: Path) -> None:
    """A link at ``logs/vaultlink.log`` is refused, not followed: the old handler opened
    it with ``open(path, "a")`` and appended the daemon's log to the target."""
    state_dir = tmp_path / ".vaultlink"
    (state_dir / "logs").mkdir(parents=True)
    target = _outside_file(tmp_path, "keep me\n")
    (state_dir / "logs" / "vaultlink.log").symlink_to(target)

    with pytest.raises(DaemonError, match="symbolic link"):
        setup_logging(state_dir)
    logging.getLogger("vaultlink.test").warning("a line that must go nowhere near the target")

    assert target.read_text() == "keep me\n"
    assert _mode(target) == 0o644


@pytest.mark.usefixtures("file_log")
def test_a_linked_logs_folder_is_refused(tmp_path: Path) -> None:
    """``logs/`` itself as a link would put the log in a folder of the link's choosing
    (O_NOFOLLOW guards only the file's own name): refused, nothing written there."""
    state_dir = tmp_path / ".vaultlink"
    state_dir.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (state_dir / "logs").symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(DaemonError, match="symbolic link"):
        setup_logging(state_dir)

    assert list(elsewhere.iterdir()) == []


# -- B: a URL setting's credentials are shown nowhere ----------------------------------


def test_redact_url_masks_user_info_and_query_values_only() -> None:
    """One function masks what a URL setting may carry; a URL without any is unchanged,
    and the client itself still connects with the full setting."""
    assert redact_url("http://user:s3cret@127.0.0.1:11434") == "http://***@127.0.0.1:11434"
    assert redact_url("https://h:1/api?token=s3cret&x=2") == "https://h:1/api?token=***&x=***"
    assert redact_url("user:s3cret@chroma.lan") == "***@chroma.lan"  # a bare host setting
    assert redact_url("see http://a:s3cret@h/x") == "see http://***@h/x"  # in a message
    assert redact_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434"
    assert redact_url("127.0.0.1") == "127.0.0.1"
    chat = OllamaChat(_secret_url(1), "m", 8192, 0.0, 0, silence_seconds=300.0)
    assert chat.host == _secret_url(1)


@pytest.mark.usefixtures("file_log")
def test_status_and_log_never_show_the_llm_password(tmp_path: Path,
                                                    held_port: HeldPort) -> None:
    """A daemon whose ``llm.host`` carries a password (nothing answers there, so it says
    so in its log): ``GET /status`` and ``.vaultlink/logs/vaultlink.log`` show the host
    redacted, never the password."""
    root = _vault(tmp_path / "vault")
    url = _secret_url(held_port.port)
    settings = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "ollama", "llm.host": url, "api.port": 0,
         "watch.quiet_seconds": 0.1})
    log_path = setup_logging(root / ".vaultlink")
    d = Daemon(root, settings.daemon())
    d.start()
    try:
        wait_for(lambda: d.status()["state"] == "waiting-for-model", timeout=120,
                 what="the daemon to find the model down")
        token = (root / ".vaultlink" / "token").read_text().strip()
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
        conn.request("GET", "/status", headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        body = resp.read().decode("utf-8")
        conn.close()
    finally:
        d.stop()

    assert resp.status == 200
    assert PASSWORD not in body
    host = json.loads(body)["model"]["host"]
    assert host == f"http://***@127.0.0.1:{held_port.port}/?token=***"
    logged = log_path.read_text("utf-8")
    assert PASSWORD not in logged
    assert f"http://***@127.0.0.1:{held_port.port}" in logged  # the host was logged, redacted


def _vaultlink(*args: str) -> str:
    """Run the CLI in a process of its own; its stdout and stderr, together."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTLINK_")}
    env["VAULTLINK_LLM__RETRIES"] = "0"  # one failed try says it all
    done = subprocess.run([sys.executable, "-m", "vaultlink", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    return done.stdout + done.stderr


def test_commands_never_print_the_llm_password(tmp_path: Path, held_port: HeldPort) -> None:
    """``dream`` (the model's errors from llm/ollama.py, the offline notice) and
    ``doctor`` (the probe's report) name the host redacted on the terminal."""
    root = _vault(tmp_path / "vault")
    url = _secret_url(held_port.port)
    shown = f"http://***@127.0.0.1:{held_port.port}"

    failed = _vaultlink("dream", "--vault", str(root), "--llm", "ollama", "--ollama-host", url)
    notice = _vaultlink("dream", "--vault", str(root), "--dry-run", "--ollama-host", url)
    doctor = _vaultlink("doctor", "--vault", str(root), "--ollama-host", url)

    for output in (failed, notice, doctor):
        assert PASSWORD not in output, output
        assert shown in output, output  # the host is named, redacted


# -- C: log files are owner-only ---------------------------------------------------------


@pytest.mark.usefixtures("file_log")
def test_log_files_are_owner_only_rotated_ones_too(tmp_path: Path) -> None:
    """Under a umask of 022 the log is made 0600 (the old handler made it 0644); a log
    and a backup an older version left at 0644 are tightened; the file that rotation
    starts anew and the one it renames stay 0600."""
    state_dir = tmp_path / ".vaultlink"
    (state_dir / "logs").mkdir(parents=True)
    old_backup = state_dir / "logs" / "vaultlink.log.2"
    old_backup.write_text("an older log\n")
    old_backup.chmod(0o644)
    old = os.umask(0o022)
    try:
        path = setup_logging(state_dir)
        logging.getLogger("vaultlink.test").warning("a line about daily/2026-06-01.md")
        handler = next(h for h in logging.getLogger().handlers
                       if getattr(h, "baseFilename", None) == str(path))
        assert isinstance(handler, logging.handlers.RotatingFileHandler)
        assert _mode(path) == 0o600
        assert _mode(old_backup) == 0o600
        handler.doRollover()
        logging.getLogger("vaultlink.test").warning("after the rollover")
    finally:
        os.umask(old)

    rotated = Path(f"{path}.1")
    assert "daily/2026-06-01.md" in rotated.read_text()
    assert _mode(rotated) == 0o600
    assert _mode(path) == 0o600
