"""The model path as a small local model walks it: no single answer stops a run, no unit
is lost, a retry is never the identical request, a failure is parked after
``auto_dream.park_after`` runs, and the one-shot mode integrates through the guard.

Real ``ollama.Client`` against the fake server, real guard, Chroma and SQLite. The
scripted answers are the ones real Qwen2.5-Coder 0.5B/1.5B gave (bench/realmodel).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fakes.dream_runs import creator, dream, units_for, with_extract
from tests.fakes.ollama_server import FakeOllama, reply
from tests.fakes.sample_vault_model import (
    extract_request,
    is_decision_request,
    is_topics_request,
    topics_by_bucket,
)
from tests.vaults import snapshot, write_notes
from vaultlink.cli import app
from vaultlink.pipeline.extract.answer import summary_text, with_code_restored, without_echoes
from vaultlink.pipeline.extract.prompt import example_of
from vaultlink.pipeline.extract.unit_names import subject_name
from vaultlink.prose.node_text import lead_sentence
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import Checkpoint, State

A, B = "daily/2026-07-01.md", "daily/2026-07-02.md"
UNIT_A = {"name": "online-rebuild", "bucket": "procedure", "paths": [A],
          "summary": "The index rebuild runs online since v2.3; the service stays up."}
UNIT_B = {"name": "vacuum-window", "bucket": "wiki", "paths": [B],
          "summary": "The nightly vacuum now runs at 02:00 because backups end at 01:30."}
ONESHOT = {"llm.integrate_mode": "oneshot"}
NODE = "digest/procedure/rebuild-index.md"  # close to UNIT_A: one-shot asks the model
NODE_TEXT = """---
name: Rebuild the search index
description: Full rebuild of the search index; use when the index is stale.
---
Stop the service, run the index rebuild, start the service again.

## Sources

- The rebuild steps were written down in [[daily/2026-06-01.md]].
"""


def vault(tmp_path: Path, node: bool = False) -> Path:
    """Notes A and B; with ``node``, a digest node on A's subject (and its source)."""
    root = tmp_path / "v"
    # Units must be grounded in their note (the extractor drops what a note does not
    # say), so the notes say what the tests' units summarise.
    notes = {A: "## Decisions\n\nSince v2.3 the index rebuild runs online; the service "
                "stays up. The online rebuild of the search index now waits for the Postgres "
                "vacuum to finish, since a bloated table made it crawl. With the service "
                "stopped the rebuild takes 25 minutes on staging; announce it in #sift-ops "
                "first.\n",
             B: "## Ops\n\nThe nightly vacuum now runs at 02:00 because backups end at "
                "01:30. The online index rebuild since v2.3 keeps the service up; stopping "
                "the service for it, the search index rebuild takes 25 minutes on staging.\n"}
    if node:
        notes |= {NODE: NODE_TEXT, "daily/2026-06-01.md": "## Rebuild\n\nStopped, rebuilt.\n"}
    write_notes(root, notes)
    (root / "digest/wiki").mkdir(parents=True, exist_ok=True)
    if node:  # its note was integrated long ago
        state = State(root / ".vaultlink/state.sqlite")
        try:
            state.set_checkpoints([Checkpoint("daily/2026-06-01.md", sha(root), ())])
        finally:
            state.close()
    return root


def sha(root: Path) -> str:
    return Vault(root).read_note("daily/2026-06-01.md").hash


def copy_of_the_unit(request: dict[str, Any]) -> Any:
    """What the real 1.5B answered to every integrate turn: the unit, fenced, no call."""
    return reply("```json\n" + json.dumps(UNIT_A) + "\n```")


def decision(**fields: Any) -> dict[str, Any]:
    """A one-shot answer: the schema's fields (a model may add title, body, sources)."""
    base = {"target": "", "action": "CREATE", "old": "", "links": []}
    return reply(json.dumps({**base, **fields}))


def extract_requests(server: FakeOllama) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests() if r.get("format")
            and not is_topics_request(r) and not is_decision_request(r)]


def failures(root: Path) -> list[dict[str, Any]]:
    state = State(root / ".vaultlink/state.sqlite")
    try:
        return state.failures()
    finally:
        state.close()


