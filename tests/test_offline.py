"""The offline integrator policy in real sessions, and the whole offline dream.

Real files in tmp_path, a real NodeIndex with the bundled MiniLM embedder and a real
Chroma PersistentClient; the policy runs through the real agent loop, toolbox and
guard, with the shipped thresholds. The extractor is tested in test_offline_extract.py,
the pure writing rules in test_offline_writing.py.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.dream_runs import offline_dream
from tests.vaults import SAMPLE_VAULT, copy_sample_vault, snapshot
from vaultlink.cli.settings import DEFAULTS
from vaultlink.errors import VaultlinkError
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.nodes import NodeIndex
from vaultlink.llm.chat import ChatReply, ToolCall
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.names import is_copy
from vaultlink.markdown.sections import sources_links
from vaultlink.markdown.text import LIST_MARK
from vaultlink.pipeline.context import RunState, SourceNote
from vaultlink.pipeline.extract.step import source_note
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.session import SessionOutcome, run_session
from vaultlink.pipeline.integrate.step import system_prompt, user_prompt
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.pipeline.offline import OfflineExtractor, OfflinePolicy
from vaultlink.prose.node_names import Holder, holder_of, node_names, without_page_digests
from vaultlink.prose.sentences import Turn, delink, summary_lines
from vaultlink.prose.subject_names import same_name
from vaultlink.prose.units import Unit, slugify
from vaultlink.vault.graph import build_graph, check_vault
from vaultlink.vault.notes import Vault

SAME = float(DEFAULTS["integrate"]["same_threshold"])
RELATED = float(DEFAULTS["integrate"]["related_threshold"])


def flat(text: str) -> str:
    """Text as summaries are compared with it: list markers off, whitespace collapsed."""
    return " ".join(" ".join(LIST_MARK.sub("", line) for line in text.split("\n")).split())


def only_section(path: str, heading: str) -> SourceNote:
    """A sample note with only the section under ``heading`` marked new."""
    note = Vault(SAMPLE_VAULT).read_note(path)
    src = source_note(note, frozenset())[0]
    sections = [(c, t, c.rsplit(" > ", 1)[-1] == heading) for c, t, _ in src.sections]
    assert any(new for _, _, new in sections), heading
    return SourceNote(src.path, src.title, sections, src.text)


def extract_one(path: str, heading: str) -> Unit:
    units = OfflineExtractor().extract([only_section(path, heading)])
    assert len(units) == 1, units
    return units[0]


# -- the policy in a real session ---------------------------------------------------


@dataclass
class World:
    vault: Vault
    index: NodeIndex

    def node(self, rel: str) -> str:
        return (self.vault.root / rel).read_text()


@pytest.fixture
def world(sample_vault: Path, minilm: MiniLMEmbedder) -> Iterator[World]:
    vault = Vault(sample_vault)
    state = vault.state_dir
    state.mkdir()
    index = NodeIndex(vault, state / "state.sqlite", None, minilm)
    index.sync()
    yield World(vault, index)
    index.close()


class Recording:
    """The policy, keeping the conversation so tests can look at every tool answer."""

    def __init__(self, policy: OfflinePolicy) -> None:
        self.policy = policy
        self.messages: list[dict[str, Any]] = []

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             schema: dict[str, Any] | None = None) -> ChatReply:
        self.messages = messages
        return self.policy.chat(messages, tools, schema)

    def tool_answers(self) -> list[dict[str, Any]]:
        return [json.loads(m["content"]) for m in self.messages if m["role"] == "tool"]

    def errors(self) -> list[str]:
        return [str(a["error"]) for a in self.tool_answers() if "error" in a]


def integrate(world: World, unit: Unit) -> tuple[SessionOutcome, Toolbox, Recording]:
    """One session of the offline policy, as dream_integrate_step runs it."""
    vault = world.vault
    existed = frozenset(p for p in vault.iter_files([vault.digest]) if p.endswith(".md"))
    box = Toolbox(vault, world.index, Guard(unit, existed, vault.iter_files))
    model = Recording(OfflinePolicy(same_threshold=SAME, related_threshold=RELATED))
    try:
        outcome = run_session(model, box, system_prompt(unit.bucket), user_prompt(unit), 12)
    except VaultlinkError as exc:  # as integrate_unit records it
        outcome = SessionOutcome("error", error=str(exc))
    if outcome.status == "done" and outcome.receipt is not None:
        world.index.upsert([outcome.receipt.target_path])
    return outcome, box, model


def digest_errors(vault: Vault) -> list[str]:
    return [str(p) for p in check_vault(vault) if p.level == "error"]


def test_create_writes_a_sourced_linked_node_in_the_units_bucket(world: World) -> None:
    unit = extract_one("daily/2026-06-18/standup.md", "Pairing")
    outcome, box, model = integrate(world, unit)
    assert outcome.status == "done" and model.errors() == []
    assert outcome.receipt is not None and outcome.receipt.action == "CREATE"
    target = outcome.receipt.target_path
    assert re.fullmatch(r"digest/personal/[a-z0-9-]+\.md", target)
    assert box.before[target] is None
    text = world.node(target)
    _, body, _ = split_frontmatter(text)
    assert [s.target for s in sources_links(body)] == ["daily/2026-06-18/standup.md"]
    related = {w.target for w in find_wikilinks(body) if w.target.startswith("digest/")}
    assert related, "a pairing preference sits next to the sample's personal nodes"
    assert all((world.vault.root / p).is_file() for p in related)
    for line in summary_lines(unit.summary):
        assert flat(line) in flat(delink(body))  # each line as written, links aside
    assert set(outcome.receipt.classification.values()) <= {"related", "unrelated"}
    assert digest_errors(world.vault) == []


def test_the_same_point_again_is_corroborated_with_one_source_sentence(world: World) -> None:
    node = "digest/personal/code-review-preferences.md"
    before = world.node(node)
    unit = Unit("code-review-preferences", "personal",
                "Mara prefers small pull requests, under about 400 changed lines, and asks "
                "for a split above that.\nShe always asks for a test that fails without the "
                "change.", ["daily/2026-06-18/standup.md"])
    outcome, _, model = integrate(world, unit)
    assert outcome.status == "done" and model.errors() == []
    assert outcome.receipt is not None
    assert (outcome.receipt.action, outcome.receipt.target_path) == ("CORROBORATE", node)
    assert outcome.receipt.classification[node] == "same_abstraction"
    after = world.node(node)
    added = [ln for ln in after.splitlines() if ln not in before.splitlines()]
    assert added == ["- Code review preferences: confirmed again by "
                     "[[daily/2026-06-18/standup.md|the 2026-06-18 standup]]."]
    assert any(t.name == "read" for t in _turns(model))  # read before editing
    assert digest_errors(world.vault) == []


def test_new_steps_refine_the_node_before_its_sources(world: World) -> None:
    node = "digest/procedure/postgres-vacuum.md"
    before = world.node(node)
    unit = extract_one("daily/2026-06-17/retro.md", "Changes to the vacuum procedure")
    outcome, _, model = integrate(world, unit)
    assert outcome.status == "done" and model.errors() == []
    assert outcome.receipt is not None
    assert (outcome.receipt.action, outcome.receipt.target_path) == ("REFINE", node)
    after = world.node(node)
    assert after.startswith(before.split("## Sources")[0].rstrip())  # additive: nothing moved
    _, body, _ = split_frontmatter(after)
    main, sources = body.split("## Sources")
    assert "pg_terminate_backend" in main and "pg_replication_slots" in main
    assert "[[daily/2026-06-17/retro.md|" in main  # the new steps say where they come from
    assert "[[daily/2026-06-17/retro.md|" in sources
    assert "Added from" not in after and "Further steps" not in after
    old_links = {w.edge for w in find_wikilinks(before)}
    assert old_links <= {w.edge for w in find_wikilinks(after)}
    assert digest_errors(world.vault) == []


def test_a_node_with_broken_yaml_is_recalled_and_reported_not_duplicated(
        world: World) -> None:
    """A digest node whose frontmatter the user broke stays in recall (by its body), so a
    unit on its subject fails with the fix to make, instead of creating a second node."""
    node = "digest/wiki/hybrid-search.md"
    path = world.vault.root / node
    lines = path.read_text().split("\n")
    path.write_text("\n".join([lines[0], "name: [broken", *lines[2:]]))
    world.index.sync()
    assert node in [h.path for h in world.index.node_search("reciprocal rank fusion BM25")]
    before = sorted(world.vault.iter_files([world.vault.digest]))
    outcome, _, _ = integrate(world, extract_one("daily/2026-06-10/design-review.md",
                                                 "Open questions"))
    assert outcome.status == "error" and f"{node}: its YAML frontmatter does not parse" \
        in outcome.error
    assert sorted(world.vault.iter_files([world.vault.digest])) == before


def test_a_replay_writes_nothing(world: World) -> None:
    unit = extract_one("daily/2026-06-17/retro.md", "Changes to the vacuum procedure")
    first, _, _ = integrate(world, unit)
    assert first.status == "done"
    files = {p: world.node(p) for p in world.vault.iter_files(["digest"])}
    again, box, model = integrate(world, unit)
    assert again.status == "unchanged", again.error
    assert again.receipt is not None and again.receipt.action == "CORROBORATE"
    assert box.before == {} and model.errors() == []
    assert {p: world.node(p) for p in world.vault.iter_files(["digest"])} == files


def test_a_changed_value_is_corrected_with_the_old_one_kept_once(world: World) -> None:
    """The sample's 20 June note raises the candidate depth from 100 to 200: the hybrid
    search node now says 200, keeps 100 in one "Earlier" sentence, and the guard takes it
    as a CORRECT (the old claim visible, marked, with the correcting source)."""
    node = "digest/wiki/hybrid-search.md"
    unit = extract_one("daily/2026-06-20.md", "Decisions")
    outcome, _, model = integrate(world, unit)
    assert outcome.status == "done" and model.errors() == []
    assert outcome.receipt is not None
    assert (outcome.receipt.action, outcome.receipt.target_path) == ("CORRECT", node)
    text = world.node(node)
    depth = next(ln for ln in text.splitlines() if ln.startswith("- Candidate depth"))
    assert depth.startswith("- Candidate depth: the top 200 from BM25 and the top 200 ")
    assert text.count("Earlier:") == 1 and "Earlier: Candidate depth: the top 100" in depth
    assert "the note still says" not in text.lower()  # a remark on the digest is no fact
    again, _, _ = integrate(world, unit)
    assert again.status == "unchanged" and world.node(node) == text
    assert digest_errors(world.vault) == []


def test_a_taken_slug_gets_another_one(world: World) -> None:
    unit = Unit("focus-time", "personal", "I always water the basil before nine, never at "
                "noon.\nThe pot goes on the east window sill in summer.",
                ["daily/2026-06-21.md"])
    outcome, _, model = integrate(world, unit)
    assert outcome.status == "done" and model.errors() == []
    assert outcome.receipt is not None
    # a unit on another subject than the node of its name gets a name qualified by what
    # it says (issue 37), not a bare number
    target = outcome.receipt.target_path
    assert target.startswith("digest/personal/focus-time-") and target[-4] != "2", target
    assert "Focus time (" in world.node(target)
    assert "Mara protects" in world.node("digest/personal/focus-time.md")


def test_a_page_digested_under_its_own_title_keeps_the_name_in_another_file(
        world: World) -> None:
    """57 of 65 numbered names on eight public vaults were a page's own node: "Binary Heap
    (2)" beside the owner's binary-heap.md. Only the file name must differ (the owner's
    [[binary-heap]] keeps its note); a name a node has is still numbered."""
    (world.vault.root / "resource/binary-heap.md").write_text(
        "A binary heap keeps the smallest key at its root.\n")
    unit = Unit("binary-heap", "wiki", "A binary heap keeps the smallest key at its root.",
                ["resource/binary-heap.md"], title="Binary Heap")
    outcome, _, model = integrate(world, unit)
    assert outcome.status == "done" and model.errors() == []
    assert outcome.receipt is not None
    assert outcome.receipt.target_path == "digest/wiki/binary-heap-2.md"
    assert world.node("digest/wiki/binary-heap-2.md").startswith("---\nname: Binary Heap\n")
    assert digest_errors(world.vault) == []
    assert node_names(unit)[1] == ("Binary Heap (2)", "binary-heap-2")
    assert node_names(unit, holder=Holder.SOURCE)[1:3] == [
        ("Binary Heap", "binary-heap-2"), ("Binary Heap", "binary-heap-3")]
    assert holder_of(unit, ["resource/binary-heap.md"], "digest") is Holder.SOURCE
    assert holder_of(unit, ["resource/x/binary-heap.md"], "digest") is Holder.OWNER
    assert holder_of(unit, ["resource/binary-heap.md", "digest/wiki/binary-heap-2.md"],
                     "digest") is Holder.NODE


def test_the_digest_of_a_page_the_text_links_is_not_linked_again() -> None:
    """oignon's chord notes link the owner's [[コード表記]]; with the page's node named
    "コード表記" too, a line beside the owner's link said "コード表記：[[digest/…|コード表記]]
    を参照" (two links of one text to a page and to its digest)."""
    unit = Unit("m3-p4-loop", "wiki", "- [[resource/10_cool/コード表記.md|コード表記]]\n"
                "G#-∆7 opens it.", ["resource/11_fine/P5-m3 loop.md"], title="P5-m3 loop")
    named = [("digest/wiki/コード表記-2.md", "コード表記"), ("digest/wiki/強進行.md", "強進行"),
             ("digest/wiki/p5-m3-loop-2.md", "P5-m3 loop")]
    assert without_page_digests(named, unit) == [("digest/wiki/強進行.md", "強進行")]


