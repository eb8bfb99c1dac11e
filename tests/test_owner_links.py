"""The owner's links never change meaning, and nodes are named from what notes say
(issue 37, items 1 and 4).

Obsidian resolves ``[[name]]`` by file name in any folder, without case: a digest node
``copp.md`` beside the owner's ``CoPP.md`` makes the owner's ``[[CoPP]]`` ambiguous. So
no node takes a name another file of the vault has, nor an alias of an owner's note, nor
a date, an id or a number; the guard refuses it whoever writes, and both integrators
choose another name before it has to. A link a node carries over from a note names what
it named there. ``check`` reports a node that shadows an owner's name, and
``rename-shadowing`` (also run once on upgrade) renames it, journaled and undoable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.dream_runs import offline_dream
from tests.vaults import write_note, write_notes
from vaultlink.cli import app
from vaultlink.cli.settings import DEFAULTS
from vaultlink.errors import GuardRefusal, Refusal
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.nodes import NodeIndex
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.names import name_key, numbered_name
from vaultlink.pipeline.context import RunState, SourceNote
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.session import run_session
from vaultlink.pipeline.integrate.step import system_prompt, user_prompt
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.pipeline.offline import OfflineExtractor, OfflinePolicy
from vaultlink.prose.blocks import clean_inline
from vaultlink.prose.node_names import carried_unit, node_names, node_title
from vaultlink.prose.phrase_names import opening_words, unspaced_phrase
from vaultlink.prose.units import Unit
from vaultlink.vault.graph import build_graph, check_vault
from vaultlink.vault.names import owner_aliases, owner_links
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

SAME = float(DEFAULTS["integrate"]["same_threshold"])
RELATED = float(DEFAULTS["integrate"]["related_threshold"])

NODE = ("---\nname: CoPP\ndescription: Control plane policing.\n---\n"
        "Control plane policing limits traffic to the route processor.\n\n## Sources\n\n"
        "- Policing: taken from [[daily/2026-07-01.md|the 2026-07-01 note]].\n")


def guard_over(files: list[str], aliases: dict[str, list[str]] | None = None,
               bucket: str = "wiki") -> Guard:
    unit = Unit("copp", bucket, "Control plane policing limits traffic.",
                ["daily/2026-07-01.md"])
    return Guard(unit, frozenset(), lambda: files,
                 aliases=(lambda: aliases or {}))


# -- the guard: no writer names a node as the owner's links name something else --------


@pytest.mark.parametrize("owner", ["resource/net/CoPP.md", "CoPP.md", "daily/x/copp.MD",
                                   "attachments/CoPP.pdf", "resource/ＣｏＰＰ.md"])
def test_the_guard_refuses_a_node_named_as_an_owners_file_in_any_folder_or_case(
        owner: str) -> None:
    guard = guard_over([owner, "daily/2026-07-01.md"])
    if name_key(owner) not in ("copp", "copp.pdf"):  # full-width letters: another name
        guard.check_write("digest/wiki/copp.md", None, NODE)
        return
    with pytest.raises(GuardRefusal) as refused:
        guard.check_write("digest/wiki/copp.md", None, NODE)
    assert refused.value.code == Refusal.SHADOWS_NAME
    assert owner in str(refused.value) and "Qualify the name" in str(refused.value)


def test_the_guard_refuses_a_node_named_as_a_node_of_another_bucket() -> None:
    guard = guard_over(["digest/personal/copp.md", "daily/2026-07-01.md"])
    with pytest.raises(GuardRefusal) as refused:
        guard.check_write("digest/wiki/copp.md", None, NODE)
    assert refused.value.code == Refusal.SHADOWS_NAME


def test_the_guard_refuses_a_node_named_as_an_alias_of_an_owners_note(tmp_path: Path) -> None:
    (tmp_path / "resource").mkdir()
    (tmp_path / "daily").mkdir()
    (tmp_path / "resource/network.md").write_text(
        "---\naliases: [CoPP, Control plane policing]\n---\n# Network\n\nRouters.\n")
    (tmp_path / "daily/2026-07-01.md").write_text("Policing.\n")
    (tmp_path / "digest").mkdir()
    (tmp_path / "digest/n.md").write_text("---\naliases: [Elsewhere]\n---\nx\n")
    vault = Vault(tmp_path)
    aliases = owner_aliases(vault, vault.iter_files())
    assert aliases == {"copp": ["resource/network.md"],
                       "control plane policing": ["resource/network.md"]}  # not digest's
    guard = guard_over(list(vault.iter_files()), aliases)
    with pytest.raises(GuardRefusal) as refused:
        guard.check_write("digest/wiki/copp.md", None, NODE)
    assert refused.value.code == Refusal.SHADOWS_NAME
    assert "alias of resource/network.md" in str(refused.value)
    guard.check_write("digest/wiki/control-plane-policing.md", None, NODE)  # not the alias


def test_the_guard_refuses_the_name_of_a_note_the_owner_links_but_has_not_written(
        tmp_path: Path) -> None:
    (tmp_path / "resource").mkdir()
    (tmp_path / "daily").mkdir()
    (tmp_path / "resource/cache-attacks.md").write_text(
        "# Cache attacks\n\nFlush+Reload uses [[clflush]] and [[Timing|a timer]].\n"
        "See `[[in code]]`.\n")
    (tmp_path / "daily/2026-07-01.md").write_text("Policing, see [[Network]].\n")
    (tmp_path / "resource/network.md").write_text("# Network\n")
    vault = Vault(tmp_path)
    links = owner_links(vault, vault.iter_files())
    assert set(links) == {"clflush", "timing", "network"}  # code holds no link
    unit = Unit("clflush", "wiki", "clflush flushes a cache line.", ["daily/2026-07-01.md"])
    guard = Guard(unit, frozenset(), lambda: list(vault.iter_files()),
                  links=lambda: links)
    node = NODE.replace("CoPP", "clflush")
    with pytest.raises(GuardRefusal) as refused:
        guard.check_write("digest/wiki/clflush.md", None, node)
    assert refused.value.code == Refusal.SHADOWS_NAME
    assert "[[clflush]] in resource/cache-attacks.md" in str(refused.value)
    # a link that a file answers already is that file's name, said as such
    with pytest.raises(GuardRefusal, match=r"the name of resource/network.md"):
        guard.check_write("digest/wiki/network.md", None, node)
    guard.check_write("digest/wiki/clflush-instruction.md", None, node)


@pytest.mark.parametrize("slug", ["2022-08-05", "2025-01-02", "20220805", "202208051230",
                                  "7", "1-2", "2022年8月5日"])
def test_no_node_is_named_by_a_date_an_id_or_a_number(slug: str) -> None:
    assert numbered_name(slug)
    with pytest.raises(GuardRefusal) as refused:
        guard_over(["daily/2026-07-01.md"]).check_write(f"digest/wiki/{slug}.md", None, NODE)
    assert refused.value.code == Refusal.NUMBERED_NAME
    unit = Unit(slug, "wiki", "Rotating the search API key needs the staging cluster "
                "drained first.\nThe new key is read at start-up.", ["resource/202208051230.md"],
                title=slug.replace("-", " "))
    title, chosen = node_names(unit)[0]
    assert not numbered_name(chosen) and not re.search(r"\d{4}", title), (title, chosen)


@pytest.mark.parametrize("title", ["Task 2022-12-11 done", "Daily 2022 12 11",
                                   "会议 2022年8月5日"])
def test_a_days_date_inside_a_name_names_no_node(title: str) -> None:
    """The offline rules named bramses' open task "this task was made on [[2022-12-11]]
    but it can be done whenever I guess!" "Task 2022-12-11 done": a node that reads as
    the owner's day note. A year alone is no day."""
    from vaultlink.prose.subject_names import name_flaw, node_name_flaw
    assert node_name_flaw(title) and name_flaw(title)
    unit = Unit("x", "wiki", "The installer adds the JDK to the path and sets JAVA_HOME for "
                "every shell.\nRestart the shell after the JDK installer finishes.",
                ["daily/2022-12-11.md"], title=title)
    assert not re.search(r"\d{4}[ -]\d", node_title(unit)), node_title(unit)
    assert not node_name_flaw("Release 2024 notes on sync") and not name_flaw("Iso 8601")