def test_a_unit_whose_session_wrote_nothing_is_kept_retried_differently_and_parked(
        tmp_path: Path) -> None:
    """The real models' answer (a copy of the unit) fails the unit: kept in
    failed_units, its note not checkpointed, retried next run with another request,
    parked after park_after runs, and taken up again on request. Never lost."""
    root = vault(tmp_path, node=True)
    with FakeOllama(model=with_extract(copy_of_the_unit, UNIT_A)) as server:
        first = dream(root, server.url, **{"auto_dream.park_after": 2})
        assert [r.status for r in first.report.results] == ["failed"]
        assert A not in first.report.checkpointed and A in first.report.failed_paths
        [kept] = failures(root)
        assert kept["unit"] == "online-rebuild" and not kept["parked"]
        assert "nothing was written" in kept["error"]
        first_prompts = [r["messages"][1]["content"] for r in server.chat_requests()
                         if r.get("tools")]
        extracts, seen = len(extract_requests(server)), len(server.chat_requests())
        second = dream(root, server.url, **{"auto_dream.park_after": 2})
        assert [u.name for u in second.extraction.units] == ["online-rebuild"]  # the same unit
        assert len(extract_requests(server)) == extracts  # its note is not extracted again
        later = [r for r in server.chat_requests()[seen:] if not is_topics_request(r)]
        # the retry starts in the other mode, and no request repeats one that failed
        assert is_decision_request(later[0])
        assert not {r["messages"][1]["content"] for r in later if r.get("tools")} \
            & set(first_prompts)
        assert second.report.results[0].parked and A not in second.report.checkpointed
        [parked] = failures(root)
        assert parked["parked"] and parked["attempts"] == 2
        third = dream(root, server.url, **{"auto_dream.park_after": 2})
        # parked: waits, held
        assert third.extraction.units == [] and A not in third.report.checkpointed
    status = CliRunner().invoke(app, ["status", "--vault", str(root)])
    assert "PARKED" in status.output and "online-rebuild" in status.output
    with FakeOllama(model=with_extract(lambda r: decision(), UNIT_A)) as server:
        result = CliRunner().invoke(app, ["dream", "--vault", str(root), "--llm", "ollama",
                                          "--ollama-host", server.url, "--retry-parked"])
    assert result.exit_code == 0, result.output
    assert failures(root) == [] and (root / "digest/procedure/online-rebuild.md").exists()


def prose_for_a(request: dict[str, Any]) -> Any:
    """A model that answers note A's extract call with prose, even after the repair
    turn, and extracts UNIT_B from note B; it creates what it integrates."""
    if is_topics_request(request):
        return topics_by_bucket(request)
    if not request.get("format"):
        return creator(request)
    if extract_request(request)[0] == A:
        return reply("Here are the units: online rebuild, and more.")
    return units_for(request, [UNIT_B])


def test_one_bad_extract_answer_fails_that_note_and_the_run_goes_on(tmp_path: Path) -> None:
    root = vault(tmp_path)

    with FakeOllama(model=prose_for_a) as server:
        result = CliRunner().invoke(app, ["dream", "--vault", str(root), "--llm", "ollama",
                                          "--ollama-host", server.url, "--json"],
                                    env={"VAULTLINK_LLM__INTEGRATE_MODE": "tools"})
        repair = [r for r in server.chat_requests() if r.get("format")
                  and extract_request(r)[0] == A]
    assert result.exit_code == 4, result.output  # finished; some failed, retried later
    data = json.loads(result.output)
    assert data["counts"]["integrated"] == 1 and data["counts"]["failed"] == 1
    assert [f["path"] for f in data["failed_notes"]] == [A]
    assert data["extract"][B]["units"] == 1
    assert len(repair) == 2 and "not the JSON" in repair[1]["messages"][-1]["content"]
    [kept] = failures(root)
    assert kept["kind"] == "note" and kept["paths"] == [A]
    state = State(root / ".vaultlink/state.sqlite")
    try:
        assert set(state.checkpoints()) == {B}
    finally:
        state.close()


def test_a_note_the_model_never_answers_for_is_read_by_the_rules_not_parked(
        tmp_path: Path) -> None:
    """bramses' Readwise.md (export templates in code blocks) got no JSON from the 0.5B
    after a repair turn, run after run, and was parked: its words reached no node. On
    the run that would park it, the offline rules read it; the run says so."""
    root = vault(tmp_path)

    with FakeOllama(model=prose_for_a) as server:
        first = dream(root, server.url, **{"auto_dream.park_after": 2})
        assert first.extraction.failed_notes.keys() == {A}
        second = dream(root, server.url, **{"auto_dream.park_after": 2})
    assert not second.extraction.failed_notes and not second.report.parked_paths
    assert {p for u in second.extraction.units for p in u.paths} == {A}
    assert any("online" in u.summary for u in second.extraction.units)
    # the rules name a day's section after its day; a node is never named by a date
    assert not any(u.name[:1].isdigit() for u in second.extraction.units)
    assert any(w.startswith(f"{A}: read by the offline rules") and "in 2 runs" in w
               for w in second.report.warnings)
    assert failures(root) == []
    state = State(root / ".vaultlink/state.sqlite")
    try:
        assert set(state.checkpoints()) == {A, B}
    finally:
        state.close()


