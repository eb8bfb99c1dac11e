"""The dream pipeline's bookkeeping: steps from config, the per-run cap, new sections,
packing by budget, the journal and undo, topics. Real client, fake server, real stores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fakes.dream_runs import creator, dream, with_extract
from tests.fakes.ollama_server import FakeOllama, reply
from tests.fakes.sample_vault_model import is_topics_request
from tests.vaults import snapshot, write_notes
from vaultlink.cli import app
from vaultlink.errors import ConfigError, UndoConflict
from vaultlink.llm.chat import estimate_tokens
from vaultlink.pipeline.history import undo_decision
from vaultlink.pipeline.run import build_steps
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State


def make_vault(root: Path, notes: dict[str, str]) -> Path:
    """The notes, and an empty ``digest/wiki`` for the nodes the model writes."""
    write_notes(root, notes)
    (root / "digest/wiki").mkdir(parents=True, exist_ok=True)
    return root


def unit(name: str, path: str, bucket: str = "wiki", summary: str = "") -> dict[str, Any]:
    """An extracted unit; its summary names three things its note says (a shorter one
    is a fragment the extractor drops)."""
    return {"name": name, "bucket": bucket, "paths": [path],
            "summary": summary or f"{name.capitalize()} was settled this morning."}


def keeper(note: str) -> dict[str, Any]:
    return unit("keeper", note, summary="Something worth keeping: a keeper.")


def extract_requests(server: FakeOllama) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests() if r.get("format") and not is_topics_request(r)]


def test_unknown_step_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="dream_dance_step"):
        build_steps(["dream_extract_step", "dream_dance_step"])


def test_units_over_the_cap_wait_for_the_next_run(tmp_path: Path) -> None:
    root = make_vault(tmp_path, {f"daily/2026-07-0{i}.md": f"## N\n\nNote {i}: we settled topic-{i}"
                                 f"{', topic-1b' if i == 1 else ''}.\n" for i in (1, 2, 3)})
    units = [unit(f"topic-{i}", f"daily/2026-07-0{i}.md") for i in (1, 2, 3)]
    units.insert(1, unit("topic-1b", "daily/2026-07-01.md"))

    with FakeOllama(model=with_extract(creator, *units)) as server:
        first = dream(root, server.url, **{"auto_dream.max_units": 1})
        # A run extracts only what it can integrate: the later notes are not even sent.
        assert [u.name for u in first.extraction.units] == ["topic-1"]
        assert len(extract_requests(server)) == 1
        assert first.report.checkpointed == []  # topic-1b of the same note waits
        second = dream(root, server.url, **{"auto_dream.max_units": 2})
        # The pending unit is integrated without extracting its note again.
        assert [u.name for u in second.extraction.units] == ["topic-1b", "topic-2"]
        assert len(extract_requests(server)) == 2
        assert second.report.checkpointed == ["daily/2026-07-01.md", "daily/2026-07-02.md"]
        third = dream(root, server.url, **{"auto_dream.max_units": 2})
    assert [u.name for u in third.extraction.units] == ["topic-3"]
    assert third.report.checkpointed == ["daily/2026-07-03.md"]
    assert (root / "digest/wiki/topic-3.md").exists()


@pytest.mark.parametrize("name", ["issue #42", "a|b", "[[weird]] name"])
def test_a_note_no_wikilink_can_name_waits_unextracted_with_a_rename_hint(
        tmp_path: Path, name: str) -> None:
    """Its units could not cite it, so it is neither extracted nor checkpointed: it is
    reported as skipped each run until renamed, and its words are not lost."""
    odd, plain = f"daily/2026-07-01/{name}.md", "daily/2026-07-02.md"
    root = make_vault(tmp_path, {odd: "## A\n\nThe deploy window moved to Tuesday.\n",
                                 plain: "## B\n\nThe nightly index rebuild ran fine.\n"})
    with FakeOllama(model=with_extract(creator, unit("rebuild", plain))) as server:
        run = dream(root, server.url)
        sent = "".join(m["content"] for r in extract_requests(server) for m in r["messages"])
    assert odd in run.report.skipped and "rename the file" in run.report.skipped[odd]
    assert odd not in sent and plain in sent
    assert run.report.checkpointed == [plain]
    (root / odd).rename(root / "daily/2026-07-01/issue 42.md")
    with FakeOllama(model=with_extract(creator)) as server:
        again = dream(root, server.url)
    assert again.report.checkpointed == ["daily/2026-07-01/issue 42.md"]
    assert not again.report.skipped


def test_only_new_sections_are_sent(tmp_path: Path) -> None:
    note = "daily/2026-07-01.md"
    root = make_vault(tmp_path, {note: "## Morning\n\nThe nightly index rebuild ran fine.\n"})
    with FakeOllama(model=with_extract(creator, unit("morning", note))) as server:
        dream(root, server.url)
        (root / note).write_text("## Morning\n\nThe nightly index rebuild ran fine.\n\n"
                                 "## Evening\n\nThe vacuum took an hour.\n")
        dream(root, server.url)
        sent = extract_requests(server)[-1]["messages"][-1]["content"]
    assert sent.startswith(f"Note {note}\n") and "## Evening" in sent
    assert "Morning" not in sent and "rebuild" not in sent


def test_extract_packs_notes_within_num_ctx(tmp_path: Path) -> None:
    big = "\n\n".join(f"## Part {i}\n\n" + "The index rebuild took long. " * 40
                      for i in range(12))
    root = make_vault(tmp_path, {"daily/2026-07-01.md": big,
                                 "daily/2026-07-02.md": "## A\n\nShort note.\n"})
    with FakeOllama(model=with_extract(creator)) as server:
        dream(root, server.url, **{"llm.num_ctx": 2048})
        requests = extract_requests(server)
    assert len(requests) > 2  # one note too large for one call is split by sections
    for req in requests:
        assert req["options"]["num_ctx"] == 2048
        text = "".join(m["content"] for m in req["messages"])
        assert estimate_tokens(text) < 2048


def test_journal_records_the_decision_and_undo_reverts_it(tmp_path: Path) -> None:
    note = "daily/2026-07-01.md"
    root = make_vault(tmp_path, {note: "## A\n\nSomething worth keeping: a keeper.\n"})
    before = snapshot(root)
    with FakeOllama(model=with_extract(creator, keeper(note))) as server:
        run = dream(root, server.url)
    entry_id = run.report.results[0].journal_id
    assert entry_id is not None
    state = State(root / ".vaultlink/state.sqlite")
    try:
        entry = state.journal_get(entry_id)
        assert entry is not None and entry.action == "CREATE"
        assert entry.target == "digest/wiki/keeper.md" and "+## Sources" in entry.diff
        undo_id = undo_decision(Vault(root), state, entry_id)
        assert state.journal_get(undo_id).action == "UNDO"  # type: ignore[union-attr]
        assert state.journal_get(entry_id).undone_by == undo_id  # type: ignore[union-attr]
    finally:
        state.close()
    after = snapshot(root)
    assert "digest/wiki/keeper.md" not in after
    assert {k: v for k, v in after.items() if not k.startswith("digest/topics/")} == before


def test_undo_refuses_when_the_user_changed_the_node(tmp_path: Path) -> None:
    note = "daily/2026-07-01.md"
    root = make_vault(tmp_path, {note: "## A\n\nSomething worth keeping: a keeper.\n"})
    with FakeOllama(model=with_extract(creator, keeper(note))) as server:
        run = dream(root, server.url)
    node = root / "digest/wiki/keeper.md"
    node.write_text(node.read_text() + "\nMy own addition.\n")
    state = State(root / ".vaultlink/state.sqlite")
    try:
        with pytest.raises(UndoConflict, match="changed since"):
            undo_decision(Vault(root), state, run.report.results[0].journal_id or 0)
    finally:
        state.close()
    assert "My own addition." in node.read_text()


def test_topics_are_written_once_and_an_unparseable_file_is_left_alone(
        tmp_path: Path) -> None:
    root = make_vault(tmp_path, {"daily/2026-07-01.md": "## A\n\nAlpha and beta were settled.\n",
                                 "daily/2026-07-02.md": "## B\n\nGamma and delta were settled.\n"})
    (root / "digest/topics").mkdir(parents=True)
    broken = root / "digest/topics/2026-07-02-topics.md"
    broken.write_text("---\ntopics: [unclosed\n---\nmine\n")
    units = [unit("alpha", "daily/2026-07-01.md"), unit("gamma", "daily/2026-07-02.md")]
    with FakeOllama(model=with_extract(creator, *units)) as server:
        run = dream(root, server.url, **{"topics.min_units": 1})
    topics = (root / "digest/topics/2026-07-01-topics.md").read_text()
    assert "title: 'Wiki work: alpha'" in topics and "[[daily/2026-07-01.md]]" in topics
    assert broken.read_text() == "---\ntopics: [unclosed\n---\nmine\n"
    assert any("2026-07-02" in w for w in run.report.warnings)


def test_topics_files_the_user_reshaped_are_left_alone_and_the_run_goes_on(
        tmp_path: Path) -> None:
    """`topics: 5` a few days back, or a list of plain strings today: never a crash (the
    notes would be redone on every retry), never a rewrite that drops the user's lines."""
    root = make_vault(tmp_path, {"daily/2026-07-03.md": "## A\n\nAlpha and beta were settled.\n"})
    (root / "digest/topics").mkdir(parents=True)
    old = root / "digest/topics/2026-07-01-topics.md"
    old.write_text("---\ntopics: 5\n---\nmine\n")
    today = root / "digest/topics/2026-07-03-topics.md"
    today.write_text("---\ntopics:\n- My own topic\n- Another\n---\nmine\n")
    with FakeOllama(model=with_extract(creator, unit("alpha", "daily/2026-07-03.md"))) as server:
        run = dream(root, server.url)
    assert run.counts()["integrated"] == 1 and run.report.checkpointed == ["daily/2026-07-03.md"]
    assert old.read_text() == "---\ntopics: 5\n---\nmine\n"
    assert today.read_text() == "---\ntopics:\n- My own topic\n- Another\n---\nmine\n"
    assert any("2026-07-03-topics.md left untouched" in w for w in run.report.warnings)