def test_names_that_say_a_subject_are_free() -> None:
    for name in ("exercise-5", "http配置", "v2", "copp-2022-notes", "iso-8601"):
        assert not numbered_name(name), name


# -- names from what the note says -------------------------------------------------------


@pytest.mark.parametrize("heading", ["1、安装", "2. Install", "Java 参考", "References",
                                     "Literatur", "See also", "Notes", "Misc", "Default",
                                     "TODO"])
def test_a_numbered_references_or_generic_heading_names_no_node(heading: str) -> None:
    unit = Unit("x", "wiki", "The installer adds the JDK to the path and sets JAVA_HOME for "
                "every shell.\nRestart the shell after the JDK installer finishes.",
                ["daily/2026-07-01.md"], title=heading)
    title = node_title(unit)
    assert title != heading and title.lower() not in ("install", "安装", "references"), title
    assert not re.match(r"^\s*\d", title)


@pytest.mark.parametrize("path, title, named", [
    # a folder note (gorwast's "Impresión 3D/Impresión 3D.md") and a folder's index page
    # stand for their folder: the folder's name is theirs ("Llevo buscando" before)
    ("resource/Impresión 3D/Impresión 3D.md", "Impresión 3D", True),
    ("resource/python-markdown/index.md", "Python-Markdown", True),
    # any other note in a folder is not named as the folder
    ("resource/Impresión 3D/Filamentos.md", "Impresión 3D", False),
    ("daily/2026/07/2026-07-01.md", "2026", False),
])
def test_a_folder_names_only_the_note_that_stands_for_it(path: str, title: str,
                                                          named: bool) -> None:
    unit = Unit("x", "wiki", "La impresión 3D fabrica objetos por capas de material, y llevo "
                "buscando piezas útiles desde 2024.", [path], title=title)
    assert (node_title(unit) == title) is named, node_title(unit)