def test_a_cut_answer_is_asked_again_smaller_not_resent(tmp_path: Path) -> None:
    root = vault(tmp_path)
    (root / A).write_text("## One\n\nSince v2.3 the rebuild runs online.\n\n## Two\n\n"
                          "The vacuum moved to 02:00.\n")
    (root / B).unlink()
    cut = {**reply('{"units": [{"name": "x", "summary": "a b c d e f g h'),
           "done_reason": "length"}

    def model(request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            return topics_by_bucket(request)
        if not request.get("format"):
            return creator(request)
        text = request["messages"][-1]["content"]
        if "## One" in text and "## Two" in text:
            return cut
        if "## One" in text:
            return reply(json.dumps({"units": [{**UNIT_A, "paths": ["## One"]}]}))
        return reply(json.dumps({"units": [{**UNIT_A, "name": "vacuum-window", "summary":
                                            "The vacuum moved to 02:00 for the backups."}]}))

    with FakeOllama(model=model) as server:
        run = dream(root, server.url)
        sent = [r["messages"][-1]["content"] for r in server.chat_requests()
                if r.get("format") and not is_topics_request(r)]
    assert len(sent) == 3 and len(set(sent)) == 3  # whole, then each half: never resent
    assert sorted(u.name for u in run.extraction.units) == ["online-rebuild", "vacuum-window"]
    assert all(u.paths == [A] for u in run.extraction.units)  # the source is the note, not "## One"


def test_a_unit_named_after_a_heading_gets_its_subject(tmp_path: Path) -> None:
    root = vault(tmp_path)
    named = [{**UNIT_A, "name": "decisions"}, {**UNIT_B, "name": "2026-07-02"}]
    with FakeOllama(model=with_extract(creator, *named)) as server:
        run = dream(root, server.url)
    names = [u.name for u in run.extraction.units]
    assert "decisions" not in names and "2026-07-02" not in names
    assert any("rebuild" in n for n in names) and any("vacuum" in n for n in names)


def test_a_vague_name_is_replaced_by_a_phrase_the_summary_says_never_a_word_twice() -> None:
    """The 0.5B named a retro's line after the note's heading; the words picked from the
    summary then gave "design-review-design-review-settled" (the de-linked
    [[.../design-review.md]] is a second copy of two words). In a Chinese summary the
    subject is the phrase it repeats."""
    said = "The design review in design-review settled the fusion question in one hour."
    name = subject_name("design-review", said, {"design-review", "what-went-well"})
    assert name == "design-review-settled-fusion"
    assert subject_name("notes", "The golden query set is a list of 40 queries. The golden "
                        "query set is run every night.", set()) == "golden-query-set"
    assert subject_name("2026-06-17", "搜索索引每周日凌晨重建一次。搜索索引重建需要十分钟。",
                        set()) == "搜索索引"
    assert subject_name("hybrid-search", said, set()) == "hybrid-search"  # a real name stays
    assert subject_name("beschreibung", "Der Suchindex wird jeden Sonntag neu aufgebaut.",
                        set()) != "beschreibung"  # generic in German too


@pytest.mark.parametrize("page, node", [
    ("resource/hatch/how-to-run-python-scripts.md", "digest/wiki/run-python-scripts.md"),
    # the page's file name is its title's slug: only the node's file name differs
    ("resource/hatch/run-python-scripts.md", "digest/wiki/run-python-scripts-2.md"),
])
def test_a_pages_unit_named_by_one_word_of_its_title_is_named_by_the_title(
        tmp_path: Path, page: str, node: str) -> None:
    """The 0.5B named the unit of Hatch's "How to run Python scripts" page "script"; the
    node is named by the page's title, in the page's case, even where the owner's file has
    that name ("(2)" said nothing of it). A day note keeps its name."""
    root = vault(tmp_path)
    (root / page).parent.mkdir(parents=True, exist_ok=True)
    (root / page).write_text("# How to run Python scripts\n\nThe run command executes "
                             "Python scripts with inline metadata in a dedicated "
                             "environment.\n")
    doc = {"name": "script", "bucket": "wiki", "paths": [page],
           "summary": "The run command executes Python scripts with inline metadata in a "
                      "dedicated environment."}
    day = {**UNIT_B, "name": "vacuum"}
    with FakeOllama(model=with_extract(lambda r: decision(action="CREATE"), doc, day)
                    ) as server:
        run = dream(root, server.url, **ONESHOT)
    assert sorted(u.name for u in run.extraction.units) == ["run-python-scripts", "vacuum"]
    assert Vault(root).read_note(node).frontmatter["name"] == "Run Python scripts"
    assert not [p for p in check_vault(Vault(root)) if p.level == "error"]


def test_oneshot_creates_then_refines_through_the_guard(tmp_path: Path) -> None:
    """A unit near no node is created without asking the model (it could only say
    CREATE); a unit close to that node gets the model's decision, here a REFINE."""
    root = vault(tmp_path)
    before = snapshot(root)
    target = "digest/procedure/online-rebuild.md"
    later = {**UNIT_A, "name": "online-rebuild-duration", "paths": [B],
             "summary": "The online index rebuild since v2.3 keeps the service up and takes "
                        "25 minutes on staging."}
    decisions = iter([decision(action="REFINE", target=target, links=["nothing-here"],
                               body="It takes 25 minutes; see [[nothing-here]] and [[search]].")])

    def model(request: dict[str, Any]) -> Any:
        if is_decision_request(request):
            return next(decisions)
        if is_topics_request(request):
            return topics_by_bucket(request)
        return units_for(request, [UNIT_A, later])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
        asked = [r for r in server.chat_requests() if is_decision_request(r)]
    assert [(r.status, r.action) for r in run.report.results] == [("integrated", "CREATE"),
                                                            ("integrated", "REFINE")]
    assert len(asked) == 1 and target in asked[0]["messages"][1]["content"]
    assert [f["properties"]["target"]["enum"] for f in asked[0]["format"]["anyOf"]] == [
        ["", target], ["", target]]
    node = (root / target).read_text()
    assert "[[nothing-here]]" not in node and "nothing-here" in node  # unresolved: plain
    assert f"[[{A}|" in node and f"[[{B}|" in node and "25 minutes" in node
    assert not [p for p in check_vault(Vault(root)) if p.level == "error"]
    new = {k for k in snapshot(root) if k not in before and not k.startswith("digest/topics/")}
    assert new == {target}
    spent, first = run.report.results[1].usage, run.report.results[0].usage
    assert spent is not None and first is not None
    assert spent.prompt_tokens and spent.answer_tokens > 0
    assert first.prompt_tokens == []  # the CREATE asked nothing


def test_oneshot_corrects_a_wrong_target_in_one_turn(tmp_path: Path) -> None:
    root = vault(tmp_path, node=True)
    answers = iter([decision(action="REFINE", target="digest/wiki/made-up.md"), decision()])

    def model(request: dict[str, Any]) -> Any:
        if is_decision_request(request):
            return next(answers)
        if is_topics_request(request):
            return topics_by_bucket(request)
        return units_for(request, [UNIT_A])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
        calls = [r for r in server.chat_requests() if is_decision_request(r)]
    assert [r.status for r in run.report.results] == ["integrated"]
    assert len(calls) == 2
    assert f"Not accepted: the target of REFINE must be one of {NODE}" in calls[1][
        "messages"][-1]["content"]


def test_oneshot_offers_the_node_an_earlier_attempt_wrote_for_the_unit(tmp_path: Path) -> None:
    """A run killed after a unit's node was written and journaled, but before its note was
    checkpointed, integrates the note again. The node at the unit's own path cites the
    note, and CREATE there is refused ("exists already"), so it must be offered as the
    target even when recall does not rank it among the close nodes (in the crash loop,
    dozens of look-alike nodes outranked it): else every one-shot retry of the unit fails
    and its note is never checkpointed. Here its text shares no words with the unit, so
    recall cannot be what offers it."""
    root = vault(tmp_path)
    own = "digest/procedure/online-rebuild.md"
    (root / own).parent.mkdir(parents=True, exist_ok=True)
    (root / own).write_text(
        "---\nname: Zebra feeding\ndescription: When the zoo feeds its zebras.\n---\n"
        f"The zebras eat hay at noon.\n\n## Sources\n\n- Noted down in [[{A}]].\n")
    offered: list[list[str]] = []

    def model(request: dict[str, Any]) -> Any:
        if is_decision_request(request):
            enum = {t for f in request["format"]["anyOf"]
                    for t in f["properties"]["target"]["enum"]}
            offered.append(sorted(enum))
            assert "Zebra feeding. When the zoo feeds its zebras." in request["messages"][1][
                "content"]  # listed with its name and description, for the model to judge
            return decision(action="CORROBORATE", target=own) if own in enum else decision()
        if is_topics_request(request):
            return topics_by_bucket(request)
        return units_for(request, [UNIT_A])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
    assert offered and all(own in targets for targets in offered), offered
    results = run.report.results
    assert [(r.status, r.target) for r in results] == [("integrated", own)], results
    assert A in run.report.checkpointed
    assert sorted(p.name for p in (root / "digest/procedure").glob("*.md")) == [
        "online-rebuild.md"]  # no second node for the unit
    assert not [p for p in check_vault(Vault(root)) if p.level == "error"]


def test_tool_calls_written_as_text_integrate(tmp_path: Path) -> None:
    root = vault(tmp_path)
    target = "digest/procedure/online-rebuild.md"
    body = (f"{UNIT_A['summary']}\n\n## Sources\n\n- The change was recorded in [[{A}]].\n")
    call = {"name": "write", "arguments": json.dumps(
        {"path": target, "name": "Online rebuild", "description": "Rebuild online.",
         "content": body})}
    turns = iter([reply("I will write it now.\n```json\n" + json.dumps(call) + "\n```"),
                  reply(json.dumps({"action": "CREATE", "target_path": target}))])
    with FakeOllama(model=with_extract(lambda r: next(turns), UNIT_A)) as server:
        run = dream(root, server.url)
    assert [r.status for r in run.report.results] == ["integrated"]
    usage = run.report.results[0].usage
    assert usage is not None and usage.calls == {"text": 1}
    state = State(root / ".vaultlink/state.sqlite")
    try:
        entry = state.journal(1)[0]
    finally:
        state.close()
    assert entry.calls == {"text": 1} and entry.integrator == "ollama qwen2.5-coder:1.5b tools"
    assert entry.prompt_tokens > 0 and entry.answer_tokens > 0


def test_an_old_state_database_gets_the_new_columns(tmp_path: Path) -> None:
    db = tmp_path / "state.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE failed_units (id INTEGER PRIMARY KEY, run_id INTEGER, unit TEXT NOT NULL,
            paths TEXT NOT NULL, error TEXT NOT NULL, attempts INTEGER NOT NULL,
            at REAL NOT NULL, resolved INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE journal (id INTEGER PRIMARY KEY, at REAL NOT NULL, run_id INTEGER,
            unit TEXT NOT NULL, queries TEXT NOT NULL DEFAULT '[]',
            candidates TEXT NOT NULL DEFAULT '[]', action TEXT NOT NULL,
            target TEXT NOT NULL DEFAULT '', note TEXT NOT NULL DEFAULT '',
            diff TEXT NOT NULL DEFAULT '', before_text TEXT, after_text TEXT,
            undone_by INTEGER, undo_of INTEGER);
        INSERT INTO failed_units VALUES (1, 1, '{"name": "u", "paths": ["daily/a.md"]}',
            '["daily/a.md"]', 'boom', 2, 0, 0);
        INSERT INTO journal(at, unit, action) VALUES (0, '{"name": "u"}', 'CREATE');
    """)
    con.close()
    state = State(db)
    try:
        [old] = state.open_failures()
        assert (old.kind, old.parked, old.attempts) == ("unit", False, 2)
        assert state.journal(1)[0].integrator == "" and state.journal(1)[0].calls == {}
        assert state.record_failure(2, old.unit, "again", failure_id=old.id, park_after=3)
    finally:
        state.close()


def test_oneshot_tells_a_restatement_from_an_addition_by_the_words_it_adds(
        tmp_path: Path) -> None:
    """Small models answer REFINE for nearly every update: a unit whose words the node
    already holds is corroborated (a source line, no copy), one with new words refined."""
    root = vault(tmp_path, node=True)
    again = {**UNIT_A, "name": "rebuild-restated", "summary":
             "To rebuild the index: stop the service, run the index rebuild, then start the "
             "service again."}
    more = {**UNIT_B, "name": "rebuild-duration", "bucket": "procedure", "summary":
            "Rebuilding the search index means stopping the service for the index rebuild, "
            "which takes 25 minutes on staging."}

    def model(request: dict[str, Any]) -> Any:
        if is_decision_request(request):  # the wrong word both times
            said = "REFINE" if "rebuild-restated" in request["messages"][1]["content"] \
                else "CORROBORATE"
            return decision(action=said, target=NODE)
        if is_topics_request(request):
            return topics_by_bucket(request)
        return units_for(request, [again, more])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
    assert [(r.unit.name, r.action) for r in run.report.results] == [
        ("rebuild-restated", "CORROBORATE"), ("rebuild-duration", "REFINE")]
    text = (root / NODE).read_text()
    assert text.count("run the index rebuild") == 1 and "25 minutes" in text
    assert f"[[{A}|" in text and f"[[{B}|" in text


def test_oneshot_corrects_when_the_unit_says_so_and_strikes_the_old_sentence(
        tmp_path: Path) -> None:
    root = vault(tmp_path, node=True)
    fix = {**UNIT_A, "summary": "The index rebuild no longer needs to stop the service: "
                                "since v2.3 it runs online, so do not stop the service."}

    def model(request: dict[str, Any]) -> Any:
        if is_decision_request(request):
            return decision(action="REFINE", target=NODE)  # small models' usual word
        if is_topics_request(request):
            return topics_by_bucket(request)
        return units_for(request, [fix])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
    assert [(r.status, r.action) for r in run.report.results] == [("integrated", "CORRECT")]
    text = (root / NODE).read_text()
    assert "~~Stop the service, run the index rebuild, start the service again.~~ Corrected:" \
        in text and f"[[{A}|" in text


def test_what_reads_as_a_correction() -> None:
    from vaultlink.prose.node_text import says_correction

    assert says_correction("Focus time is no longer 9:00 to 11:00.")
    assert says_correction("The k = 60 setting is outdated.")
    assert says_correction("Staging has 2.0M documents, not 1.2M as noted before.")
    assert not says_correction("RRF needs ranks, not scores, so nothing is normalised.")
    assert not says_correction("The meeting was declined and moved to the afternoon.")


def test_oneshot_a_correct_with_nothing_to_supersede_is_judged_as_an_update(
        tmp_path: Path) -> None:
    """The 1.5B answered CORRECT for a restatement, its `old` a copy of the unit: no
    sentence of the node is superseded, so it is no correction (here a REFINE)."""
    root = vault(tmp_path, node=True)
    more = {**UNIT_A, "summary": "The index rebuild with the service stopped takes 25 "
                                 "minutes on staging; announce it in #sift-ops first."}

    def model(request: dict[str, Any]) -> Any:
        if is_decision_request(request):
            return decision(action="CORRECT", target=NODE, old=more["summary"])
        if is_topics_request(request):
            return topics_by_bucket(request)
        return units_for(request, [more])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
    assert [(r.status, r.action) for r in run.report.results] == [("integrated", "REFINE")]
    assert "~~" not in (root / NODE).read_text() and "Corrected" not in (root / NODE).read_text()


def test_oneshot_links_only_the_nodes_its_text_mentions_and_cites_what_the_source_backs(
        tmp_path: Path) -> None:
    """The 1.5B listed unrelated nodes as links ("It connects to" a vacuum procedure from
    a note on rank fusion); a link is made only where the text names the node, and the
    Sources line says what the note backs, not a template about the unit's handle."""
    root = vault(tmp_path, node=True)
    others = {"digest/wiki/postgres-vacuum.md": ("Postgres vacuum",
                                                 "Vacuum reclaims dead tuples in Postgres."),
              "digest/personal/focus-time.md": ("Focus time",
                                                "Mornings are kept free of meetings.")}
    for rel, (name, text) in others.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"---\nname: {name}\ndescription: {text}\n---\n{text}\n\n"
                                "## Sources\n\n- Written down in [[daily/2026-06-01.md]].\n")
    unit = {**UNIT_A, "name": "rebuild-after-vacuum",
            "summary": "The online rebuild of the search index now waits for the Postgres "
                       "vacuum to finish, since a bloated table made it crawl."}

    def everything_linked(request: dict[str, Any]) -> Any:
        listed = [line.split(" ", 2)[1] for line in request["messages"][1]["content"]
                  .splitlines() if line.startswith("- digest/")]
        return decision(action="CREATE", links=listed)

    with FakeOllama(model=with_extract(everything_linked, unit)) as server:
        run = dream(root, server.url, **ONESHOT)
    [created] = [r for r in run.report.results if r.action == "CREATE"]
    text = (root / created.target).read_text()
    assert "[[digest/wiki/postgres-vacuum.md|Postgres vacuum]]" in text
    assert "focus-time" not in text and "It connects to" not in text
    assert f"taken from [[{A}|" in text and "is recorded in" not in text
    assert not [p for p in check_vault(Vault(root)) if p.level == "error"]


