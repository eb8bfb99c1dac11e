"""Review before write (``review.mode``): an uncertain decision waits as a proposal.

Real files, real ``State``, the offline integrator through the real CLI, and a real
daemon for the API route: a correction of a node (a CORRECT) is held in ``uncertain``
mode, written by approving it (journaled, undoable), remembered when rejected, decided
again when its node changed since, written as a new node with ``new``, and written at
once in ``off`` mode.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.test_api import call
from tests.vaults import vault_with
from tests.waiting import wait_for
from vaultlink.cli import app
from vaultlink.cli.settings import load_settings
from vaultlink.daemon.service import Daemon
from vaultlink.pipeline.context import ReviewMode
from vaultlink.pipeline.events import UnitStatus
from vaultlink.pipeline.integrate.review import Decided, uncertain
from vaultlink.prose.units import Unit
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault
from vaultlink.vault.proposals import ProposalState
from vaultlink.vault.state import State

NODE = "digest/wiki/hybrid-search.md"
FIRST, FIX = "daily/2026-06-08.md", "daily/2026-06-20.md"
NODE_TEXT = """---
name: Hybrid search
description: Hybrid search fuses BM25 and vector results with reciprocal rank fusion.
---
Hybrid search runs BM25 and a vector index for each query and fuses their results with \
reciprocal rank fusion.

- Candidate depth: the top 100 from BM25 and the top 100 from the vector index are fused, \
and the top 20 are returned.
- Fusion: RRF with k = 60.

## Sources

- The design of hybrid search was agreed in [[daily/2026-06-08.md]], at the design review.
"""
FIRST_TEXT = """## Design review

We agreed on hybrid search: BM25 and a vector index for each query, fused with reciprocal \
rank fusion (k = 60). Candidate depth: the top 100 from each list, and the top 20 are \
returned.
"""
FIX_TEXT = """## Hybrid search

Correction to hybrid search: the candidate depth is now 200 per list, not 100. Candidate \
depth: the top 200 from BM25 and the top 200 from the vector index are fused, and the top \
20 are returned.
"""


def run(*args: str, mode: str | None = None) -> Any:
    env = {"VAULTLINK_REVIEW__MODE": mode} if mode else {}
    return CliRunner().invoke(app, list(args), env=env)


def dream(root: Path, mode: str | None = None) -> Any:
    result = run("dream", "--vault", str(root), "--llm", "offline", "--json", mode=mode)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A vault whose node was made from one note, then a note that corrects it."""
    root = vault_with(tmp_path / "vault", {NODE: NODE_TEXT, FIRST: FIRST_TEXT})
    dream(root)  # the first note: already in the node
    (root / FIX).write_text(FIX_TEXT)
    return root


def state_of(root: Path) -> State:
    return State(root / ".vaultlink" / "state.sqlite")


def node(root: Path) -> str:
    return (root / NODE).read_text()


def test_a_correct_in_uncertain_mode_is_a_proposal_and_writes_nothing(root: Path) -> None:
    run_json = dream(root)
    held = [r for r in run_json["results"] if r["status"] == "held"]
    assert len(held) == 1 and held[0]["action"] == "CORRECT" and held[0]["target"] == NODE
    assert run_json["counts"]["held"] == 1
    assert node(root) == NODE_TEXT  # nothing written
    state = state_of(root)
    try:
        (p,) = state.proposals()
        assert p.action == "CORRECT" and p.target == NODE and p.before_text == NODE_TEXT
        assert "200" in p.after_text and p.reason.startswith("a correction")
        assert p.unit["paths"] == [FIX] and p.marks[FIX][0]
        assert state.journal(5, NODE)[0].action != "CORRECT"  # not journaled as written
        # the note waits: not checkpointed, and the next run does not read it again
        assert FIX not in state.checkpoint_hashes()
    finally:
        state.close()
    again = dream(root)
    assert again["counts"]["extracted"] == 0 and again["counts"]["held"] == 0
    listed = run("review", "list", "--vault", str(root))
    assert listed.exit_code == 0 and "#1 OPEN CORRECT digest/wiki/hybrid-search.md" in \
        listed.output
    shown = run("review", "show", "1", "--vault", str(root))
    assert "held: a correction" in shown.output
    assert "+- Candidate depth: the top 200" in shown.output  # the exact diff
    status = json.loads(run("status", "--vault", str(root), "--json").output)
    assert status["proposals"] == 1
    assert "1 proposal(s) wait for your review" in run("status", "--vault", str(root)).output