def test_a_refused_link_is_dropped_and_the_write_retried(world: World) -> None:
    # The index still lists a node the user has just deleted: a link to it is refused.
    (world.vault.root / "digest/wiki/postgres-autovacuum.md").unlink()
    unit = Unit("autovacuum-tuning", "wiki", "Postgres autovacuum waits until 20 percent of "
                "the table is dead with the default scale factor.\nLowering "
                "autovacuum_vacuum_scale_factor on one table makes it run much earlier.",
                ["daily/2026-06-11.md"])
    outcome, _, model = integrate(world, unit)
    assert outcome.status == "done", outcome.error
    assert any("does not name an existing note" in e for e in model.errors())
    assert outcome.receipt is not None
    target = outcome.receipt.target_path
    assert "postgres-autovacuum" not in world.node(target)
    # (older nodes still link the deleted one: that is the user's deletion, not ours)
    assert [e for e in digest_errors(world.vault) if target in e] == []


def test_a_vault_with_another_digest_folder_learns_it_from_the_guard(
        tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    (tmp_path / "daily").mkdir()
    (tmp_path / "daily/2026-07-01.md").write_text("## Tea\n\nGreen tea wants 80 degrees.\n")
    (tmp_path / "memory").mkdir()
    vault = Vault(tmp_path, digest="memory")
    state = tmp_path / ".vaultlink"
    state.mkdir()
    index = NodeIndex(vault, state / "s.sqlite", None, minilm)
    try:
        unit = Unit("green-tea", "wiki", "Green tea wants water at 80 degrees, not boiling.",
                    ["daily/2026-07-01.md"])
        box = Toolbox(vault, index, Guard(unit, frozenset(), vault.iter_files, digest="memory"))
        model = Recording(OfflinePolicy(same_threshold=SAME, related_threshold=RELATED))
        outcome = run_session(model, box, system_prompt("wiki"), user_prompt(unit), 12)
    finally:
        index.close()
    assert outcome.status == "done", outcome.error
    assert outcome.receipt is not None
    assert outcome.receipt.target_path == "memory/wiki/green-tea.md"
    assert (tmp_path / "memory/wiki/green-tea.md").is_file()


def _turns(model: Recording) -> list[Turn]:
    from vaultlink.prose.sentences import read_turns

    return read_turns(model.messages)


# -- the plan, step by step ---------------------------------------------------------


def test_an_unreadable_target_falls_back_to_create() -> None:
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.2)
    unit = Unit("vacuum", "procedure", "Run VACUUM on the table.\nCheck dead tuples.",
                ["daily/2026-07-01.md"])
    node = "digest/procedure/postgres-vacuum.md"
    turns = [Turn("node_search", {"query": "q"}, {"hits": [
        {"path": node, "score": 0.01, "similarity": 0.9, "name": "V", "description": "d"}]}),
        Turn("read", {"path": node, "start_line": 1, "end_line": 40},
             {"error": "digest/procedure/postgres-vacuum.md is not readable"})]
    step = policy.decide(unit, turns)
    assert step == ToolCall("frontmatter_read", {"path": "digest/procedure/vacuum.md"})