def test_a_document_is_never_personal_and_a_refine_from_a_cited_note_adds_only_news(
        tmp_path: Path) -> None:
    """What the 1.5B did to the Hatch docs: a page's units filed under ``personal``, and
    a REFINE from the note the node already cites repeating the node's sentence and
    adding a second Sources line for the same note."""
    root = vault(tmp_path, node=True)
    page = "resource/hatch-plugins.md"
    (root / page).parent.mkdir(parents=True, exist_ok=True)
    (root / page).write_text("# Plugins\n\nHatch plugins are installed beside Hatch.\n")
    (root / "daily/2026-06-01.md").write_text("## Rebuild\n\nStopped, rebuilt. It took "
                                              "40 minutes on staging.\n")
    doc = {"name": "hatch-plugins", "bucket": "personal", "paths": [page],
           "summary": "Hatch plugins are installed beside Hatch itself."}
    again = {"name": "rebuild-duration", "bucket": "procedure", "paths": ["daily/2026-06-01.md"],
             "summary": "Stop the service, run the index rebuild, start the service again. "
                        "The rebuild takes 40 minutes on staging."}

    def refine_the_rebuild(request: dict[str, Any]) -> Any:
        if "rebuild-duration" in request["messages"][1]["content"]:
            return decision(action="REFINE", target=NODE)
        return decision(action="CREATE")

    with FakeOllama(model=with_extract(refine_the_rebuild, doc, again)) as server:
        run = dream(root, server.url, **ONESHOT)
    assert {r.action for r in run.report.results} == {"CREATE", "REFINE"}, run.report.results
    [created] = [r.target for r in run.report.results if r.action == "CREATE"]
    assert created.startswith("digest/wiki/hatch-plugins"), created
    assert not (root / "digest/personal").exists()
    text = (root / NODE).read_text()
    assert text.count("Stop the service, run the index rebuild") == 1
    assert "The rebuild takes 40 minutes on staging." in text
    assert text.count("daily/2026-06-01.md") == 1  # one Sources line for the note


