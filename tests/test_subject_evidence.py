"""An update needs evidence of a shared subject, checked by vaultlink (issue 40, item 1).

The model's word and nearness are no evidence: a one-shot REFINE / CORROBORATE / CORRECT
whose unit neither names the node's subject (its name, an alias, the subject phrase its
description opens with) nor states the node's facts (the same sentence with a new value,
the same steps) becomes a CREATE, journaled with why. ``names_subject`` is the offline
integrator's rule, shared from ``vaultlink/prose/shared_subject.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.dream_runs import dream, units_for
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.sample_vault_model import is_decision_request, is_topics_request, topics_by_bucket
from tests.test_guard_tools import NoRecall
from tests.test_model_path import NODE, NODE_TEXT, ONESHOT, decision, vault
from tests.vaults import write_notes
from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.integrate.decision import Decision
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.holds import unshared
from vaultlink.pipeline.integrate.oneshot import _judged
from vaultlink.pipeline.integrate.session import Ending, SessionOutcome
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.pipeline.offline import growth
from vaultlink.prose.shared_subject import names_subject, same_facts, shared_subject, subject_names
from vaultlink.prose.units import Unit
from vaultlink.vault.actions import Action
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

NOTE = "daily/2026-07-03.md"


def _run(tmp_path: Path, note: str, unit: dict[str, Any],
         said: str) -> tuple[RunState, Path, int]:
    """One unit from ``note`` meeting NODE; the model answers ``said`` NODE."""
    root = vault(tmp_path, node=True)
    (root / NOTE).write_text(note)
    asked = []

    def model(request: dict[str, Any]) -> Any:
        if is_decision_request(request):
            asked.append(request)
            return decision(action=said, target=NODE)
        if is_topics_request(request):
            return topics_by_bucket(request)
        return units_for(request, [{**unit, "paths": [NOTE]}])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
    return run, root, len(asked)


def test_an_update_whose_unit_does_not_name_the_nodes_subject_is_created_and_says_why(
        tmp_path: Path) -> None:
    """Restarting the search service shares words with "Rebuild the search index" (search,
    service, stop, start again; similarity 0.74) and the model REFINEs it there: it gets
    its own node, the rebuild node is left as it was, and the journal says why."""
    unit = {"name": "search-service-restart", "bucket": "procedure", "summary":
            "Restart the search service: stop it, wait for connections to drain, then start "
            "it again."}
    note = ("## Ops\n\nRestart the search service: stop it, wait for connections to drain, "
            "then start it again.\n")
    run, root, asked = _run(tmp_path, note, unit, "REFINE")
    assert asked == 1  # close enough that the model was asked
    [result] = [r for r in run.report.results if r.unit.name == "search-service-restart"]
    assert (result.status, result.action) == ("integrated", "CREATE")
    assert result.target != NODE and (root / NODE).read_text() == NODE_TEXT
    assert not [p for p in check_vault(Vault(root)) if p.level == "error"]
    state = State(root / ".vaultlink/state.sqlite")
    try:
        entry = next(e for e in state.journal(10) if e.target == result.target)
    finally:
        state.close()
    assert "neither names its subject" in entry.note and NODE in entry.note


def test_an_update_that_names_the_subject_or_restates_the_steps_stands(tmp_path: Path) -> None:
    """The same model answer with a unit that says "search index rebuild" stays a REFINE."""
    unit = {"name": "rebuild-announce", "bucket": "procedure", "summary":
            "To rebuild the search index, stop the service, run the index rebuild and start "
            "the service again; the rebuild takes 25 minutes on staging."}
    note = ("## Ops\n\nTo rebuild the search index, stop the service, run the index rebuild "
            "and start the service again; the rebuild takes 25 minutes on staging.\n")
    run, root, asked = _run(tmp_path, note, unit, "REFINE")
    [result] = [r for r in run.report.results if r.unit.name == "rebuild-announce"]
    assert asked == 1 and (result.action, result.target) == ("REFINE", NODE)
    assert "25 minutes" in (root / NODE).read_text()


def test_a_nodes_subject_is_its_name_an_alias_or_its_descriptions_opening_phrase() -> None:
    meta = {"name": "ARM Pointer Authentication", "aliases": ["PAC"], "description":
            "Hybrid search in Sift: BM25 and vectors fused with RRF."}
    assert subject_names(meta) == ["ARM Pointer Authentication", "PAC", "Hybrid search in Sift"]
    assert shared_subject("PAC can be brute forced.", meta, "", "")  # the alias
    assert shared_subject("Sift's hybrid search fuses the top 200.", meta, "", "")
    assert not shared_subject("ARM's Memory Protection Unit sets permissions.", meta, "", "")
    # a time in a description is not where its subject phrase ends
    assert subject_names({"description": "Mara keeps 9:00–11:00 free, with Slack closed."}) == [
        "Mara keeps 9:00–11:00 free"]


def test_a_unit_states_a_nodes_facts_by_a_new_value_or_the_same_steps() -> None:
    body = ("Fusion takes the top 100 results of each retriever. Stop the service. Run the "
            "index rebuild. Start the service again.")
    assert "new value" in same_facts("We now fuse the top 200 results of each retriever.", body)
    assert same_facts("Stop the service first. Then run the index rebuild.", body)
    assert not same_facts("The service pages on-call when stopped for five minutes.", body)


def test_both_integrators_use_one_rule_of_names_in_any_script() -> None:
    assert growth.names_subject is names_subject
    assert names_subject("Deploy to staging", "we deploy it to staging on Fridays")
    assert not names_subject("Deploy to staging", "the production deploy rules")
    assert names_subject("Redis 哨兵机制", "Redis 哨兵机制的基本流程：监控、选主、通知")


def test_a_possessive_name_is_named_by_its_owner() -> None:
    """LoCoMo's nodes "Melanie's pottery", "Caroline's adoption plans": a unit that says
    "Melanie ... pottery" names that subject ("melanie's" is not a word of its own)."""
    from vaultlink.prose.shared_subject import names_subject
    assert names_subject("Melanie's pottery", "Melanie took her kids to a pottery workshop")
    assert names_subject("Caroline’s adoption plans", "Caroline plans the adoption next year")
    assert not names_subject("Melanie's pottery", "Caroline went to a support group")


TALK_NODE = "digest/wiki/let-s-keep-going.md"
TALK = ("Gina: Thanks, Jon! Appreciate your support!\n\nJon: Let's keep going and chase our "
        "dreams!\n\nGina: Yeah! Let's keep going after our goals.\n\nJon: We got this!")


def _talk_box(tmp_path: Path, unit: Unit) -> Toolbox:
    vault = Vault(write_notes(tmp_path, {
        "daily/2023-01-29.md": TALK + "\n", "daily/2023-05-27.md": unit.summary + "\n",
        TALK_NODE: f"---\nname: Let's keep going\ndescription: 'Gina: Thanks, Jon!'\n---\n"
                   f"{TALK}\n\n## Sources\n\n- Let's keep going: taken from "
                   "[[daily/2023-01-29.md|the note of 2023-01-29]].\n"}))
    existed = frozenset(vault.iter_files(["digest"]))
    return Toolbox(vault, NoRecall(), Guard(unit, existed, vault.iter_files))


@pytest.mark.parametrize("name, source, stands", [
    ("business-plan", "daily/2023-05-27.md", False),  # another session, another subject
    ("let-s-keep-going", "daily/2023-05-27.md", True),  # its name names the node
    ("business-plan", "daily/2023-01-29.md", True),  # the node's own session
])
def test_a_conversations_unit_grows_another_sessions_node_only_by_its_name(
        tmp_path: Path, name: str, source: str, stands: bool) -> None:
    """The 0.5B REFINEd the events of 15 LoCoMo sessions (a business plan, social media,
    networking) into a node "Let's keep going": talk says "keep going" everywhere, so the
    turns' words are no evidence; only the unit's name, or the node holding its turns."""
    summary = ("Jon: I'm wrapping up the business plan and looking for investors. Let's "
               "keep going!\n\nGina: Investors will love it.\n\nJon: Thanks, Gina!\n\n"
               "Gina: Keep going, Jon!")
    unit = Unit(name, "wiki", summary, [source])
    box = _talk_box(tmp_path, unit)
    refine = Decision(Action.REFINE, TALK_NODE, "", "", "", "", [], "")
    why = unshared(box, unit, refine, TALK_NODE)
    assert (why == "") is stands, why
    if not stands:
        assert "another conversation's node" in why and "CREATE" in why


def test_a_conversations_turn_that_tells_of_a_change_is_no_correction(tmp_path: Path) -> None:
    """"I used to be shy" in a turn tells of its speaker, not that the node is wrong: the
    0.5B's REFINE of a LoCoMo event became a CORRECT by that cue alone."""
    summary = ("Jon: I used to be shy, but dancing changed me.\n\nGina: That's amazing!\n\n"
               "Jon: Let's keep going with the studio.\n\nGina: Keep going, Jon!")
    unit = Unit("let-s-keep-going", "wiki", summary, ["daily/2023-05-27.md"])
    box = _talk_box(tmp_path, unit)
    refine = Decision(Action.REFINE, TALK_NODE, "", "", "", "", [], "")
    judged = _judged(box, unit, refine, TALK_NODE, SessionOutcome(Ending.ERROR))
    assert judged.action == Action.REFINE
    prose = Unit("studio", "wiki", "The studio used to be on Main Street.", ["daily/2023-05-27.md"])
    assert _judged(_talk_box(tmp_path / "b", prose), prose, refine, TALK_NODE,
                   SessionOutcome(Ending.ERROR)).action == Action.CORRECT