@pytest.mark.parametrize("sims, top_slug, reads_top", [
    ([0.52, 0.15], "n0", True),    # one close node and nothing near it: the same topic
    ([0.52, 0.40], "n0", False),   # two candidates close together: a neighbourhood
    ([0.40, 0.05], "n0", False),   # alone, but not close enough to be the same thing
    ([0.52, 0.40], "starter-fridge-feed", True),  # a close namesake: no `-2` twin
    ([0.30, 0.05], "starter-fridge-feed", False),  # a far namesake: another topic
])
def test_a_lone_or_namesake_close_node_is_the_same_abstraction(
        sims: list[float], top_slug: str, reads_top: bool) -> None:
    """In a young digest the same topic written from another angle scores 0.45-0.6;
    above the threshold alone it would be created twice."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("starter-fridge-feed", "wiki", "Feed the starter from the fridge.",
                ["daily/2026-07-01.md"])
    hits = [{"path": f"digest/procedure/{top_slug if i == 0 else f'n{i}'}.md", "score": 0.01,
             "similarity": sim, "name": "Starter from the fridge" if i == 0 else f"N{i}",
             "description": "d"} for i, sim in enumerate(sims)]
    node = "---\nname: N\ndescription: d\n---\nKeep it warm.\n\n## Sources\n\n- From [[x]].\n"
    turns = [Turn("node_search", {"query": "q"}, {"hits": hits})]
    step = policy.decide(unit, turns)
    while isinstance(step, ToolCall) and step.name == "read":  # nearby nodes are read too
        lines = node.split("\n")
        turns.append(Turn("read", step.arguments, {"text": node, "start_line": 1,
                                                   "end_line": len(lines),
                                                   "total_lines": len(lines)}))
        step = policy.decide(unit, turns)
    assert isinstance(step, ToolCall)
    if reads_top:  # the unit grows the lone node
        assert (step.name, step.arguments["path"]) == ("edit", f"digest/procedure/{top_slug}.md")
    else:
        assert step.name == "frontmatter_read"  # on the way to CREATE


def test_the_lone_hit_rule_respects_a_high_related_threshold() -> None:
    """A user who set related_threshold above 0.45 calls a 0.47 hit unrelated: no merge."""
    policy = OfflinePolicy(same_threshold=0.8, related_threshold=0.5)
    unit = Unit("x", "wiki", "Something worth keeping here.", ["daily/2026-07-01.md"])
    hits = [{"path": "digest/wiki/x.md", "score": 0.01, "similarity": 0.47, "name": "X",
             "description": "d"}]
    step = policy.decide(unit, [Turn("node_search", {"query": "q"}, {"hits": hits})])
    assert isinstance(step, ToolCall) and step.name == "frontmatter_read"


def test_a_close_node_whose_subject_the_unit_does_not_name_is_not_grown() -> None:
    """Similarity alone merged unrelated notes (an API-key leak into a deploy node, a
    proxy note into "Ubuntu安装java"): a node is updated only by a unit that names its
    subject in words; a lone close node on another subject gets a new node beside it."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("api-key-leak", "wiki", "The staging API key leaked in the debug logs.",
                ["daily/2026-07-01.md"])
    node = "digest/wiki/deploy-staging.md"
    text = "---\nname: Deploy to staging\ndescription: d\n---\nRun the deploy job.\n"
    turns = [Turn("node_search", {"query": "q"}, {"hits": [
        {"path": node, "score": 0.01, "similarity": 0.9, "name": "Deploy to staging",
         "description": "d"}]}),
        Turn("read", {"path": node, "start_line": 1, "end_line": 40},
             {"text": text, "start_line": 1, "end_line": 5, "total_lines": 5})]
    step = policy.decide(unit, turns)
    assert isinstance(step, ToolCall) and step.name == "frontmatter_read", step
    assert step.arguments["path"] != node