def test_a_unit_the_note_does_not_say_is_dropped(tmp_path: Path) -> None:
    """The 0.5B answered six notes of sample_vault with the extract prompt's own example
    ("To rotate the API key: ..."), which then landed in a node on index rebuilds."""
    root = vault(tmp_path)
    copied = {"name": "index-rebuild", "bucket": "procedure", "paths": [A],
              "summary": "To rotate the API key: create the new key, deploy it, wait an "
                         "hour, then revoke the old key."}
    with FakeOllama(model=with_extract(creator, copied, UNIT_B)) as server:
        run = dream(root, server.url)
    assert [u.name for u in run.extraction.units] == ["vacuum-window"]
    assert "rotate" not in "".join(p.read_text() for p in (root / "digest").rglob("*.md"))


@pytest.mark.parametrize(("summary", "kept"), [
    ("To preserve the backup-keep期 for the vault.", False),  # the soak's 0.5B, on Hatch
    ("To document the notes of the vault.", False),
    ("The online rebuild is faster now.", True),  # a short paraphrase keeps its subject
])
def test_a_short_unit_is_kept_only_if_its_note_says_its_words(
        tmp_path: Path, summary: str, kept: bool) -> None:
    root = vault(tmp_path)
    short = {"name": "short", "bucket": "wiki", "paths": [A], "summary": summary}
    with FakeOllama(model=with_extract(creator, short)) as server:
        run = dream(root, server.url)
    assert [u.summary for u in run.extraction.units] == ([summary] if kept else [])