def test_a_numbered_or_references_heading_of_a_note_names_no_unit() -> None:
    text = ("# 2022-08-05\n\n## 1、安装\n\n安装完成后需要重新打开终端，然后检查环境变量是否生效。"
            "环境变量里需要加入新的路径。\n\n## Java 参考\n\nThe Java language specification "
            "explains generics and type erasure in its fourth chapter, with examples.\n")
    src = SourceNote("daily/2022-08-05.md", "", [("2022-08-05", text, True)], text)
    units = OfflineExtractor().extract([src])
    assert units
    for unit in units:
        title = node_title(unit)
        assert title not in ("1、安装", "安装", "Java 参考", "2022-08-05"), title
        assert not numbered_name(node_names(unit)[0][1])


def test_a_chinese_name_is_words_of_the_text_never_pairs_of_characters() -> None:
    said = "长时间没写了，今天终于重新开始写日记。"
    assert opening_words(said) == "长时间没写"
    assert unspaced_phrase([said]) == "长时间没写"
    src = SourceNote("daily/2022-09-09.md", "", [("", said + "\n", True)], said + "\n")
    for unit in OfflineExtractor().extract([src]):
        for name in (unit.title, node_title(unit)):
            assert "长时 时间" not in name and "间没" not in name.replace("长时间没", ""), name
            assert name.replace(" ", "") in said.replace("，", "").replace("。", ""), name


# -- both integrators choose a free name, in a real vault ----------------------------------