def test_reading_long_neighbours_leaves_turns_for_the_write() -> None:
    """Three close nodes and two neighbours, each over a page long: the optional reads
    stop in time, so the edit and the receipt still fit in llm.max_steps."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24, max_steps=12)
    unit = Unit("vacuum", "procedure", "Run VACUUM on the big table every night.",
                ["daily/2026-07-01.md"])
    paths = [f"digest/procedure/n{i}.md" for i in range(5)]
    hits = [{"path": p, "score": 0.01, "similarity": sim, "name": "Table vacuum",
             "description": "d"} for p, sim in zip(paths, (0.9, 0.8, 0.7, 0.5, 0.4), strict=True)]
    lines = ["---", "name: Table vacuum", "description: d", "---",
             *[f"Line {i} about tables." for i in range(60)],
             "", "## Sources", "", "- From [[daily/2026-06-01.md]] at the time."]
    turns = [Turn("node_search", {"query": "q"}, {"hits": hits})]
    for _ in range(policy.max_steps):
        step = policy.decide(unit, turns)
        if not isinstance(step, ToolCall):
            break
        if step.name == "read":
            a, b = int(step.arguments["start_line"]), int(step.arguments["end_line"])
            b = min(b, len(lines))
            answer = {"text": "\n".join(lines[a - 1:b]), "start_line": a, "end_line": b,
                      "total_lines": len(lines)}
        else:
            answer = {"ok": True}
        turns.append(Turn(step.name, step.arguments, answer))
    assert isinstance(step, dict), "no receipt within max_steps"
    assert step["action"] == "REFINE" and len(turns) + 1 <= policy.max_steps
    assert [t.name for t in turns].count("edit") == 1


def test_a_second_refusal_ends_with_a_receipt_that_explains() -> None:
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.2)
    unit = Unit("x", "wiki", "Something worth keeping here.", ["daily/2026-07-01.md"])
    refused = {"error": "refused: bare link line"}
    turns = [Turn("node_search", {"query": "q"}, {"hits": []}),
             Turn("frontmatter_read", {"path": "digest/wiki/x.md"}, {"exists": False}),
             Turn("write", {"path": "digest/wiki/x.md"}, refused),
             Turn("write", {"path": "digest/wiki/x.md"}, refused)]
    step = policy.decide(unit, turns)
    assert isinstance(step, dict) and "refused twice" in step["note"]


def test_the_unit_is_read_back_from_the_user_prompt() -> None:
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.2)
    unit = Unit("rebuild-index", "procedure", "Run the rebuild.", ["daily/2026-07-01.md"])
    reply = policy.chat([{"role": "system", "content": "s"},
                         {"role": "user", "content": user_prompt(unit)}])
    assert reply.tool_calls[0].name == "node_search"
    assert reply.tool_calls[0].arguments["query"].startswith("rebuild index: Run the rebuild.")
    assert json.loads(policy.chat([], schema={}).content) == {"units": []}
    with pytest.raises(ValueError):
        OfflinePolicy(same_threshold=0.2, related_threshold=0.6)


# -- the whole offline dream --------------------------------------------------------


def dream_offline(root: Path) -> RunState:
    """A run of the offline integrator whose every decision is written (review off: a
    held decision is re-decided after a lost state, by design; tests/test_review.py)."""
    return offline_dream(root, **{"auto_dream.max_units": 100, "review.mode": "off"})


@pytest.mark.slow  # end to end on a whole vault: the fast tier stays under 60 s
def test_offline_dream_on_the_sample_vault_links_and_checks_clean(tmp_path: Path) -> None:
    root = copy_sample_vault(tmp_path / "vault")
    before = snapshot(root)
    run = dream_offline(root)
    assert run.report.failed_units == [] and run.counts()["integrated"] >= 10
    created = [r.target for r in run.report.results if r.action == "CREATE"]
    assert created and {r.action for r in run.report.results} >= {"CREATE", "REFINE"}
    vault = Vault(root)
    graph = build_graph(vault)
    for rel in created:
        _, body, _ = split_frontmatter(graph.texts[rel])
        assert sources_links(body), rel
    assert any(e.target and e.target.startswith("digest/") for rel in created
               for e in graph.outlinks[rel])
    assert digest_errors(vault) == []
    # the user's notes are untouched
    after = snapshot(root)
    assert {k: v for k, v in after.items() if not k.startswith("digest/")} == \
        {k: v for k, v in before.items() if not k.startswith("digest/")}
    # a second run over the unchanged vault writes nothing
    again = dream_offline(root)
    assert again.counts()["integrated"] == 0 and snapshot(root) == after
    # neither does a replay after the state is lost: every unit is already integrated
    # (a fresh copy: Chroma caches its client per path within one process)
    lost = tmp_path / "lost"
    shutil.copytree(root, lost, ignore=shutil.ignore_patterns(".vaultlink"))
    replay = dream_offline(lost)

    assert replay.counts()["integrated"] == 0 and replay.report.failed_units == []
    assert snapshot(lost) == after


def first_step(policy: OfflinePolicy, unit: Unit, node: str, name: str,
               similarity: float) -> str:
    """The tool the policy calls once it found ``node`` (at ``similarity``) and read it."""
    hits = [{"path": "digest/wiki/n.md", "score": 0.01, "similarity": similarity,
             "name": name, "description": "d"}]
    lines = node.split("\n")
    turns = [Turn("node_search", {"query": "q"}, {"hits": hits}),
             Turn("read", {"path": "digest/wiki/n.md", "start_line": 1, "end_line": 40},
                  {"text": node, "start_line": 1, "end_line": len(lines),
                   "total_lines": len(lines)})]
    step = policy.decide(unit, turns)
    assert isinstance(step, ToolCall)
    return step.name


@pytest.mark.parametrize("title, similarity, grows", [
    ("Release notes", 0.62, False),  # the node's words scattered over a standup list
    ("Hey Andrew", 0.64, False),  # a greeting every session of a conversation opens with
    ("Index rebuild", 0.62, True),  # its own name says the subject
    ("Release notes", 0.9, True),  # as close as a restatement
])
def test_a_day_notes_unit_grows_a_node_only_when_its_own_name_shares_the_subject(
        title: str, similarity: float, grows: bool) -> None:
    """Words of the node's name spread over a unit's text ("staging", "search", "index"
    in a standup's status list) are no shared subject: below the similarity of a
    restatement, the unit's own name must share a word with the node's."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    name = "Staging search index rebuild" if title != "Hey Andrew" else "Dog walks"
    summary = ("- Jonas upgraded the staging search indexer to v2.3 this morning.\n"
               "- Me: migration redone with CREATE INDEX CONCURRENTLY; the rebuild "
               "and the staging deploy went through.")
    if title == "Hey Andrew":
        summary = "Andrew: Hey Audrey! My dog walks got longer: two dogs, two walks a day."
    unit = Unit(title.lower().replace(" ", "-"), "wiki", summary, ["daily/2026-06-17.md"],
                title=title)
    node = (f"---\nname: {name}\ndescription: d\n---\nRebuild the staging search index "
            "after a crash of the indexer.\n\n## Sources\n\n- From [[daily/2026-06-09.md]].\n")
    assert (first_step(policy, unit, node, name, similarity) == "edit") is grows


@pytest.mark.parametrize("name, body, source, grows", [
    ("Advanced environment configuration", "Matrices.\n\n## Matrix\n\nRows.\n",
     "daily/2026-06-08.md", False),
    ("Environment configuration", "Matrices.\n\n## Matrix\n\nRows.\n", "x", True),
    ("Environment configuration notes", "Templates inherit from default.\n",
     "daily/2026-06-08.md", True),
    # a node made from another page takes the page only by its very name: sibling pages
    # ("npm install" and "npm install-test") name each other
    ("Environment configuration notes", "Templates inherit from default.\n",
     "resource/h/env-notes.md", False),
    ("Environment", "Templates inherit from default.\n", "resource/h/basics.md", False),
])
def test_a_page_grows_only_a_node_of_its_own_name(name: str, body: str, source: str,
                                                  grows: bool) -> None:
    """A page (a unit of a note that is not a day's) is its own subject: it updates a
    node that carries its name; a longer or shorter name only when that node was made
    from day notes (a day's fragment on the same thing), never "Advanced environment
    configuration", and never a node made from another page."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("environment-configuration", "wiki", "Templates inherit from default.\n\n"
                "## Inheritance\nEnvironments inherit from `default`.", ["resource/h/env.md"],
                title="Environment configuration")
    node = f"---\nname: {name}\ndescription: d\n---\n{body}\n## Sources\n\n- From [[{source}]].\n"
    assert first_step(policy, unit, node, name, 0.7) == ("edit" if grows
                                                          else "frontmatter_read")


@pytest.mark.parametrize("copy, name, grows", [
    ("resource/tools/Emacs 1.md", "Programming emacs", True),  # qualified: owner has Emacs.md
    ("resource/tools/Emacs 1.md", "Emacs", True),
    ("resource/other/Emacs 1.md", "Programming emacs", False),  # another folder's note
    ("resource/tools/Emacs 2 notes.md", "Programming emacs", False),
])
def test_the_owners_copy_of_a_page_grows_the_node_made_of_that_page(
        copy: str, name: str, grows: bool) -> None:
    """Obsidian's "Make a copy" saves "Emacs 1.md" beside "Emacs.md": the copy, with a line
    added, became a second node "Emacs 1" beside the node its original made (10 of 60
    copies on the six personal vaults), since a page grows only a node of its very name."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    title = copy.rsplit("/", 1)[-1].removesuffix(".md")
    unit = Unit(slugify(title), "wiki", "Clipped again for the team.\n\n## Keys\n"
                "C-x C-f opens a file.", [copy], title=title)
    node = (f"---\nname: {name}\ndescription: d\n---\nC-x C-f opens a file.\n\n## Keys\n\n"
            "C-x C-s saves it.\n\n## Sources\n\n- From [[resource/tools/Emacs.md]].\n")
    assert (first_step(policy, unit, node, name, 0.8) == "edit") is grows


def test_a_copy_is_told_by_its_file_not_by_a_number_in_a_name() -> None:
    assert is_copy("resource/a/Emacs 1.md", "resource/a/Emacs.md")
    assert not is_copy("resource/a/Lecture 2.md", "resource/a/Lecture 1.md")
    # "Vue 3" is not "Vue", "Windows 10" not "Windows": a page is its own name, word for word
    assert not same_name("Vue", "Vue 3", whole=True)
    assert not same_name("Lecture 1", "Lecture 2", whole=True)


def test_a_copy_rewritten_into_another_note_is_no_repeat() -> None:
    """Duplicating a note as the start of a new one and rewriting it: the copy's file name
    says copy, its text says another subject; it does not grow the original's node."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("emacs-1", "wiki", "Tmux splits a terminal into panes.\n\n## Keys\n"
                "Prefix % splits it sideways.\nPrefix d detaches the session.",
                ["resource/tools/Emacs 1.md"], title="Emacs 1")
    node = ("---\nname: Programming emacs\ndescription: d\n---\nC-x C-f opens a file.\n\n"
            "## Keys\n\nC-x C-s saves it.\n\n## Sources\n\n- From [[resource/tools/Emacs.md]].\n")
    assert first_step(policy, unit, node, "Programming emacs", 0.8) != "edit"


def test_a_unit_whose_summary_holds_braces_and_fences_is_read_back_whole() -> None:
    """A real Japanese note's unit failed every run: its code ended "}```", where the
    reader of the unit's JSON stopped ("no ```json unit in the user message")."""
    from vaultlink.pipeline.integrate.step import user_prompt
    from vaultlink.prose.sentences import read_unit
    unit = Unit("nayami", "wiki", 'Code: `{}```js` and {"a": 1}``` here.', ["daily/x.md"])
    assert read_unit([{"role": "user", "content": user_prompt(unit)}]) == unit


def test_a_node_never_links_its_namesake_for_its_own_name() -> None:
    """Two project pages open on the same callout, "Project Description: ...". The second
    node, "Project Description (2)", linked its own label to the first, which is another
    project's (a wrong link on a personal vault): a node's name in its own text is itself."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("project-description", "wiki", "Project Description: what is my purpose?",
                ["resource/Projects/Test Project/Test Project.md"], title="Project Description")
    other = "digest/wiki/project-description.md"
    turns = [Turn("node_search", {"query": "q"}, {"hits": [
        {"path": other, "score": 0.01, "similarity": 0.3, "name": "Project Description",
         "description": "d"}]}),
        Turn("read", {"path": other, "start_line": 1, "end_line": 40},
             {"text": "---\nname: Project Description\ndescription: d\n---\nA page.\n",
              "start_line": 1, "end_line": 5, "total_lines": 5})]
    while isinstance(step := policy.decide(unit, turns), ToolCall) and step.name != "write":
        turns.append(Turn(step.name, step.arguments, {"exists": False}))
    # qualified by the project its page stands for (a folder note), not numbered
    assert isinstance(step, ToolCall) and \
        step.arguments["name"] == "Project Description (Test Project)"
    assert other not in step.arguments["content"]


@pytest.mark.parametrize("cited, grows", [
    ("daily/2026-06-13.md", True),  # the node was made (in part) of this very day
    ("daily/2026-06-08.md", False),  # another day: the unit must name the node's subject
])
def test_the_nearest_node_already_citing_the_units_day_takes_it(cited: str,
                                                                 grows: bool) -> None:
    """The sample's "Morning focus time" cites 2026-06-13 for the owner's reasoning; the
    day's unit, "Focus block", does not name all of it, and became a second node beside it."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("focus-block", "personal",
                "Thinking about why the focus block works for me: I start the day on the "
                "hardest problem.\nI'm keeping 9–11 meeting-free next week too.",
                ["daily/2026-06-13.md"], title="Focus block")
    node = ("---\nname: Morning focus time\ndescription: d\n---\nMara protects 9:00–11:00 "
            f"as focus time.\n\n## Sources\n\n- Her reasoning is in [[{cited}]].\n")
    assert (first_step(policy, unit, node, "Morning focus time", 0.73) == "edit") is grows


