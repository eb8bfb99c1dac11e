"""`vaultlink dream` end to end: the real CLI, real ollama.Client, the fake Ollama server
driven by the competent scripted model, real Chroma and SQLite, on a copy of sample_vault.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.ollama_server import FakeOllama, down_url
from tests.fakes.sample_vault_model import CompetentModel
from tests.vaults import SAMPLE_VAULT, snapshot
from vaultlink.cli import app
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault


@pytest.fixture()
def vault_copy(sample_vault: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # these runs judge the model path's decisions as written: review holds every CORRECT
    # by default (tests/test_review.py), so it is off here
    monkeypatch.setenv("VAULTLINK_REVIEW__MODE", "off")
    return sample_vault


def _dream(runner: CliRunner, vault: Path, server: FakeOllama, *extra: str) -> dict:
    result = runner.invoke(app, ["dream", "--vault", str(vault), "--llm", "ollama",
                                 "--ollama-host", server.url, "--json", *extra],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data: dict = json.loads(result.output)
    return data


@pytest.mark.slow
def test_dream_with_model_creates_corroborates_refines_and_corrects(
        vault_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTLINK_AUTO_DREAM__MAX_UNITS", "20")
    runner = CliRunner()
    before = snapshot(vault_copy)
    with FakeOllama(model=CompetentModel()) as server:
        first = _dream(runner, vault_copy, server)
        actions = {c["action"] for c in first["changes"]}
        assert actions == {"CREATE", "CORROBORATE", "REFINE", "CORRECT"}, first
        assert first["counts"]["failed"] == 0
        after_first = snapshot(vault_copy)
        second = _dream(runner, vault_copy, server)
    # The user's notes are untouched; only digest/ changed.
    changed = {p for p in after_first if before.get(p) != after_first[p]}
    assert changed and all(p.startswith("digest/") for p in changed)
    assert all(after_first[p] == before[p] for p in before if not p.startswith("digest/"))
    # vaultlink check finds nothing wrong.
    errors = [p for p in check_vault(Vault(vault_copy)) if p.level == "error"]
    assert errors == []
    # A second run over the unchanged vault writes nothing.
    assert second["counts"]["changed"] == 0 and second["changes"] == []
    assert snapshot(vault_copy) == after_first
    # Every model call carried num_ctx and stayed inside it.
    for req in server.chat_requests():
        assert req["options"]["num_ctx"] == 8192
    corrected = (vault_copy / "digest/procedure/rebuild-index.md").read_text()
    assert "~~" in corrected and "Corrected:" in corrected
    assert "[[daily/2026-06-19.md|" in corrected
    # `vaultlink log --note` takes the node as a path or a name, and says when none match.
    node = "digest/procedure/rebuild-index.md"
    by_path, by_name = ([json.loads(runner.invoke(app, ["log", "--vault", str(vault_copy),
                                                        "--note", n, "--json"]).output)
                         ["decisions"] for n in (node, "[[rebuild-index]]")])
    assert by_path == by_name and any(d["action"] == "CORRECT" for d in by_path)
    assert all(d["target"] == node or node in d["unit"]["paths"] for d in by_path)
    quiet = runner.invoke(app, ["log", "--vault", str(vault_copy), "--note",
                                "digest/wiki/gone.md"])
    assert quiet.exit_code == 0 and "no decision touches digest/wiki/gone.md" in quiet.output
    (vault_copy / node).unlink()  # the journal still knows a deleted node, by link too
    gone = json.loads(runner.invoke(app, ["log", "--vault", str(vault_copy), "--note",
                                          "[[digest/procedure/rebuild-index]]", "--json"]
                                    ).output)["decisions"]
    assert gone == by_path
    rooted = json.loads(runner.invoke(app, ["log", "--vault", str(vault_copy), "--note",
                                            f"/{node}", "--json"]).output)["decisions"]
    assert rooted == by_path
    assert runner.invoke(app, ["log", "--vault", str(vault_copy), "-n", "0"]).exit_code == 2


@pytest.mark.slow
def test_dry_run_shows_decisions_and_writes_nothing(vault_copy: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTLINK_AUTO_DREAM__MAX_UNITS", "20")
    before = snapshot(vault_copy)
    with FakeOllama(model=CompetentModel()) as server:
        data = _dream(CliRunner(), vault_copy, server, "--dry-run")
    assert data["dry_run"] is True
    assert {r["action"] for r in data["results"]} >= {"CREATE", "CORRECT"}
    assert all(r["diff"] for r in data["results"] if r["status"] == "integrated")
    assert snapshot(vault_copy) == before


@pytest.mark.slow
def test_demo_runs_on_a_copy_of_the_sample_vault_without_ollama(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The README's main command as a new user runs it: llm.provider auto (the default),
    # and no Ollama answering, so the offline integrator runs and says so.
    monkeypatch.setenv("VAULTLINK_LLM__HOST", down_url())
    dest = tmp_path / "demo"
    before = snapshot(SAMPLE_VAULT)
    result = CliRunner().invoke(app, ["demo", "--to", str(dest)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "dreaming with the offline integrator" in result.output
    assert "vaultlink check: 0 error(s) in digest/" in result.output
    assert "new digest nodes (" in result.output and "failed 0" in result.output
    # each decision once: the progress line says it, the summary does not repeat it
    decided = re.findall(r"\] \S+ \.\.\. (?:CREATE|REFINE|CORROBORATE) (digest/\S+)",
                         result.output)
    assert len(decided) > 20
    assert not re.search(r"^\s+digest/\S+ \[(CREATE|REFINE|CORROBORATE)\]", result.output,
                         re.M)
    assert snapshot(SAMPLE_VAULT) == before  # the checkout is never touched
    assert any((dest / "digest").rglob("*.md"))


def test_a_note_that_gives_no_unit_is_named_with_why(tmp_path: Path) -> None:
    """The note is checkpointed all the same, so the run says what it held and why none of
    it is kept instead of letting it look lost; a dry run says what it would checkpoint.
    A short decision under a Standup heading is no such note: it is a unit (issue #16)."""
    (tmp_path / "daily").mkdir()
    (tmp_path / "daily/2026-07-01.md").write_text(
        "## TODO\n\n- [ ] Book the dentist\n- [ ] Call the bank\n\n## Lunch\n\n"
        "Noodles with Sam at the corner place.\n")
    runner = CliRunner()
    dry = runner.invoke(app, ["dream", "--vault", str(tmp_path), "--llm", "offline",
                              "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would checkpoint 1" in dry.output and "checkpointed" not in dry.output
    real = runner.invoke(app, ["dream", "--vault", str(tmp_path), "--llm", "offline"])
    assert ("nothing to keep in daily/2026-07-01.md: open tasks (checkboxes) (1), "
            "logistics (the 'Lunch' section) (1)") in real.output
    assert "daily/2026-07-01.md [NOTHING TO KEEP]" in real.output
    assert "checkpointed 1" in real.output
    status = runner.invoke(app, ["status", "--vault", str(tmp_path)])
    assert "nothing to keep in daily/2026-07-01.md (read with the offline-" in status.output
    (tmp_path / "daily/2026-07-02.md").write_text(
        "# Standup\n\nWe decided to move the deploy window to Tuesday mornings because "
        "Monday releases kept colliding with the weekly planning meeting and support.\n")
    decided = runner.invoke(app, ["dream", "--vault", str(tmp_path), "--llm", "offline"])
    assert "1 unit(s) to integrate" in decided.output
    assert re.search(r"\.\.\. CREATE digest/", decided.output), decided.output
    node = next(p for p in (tmp_path / "digest").rglob("*.md") if "topics" not in p.parts)
    assert "We decided to move the deploy window to Tuesday mornings" in node.read_text()