def test_approve_writes_journals_and_undo_reverts(root: Path) -> None:
    dream(root)
    approved = run("review", "approve", "1", "--vault", str(root))
    assert approved.exit_code == 0, approved.output
    assert "CORRECT digest/wiki/hybrid-search.md written" in approved.output
    text = node(root)
    assert "the top 200 from BM25" in text and "Earlier:" in text
    state = state_of(root)
    try:
        entry = state.journal(1)[0]
        assert (entry.action, entry.target, entry.after_text) == ("CORRECT", NODE, text)
        assert entry.public()["undoable"] and "approved in review" in entry.note
        assert state.proposal_get(1).state is ProposalState.APPROVED  # type: ignore[union-attr]
        assert state.proposal_count() == 0 and not state.intents()
        assert FIX in state.checkpoint_hashes()  # settled: the note is checkpointed
    finally:
        state.close()
    assert [p for p in check_vault(Vault(root)) if p.level == "error"] == []
    assert dream(root)["counts"]["extracted"] == 0  # not read again
    undone = run("undo", str(entry.id), "--vault", str(root))
    assert undone.exit_code == 0, undone.output
    assert node(root) == NODE_TEXT
    assert "is approved already" in str(run("review", "approve", "1", "--vault",
                                            str(root)).exception)


def test_reject_is_remembered_across_runs(root: Path) -> None:
    dream(root)
    rejected = run("review", "reject", "1", "--vault", str(root))
    assert rejected.exit_code == 0 and "not proposed again" in rejected.output
    assert node(root) == NODE_TEXT
    state = state_of(root)
    try:
        skip = state.journal(1)[0]
        assert skip.action == "SKIP" and "rejected in review" in skip.note
        state.drop_checkpoints([FIX])  # the note is read again, as after a lost state
    finally:
        state.close()
    later = dream(root)
    (result,) = later["results"]
    assert result["status"] == "skipped" and "rejected in review" in result["error"]
    assert later["counts"]["held"] == 0 and node(root) == NODE_TEXT
    state = state_of(root)
    try:
        assert state.proposal_count() == 0
    finally:
        state.close()


def test_a_proposal_whose_node_changed_is_decided_again(root: Path) -> None:
    dream(root)
    edited = NODE_TEXT.replace("Fusion: RRF", "Fusion (the owner's words): RRF")
    (root / NODE).write_text(edited)  # the owner edits the node meanwhile
    assert "STALE" in run("review", "list", "--vault", str(root)).output
    answer = json.loads(run("review", "approve", "1", "--vault", str(root), "--json").output)
    assert answer["stale"] and answer["proposal"]["state"] == "stale"
    assert node(root) == edited  # nothing written over the owner's edit
    again = dream(root)  # the unit is decided again, against the node as it is now
    (result,) = again["results"]
    assert result["status"] == "held" and result["proposal_id"] == 2
    state = state_of(root)
    try:
        p = state.proposal_get(2)
        assert p is not None and p.before_text == edited
    finally:
        state.close()


def test_new_writes_the_unit_as_a_new_node(root: Path) -> None:
    dream(root)
    created = run("review", "new", "1", "--vault", str(root), "--json")
    assert created.exit_code == 0, created.output
    answer = json.loads(created.output)
    assert answer["proposal"]["state"] == "created"
    state = state_of(root)
    try:
        entry = state.journal(1)[0]
        assert entry.action == "CREATE" and entry.target != NODE
        assert FIX in (root / entry.target).read_text()  # cites the unit's note
    finally:
        state.close()
    assert node(root) == NODE_TEXT
    assert [p for p in check_vault(Vault(root)) if p.level == "error"] == []


def test_off_writes_as_before(root: Path) -> None:
    run_json = dream(root, mode="off")
    assert [r["status"] for r in run_json["results"]] == ["integrated"]
    assert "the top 200 from BM25" in node(root)
    state = state_of(root)
    try:
        assert state.proposals(None) == []
    finally:
        state.close()


def test_all_holds_every_decision(root: Path) -> None:
    (root / "daily/2026-06-21.md").write_text(
        "## Pottery class\n\nThe pottery class on Thursdays moved to the studio on Elm "
        "Street; bring an apron and the glaze notebook.\n")
    run_json = dream(root, mode="all")
    assert {r["status"] for r in run_json["results"]} == {"held"}
    assert any(r["action"] == "CREATE" for r in run_json["results"])
    assert not (root / "digest/personal").exists() or not any(
        (root / "digest/personal").iterdir())


