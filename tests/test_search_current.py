"""Search answers at once and answers well: every run that writes leaves the section
index current, the README's example query finds the autovacuum note first, and the
faint tail of hits is left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.crashkit import add_note, make_vault
from tests.fakes.ollama_server import FakeOllama
from tests.test_daemon import note_model, settings_for
from tests.waiting import wait_for
from vaultlink.cli import app
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.service import Daemon
from vaultlink.index.recall import open_recall
from vaultlink.vault.notes import Vault

README_QUERY = "why does autovacuum fall behind"


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def sections_left_to_index(root: Path) -> int:
    """How many texts a `search` now would have to embed before answering."""
    vault = Vault(root)
    indexes = open_recall(vault, load_settings(root, environ={}).pipeline())
    try:
        return indexes.chunks.sync().embedded
    finally:
        indexes.close()


@pytest.mark.slow  # end to end on a whole vault: the fast tier stays under 60 s
def test_the_readme_query_finds_the_autovacuum_note_first(sample_vault: Path) -> None:
    hits = json.loads(cli("search", README_QUERY, "--vault", str(sample_vault),
                          "--json"))["hits"]
    assert hits[0]["path"] == "digest/wiki/postgres-autovacuum.md", hits[:3]
    assert all("- [ ]" not in h["text"] for h in hits[:3])  # no open task outranks it


def test_faint_hits_are_left_out_and_keyword_matches_kept(sample_vault: Path) -> None:
    hits = json.loads(cli("node-search", README_QUERY, "--vault", str(sample_vault),
                          "--json"))["hits"]
    assert hits and hits[0]["path"] == "digest/wiki/postgres-autovacuum.md"
    assert all(h["similarity"] >= 0.15 or 0 < h["keyword_rank"] <= 3 for h in hits), hits



def test_a_keyword_match_the_vectors_miss_is_kept_above_the_floor(
        sample_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A badge number deep in a node about lunches: the vector barely sees it."""
    (sample_vault / "digest/wiki/office-lunches.md").write_text(
        "---\nname: Office lunches\ndescription: Which food the office orders on which "
        "weekday.\n---\n" + "Monday is ramen, Tuesday tacos, Wednesday salad, Thursday curry "
        "and Friday pizza with the whole floor. " * 3 + "The loading dock badge is QX-7741.\n"
        "\n## Sources\n\n- Agreed in [[daily/2026-06-08.md]], at the standup.\n")
    monkeypatch.setenv("VAULTLINK_INDEX__MIN_SIMILARITY", "0.5")
    hits = json.loads(cli("node-search", "QX-7741", "--vault", str(sample_vault),
                          "--json"))["hits"]
    assert [h["path"] for h in hits] == ["digest/wiki/office-lunches.md"], hits
    assert hits[0]["similarity"] < 0.5 and hits[0]["keyword_rank"] == 1


def test_a_dream_leaves_the_section_index_current(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault")
    add_note(root, 1)
    cli("dream", "--vault", str(root), "--llm", "offline")
    assert sections_left_to_index(root) == 0


@pytest.mark.slow
def test_a_daemon_run_leaves_the_section_index_current(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault")
    with FakeOllama(model=note_model) as server:
        d = Daemon(root, settings_for(root, server.url))
        d.start()
        try:
            add_note(root, 1)
            wait_for(lambda: "daily/2026-07-01/part-001.md" in d.state.checkpoints()
                     and not d.state.queue() and d.status()["state"] == "idle",
                     what="the note to be integrated")
            assert d.parts.indexes.chunks.sync().embedded == 0
        finally:
            d.stop()