OWNER_NOTES = {
    "resource/CoPP.md": "# CoPP\n\nControl plane policing (CoPP) limits the traffic "
    "that reaches a router's route processor. Each class of control traffic gets its own "
    "rate, so a flood of one kind cannot starve routing updates.\n",
    "resource/202208051230.md": "#http #proxy\n\n# HTTP配置\n\n代理服务器的HTTP配置写在环境变量里。"
    "HTTP配置修改后需要重新打开终端才会生效。\n",
    "resource/Linear Algebra.md": "---\naliases: [LinAlg]\n---\n# Linear Algebra\n\n"
    "Vectors, matrices and the maps between vector spaces.\n",
    "daily/2026-07-01.md": "## Eigenvalues\n\nToday I finally understood eigenvalues while "
    "reviewing [[Linear Algebra]]: an eigenvector keeps its direction under the map, and "
    "its eigenvalue says how much it is stretched.\n",
}


@dataclass
class Dreamed:
    root: Path
    run: RunState


def dream(root: Path) -> RunState:
    return offline_dream(root, **{"auto_dream.max_units": 100})


@pytest.fixture(scope="module")
def dreamed(tmp_path_factory: pytest.TempPathFactory) -> Dreamed:
    root = tmp_path_factory.mktemp("owner") / "vault"
    write_notes(root, OWNER_NOTES)
    write_note(root, "digest/wiki/linear-algebra-diagonalization.md",
               "---\nname: Linear algebra diagonalization\ndescription: Diagonalizing a matrix.\n"
               "---\nA matrix with a basis of eigenvectors is diagonalizable.\n")
    return Dreamed(root, dream(root))


def owner_keys(root: Path) -> set[str]:
    return {name_key(p.name) for p in root.rglob("*") if p.is_file()
            and "digest" not in p.relative_to(root).parts[:1]
            and ".vaultlink" not in p.parts}


def test_no_node_of_a_dream_takes_an_owners_name(dreamed: Dreamed) -> None:
    assert dreamed.run.report.failed_units == []
    created = [r.target for r in dreamed.run.report.results if r.action == "CREATE"]
    assert created
    keys = owner_keys(dreamed.root) | {"linalg"}
    for rel in created:
        stem = rel.rsplit("/", 1)[-1]
        assert name_key(stem) not in keys, rel
        assert not numbered_name(stem), rel
    assert not (dreamed.root / "digest/wiki/copp.md").exists()
    assert not (dreamed.root / "digest/wiki/202208051230.md").exists()


def test_a_link_carried_over_keeps_the_target_it_had_in_the_owners_note(
        dreamed: Dreamed) -> None:
    nodes = {r.target for r in dreamed.run.report.results if "daily/2026-07-01.md" in r.unit.paths}
    assert nodes
    for rel in nodes:
        text = (dreamed.root / rel).read_text(encoding="utf-8")
        targets = {w.target for w in find_wikilinks(text)}
        assert "resource/Linear Algebra.md" in targets, text
        assert "Linear Algebra" not in targets
        assert not any("diagonalization" in t for t in targets
                       if "Linear Algebra" in text.split(t)[0][-40:]), text


def test_a_carried_link_resolves_from_the_notes_folder() -> None:
    files = ["resource/math/Linear Algebra.md", "resource/physics/Linear Algebra.md",
             "daily/2026-07-01.md", "resource/math/week.md"]
    unit = Unit("x", "wiki", "Reviewed [[Linear Algebra|LA]] and [[Nowhere]] and "
                "[[../physics/Linear Algebra]].", ["resource/math/week.md"])
    text = carried_unit(unit, files).summary
    assert text == ("Reviewed [[resource/math/Linear Algebra.md|LA]] and Nowhere and "
                    "[[resource/physics/Linear Algebra.md|Linear Algebra]].")