def test_uncertain_rules() -> None:
    unit = Unit("hybrid-search", "wiki", "Hybrid search: fuse the top 200 now.", [FIX],
                title="Hybrid search")
    after = NODE_TEXT + "- More.\n"
    assert uncertain(Decided(unit, "CORRECT", NODE, NODE_TEXT, after)) is not None
    assert uncertain(Decided(unit, "REFINE", NODE, NODE_TEXT, after)) is None
    assert uncertain(Decided(unit, "CREATE", NODE, None, after)) is None
    stranger = Unit("api-key-leak", "wiki", "An API key leaked in the staging pods' logs.",
                    [FIX], title="API key leak")
    assert "weak subject evidence" in str(uncertain(Decided(stranger, "REFINE", NODE,
                                                            NODE_TEXT, after)))
    page = Unit("hybrid-search", "wiki", "Hybrid search fuses BM25 and vectors.",
                ["resource/blog.md"], title="Hybrid search")
    made_from_page = NODE_TEXT.replace("daily/2026-06-08.md", "resource/paper.md")
    # a page that names the node's subject updates it; one sharing facts alone waits
    assert uncertain(Decided(page, "REFINE", NODE, made_from_page, after)) is None
    depth = Unit("candidate-depth", "wiki", "The top 100 from BM25 and the top 100 from the "
                 "vector index are fused. The top 20 are returned.", ["resource/blog.md"],
                 title="Candidate depth")
    assert "a merge of two pages" in str(uncertain(Decided(depth, "REFINE", NODE,
                                                           made_from_page, after)))
    assert uncertain(Decided(depth, "REFINE", NODE, NODE_TEXT, after)) is None
    assert ReviewMode("off") is ReviewMode.OFF and UnitStatus.HELD == "held"


# -- through a running daemon -----------------------------------------------------------


@pytest.fixture()
def daemon(root: Path) -> Iterator[Daemon]:
    settings = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "offline", "api.port": 0, "watch.quiet_seconds": 0.2})
    d = Daemon(root, settings.daemon())
    d.start()
    try:
        wait_for(lambda: d.state.proposal_count() == 1 and d.status()["state"] == "idle",
                 timeout=120, what="the correction to be held")
        yield d
    finally:
        d.stop()


def test_review_through_a_running_daemon(daemon: Daemon) -> None:
    root = daemon.vault.root
    status, body = call(daemon, "GET", "/status")
    assert status == 200 and body["proposals"] == 1
    status, body = call(daemon, "GET", "/proposals")
    assert status == 200 and body["open"] == 1
    (p,) = body["proposals"]
    assert p["action"] == "CORRECT" and p["target"] == NODE and not p["stale"]
    assert p["diff"].startswith(f"--- a/{NODE}") and p["unit"]["paths"] == [FIX]
    assert call(daemon, "GET", "/proposals", token=None)[0] == 401
    assert call(daemon, "POST", "/proposals/1/approve", body={},
                headers={"Origin": "https://evil.example"})[0] == 403
    assert call(daemon, "GET", "/proposals/1/approve")[0] == 405
    assert call(daemon, "POST", "/proposals/99/approve", body={})[0] == 404
    listed = run("review", "list", "--vault", str(root))
    assert "#1 OPEN CORRECT" in listed.output
    approved = run("review", "approve", "1", "--vault", str(root))  # through the API
    assert approved.exit_code == 0, approved.output
    assert "the top 200 from BM25" in node(root)
    assert call(daemon, "POST", "/proposals/1/reject", body={})[0] == 409
    hits = [h.path for h in daemon.parts.index.node_search("candidate depth 200")]
    assert NODE in hits
    assert call(daemon, "GET", "/status")[1]["proposals"] == 0


def test_reject_through_a_running_daemon(daemon: Daemon) -> None:
    root = daemon.vault.root
    rejected = run("review", "reject", "1", "--vault", str(root))
    assert rejected.exit_code == 0, rejected.output
    assert node(root) == NODE_TEXT
    status, body = call(daemon, "GET", "/proposals?state=rejected")
    assert status == 200 and [p["id"] for p in body["proposals"]] == [1]
    assert call(daemon, "GET", "/proposals?state=maybe")[0] == 400