def test_a_sentence_of_the_prompts_example_ending_a_grounded_unit_is_cut(
        tmp_path: Path) -> None:
    """In a week's soak the 0.5B ended a unit of its note with the example's steps ("To
    install the package from a Git repository: create the new repository, deploy it,
    wait an hour, then revoke the old one"): the unit passed as grounded, and a Hatch
    node told readers to revoke something. The note's own sentence stays."""
    root = vault(tmp_path)
    echoing = {**UNIT_B, "summary": UNIT_B["summary"] + " To move the vacuum: create the "
               "new window, deploy it, wait an hour, then revoke the old one."}
    with FakeOllama(model=with_extract(creator, echoing)) as server:
        run = dream(root, server.url)
    assert [u.summary for u in run.extraction.units] == [UNIT_B["summary"]]
    text = "".join(p.read_text() for p in (root / "digest").rglob("*.md"))
    assert "02:00" in text and "revoke" not in text


def test_without_echoes_keeps_the_notes_own_words_and_code() -> None:
    example = example_of("en")
    note = "To rotate the key: generate a new key, roll the clients, revoke the old key."
    assert without_echoes(note, example, note) == note
    block = "Run `deploy; wait an hour; revoke old` as the example says."
    assert without_echoes(block, example, "Run it.") == block  # code is never judged
    assert without_echoes("Create the new key, deploy it, wait an hour, then revoke the "
                          "old one.", example, "Keys are created.") == ""