def test_a_name_inside_a_longer_linked_name_is_no_link_to_it() -> None:
    """The 1.5B's node said "The project named '[[.../Test Project.md]] 2' is being
    managed": the owner's link to "Test Project 2" became one to "Test Project" followed
    by " 2". Read from the note, the longer link is carried first."""
    files = ["resource/Projects/Projects.md", "resource/Projects/Test Project/Test Project.md",
             "resource/Projects/Test Project 2/Test Project 2.md"]
    note = "- [[Test Project]]\n- [[Test Project 2]]\n"
    unit = Unit("x", "wiki", "The projects are Test Project 2 and Test Project.",
                ["resource/Projects/Projects.md"])
    text = carried_unit(unit, files, read=lambda _: note).summary
    assert text == ("The projects are [[resource/Projects/Test Project 2/Test Project 2.md|"
                    "Test Project 2]] and [[resource/Projects/Test Project/Test Project.md|"
                    "Test Project]].")


@pytest.mark.parametrize(("said", "quoted"), [
    ("Tuesday's rebuild ([[2026-06-09|Tuesday's rebuild]]) was slow.",
     "Tuesday's rebuild was slow."),
    ("the guide ([The Guide](guide.md)) says so", "the guide says so"),
    ("我们去了東京 ([[東京]])。", "我们去了東京。"),
    # the words before it are read as they are said, however spaced; each echo once
    ("Tuesday's     rebuild ([[2026-06-09|Tuesday's rebuild]]) was slow.",
     "Tuesday's rebuild was slow."),
    ("a ([[a]]) a ([[a]]) b", "a a b"),
    ("البيت ([[البيت]]) جميل", "البيت جميل"),
    # a link that shows other words, or only part of a word before it, stays as its text
    ("the rebuild ([[2026-06-09]]) was slow.", "the rebuild (2026-06-09) was slow."),
    ("Bärger ([[ärger]]) und", "Bärger (ärger) und"),
])
def test_a_link_in_brackets_after_the_words_it_shows_is_said_once(said: str, quoted: str
                                                                   ) -> None:
    """The sample vault's "Tuesday's rebuild ([[2026-06-09|Tuesday's rebuild]])" reached
    the vacuum node as "[[daily/2026-06-09.md|Tuesday's rebuild]] (Tuesday's rebuild)":
    the link became its text, then the owner's link was found again by the first
    "Tuesday's rebuild". Now the words are said once, and linked once."""
    assert clean_inline(said) == quoted


def test_the_owners_link_after_its_words_is_carried_once() -> None:
    note = "Tuesday's rebuild ([[2026-06-09|Tuesday's rebuild]]) was slow."
    unit = Unit("x", "wiki", clean_inline(note), ["daily/2026-06-11.md"])
    text = carried_unit(unit, ["daily/2026-06-09.md", "daily/2026-06-11.md"],
                        read=lambda _: note).summary
    assert text == "[[daily/2026-06-09.md|Tuesday's rebuild]] was slow."


# -- the sixth unit called Exercise ---------------------------------------------------


@pytest.fixture
def gym(tmp_path: Path, minilm: MiniLMEmbedder) -> Iterator[tuple[Vault, NodeIndex]]:
    root = tmp_path / "vault"
    subjects = ["Ran five kilometres along the canal before breakfast.",
                "Lifted weights at the gym, three sets of squats.",
                "Cycled to work and back, forty minutes each way.",
                "Yoga class in the evening, mostly hip openers.",
                "Climbed at the bouldering hall with Sam for two hours."]
    for n, said in enumerate(subjects, start=1):
        slug = "exercise" if n == 1 else f"exercise-{n}"
        write_note(root, f"digest/personal/{slug}.md",
                   f"---\nname: Exercise\ndescription: {said}\n---\n{said}\n\n## Sources\n\n"
                   f"- Exercise: taken from [[daily/2026-06-0{n}.md|the 2026-06-0{n} note]].\n")
        write_note(root, f"daily/2026-06-0{n}.md", f"## Exercise\n\n{said}\n")
    write_note(root, "daily/2026-07-02.md", "## Exercise\n\nSwam forty lengths at the lido "
               "before work; the water was cold.\n")
    vault = Vault(root)
    vault.state_dir.mkdir()
    index = NodeIndex(vault, vault.state_dir / "state.sqlite", None, minilm)
    index.sync()
    yield vault, index
    index.close()