def test_the_model_groups_and_names_topics_but_paths_come_from_its_units(
        tmp_path: Path) -> None:
    """A topic is named by the model; its evidence and nodes are those of the units it
    numbers, so a number it invents, or a path it makes up, is dropped."""
    day = "daily/2026-07-01.md"
    text = "".join(f"## {w[0]}\n\n{w} was settled this morning.\n\n"
                   for w in ("Alpha", "Beta", "Gamma"))
    root = make_vault(tmp_path, {day: text})
    units = [unit("alpha", day), unit("beta", day), unit("gamma", day, bucket="procedure")]
    answers: list[Any] = [{"topics": [
        {"title": "Greek letters", "reason": "Alpha and beta were settled.",
         "keywords": ["greek"], "units": [1, 2, 99], "paths": ["../secret.md"]},
        {"title": "Nothing real", "reason": "x", "keywords": [], "units": [42]},
        {"title": "Wrong types", "reason": 3, "keywords": 7, "units": 1},
        "not a topic",
        {"title": "Gamma steps", "reason": "Gamma got a runbook.", "keywords": ["gamma"],
         "units": [3]},
        {"title": "Odd fields", "reason": ["x"], "keywords": 7, "units": [2]}]}]

    asked: list[dict[str, Any]] = []

    def model(request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            asked.append(request)
            return reply(json.dumps(answers[0]))
        return with_extract(creator, *units)(request)

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **{"topics.min_units": 3})
    # the grammar asks for no more than a topic keeps (the 0.5B ran to the answer cap)
    item = asked[0]["format"]["properties"]["topics"]["items"]["properties"]
    assert (item["title"]["maxLength"], item["reason"]["maxLength"]) == (80, 300)
    meta = Vault(root).read_note("digest/topics/2026-07-01-topics.md").frontmatter
    assert [t["title"] for t in meta["topics"]] == ["Greek letters", "Gamma steps",
                                                    "Odd fields"]
    odd = meta["topics"][2]  # unusable reason and keywords: the unit's own instead
    assert odd["keywords"] and all(isinstance(k, str) for k in odd["keywords"])
    assert odd["reason"] == "New in the digest: Beta was settled this morning."
    assert odd["paths"] == ["digest/wiki/beta.md"]
    greek = meta["topics"][0]
    assert greek["evidence"] == [day]
    assert set(greek["paths"]) == {"digest/wiki/alpha.md", "digest/wiki/beta.md"}
    assert not run.report.warnings

    answers[0] = {"topics": [{"title": "", "units": [1]}]}  # nothing usable: fall back
    nextday = "daily/2026-07-02.md"
    (root / nextday).write_text("## D\n\nDelta was settled this morning.\n")
    units[:] = [unit("delta", nextday)]
    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **{"topics.max_topics": 4, "topics.min_units": 1})
        asked = [r for r in server.chat_requests() if is_topics_request(r)]
    meta = Vault(root).read_note("digest/topics/2026-07-02-topics.md").frontmatter
    assert meta["topics"][-1]["title"] == "Delta"  # one topic per unit, as without a model
    assert any("one topic per unit instead" in w for w in run.report.warnings)
    prompt = asked[0]["messages"][-1]["content"]  # a topic of the last days is taken
    assert "Pick at most 4 topics" in prompt and "greek letters" in prompt

    (root / "daily/2026-07-01.md").write_text("## E\n\nEpsilon was settled this morning.\n")
    units[:] = [unit("epsilon", day)]
    with FakeOllama(model=model) as server:  # the day has its topics: no second call
        run = dream(root, server.url, **{"topics.max_topics": 4, "topics.min_units": 1})
        assert not [r for r in server.chat_requests() if is_topics_request(r)]
    assert run.counts()["integrated"] == 1


