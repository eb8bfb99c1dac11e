"""Whole offline runs: what a note passed over is recorded with its reason and re-read
when the rules change (issue #16 rule 2), and no silent fallback into a vault a model
has written to (rule 8). Real vaults in tmp_path, real state, index and CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.ports import HeldPort
from tests.vaults import vault_with
from vaultlink.cli import app
from vaultlink.cli.settings import load_settings
from vaultlink.errors import ModelUnavailable
from vaultlink.options import Provider
from vaultlink.pipeline.compose import choose_provider, dream_context, open_parts
from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

LOGISTICS = "## TODO\n\n- [ ] Book the dentist\n\n## Lunch\n\nNoodles with Sam.\n"
FACT = ("## Backups\n\nThe backup job copies the vault to the NAS every night at two and "
        "keeps thirty days of copies.\n\n```sh\nrestic backup ~/vault\n```\n")


def dream(root: Path, provider: str = "offline") -> RunState:
    settings = load_settings(root, environ={}).with_overrides({"llm.provider": provider})
    parts = open_parts(Vault(root), settings.pipeline())
    try:
        parts.index.sync()
        return run_dream(dream_context(parts, settings.pipeline(), Provider(provider)),
                         build_steps(settings.get("auto_dream.steps")))
    finally:
        parts.close()


def test_passed_over_paragraphs_are_recorded_journaled_and_shown(tmp_path: Path) -> None:
    root = vault_with(tmp_path, {"daily/2026-07-01.md": LOGISTICS,
                                 "daily/2026-07-02.md": FACT})
    run = dream(root)
    assert run.extraction.yields == {"daily/2026-07-01.md": 0, "daily/2026-07-02.md": 1}
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        assert [(p["path"], p["line"], p["reason"]) for p in state.passed_over()] == [
            ("daily/2026-07-01.md", 3, "open tasks (checkboxes)"),
            ("daily/2026-07-01.md", 7, "logistics (the 'Lunch' section)"),
            ("daily/2026-07-02.md", 5, "code block")]
        assert [b["path"] for b in state.barren_notes()] == ["daily/2026-07-01.md"]
        skips = [e for e in state.journal(20) if e.action == "SKIP"]
        assert {e.unit["paths"][0]: e.note for e in skips} == {
            "daily/2026-07-01.md": "gave no unit; passed over 2 paragraph(s): open tasks "
                                   "(checkboxes) (1), logistics (the 'Lunch' section) (1)",
            "daily/2026-07-02.md": "passed over 1 paragraph(s) beside its 1 unit(s): "
                                   "code block (1)"}
        assert all(e.integrator == "offline" for e in state.journal(20))
    finally:
        state.close()
    status = CliRunner().invoke(app, ["status", "--vault", str(root)])
    assert "nothing to keep in daily/2026-07-01.md" in status.output
    assert "3 paragraph(s) passed over" in status.output
    again = dream(root)  # settled: nothing read, nothing journaled twice
    assert not again.extraction.changed and not again.extraction.passed_over


def test_a_note_that_gave_nothing_is_read_again_when_the_rules_change(tmp_path: Path) -> None:
    root = vault_with(tmp_path, {"daily/2026-07-01.md": LOGISTICS,
                                 "daily/2026-07-02.md": FACT})
    dream(root)
    state = State(root / ".vaultlink" / "state.sqlite")
    try:  # as if an older version of the rules had read both notes
        with state.transaction() as db:
            db.execute("UPDATE note_yield SET rules='offline-1'")
    finally:
        state.close()
    run = dream(root)
    assert list(run.extraction.changed) == ["daily/2026-07-01.md"]  # the one that gave nothing
    assert run.extraction.yields == {"daily/2026-07-01.md": 0}


def model_written(root: Path) -> None:
    """Record a model's decision in the vault's journal, as a run with Ollama does."""
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        run_id = state.start_run(False, "ollama")
        state.journal_add(run_id, {"name": "x", "paths": ["daily/2026-07-02.md"]}, "CREATE",
                          "digest/wiki/x.md", after_text="x")
    finally:
        state.close()


def test_auto_never_falls_back_silently_into_a_vault_a_model_wrote_to(
        tmp_path: Path, held_port: HeldPort) -> None:
    root = vault_with(tmp_path, {"daily/2026-07-02.md": FACT})
    host = f"http://127.0.0.1:{held_port.port}"  # bound, never listening: nobody answers
    options = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "auto", "llm.host": host}).pipeline()
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        assert choose_provider(options, state) == "offline"  # nothing from a model yet
        state.close()
        model_written(root)
        state = State(root / ".vaultlink" / "state.sqlite")
        with pytest.raises(ModelUnavailable) as stopped:
            choose_provider(options, state)
        assert "`--llm offline`" in str(stopped.value)
        assert "`llm.fallback: offline`" in str(stopped.value)
        chosen = load_settings(root, environ={}).with_overrides(
            {"llm.provider": "auto", "llm.host": host, "llm.fallback": "offline"}).pipeline()
        assert choose_provider(chosen, state) == "offline"
    finally:
        state.close()
    cli = CliRunner().invoke(app, ["dream", "--vault", str(root), "--ollama-host", host])
    assert cli.exit_code != 0 and isinstance(cli.exception, ModelUnavailable)
    assert "llm.fallback: offline" in str(cli.exception)  # main() prints it on one line
    assert not list((root / "digest").rglob("*.md"))  # nothing written, the note waits
    ok = CliRunner().invoke(app, ["dream", "--vault", str(root), "--llm", "offline",
                                  "--json"])
    assert ok.exit_code == 0 and json.loads(ok.output)["counts"]["integrated"] == 1


@pytest.mark.parametrize("lines", [330, 1200])
def test_a_node_too_long_to_read_in_the_steps_fails_no_unit(tmp_path: Path, lines: int) -> None:
    """A node corroborated by hundreds of notes grows hundreds of source lines. The
    offline integrator reads it in pages of 40 lines: with the model's step budget
    (llm.max_steps, 12) the pages alone used it up, so every unit near that node failed
    "no valid receipt" on every run and its note was never checkpointed (the crash loop
    found this at 300 notes). The offline integrator costs nothing per step: its budget
    covers the pages it may read."""
    from tests.crashkit import BASE_NODE, BASE_NODE_TEXT, add_note, make_vault

    root = make_vault(tmp_path / "v")
    many = "".join("- Search index rebuild: confirmed again by [[daily/2026-07-01.md|the "
                   f"2026-07-01 note]] ({i}).\n" for i in range(lines))
    (root / BASE_NODE).write_text(BASE_NODE_TEXT + many)
    add_note(root, 1)
    run = dream(root)
    assert [r.error for r in run.report.results if r.status == "failed"] == []
    assert "daily/2026-07-01/part-001.md" in run.report.checkpointed
    # read to its end: the rebuild unit went into it, not into a second node beside it
    # (at 1,200 lines it did, when reading stopped after 9 pages of 40); the cache plan,
    # another subject, has a node of its own
    assert {r.unit.name.startswith("index-rebuild"): r.target for r in run.report.results} == {
        True: BASE_NODE, False: "digest/wiki/cache-plan-1.md"}
