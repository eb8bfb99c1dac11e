"""Pins the foundation commands: init, check, links, and how errors reach the user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from tests.vaults import vault_with
from vaultlink.cli import app, main
from vaultlink.cli.settings import DEFAULT_CONFIG_YAML, config_path

GOOD_NODE = """\
---
name: Hybrid search
description: Combine BM25 and vectors with rank fusion; use when ranking notes.
---
Hybrid search ranks notes.

## Sources

- The ranking rule was decided in [[daily/2026-06-20.md|the June 20 session]].
"""

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_vaultlink_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("VAULTLINK_"):
            monkeypatch.delenv(name)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return vault_with(tmp_path / "vault", {
        "daily/2026-06-20.md": "# June 20\n\nHybrid search, see [[hybrid-search]].\n",
        "daily/2026-06-21.md": "Back to [[2026-06-20]].\n",
        "digest/wiki/hybrid-search.md": GOOD_NODE,
    })


def run_main(*args: str) -> subprocess.CompletedProcess[str]:
    """The real entry point in a child process, as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTLINK_")}
    return subprocess.run([sys.executable, "-m", "vaultlink", *args], capture_output=True,
                          text=True, env=env, timeout=60, check=False)


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def call_main(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Ran]:
    """``main()`` in this process (its error handler included), faster than a child."""

    def call(*args: str) -> Ran:
        monkeypatch.setattr(sys, "argv", ["vaultlink", *args])
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main()
        out = capsys.readouterr()
        code = info.value.code
        return Ran(code if isinstance(code, int) else 1, out.out, out.err)

    return call


# -- init ---------------------------------------------------------------------