def test_a_corroboration_from_a_cited_note_says_what_it_confirms(tmp_path: Path) -> None:
    """Three units of one page corroborating one node gave it three identical lines
    "Full index rebuild: confirmed again by [[resource/postgres-vacuum-guide.md]]"."""
    root = vault(tmp_path, node=True)
    (root / "daily/2026-06-01.md").write_text("## Rebuild\n\nStop the service, run the index "
                                              "rebuild, start the service again.\n")
    again = {"name": "rebuild-steps", "bucket": "procedure", "paths": ["daily/2026-06-01.md"],
             "summary": "Stop the service, run the index rebuild, start the service again."}
    with FakeOllama(model=with_extract(lambda r: decision(action="CORROBORATE", target=NODE),
                                       again)) as server:
        run = dream(root, server.url, **ONESHOT)
    assert [(r.status, r.action) for r in run.report.results] == [("integrated", "CORROBORATE")]
    added = (root / NODE).read_text().removeprefix(NODE_TEXT)
    assert added.startswith("- ") and "confirmed again by [[daily/2026-06-01.md|" in added
    assert not added.startswith("- Rebuild the search index:"), added  # not the title again


def test_a_second_corroboration_by_the_same_line_leaves_the_node_as_it_is(
        tmp_path: Path) -> None:
    """The soak's Hatch page confirmed `run-python-scripts.md` twice in one run, and the
    node got the same "confirmed again by" line twice: the second says nothing new."""
    root = vault(tmp_path, node=True)
    (root / "daily/2026-06-01.md").write_text("## Rebuild\n\nStop the service, run the index "
                                              "rebuild, start the service again.\n")
    said = "Stop the service, run the index rebuild, start the service again."
    units = [{"name": name, "bucket": "procedure", "paths": ["daily/2026-06-01.md"],
              "summary": said} for name in ("rebuild-steps", "rebuild-order")]
    with FakeOllama(model=with_extract(lambda r: decision(action="CORROBORATE", target=NODE),
                                       *units)) as server:
        run = dream(root, server.url, **ONESHOT)
    assert [(r.status, r.action) for r in run.report.results] == [
        ("integrated", "CORROBORATE"), ("skipped", "SKIP")]
    added = (root / NODE).read_text().removeprefix(NODE_TEXT)
    assert added.count("confirmed again by") == 1, added


def test_a_unit_decided_before_a_stop_is_not_decided_again(tmp_path: Path) -> None:
    """A run killed after a decision was journaled but before its note was checkpointed
    (the crash loop's mid_checkpoint kill): the next run extracts the same unit again and
    must not write it a second node ("-2", "-3" copies)."""
    root = vault(tmp_path)
    with FakeOllama(model=with_extract(creator, UNIT_A)) as server:
        first = dream(root, server.url)
        state = State(root / ".vaultlink/state.sqlite")
        try:
            state.drop_checkpoints([A])  # the stop came before the checkpoint
        finally:
            state.close()
        seen = len(server.chat_requests())
        second = dream(root, server.url)
        asked = [r for r in server.chat_requests()[seen:] if not r.get("format")]
    [done] = first.report.results
    assert [(r.status, r.action, r.journal_id) for r in second.report.results] == [
        ("integrated", "CREATE", done.journal_id)]
    assert asked == []  # no integrate turn
    assert sorted(p.name for p in (root / "digest").rglob("*.md")
                  if "topics" not in p.parts) == ["online-rebuild.md"]