def test_the_sixth_exercise_unit_gets_a_qualified_name_not_a_failure(
        gym: tuple[Vault, NodeIndex]) -> None:
    vault, index = gym
    unit = Unit("exercise", "personal", "Swam forty lengths at the lido before work; the "
                "water was cold.", ["daily/2026-07-02.md"], title="Exercise")
    existed = frozenset(vault.iter_files([vault.digest]))
    box = Toolbox(vault, index, Guard(unit, existed, vault.iter_files))
    policy = OfflinePolicy(same_threshold=0.99, related_threshold=RELATED)  # nothing merges
    outcome = run_session(policy, box, system_prompt(unit.bucket), user_prompt(unit), 60)
    assert outcome.status == "done", outcome.error
    assert outcome.receipt is not None and outcome.receipt.action == "CREATE"
    target = outcome.receipt.target_path
    assert target not in existed and not re.search(r"-\d+\.md$", target), target
    name = (vault.root / target).read_text().split("name: ", 1)[1].split("\n", 1)[0]
    assert name.startswith("Exercise (") and name != "Exercise", name


def test_every_name_tried_ends_in_one_that_is_free() -> None:
    unit = Unit("exercise", "personal", "Swam at the lido.", ["daily/2026-07-02.md"],
                title="Exercise")
    slugs = [s for _, s in node_names(unit)]
    assert len(slugs) == len(set(slugs)) >= 10
    assert slugs[0] == "exercise" and re.fullmatch(r"exercise-[0-9a-f]{6}", slugs[-1])


# -- check, the rename command, undo and the upgrade's repair ------------------------------

COPP_NODE = ("---\nname: CoPP\ndescription: Control plane policing limits traffic to the "
             "route processor.\n---\nControl plane policing limits traffic to the route "
             "processor.\n\n## Sources\n\n- Control plane policing: taken from "
             "[[daily/2026-07-01.md|the 2026-07-01 note]].\n")
ROUTING_NODE = ("---\nname: Routing\ndescription: Routing protocols.\n---\nRouters protect "
                "their control plane with [[digest/wiki/copp.md|CoPP]].\n\n## Sources\n\n"
                "- Routing: taken from [[daily/2026-07-01.md|the 2026-07-01 note]].\n")
DAY = "## Network\n\nRead about [[CoPP]] today: routers police their control plane.\n"


def shadowed_vault(root: Path) -> Path:
    write_note(root, "resource/net/CoPP.md", OWNER_NOTES["resource/CoPP.md"])
    write_note(root, "resource/net/access-lists.md",
               "---\naliases: [ACL]\n---\n# Access lists\n\nFilters.\n")
    write_note(root, "daily/2026-07-01.md", DAY)
    write_note(root, "digest/wiki/copp.md", COPP_NODE)
    write_note(root, "digest/wiki/acl.md", COPP_NODE.replace("name: CoPP", "name: ACL"))
    write_note(root, "digest/wiki/routing.md", ROUTING_NODE)
    return root


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".vaultlink" not in p.parts}


def test_check_reports_a_node_that_shadows_an_owners_note_or_alias(tmp_path: Path) -> None:
    root = shadowed_vault(tmp_path / "v")
    errors = {(p.path, p.message.split(":")[0]) for p in check_vault(Vault(root))
              if p.level == "error"}
    assert ("digest/wiki/copp.md", "shadows resource/net/CoPP.md") in errors
    assert ("digest/wiki/acl.md", "shadows an alias of resource/net/access-lists.md") in errors
    assert not any(p == "digest/wiki/routing.md" for p, _ in errors)


