"""A failed attempt leaves nothing behind, even after its writes landed.

The model's write passes the guard and reaches the disk; then the attempt fails (the
model errors, or its receipt does not match what it wrote). Both attempts of the unit
must be rolled back: a created node removed, an updated node back to its exact bytes,
no write intent left, nothing journaled but the failure, the source not checkpointed.

Real ollama.Client against the fake server, real guard, real Chroma and SQLite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.dream_runs import dream, turns, with_extract
from tests.fakes.ollama_server import FakeOllama, HTTPError, reply
from tests.test_integrate_adversarial import GOOD_BODY, NODE, SOURCE, UNIT, write_call
from tests.test_integrate_adversarial import vault as vault  # the fixture
from tests.vaults import snapshot
from vaultlink.vault.state import State

NEW = "digest/procedure/online-rebuild.md"


def test_a_created_node_is_removed_when_the_attempt_then_fails(vault: Path) -> None:
    before = snapshot(vault)
    def script(request: dict[str, Any]) -> Any:  # every attempt: write, then fail
        wrote = any(m["role"] == "tool" for m in request["messages"])
        return HTTPError(500) if wrote else write_call(NEW, GOOD_BODY)

    with FakeOllama(model=with_extract(script, UNIT)) as server:
        run = dream(vault, server.url)
        wrote = sum(1 for r in server.chat_requests()
                    for m in r["messages"][-1:] if m["role"] == "tool"
                    and '"ok": true' in m["content"])
    assert wrote >= 2, "the write must have landed in both attempts for this test to mean much"
    assert [r.status for r in run.report.results] == ["failed"]
    assert not (vault / NEW).exists()
    assert snapshot(vault) == before
    state = State(vault / ".vaultlink/state.sqlite")
    try:
        assert state.intents() == []
        assert [e.action for e in state.journal()] == ["FAILED"]
        assert SOURCE not in state.checkpoints()
    finally:
        state.close()


def test_an_updated_node_gets_its_exact_bytes_back_when_the_receipt_is_wrong(
        vault: Path) -> None:
    before = snapshot(vault)
    edit = reply(tool_calls=[("edit", {"path": NODE, "old": "start it again.",
                                       "new": "start it again. Since v2.3 it runs online, "
                                              f"as [[{SOURCE}]] records."})])
    wrong = reply(json.dumps({"action": "REFINE", "target_path": "digest/wiki/search.md"}))
    with FakeOllama(model=with_extract(turns(edit, wrong), UNIT)) as server:
        run = dream(vault, server.url)
    assert run.report.results[0].status == "failed"
    assert snapshot(vault)[NODE] == before[NODE]
    assert snapshot(vault) == before