def test_code_a_summary_copies_from_its_note_stays_a_code_block_in_the_node(
        tmp_path: Path) -> None:
    """A summary that copies a page's commands with their line breaks keeps them; joined
    onto one line they were neither code nor a sentence in the node."""
    root = vault(tmp_path)
    page = "resource/hatch-new.md"
    (root / "resource").mkdir(exist_ok=True)
    (root / page).write_text("# New projects\n\nTo create a project, run:\n\n```bash\n"
                             "hatch new my-app\ncd my-app\n```\n\nThen enter its shell.\n")
    unit = {"name": "hatch-new-project", "bucket": "procedure", "paths": [page],
            "summary": "To create a project, run:\n```bash\nhatch new my-app\n  cd my-app\n"
                       "```\nThen   enter its\nshell."}
    with FakeOllama(model=with_extract(creator, unit)) as server:
        run = dream(root, server.url, **ONESHOT)
    [result] = run.report.results
    text = (root / result.target).read_text()
    assert "run:\n\n```bash\nhatch new my-app\n  cd my-app\n```\n\nThen enter its shell." in text
    assert "description: 'To create a project, run: `hatch new my-app` Then" in text
    assert not [p for p in check_vault(Vault(root)) if p.level == "error"]


def test_a_summary_keeps_only_fenced_code_on_several_lines() -> None:
    assert summary_text("one  two\nthree") == "one two three"
    # cut inside its block: closed, not left open to swallow the node
    assert summary_text("run:\n```\nhatch env create\n") == "run:\n\n```\nhatch env create\n```"
    # triple backticks inside a line are no block
    assert summary_text("Use ```hatch new``` to\nstart.") == "Use ```hatch new``` to start."
    assert lead_sentence("Run:\n```sh\n\nmake\n```\nDone. More.") == "Run: `make` Done."


HOOKS_PAGE = """# About plugins

Each registration hook must be decorated by Hatch's hook marker. For example:

```python tab="hooks.py"
from hatchling.plugin import hookimpl

from .plugin import SpecialEnvironment


@hookimpl
def hatch_register_environment():
    return SpecialEnvironment
```

Every class must define `PLUGIN_NAME`:

```python
...
class SpecialEnvironment(...):
    PLUGIN_NAME = 'special'
    ...
```

Install the plugin, then create the environment:

```console
$ pip install hatch-special
$ hatch env create special
$ hatch env show
$ hatch shell special
```
"""


def test_a_code_block_the_model_ran_onto_one_inline_span_is_put_back() -> None:
    """What the 1.5B wrote of the Hatch plugin page (its own answer, on one line)."""
    said = ("Each registration hook must be decorated, for example: `from hatchling.plugin "
            "import hookimpl from .plugin import SpecialEnvironment @hookimpl def "
            "hatch_register_environment(): return SpecialEnvironment` The class might be: "
            "`class SpecialEnvironment(...): PLUGIN_NAME = 'special' ...` Set `PLUGIN_NAME` "
            "and run `hatch env create special` or `pip install nothing-here now`.")
    text = with_code_restored(said, HOOKS_PAGE)
    assert ("for example:\n\n```python\nfrom hatchling.plugin import hookimpl\n\nfrom "
            ".plugin import SpecialEnvironment\n\n\n@hookimpl\ndef hatch_register_"
            "environment():\n    return SpecialEnvironment\n```\n\nThe class might be:"
            "\n\n```python\n...\nclass SpecialEnvironment(...):\n    PLUGIN_NAME = "
            "'special'\n    ...\n```\n\nSet `PLUGIN_NAME`") in text
    # a name, a command quoted from a longer block, a span in no block: inline as said
    assert text.endswith("Set `PLUGIN_NAME` and run `hatch env create special` or "
                         "`pip install nothing-here now`.")
    assert with_code_restored("Nothing `to do here at all`.", HOOKS_PAGE) == \
        "Nothing `to do here at all`."


def test_a_dreamed_node_shows_the_notes_code_block_not_the_models_one_line(
        tmp_path: Path) -> None:
    root = vault(tmp_path)
    page = "resource/hatch-plugins.md"
    (root / "resource").mkdir(exist_ok=True)
    (root / page).write_text(HOOKS_PAGE)
    unit = {"name": "registration-hooks", "bucket": "wiki", "paths": [page],
            "summary": "Each registration hook must be decorated by Hatch's hook marker, for "
                       "example: `from hatchling.plugin import hookimpl from .plugin import "
                       "SpecialEnvironment @hookimpl def hatch_register_environment(): "
                       "return SpecialEnvironment`"}
    with FakeOllama(model=with_extract(creator, unit)) as server:
        run = dream(root, server.url, **ONESHOT)
    [result] = run.report.results
    assert result.status == "integrated", (run.report.results, run.extraction.units)
    text = (root / result.target).read_text()
    assert "for example:\n\n```python\nfrom hatchling.plugin import hookimpl\n" in text
    assert "    return SpecialEnvironment\n```\n" in text