@pytest.mark.parametrize(("units_of_day", "calls"), [(3, 0), (4, 1), (5, 1)])
def test_the_model_groups_a_day_only_from_min_units_units(
        tmp_path: Path, units_of_day: int, calls: int) -> None:
    """topics.min_units (default 4): a day with fewer units in the run gets one topic per
    unit and no topics call; from 4, exactly one call for the day."""
    names = ["alpha", "beta", "gamma", "delta", "epsilon"][:units_of_day]
    where = {n: f"daily/2026-07-01/{'am' if i < 3 else 'pm'}.md" for i, n in enumerate(names)}
    notes: dict[str, str] = {}
    for n, path in where.items():  # at most 3 units a note: two notes of one day
        notes[path] = notes.get(path, "") + f"## {n}\n\n{n.capitalize()} was settled at noon.\n\n"
    root = make_vault(tmp_path, notes)
    picked = {"topics": [{"title": "Greek letters", "reason": "All settled.",
                          "keywords": ["greek"], "units": [1, 2]}]}

    def model(request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            return reply(json.dumps(picked))
        return with_extract(creator, *(unit(n, where[n]) for n in names))(request)

    with FakeOllama(model=model) as server:
        run = dream(root, server.url)
        asked = [r for r in server.chat_requests() if is_topics_request(r)]
    assert run.counts()["integrated"] == units_of_day
    assert len(asked) == calls
    titles = [t["title"] for t in Vault(root).read_note(
        "digest/topics/2026-07-01-topics.md").frontmatter["topics"]]
    assert ("Greek letters" in titles) == bool(calls)


def test_a_day_that_arrives_a_note_a_run_is_grouped_once_when_it_reaches_min_units(
        tmp_path: Path) -> None:
    """As the daemon runs: one note a run. The day's first three units get a topic each
    and no call; the run that brings the day to topics.min_units (4) asks the model once,
    over the earlier topics and its own unit, and the grouping replaces them; later
    runs of that day make no call."""
    names = ["alpha", "beta", "gamma", "delta", "epsilon"]
    root = make_vault(tmp_path, {})
    picked = {"topics": [{"title": "Greek letters", "reason": "All settled.",
                          "keywords": ["greek"], "units": [1, 2, 4]},
                         {"title": "The third", "reason": "Gamma alone.",
                          "keywords": ["gamma"], "units": [3]}]}
    calls: list[int] = []
    topics_file = "digest/topics/2026-07-01-topics.md"
    for n, name in enumerate(names):
        note = f"daily/2026-07-01/{name}-log.md"  # not the node's name (issue 37)
        (root / "daily/2026-07-01").mkdir(parents=True, exist_ok=True)
        (root / note).write_text(f"## Meeting\n\n{name.capitalize()} was settled at the meeting.\n")

        def model(request: dict[str, Any], note: str = note, name: str = name) -> Any:
            if is_topics_request(request):
                return reply(json.dumps(picked))
            said = f"{name.capitalize()} was settled at the meeting."
            return with_extract(creator, unit(name, note, summary=said))(request)

        with FakeOllama(model=model) as server:
            run = dream(root, server.url, **{"topics.max_topics": 3})
            asked = [r for r in server.chat_requests() if is_topics_request(r)]
        assert run.counts()["integrated"] == 1
        calls.append(len(asked))
        meta = Vault(root).read_note(topics_file).frontmatter
        titles = [t["title"] for t in meta["topics"]]
        if n == 2:  # three units, one topic each, no call yet
            assert titles == ["Alpha", "Beta", "Gamma"]
            assert "grouped_by" not in meta
        if n == 3:  # the model saw the three earlier topics and the new unit
            told = asked[0]["messages"][-1]["content"]
            assert "[1] Alpha" in told and "[4] delta" in told
    assert calls == [0, 0, 0, 1, 0]
    meta = Vault(root).read_note(topics_file).frontmatter
    assert meta["grouped_by"] == "model"
    greek = meta["topics"][0]
    assert greek["title"] == "Greek letters"
    assert set(greek["paths"]) == {"digest/wiki/alpha.md", "digest/wiki/beta.md",
                                   "digest/wiki/delta.md"}
    assert [t["title"] for t in meta["topics"]][:2] == ["Greek letters", "The third"]


def test_a_day_whose_grouping_answer_was_unusable_is_not_asked_again(tmp_path: Path) -> None:
    """The soak's 0.5B answered a day's grouping with topics naming no unit: one topic
    per unit stands, and the next run of that day makes no second call."""
    names = ["alpha", "beta", "gamma", "delta", "epsilon"]
    notes = {f"daily/2026-07-01/{n}-log.md": f"## {n}\n\n{n.capitalize()} was settled at noon.\n"
             for n in names}
    root = make_vault(tmp_path, {p: t for p, t in list(notes.items())[:4]})
    useless = {"topics": [{"title": "Nothing", "reason": "x", "keywords": [], "units": [9]}]}

    def model(request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            return reply(json.dumps(useless))
        return with_extract(creator, *(unit(n, f"daily/2026-07-01/{n}-log.md")
                                       for n in names))(request)

    calls = []
    for more in (None, "epsilon"):
        if more:
            path = f"daily/2026-07-01/{more}-log.md"
            (root / path).write_text(notes[path])
        with FakeOllama(model=model) as server:
            run = dream(root, server.url)
            calls.append(len([r for r in server.chat_requests() if is_topics_request(r)]))
        meta = Vault(root).read_note("digest/topics/2026-07-01-topics.md").frontmatter
        assert meta["grouped_by"] == "units"
    assert calls == [1, 0]
    assert not any("one topic per unit instead" in w for w in run.report.warnings)  # not asked


def test_a_symlinked_digest_keeps_its_nodes_updatable(tmp_path: Path) -> None:
    """digest/ may be a link to a folder inside the vault: its nodes still existed, so a
    model may refine them (the whole-vault walk alone does not enter the link)."""
    day = "daily/2026-07-01.md"
    root = make_vault(tmp_path / "v", {day: "## A\n\nThe rebuild now takes ten minutes.\n",
                                       "store/wiki/rebuild.md": (
                                           "---\nname: Rebuild\ndescription: d\n---\n"
                                           "The rebuild takes an hour.\n\n## Sources\n\n"
                                           "- First noted in [[daily/2026-06-01.md]].\n"),
                                       "daily/2026-06-01.md": "old\n"})
    (root / "digest/wiki").rmdir()
    (root / "digest").rmdir()
    (root / "digest").symlink_to("store")
    node = "digest/wiki/rebuild.md"
    first = "- First noted in [[daily/2026-06-01.md]]."
    edit = {"path": node, "old": first,
            "new": f"{first}\n- The rebuild down to ten minutes is in [[{day}]]."}
    receipt = json.dumps({"action": "CORROBORATE", "target_path": node, "note": "faster"})

    def integrate(request: dict[str, Any]) -> Any:
        done = any(m["role"] == "tool" for m in request["messages"])
        return reply(receipt) if done else reply(tool_calls=[("edit", edit)])

    faster = unit("rebuild-faster", day, summary="The rebuild now takes ten minutes.")
    with FakeOllama(model=with_extract(integrate, faster)) as server:
        run = dream(root, server.url)
    results = run.report.results
    assert [(r.action, r.target) for r in results] == [("CORROBORATE", node)], results
    assert "ten minutes" in (root / "store/wiki/rebuild.md").read_text()


def test_unreadable_notes_are_remembered_until_read_or_deleted(tmp_path: Path) -> None:
    """`status` lists the notes a run could not read, with why, until a run reads them
    (the user fixed them) or they are gone; the first time seen stays put."""
    broken, binary = "daily/2026-07-01.md", "daily/2026-07-02.md"
    root = make_vault(tmp_path, {broken: "---\nname: [oops\n---\n## A\n\nText.\n"})
    (root / binary).write_bytes(b"\x00\x01\xff binary")
    with FakeOllama(model=with_extract(creator)) as server:
        dream(root, server.url)
        state = State(root / ".vaultlink/state.sqlite")
        try:
            first = {u["path"]: u for u in state.unread_notes()}
            assert set(first) == {broken, binary} and "YAML" in first[broken]["reason"]
            out = CliRunner().invoke(app, ["status", "--vault", str(root)])
            assert f"not read {broken} (since " in out.output
            dream(root, server.url)
            assert state.unread_notes()[0]["since"] == first[broken]["since"]
            (root / broken).write_text("## A\n\nText, fixed.\n")
            (root / binary).unlink()
            dream(root, server.url)
            assert state.unread_notes() == []
            # broken, then put back as it was when integrated: no change to integrate,
            # and no longer unreadable either
            good = (root / broken).read_bytes()
            (root / broken).write_bytes(b"---\ntags: [x\n---\n" + good)
            dream(root, server.url)
            assert [u["path"] for u in state.unread_notes()] == [broken]
            (root / broken).write_bytes(good)
            assert dream(root, server.url).extraction.changed == {}
            assert state.unread_notes() == []
        finally:
            state.close()


def test_a_topic_reason_reads_as_prose_even_for_a_runbook() -> None:
    """The first real sentence, without its list marker, after what the action did."""
    from vaultlink.pipeline.context import UnitResult
    from vaultlink.pipeline.topics import topic_of
    from vaultlink.prose.units import Unit

    steps = Unit("rebuild", "procedure", "1. Announce the rebuild in the ops channel.\n"
                 "2. Silence the latency alert for the window.", ["daily/2026-06-09.md"])
    topic = topic_of(UnitResult(steps, "integrated", "CREATE", "digest/procedure/rebuild.md"))
    assert topic["reason"] == "New in the digest: Announce the rebuild in the ops channel."
    fixed = UnitResult(steps, "integrated", "CORRECT", "digest/procedure/rebuild.md")
    assert topic_of(fixed)["reason"].startswith("Corrected: Announce")
    assert "the" not in topic["keywords"] and "for" not in topic["keywords"]


def test_a_note_that_cannot_be_opened_is_unreadable_not_deleted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Permission denied is no deletion: the checkpoint stays and status says why. (The
    tests run as root, for whom chmod 000 changes nothing, hence the patched read.)"""
    note = "daily/2026-07-01.md"
    root = make_vault(tmp_path, {note: "## A\n\nSomething worth keeping: a keeper.\n"})
    real_read = Path.read_bytes

    def denied(self: Path) -> bytes:
        if self.name == "2026-07-01.md":
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    with FakeOllama(model=with_extract(creator, keeper(note))) as server:
        dream(root, server.url)
        state = State(root / ".vaultlink/state.sqlite")
        try:
            kept = state.checkpoints()[note]
            monkeypatch.setattr(Path, "read_bytes", denied)
            dream(root, server.url)
            assert [(u["path"], "Permission denied" in u["reason"])
                    for u in state.unread_notes()] == [(note, True)]
            assert state.checkpoints()[note] == kept
            monkeypatch.undo()
            assert dream(root, server.url).extraction.changed == {}
            assert state.unread_notes() == []
        finally:
            state.close()