def test_a_node_of_a_days_tasks_is_grown_by_no_prose() -> None:
    """A day's open tasks ("Draft the hybrid search design doc", ...) made a node named
    "Hybrid search design doc"; the retro's "hybrid search ran on staging all week" then
    grew it, a wrong merge: a day's tasks are a record of that day, no subject."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("hybrid-search", "wiki", "Hybrid search ran on staging all week with no "
                "incidents.\nThe design review settled the fusion question in one hour.",
                ["daily/2026-06-17/retro.md"], title="Hybrid search")
    tasks = ("---\nname: Hybrid search design doc\ndescription: d\n---\n- ☐ Draft the hybrid "
             "search design doc\n- ☐ Book a room for the design review\n\n## Sources\n\n"
             "- From [[daily/2026-06-08.md]].\n")
    assert first_step(policy, unit, tasks, "Hybrid search design doc", 0.7) != "edit"
    prose = tasks.replace("- ☐ Draft the hybrid search design doc\n- ☐ Book a room for the "
                          "design review", "The hybrid search design doc covers fusion.")
    assert first_step(policy, unit, prose, "Hybrid search design doc", 0.7) == "edit"


def test_a_node_whose_name_only_holds_a_sibling_subjects_name_may_take_the_unit() -> None:
    """The retro's "Documents table" (its bloat) and "Vacuum procedure" (new steps) are
    two subjects; the node "Vacuum the Postgres documents table" is named as neither, and
    the new steps made a second vacuum procedure beside it. A node named as a sibling,
    word for word, still stays the sibling's."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("vacuum-procedure", "procedure", "New steps before running VACUUM on the "
                "documents table:\n1. Look for old idle-in-transaction sessions.\n2. "
                "Terminate them after checking with the owner.", ["daily/2026-06-17/retro.md"],
                title="Vacuum procedure", siblings=["Documents table"])
    name = "Vacuum the Postgres documents table"
    node = (f"---\nname: {name}\ndescription: d\n---\n1. Check dead tuples.\n2. Run VACUUM "
            "on the documents table.\n\n## Sources\n\n- From [[daily/2026-06-11.md]].\n")
    assert first_step(policy, unit, node, name, 0.74) == "edit"
    node = node.replace(name, "Documents table")
    assert first_step(policy, unit, node, "Documents table", 0.74) != "edit"