def test_init_writes_the_commented_default_config(vault: Path) -> None:
    result = runner.invoke(app, ["init", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    assert config_path(vault).read_text(encoding="utf-8") == DEFAULT_CONFIG_YAML
    assert str(config_path(vault)) in result.output


def test_init_does_not_overwrite_without_force(vault: Path) -> None:
    runner.invoke(app, ["init", "--vault", str(vault)])
    config_path(vault).write_text("llm:\n  model: mine\n", encoding="utf-8")
    result = runner.invoke(app, ["init", "--vault", str(vault)])
    assert result.exit_code == 0
    assert "--force" in result.output
    assert config_path(vault).read_text(encoding="utf-8") == "llm:\n  model: mine\n"


def test_init_force_overwrites(vault: Path) -> None:
    config_path(vault).parent.mkdir()
    config_path(vault).write_text("llm:\n  model: mine\n", encoding="utf-8")
    result = runner.invoke(app, ["init", "--vault", str(vault), "--force"])
    assert result.exit_code == 0, result.output
    assert config_path(vault).read_text(encoding="utf-8") == DEFAULT_CONFIG_YAML


def test_init_print_prints_the_defaults_and_writes_nothing(vault: Path) -> None:
    result = runner.invoke(app, ["init", "--print", "--vault", str(vault)])
    assert result.exit_code == 0
    assert result.stdout == DEFAULT_CONFIG_YAML
    assert not (vault / ".vaultlink").exists()


# -- check --------------------------------------------------------------------


def test_check_passes_a_clean_vault(vault: Path) -> None:
    result = runner.invoke(app, ["check", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    assert "0 error(s) in digest/, 0 warning(s)" in result.output


def test_check_fails_on_a_digest_error(vault: Path) -> None:
    (vault / "digest/wiki/bad.md").write_text(GOOD_NODE.replace(
        "Hybrid search ranks notes.", "Uses [[digest/wiki/missing.md]]."))
    result = runner.invoke(app, ["check", "--vault", str(vault)])
    assert result.exit_code == 1
    assert "error: digest/wiki/bad.md:5: broken link [[digest/wiki/missing.md]]" in result.output
    assert "1 error(s) in digest/" in result.output


def test_check_passes_with_only_user_warnings_unless_strict(vault: Path) -> None:
    (vault / "daily/2026-06-22.md").write_text("See [[2026-06-31]].\n")
    (vault / "daily/2026-06-23.md").write_text("---\ntags: [x\n---\nbody\n")
    result = runner.invoke(app, ["check", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    assert "warning: daily/2026-06-22.md:1: broken link [[2026-06-31]]" in result.output
    assert "warning: daily/2026-06-23.md: unreadable" in result.output
    assert "0 error(s) in digest/, 2 warning(s)" in result.output
    strict = runner.invoke(app, ["check", "--strict", "--vault", str(vault)])
    assert strict.exit_code == 1


def test_check_json_lists_errors_and_warnings(vault: Path) -> None:
    (vault / "daily/2026-06-22.md").write_text("See [[2026-06-31]].\n")
    (vault / "digest/wiki/no-source.md").write_text(
        "---\nname: N\ndescription: D.\n---\nBody.\n")
    result = runner.invoke(app, ["check", "--json", "--vault", str(vault)])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert [(e["level"], e["path"]) for e in data["errors"]] == [
        ("error", "digest/wiki/no-source.md")]
    assert "no source link" in data["errors"][0]["message"]
    assert data["warnings"] == [{
        "level": "warning", "path": "daily/2026-06-22.md", "line": 1,
        "message": "broken link [[2026-06-31]]: no note named '2026-06-31' in the vault"}]


def test_vault_defaults_to_the_environment_variable(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTLINK_VAULT", str(vault))
    result = runner.invoke(app, ["check", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"errors": [], "warnings": []}


def test_vault_defaults_to_the_current_folder(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vault)
    (vault / "daily/2026-06-22.md").write_text("See [[2026-06-31]].\n")
    result = runner.invoke(app, ["check", "--json"])
    assert [w["path"] for w in json.loads(result.stdout)["warnings"]] == ["daily/2026-06-22.md"]


# -- links --------------------------------------------------------------------


def test_links_prints_outlinks_and_backlinks(vault: Path) -> None:
    result = runner.invoke(app, ["links", "2026-06-20", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("daily/2026-06-20.md\n")
    assert "outlinks (1):" in out
    assert "line 3: [[hybrid-search]] -> digest/wiki/hybrid-search.md" in out
    assert "backlinks (2):" in out
    assert "daily/2026-06-21.md line 1: [[2026-06-20]]" in out
    assert "digest/wiki/hybrid-search.md line 9:" in out


def test_links_json(vault: Path) -> None:
    (vault / "daily/2026-06-21.md").write_text("Back to [[2026-06-20]] and [[nowhere]].\n")
    result = runner.invoke(app, ["links", "daily/2026-06-21.md", "--json", "--vault",
                                 str(vault)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["path"] == "daily/2026-06-21.md"
    assert [(o["target"], o["broken"], o["line"]) for o in data["outlinks"]] == [
        ("daily/2026-06-20.md", False, 1), (None, True, 1)]
    assert "nowhere" in data["outlinks"][1]["reason"]
    assert data["backlinks"] == []


@pytest.mark.parametrize("given", ["[[2026-06-20]]", "[[2026-06-20|that day]]", "ABS",
                                   "/daily/2026-06-20.md"])
def test_links_takes_a_note_as_a_link_or_an_absolute_path(vault: Path, given: str) -> None:
    """What a user pastes from Obsidian or a shell names the note, as a name does."""
    given = str(vault / "daily/2026-06-20.md") if given == "ABS" else given
    result = runner.invoke(app, ["links", given, "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("daily/2026-06-20.md\n")


def test_links_of_a_file_outside_the_vault_says_so(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("x\n")
    result = runner.invoke(app, ["links", str(outside), "--vault", str(vault)])
    assert result.exit_code != 0 and "is not inside the vault" in str(result.exception)


def test_links_of_an_unknown_note_is_a_readable_error(
    vault: Path, call_main: Callable[..., Ran]
) -> None:
    result = call_main("links", "no-such-note", "--vault", str(vault))
    assert result.code != 0
    assert result.stderr.startswith("vaultlink: ")
    assert "no-such-note" in result.stderr
    assert "Traceback" not in result.stderr


# -- errors and help ----------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "links x", "init"])
def test_a_missing_vault_folder_is_one_readable_line(
    tmp_path: Path, command: str, call_main: Callable[..., Ran]
) -> None:
    missing = tmp_path / "no-such-vault"
    result = call_main(*command.split(), "--vault", str(missing))
    assert result.code != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("vaultlink: ")
    assert str(missing) in lines[0]
    assert not missing.exists()


def test_a_broken_config_is_one_readable_line_with_exit_2(
    vault: Path, call_main: Callable[..., Ran]
) -> None:
    config_path(vault).parent.mkdir()
    config_path(vault).write_text("llm:\n  provider: gpt\n")
    result = call_main("check", "--vault", str(vault))
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        "vaultlink: setting 'llm.provider' is 'gpt'; choose one of auto, ollama, offline"]


def test_check_through_main_exits_1_on_a_bare_link_line(
    vault: Path, call_main: Callable[..., Ran]
) -> None:
    (vault / "digest/wiki/bare.md").write_text(GOOD_NODE.replace(
        "- The ranking rule was decided in [[daily/2026-06-20.md|the June 20 session]].",
        "- [[daily/2026-06-20.md]]"))
    result = call_main("check", "--vault", str(vault))
    assert result.code == 1
    assert "error: digest/wiki/bare.md:9: bare link line" in result.stdout
    assert result.stderr == ""


def test_the_installed_entry_point_reports_a_missing_vault_without_traceback(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-such-vault"
    result = run_main("check", "--vault", str(missing))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"vaultlink: {missing} is not a folder; pass --vault PATH or set VAULTLINK_VAULT"]


def test_a_folder_that_is_no_vault_is_refused_and_left_untouched(tmp_path: Path) -> None:
    """Run in the wrong folder, a command says so instead of building an index there and
    reporting nothing to do; `init` is how to adopt such a folder on purpose."""
    (tmp_path / "src").mkdir()
    for args in (["dream", "--llm", "offline"], ["search", "hello"], ["check"], ["status"]):
        result = run_main(*args, "--vault", str(tmp_path))
        assert result.returncode != 0, args
        assert "does not look like a vault" in result.stderr and "vaultlink init" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
    assert runner.invoke(app, ["init", "--vault", str(tmp_path)]).exit_code == 0
    assert runner.invoke(app, ["check", "--vault", str(tmp_path)]).exit_code == 0


COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_examples(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "Examples" in result.output
    assert f"vaultlink {command}" in result.output


def test_foundation_commands_are_registered() -> None:
    assert {"init", "check", "links"} <= set(COMMANDS)


def test_top_level_help_and_version() -> None:
    assert "vaultlink init" in runner.invoke(app, ["--help"]).output
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("vaultlink ")


def test_check_of_the_sample_vault_passes_with_its_two_warnings() -> None:
    sample = Path(__file__).resolve().parent.parent / "sample_vault"
    result = runner.invoke(app, ["check", "--json", "--vault", str(sample)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["errors"] == []
    assert len(data["warnings"]) == 2
