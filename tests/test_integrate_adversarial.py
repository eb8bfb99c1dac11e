"""Adversarial models against the integrate stage: whatever the model does, the vault
ends valid, nothing outside digest/ changes, and the outcome follows the failure
semantics (two attempts; failed units retried next run; unusable receipts skipped).

Real ollama.Client against the fake server, real guard, real Chroma and SQLite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.dream_runs import dream, turns, with_extract
from tests.fakes.ollama_server import FakeOllama, Hang, HTTPError, Malformed, down_url, reply
from tests.vaults import snapshot, write_notes
from vaultlink.errors import ModelUnavailable
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault

SOURCE = "daily/2026-07-01.md"
NODE = "digest/procedure/rebuild-index.md"
UNIT = {"name": "online-rebuild", "bucket": "procedure", "paths": [SOURCE],
        "summary": "The index rebuild runs online since v2.3; the service stays up."}
NODE_TEXT = """---
name: Rebuild the index
description: Full rebuild of the search index; use when it is stale.
---
Stop the service, rebuild, start it again. See [[digest/wiki/search.md]].

## Sources

- The steps come from the rebuild recorded in [[daily/2026-06-01.md]].
"""


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "v", {
        "daily/2026-06-01.md": "## Rebuild\n\nWe stopped the service.\n",
        SOURCE: "## Decisions\n\nSince v2.3 the index rebuild runs online, "
                "the service stays up during the rebuild.\n",
        NODE: NODE_TEXT,
        "digest/wiki/search.md":
            "---\nname: Search\ndescription: How search works.\n---\nSearch finds notes.\n\n"
            "## Sources\n\n- Described first in [[daily/2026-06-01.md]].\n"})


def assert_vault_sound(root: Path, before: dict[str, bytes]) -> None:
    after = snapshot(root)
    for path, data in before.items():
        if not path.startswith("digest/"):
            assert after[path] == data, f"{path} changed"
    assert not [p for p in after if p not in before and not p.startswith("digest/")]
    assert not (root.parent / "outside.md").exists()
    errors = [p for p in check_vault(Vault(root)) if p.level == "error"]
    assert errors == [], errors


def write_call(path: str, content: str) -> dict[str, Any]:
    return reply(tool_calls=[("write", {"path": path, "name": "Online rebuild",
                                        "description": "Rebuild without downtime.",
                                        "content": content})])


GOOD_BODY = (f"The rebuild runs online since v2.3, unlike [[{NODE}]].\n\n## Sources\n\n"
             f"- The change was recorded in [[{SOURCE}]].\n")
EMPTY = reply("")


@pytest.mark.parametrize("name, script, status", [
    ("malformed JSON", turns(Malformed()), "failed"),
    ("HTTP 500s", turns(HTTPError(500)), "failed"),
    ("unknown tool", turns(reply(tool_calls=[("delete_all", {})]), EMPTY), "failed"),
    ("bad arguments", turns(reply(tool_calls=[("edit", {"path": NODE})]), EMPTY), "failed"),
    ("write outside the vault", turns(write_call("../outside.md", GOOD_BODY), EMPTY),
     "failed"),
    ("write to daily/", turns(write_call("daily/x.md", GOOD_BODY), EMPTY), "failed"),
    ("edit that drops links", turns(reply(tool_calls=[("edit", {
        "path": NODE, "old": " See [[digest/wiki/search.md]].", "new": ""})]), EMPTY),
     "failed"),
    ("bare link lines", turns(write_call("digest/procedure/online-rebuild.md",
                                         f"Online.\n\n## Sources\n\n- [[{SOURCE}]]\n"), EMPTY),
     "failed"),
    ("CREATE over an existing node", turns(write_call(NODE, GOOD_BODY), EMPTY), "failed"),
    ("never a receipt", turns(reply(tool_calls=[("node_search", {"query": "rebuild"})])),
     "failed"),
])
def test_adversarial_model_leaves_the_vault_sound(vault: Path, name: str, script: Any,
                                                  status: str) -> None:
    before = snapshot(vault)
    with FakeOllama(model=with_extract(script, UNIT)) as server:
        run = dream(vault, server.url)
    assert [r.status for r in run.report.results] == [status], (name, run.report.results)
    assert_vault_sound(vault, before)
    assert snapshot(vault)[NODE] == before[NODE]
    if status == "failed":
        assert run.report.failed_paths == {SOURCE}
        assert SOURCE not in run.report.checkpointed
    else:
        assert SOURCE in run.report.checkpointed


def test_refused_write_is_reported_to_the_model(vault: Path) -> None:
    script = turns(write_call("../outside.md", GOOD_BODY), EMPTY)
    with FakeOllama(model=with_extract(script, UNIT)) as server:
        dream(vault, server.url)
        tool_answers = [m["content"] for r in server.chat_requests()
                        for m in r["messages"] if m["role"] == "tool"]
    assert any("refused" in a and ".." in a for a in tool_answers)


def test_missing_receipt_with_one_valid_write_is_accepted(vault: Path) -> None:
    script = turns(write_call("digest/procedure/online-rebuild.md", GOOD_BODY), EMPTY)
    with FakeOllama(model=with_extract(script, UNIT)) as server:
        run = dream(vault, server.url)
    result = run.report.results[0]
    assert (result.status, result.action) == ("integrated", "CREATE")
    assert (vault / "digest/procedure/online-rebuild.md").exists()


def test_hang_past_the_timeout_fails_the_unit_and_keeps_the_source(vault: Path) -> None:
    before = snapshot(vault)
    # The timeout covers the extraction call too, which must answer in time even on a
    # loaded machine: 1 s, not less. The fake lets the hung turns go when it stops.
    with FakeOllama(model=with_extract(turns(Hang(30.0)), UNIT)) as server:
        run = dream(vault, server.url, **{"llm.timeout_seconds": 1.0})
    assert run.report.results[0].status == "failed"
    assert "timed out" in run.report.results[0].error or "time" in run.report.results[0].error
    assert_vault_sound(vault, before)


def test_a_dry_run_does_not_count_a_failed_units_note_as_checkpointed(vault: Path) -> None:
    """A dry run records no failure in state.sqlite, so only the run's own failed paths
    keep the note out of what it says it would checkpoint: "would checkpoint" must not
    promise that a note whose unit failed is integrated."""
    with FakeOllama(model=with_extract(turns(HTTPError(500)), UNIT)) as server:
        run = dream(vault, server.url, dry_run=True)
    assert [r.status for r in run.report.results] == ["failed"]
    assert run.report.failed_paths == {SOURCE}
    assert SOURCE not in run.report.checkpointed


def test_failed_unit_is_retried_next_run(vault: Path) -> None:
    with FakeOllama(model=with_extract(turns(HTTPError(500)), UNIT)) as server:
        first = dream(vault, server.url)
    assert first.report.failed_paths == {SOURCE}
    good = turns(write_call("digest/procedure/online-rebuild.md", GOOD_BODY),
                 reply(json.dumps({"action": "CREATE",
                                   "target_path": "digest/procedure/online-rebuild.md"})))
    with FakeOllama(model=with_extract(good, UNIT)) as server:
        second = dream(vault, server.url)
    assert SOURCE in second.extraction.changed and SOURCE in second.report.checkpointed
    assert second.report.results[0].status == "integrated"


def test_server_down_stops_the_run_before_anything_is_checkpointed(vault: Path) -> None:
    before = snapshot(vault)
    with pytest.raises(ModelUnavailable, match="ollama serve"):
        dream(vault, down_url())
    assert snapshot(vault) == before
