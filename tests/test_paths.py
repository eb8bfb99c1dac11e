"""A vault given as a user types it works as its absolute form: a relative path with
``..``, ``~``, a trailing slash, a path through a symlinked folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vaultlink.cli import app


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    """A vault reached through symlinks (``link``, ``home/notes``), and a folder outside."""
    root = tmp_path / "real" / "notes"
    (root / "daily").mkdir(parents=True)
    (root / "digest/wiki").mkdir(parents=True)
    (root / "daily/2026-07-01.md").write_text(
        "## Cache\n\nWe decided to rebuild the cache every night, because it grew past "
        "300 MB and slowed the search path. See [[no-such-note]] later.\n")
    (root / "digest/wiki/cache.md").write_text(
        "---\nname: Cache\ndescription: The cache.\n---\nThe cache is rebuilt nightly.\n\n"
        "## Sources\n\n- The plan is in [[daily/2026-07-01.md]], from the standup.\n")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes").symlink_to(root, target_is_directory=True)
    (tmp_path / "elsewhere" / "deeper").mkdir(parents=True)
    return root


def run(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    data: dict = json.loads(result.output)
    return data


def forms(tmp_path: Path) -> list[str]:
    return ["../../real/notes", "../../real/notes/", "~/notes", str(tmp_path / "link/notes"),
            str(tmp_path / "real/notes") + "/"]


def test_every_form_of_the_vault_path_reads_the_same_notes(
        vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path / "elsewhere" / "deeper")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = run("check", "--vault", str(vault))
    assert [w["path"] for w in expected["warnings"]] == ["daily/2026-07-01.md"]
    for form in forms(tmp_path):
        assert run("check", "--vault", form) == expected, form
        links = run("links", "cache", "--vault", form)
        assert [b["source"] for b in links["backlinks"]] == [], form
        assert [o["target"] for o in links["outlinks"]] == ["daily/2026-07-01.md"], form


@pytest.mark.parametrize("form", ["../../real/notes", "LINK"])
def test_a_dry_run_through_a_relative_or_linked_path_sees_every_note(
        vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    monkeypatch.chdir(tmp_path / "elsewhere" / "deeper")
    given = str(tmp_path / "link/notes") if form == "LINK" else form
    data = run("dream", "--vault", given, "--dry-run", "--llm", "offline")
    assert data["counts"]["scanned"] == 1 and data["counts"]["changed"] == 1, data
    assert data["skipped"] == {}, data
    assert os.path.isdir(vault / ".vaultlink")  # the state went into the vault itself