def test_rename_shadowing_renames_rewrites_digest_links_only_and_undo_reverts_it(
        tmp_path: Path) -> None:
    root = shadowed_vault(tmp_path / "v")
    before = files_of(root)
    dry = CliRunner().invoke(app, ["rename-shadowing", "--vault", str(root), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would rename digest/wiki/copp.md -> digest/wiki/copp-" in dry.output
    assert files_of(root) == before
    ran = CliRunner().invoke(app, ["rename-shadowing", "--vault", str(root), "--json"])
    assert ran.exit_code == 0, ran.output
    answer = json.loads(ran.output)
    moved = {r["from"]: r["to"] for r in answer["renamed"]}
    assert set(moved) == {"digest/wiki/copp.md", "digest/wiki/acl.md"}
    after = files_of(root)
    assert "digest/wiki/copp.md" not in after and moved["digest/wiki/copp.md"] in after
    for new in moved.values():
        assert name_key(new) not in {"copp", "acl"} and new.startswith("digest/wiki/")
    assert f"[[{moved['digest/wiki/copp.md']}|CoPP]]" in after["digest/wiki/routing.md"].decode()
    for rel in ("daily/2026-07-01.md", "resource/net/CoPP.md", "resource/net/access-lists.md"):
        assert after[rel] == before[rel]  # the owner's notes are never touched
    assert [p for p in check_vault(Vault(root)) if p.level == "error"] == []
    graph = build_graph(Vault(root))
    assert graph.resolver.resolve("CoPP", "daily/2026-07-01.md").path == "resource/net/CoPP.md"
    undone = CliRunner().invoke(app, ["undo", str(answer["journal_ids"][0]), "--vault",
                                      str(root)])
    assert undone.exit_code == 0, undone.output
    assert files_of(root) == before


def test_the_upgrade_repair_runs_once_on_the_first_dream(tmp_path: Path) -> None:
    root = shadowed_vault(tmp_path / "v")
    dream(root)
    assert not (root / "digest/wiki/copp.md").exists()
    assert not (root / "digest/wiki/acl.md").exists()
    assert (root / "daily/2026-07-01.md").read_text() == DAY
    state = State(Vault(root).state_dir / "state.sqlite")
    try:
        renames = [e for e in state.journal(100) if e.action == "RENAME"]
        assert {e.target for e in renames} >= {"digest/wiki/copp.md", "digest/wiki/acl.md"}
    finally:
        state.close()
    write_note(root, "digest/wiki/copp.md", COPP_NODE)  # by hand, after the upgrade
    dream(root)
    assert (root / "digest/wiki/copp.md").read_text() == COPP_NODE  # once only


def test_a_name_led_by_a_date_or_timestamp_keeps_only_its_words() -> None:
    """A real vault's captures are named "2022-12-11--11-59-30 with Smartphone Capture":
    the stamp is the file's id, not its subject; a stamp alone names nothing."""
    from vaultlink.prose.node_names import sound
    from vaultlink.prose.units import Unit
    unit = Unit("capture", "wiki", "A recipe for rye sourdough.", ["resource/x.md"])
    assert sound("202208051230 HTTP配置", unit) == "HTTP配置"
    assert sound("2022-08-05 Meeting with Bob", unit) == "Meeting with Bob"
    assert sound("2022-08-05", unit) == ""
    assert sound("2025年12月14日 4:15:33 JST", unit) == ""
    assert sound("2022 12 11 11 59 30 with smartphone capture", unit) == "smartphone capture"
    assert sound("2025年12月14日 4 15 33 JST ショートカット", unit) == "ショートカット"
    assert sound("11:52: get to work on the assignment", unit) == "get to work on the assignment"
    assert sound("1984 novel", unit) == "1984 novel"  # a number is no time of day
    assert not sound("2022-12-11--11-59-30 with Smartphone Capture", unit).startswith("2022")
