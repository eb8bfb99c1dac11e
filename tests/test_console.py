"""What the console says: each thing once, where it belongs, pointing at the right line.

A note skipped for a reason is named once per run (the summary's "not read" list) and
by ``status``, never repeated by every other command; a YAML error names the line to
fix; decisions are printed once; a dry run with nothing to show shows no empty header.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.ollama_server import down_url
from vaultlink.cli import app
from vaultlink.errors import FrontmatterError
from vaultlink.markdown.frontmatter import read_frontmatter

SECTION = ("## Cache plan\n\nWe decided to rebuild the cache every night, because the cache "
           "grew past 300 MB and slowed the search path for everyone. Team B owns it and "
           "will review the cache numbers again next week.\n")


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    """Two notes, one with broken frontmatter, and a link to a note outside the vault."""
    root = tmp_path / "vault"
    (root / "daily").mkdir(parents=True)
    (root / "daily/2026-07-01.md").write_text(SECTION)
    (root / "daily/2026-07-02.md").write_text("---\ntags: [unclosed\n---\n" + SECTION)
    outside = tmp_path / "outside.md"
    outside.write_text(SECTION)
    (root / "daily/linked.md").symlink_to(outside)
    return root


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("text, line", [
    ("---\ntags: [unclosed\n---\nbody\n", 2),
    ("---\nname: a\ntags: [unclosed\ndescription: b\n---\nbody\n", 3),
    ('---\nname: "open\n---\nbody\n', 2),
    ("---\nname: a\n  indented: b\n---\nbody\n", 3),
])
def test_a_yaml_error_names_the_line_to_fix(text: str, line: int) -> None:
    with pytest.raises(FrontmatterError, match=f"does not parse at line {line};"):
        read_frontmatter(text)


def test_skipped_notes_are_named_once_by_the_run_and_by_status_only(
        vault: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    out = cli("dream", "--vault", str(vault), "--llm", "offline")
    assert re.findall(r"daily/linked\.md", out) == ["daily/linked.md"], out
    assert re.findall(r"daily/2026-07-02\.md", out) == ["daily/2026-07-02.md"], out
    assert "not read (2;" in out
    assert "does not parse at line 2" in out
    status = cli("status", "--vault", str(vault))
    assert "not read daily/linked.md" in status and "outside the vault" in status
    assert "not read daily/2026-07-02.md" in status
    caplog.clear()
    for command in (["log", "--note", "daily/2026-07-01.md", "--diff"], ["check"],
                    ["links", "2026-07-01"], ["node-search", "cache"]):
        out = cli(*command, "--vault", str(vault))
        assert "linked.md" not in out, command
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_each_decision_is_printed_once_and_a_dry_run_has_no_empty_header(
        vault: Path) -> None:
    dry = cli("dream", "--vault", str(vault), "--llm", "offline", "--dry-run")
    assert dry.count("digest/wiki/") >= 1 and "diffs:" in dry
    real = cli("dream", "--vault", str(vault), "--llm", "offline")
    decided = re.findall(r"(CREATE|REFINE|CORROBORATE) (digest/\S+)", real)
    assert decided and len(decided) == len(set(decided)), real
    assert not re.search(r"^\s+digest/\S+ \[(CREATE|REFINE|CORROBORATE)\]", real, re.M)
    again = cli("dream", "--vault", str(vault), "--llm", "offline", "--dry-run")
    assert "diffs:" not in again and "would change" not in again, again


def test_the_default_auto_provider_with_no_ollama_dreams_offline_and_says_so(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's path for a new user: no config, llm.provider auto, no Ollama."""
    monkeypatch.setenv("VAULTLINK_LLM__HOST", down_url())
    out = cli("dream", "--vault", str(vault))
    assert "dreaming with the offline integrator" in out
    assert re.search(r"CREATE digest/wiki/\S+\.md", out), out
    assert "failed 0" in out