def test_a_unit_whose_text_says_the_nodes_whole_name_grows_it() -> None:
    """2026-06-17's "Tomás tried to book sprint planning at 9:30 ... My morning focus time
    stays" was named by its opening ("Book sprint planning") and made a node beside
    *Morning focus time*: the node's words were taken for scattered. Said whole, as one
    phrase, the node's name is the unit's subject; scattered, it is not."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    name = "Morning focus time"
    node = (f"---\nname: {name}\ndescription: d\n---\nMara protects 9:00–11:00 as focus "
            "time.\n\n## Sources\n\n- From [[daily/2026-06-08.md]].\n")
    for said, grows in (("Tomás tried to book sprint planning at 9:30. I declined. My morning "
                         "focus time stays, no meetings.", True),
                        ("Tomás tried to book sprint planning in the morning. I declined: "
                         "no time, focus on the review.", False)):
        unit = Unit("book-sprint-planning", "wiki", said, ["daily/2026-06-17/standup.md"],
                    title="Book sprint planning")
        assert (first_step(policy, unit, node, name, 0.69) == "edit") is grows, said


@pytest.mark.slow  # end to end on a whole vault
def test_the_samples_correction_waits_for_review_against_the_node_it_names(
        tmp_path: Path) -> None:
    """The README's demo held 2026-06-20's correction of the hybrid search node, then the
    2026-06-17 sync transcript (a resource, read after the days) grew that node: the
    proposal was stale before anyone read it, and decided again it went to "Candidate
    depth", leaving the node at 100. Notes are read in the order they were written, and a
    unit goes to the node named as it is before a nearer one its text also names."""
    from vaultlink.pipeline.integrate.review import hash_now
    from vaultlink.vault.state import State

    root = copy_sample_vault(tmp_path / "vault")
    run = offline_dream(root, **{"auto_dream.max_units": 100})
    assert run.report.failed_units == []
    state = State(root / ".vaultlink/state.sqlite")
    try:
        held = state.proposals()
    finally:
        state.close()
    assert [(p.action, p.target, p.unit["paths"]) for p in held] == [
        ("CORRECT", "digest/wiki/hybrid-search.md", ["daily/2026-06-20.md"])]
    assert hash_now(Vault(root), held[0].target) == held[0].old_hash  # not stale


def test_notes_are_read_in_the_order_they_were_written() -> None:
    from types import SimpleNamespace

    from vaultlink.pipeline.extract.step import written_order
    paths = ["daily/2026-06-20.md", "resource/rrf-paper-notes.md", "daily/2026-06-17/retro.md",
             "resource/search-sync-transcript-2026-06-17.md", "daily/2026-06-08.md"]
    notes = sorted((SimpleNamespace(path=p) for p in paths), key=written_order)  # type: ignore[arg-type]
    assert [n.path for n in notes] == [
        "daily/2026-06-08.md", "daily/2026-06-17/retro.md",
        "resource/search-sync-transcript-2026-06-17.md", "daily/2026-06-20.md",
        "resource/rrf-paper-notes.md"]


def test_a_unit_grows_the_node_named_as_it_is_before_a_nearer_one() -> None:
    """2026-06-20's "Correction to the hybrid search note: the candidate depth is now 200"
    (a unit named "Hybrid search") went to "Candidate depth" (0.83), nearer than "Hybrid
    search" (0.71): its text names both, but it is named as one."""
    policy = OfflinePolicy(same_threshold=0.6, related_threshold=0.24)
    unit = Unit("hybrid-search", "wiki", "The candidate depth is now 200 per list, not 100.",
                ["daily/2026-06-20.md"], title="Hybrid search")
    nodes = {"digest/wiki/candidate-depth.md": ("Candidate depth", 0.83),
             "digest/wiki/hybrid-search.md": ("Hybrid search", 0.71)}
    hits = [{"path": p, "score": 0.01, "similarity": sim, "name": name, "description": "d"}
            for p, (name, sim) in nodes.items()]
    turns = [Turn("node_search", {"query": "q"}, {"hits": hits})]
    for path, (name, _) in nodes.items():
        text = (f"---\nname: {name}\ndescription: d\n---\nThe {name.lower()} takes the top "
                "100 of each list.\n\n## Sources\n\n- From [[daily/2026-06-10.md]].\n")
        turns.append(Turn("read", {"path": path, "start_line": 1, "end_line": 40},
                          {"text": text, "start_line": 1, "end_line": 7, "total_lines": 7}))
    step = policy.decide(unit, turns)
    assert isinstance(step, ToolCall) and step.arguments["path"] == "digest/wiki/hybrid-search.md"
