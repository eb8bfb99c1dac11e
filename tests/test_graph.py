"""Pins the link graph (outlinks, backlinks, broken links) and what `check` reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.vaults import SAMPLE_VAULT, vault_with
from vaultlink.vault.graph import ParseCache, Problem, build_graph, check_vault
from vaultlink.vault.notes import Vault

GOOD_NODE = """\
---
name: Hybrid search
description: Combine BM25 and vectors with rank fusion; use when ranking notes.
---
Hybrid search ranks notes, as used by [[digest/procedure/rebuild-index.md]].

## Sources

- The ranking rule was decided in [[daily/2026-06-20.md|the June 20 session]].
"""


def node(body: str, sources: str = "- Decided in [[daily/2026-06-20.md]] at the standup.",
         name: str = "A node", description: str = "What it is and when it applies.") -> str:
    head = "---\n"
    if name:
        head += f"name: {name}\n"
    if description:
        head += f"description: {description}\n"
    head += "---\n"
    tail = f"\n## Sources\n\n{sources}\n" if sources else ""
    return f"{head}{body}\n{tail}"


@pytest.fixture
def clean(tmp_path: Path) -> Vault:
    return Vault(vault_with(tmp_path, {
        "daily/2026-06-20.md": (
            "# June 20\n"
            "\n"
            "Met about [[2026-06-21]] and ![[figure.png]].\n"
            "Code `[[not-a-link]]` stays code.\n"
            "See [[#June 20]] above.\n"
        ),
        "daily/2026-06-21.md": "Back to [[daily/2026-06-20]].\n",
        "resource/figure.png": b"\x89PNG\r\n\x1a\n\x00",
        "digest/wiki/hybrid-search.md": GOOD_NODE,
        "digest/procedure/rebuild-index.md": node(
            "Rebuild it; ranking in [[hybrid-search]]."),
    }))


def messages(problems: list[Problem], level: str) -> list[str]:
    return [str(p) for p in problems if p.level == level]


# -- the graph ----------------------------------------------------------------


def test_outlinks_are_resolved_with_their_lines(clean: Vault) -> None:
    graph = build_graph(clean)
    out = graph.outlinks["daily/2026-06-20.md"]
    assert [(e.target, e.anchor, e.line) for e in out] == [
        ("daily/2026-06-21.md", "", 3),
        ("resource/figure.png", "", 3),
        ("daily/2026-06-20.md", "June 20", 5),
    ]


def test_backlinks_list_every_source_except_self_links(clean: Vault) -> None:
    graph = build_graph(clean)
    back = graph.backlinks["daily/2026-06-20.md"]
    assert sorted(e.source for e in back) == [
        "daily/2026-06-21.md", "digest/procedure/rebuild-index.md",
        "digest/wiki/hybrid-search.md"]
    assert [e.source for e in graph.backlinks["resource/figure.png"]] == ["daily/2026-06-20.md"]
    assert [e.source for e in graph.backlinks["digest/wiki/hybrid-search.md"]] == [
        "digest/procedure/rebuild-index.md"]


def test_a_clean_vault_has_no_broken_links_and_no_problems(clean: Vault) -> None:
    graph = build_graph(clean)
    assert graph.broken() == []
    assert graph.unreadable == {}
    assert check_vault(clean, graph) == []


def test_broken_links_carry_source_line_and_reason(tmp_path: Path) -> None:
    v = Vault(vault_with(tmp_path, {
        "daily/a.md": "one\n\n[[2026-06-31]] and [[dup]]\n",
        "daily/x/dup.md": "x\n",
        "resource/y/dup.md": "y\n",
    }))
    broken = build_graph(v).broken()
    assert [(e.source, e.line, e.raw) for e in broken] == [
        ("daily/a.md", 3, "[[2026-06-31]]"), ("daily/a.md", 3, "[[dup]]")]
    assert "2026-06-31" in broken[0].reason
    assert "daily/x/dup.md" in broken[1].reason and "resource/y/dup.md" in broken[1].reason


def test_links_in_frontmatter_and_code_make_no_edges(tmp_path: Path) -> None:
    v = Vault(vault_with(tmp_path, {
        "daily/a.md": "---\nrelated: '[[b]]'\n---\n```\n[[b]]\n```\n`[[b]]`\n",
        "daily/b.md": "b\n",
    }))
    graph = build_graph(v)
    assert graph.outlinks["daily/a.md"] == []
    assert "daily/b.md" not in graph.backlinks


def test_unreadable_notes_are_collected_not_raised(tmp_path: Path) -> None:
    v = Vault(vault_with(tmp_path, {
        "daily/yaml.md": "---\nname: [unclosed\n---\nx\n",
        "daily/latin1.md": b"caf\xe9\n",
        "daily/ok.md": "[[yaml]]\n",
    }))
    graph = build_graph(v)
    assert set(graph.unreadable) == {"daily/yaml.md", "daily/latin1.md"}
    assert "YAML" in graph.unreadable["daily/yaml.md"]
    # an unreadable note is still a file: links to it resolve
    assert graph.outlinks["daily/ok.md"][0].target == "daily/yaml.md"


def test_a_cached_rebuild_reads_only_changed_notes_and_resolves_afresh(clean: Vault) -> None:
    """The API's graph after an edit: one note re-read, yet a link in an unchanged note
    follows a file created since, and a deleted note leaves the graph."""
    cache = ParseCache()
    first = build_graph(clean, cache=cache)
    assert first.outlinks["daily/2026-06-20.md"][0].target == "daily/2026-06-21.md"
    reads = cache.reads
    assert build_graph(clean, cache=cache).backlinks == first.backlinks
    assert cache.reads == reads  # nothing changed: nothing read

    day = clean.root / "daily/2026-06-21.md"
    day.write_text("Back to [[daily/2026-06-20]] and on to [[2026-06-22]].\n")
    graph = build_graph(clean, cache=cache)
    assert cache.reads == reads + 1
    assert [e.raw for e in graph.outlinks["daily/2026-06-21.md"]][-1] == "[[2026-06-22]]"
    assert graph.outlinks["daily/2026-06-21.md"][-1].target is None

    (clean.root / "daily/2026-06-22.md").write_text("A new day.\n")
    graph = build_graph(clean, cache=cache)
    assert cache.reads == reads + 2  # only the new note was read ...
    assert graph.outlinks["daily/2026-06-21.md"][-1].target == "daily/2026-06-22.md"  # ... yet

    day.unlink()
    graph = build_graph(clean, cache=cache)
    assert "daily/2026-06-21.md" not in graph.outlinks
    assert "daily/2026-06-21.md" not in {e.source for e in graph.backlinks["daily/2026-06-20.md"]}


# -- check: errors in digest/, warnings in the user's notes -----------------------


def test_check_reports_a_broken_digest_link_as_an_error_with_its_line(clean: Vault) -> None:
    (clean.root / "digest/wiki/bad.md").write_text(node("Uses [[digest/wiki/missing.md]]."))
    problems = check_vault(clean)
    assert messages(problems, "error") == [
        "error: digest/wiki/bad.md:5: broken link [[digest/wiki/missing.md]]: "
        "no note named 'digest/wiki/missing.md' in the vault; restore the note it names, "
        "or edit the link"]
    assert messages(problems, "warning") == []


def test_check_reports_a_node_without_a_source_link(clean: Vault) -> None:
    (clean.root / "digest/wiki/none.md").write_text(node("Body [[hybrid-search]].", sources=""))
    (clean.root / "digest/wiki/digest-only.md").write_text(
        node("Body.", sources="- Only another node, [[hybrid-search]], says so."))
    errors = [(p.path, p.message) for p in check_vault(clean) if p.level == "error"]
    assert [path for path, _ in errors] == ["digest/wiki/digest-only.md", "digest/wiki/none.md"]
    assert all("no source link" in msg for _, msg in errors)


def test_check_reports_bare_link_lines_with_file_line_numbers(clean: Vault) -> None:
    (clean.root / "digest/wiki/bare.md").write_text(node(
        "Body.", sources="- [[daily/2026-06-20.md]]\n- Stated in [[daily/2026-06-21.md]] too."))
    problems = [p for p in check_vault(clean) if p.level == "error"]
    assert [(p.path, p.line) for p in problems] == [("digest/wiki/bare.md", 9)]
    assert "bare link line" in problems[0].message
    lines = (clean.root / "digest/wiki/bare.md").read_text().split("\n")
    assert lines[problems[0].line - 1] == "- [[daily/2026-06-20.md]]"


def test_check_reports_an_unreadable_node_as_an_error(clean: Vault) -> None:
    (clean.root / "digest/wiki/broken.md").write_text("---\nname: [x\n---\nbody\n")
    (clean.root / "digest/wiki/binary.md").write_bytes(b"\x00\x01")
    errors = [p for p in check_vault(clean) if p.level == "error"]
    assert sorted(p.path for p in errors) == ["digest/wiki/binary.md", "digest/wiki/broken.md"]
    assert all(p.message.startswith("unreadable: ") for p in errors)


def test_check_reports_a_node_without_name_or_description(clean: Vault) -> None:
    (clean.root / "digest/wiki/anon.md").write_text(node("Body.", name="", description=""))
    errors = [p.message for p in check_vault(clean) if p.level == "error"]
    assert errors == ["frontmatter has no 'name'", "frontmatter has no 'description'"]


def test_check_reports_user_problems_as_warnings_only(clean: Vault) -> None:
    (clean.root / "daily/2026-06-22.md").write_text("x\n\nSee [[2026-06-31]].\n")
    (clean.root / "daily/2026-06-23.md").write_text("---\ntags: [a\n---\nx\n")
    (clean.root / "resource/latin1.md").write_bytes(b"caf\xe9\n")
    (clean.root / "Inbox.md").write_text("[[nowhere]]\n")
    problems = check_vault(clean)
    assert messages(problems, "error") == []
    warnings = messages(problems, "warning")
    assert len(warnings) == 4
    assert "warning: daily/2026-06-22.md:3: broken link [[2026-06-31]]: " \
           "no note named '2026-06-31' in the vault" in warnings
    assert any(w.startswith("warning: daily/2026-06-23.md: unreadable: ") for w in warnings)
    assert any(w.startswith("warning: resource/latin1.md: unreadable: ") for w in warnings)
    assert any(w.startswith("warning: Inbox.md:1: broken link") for w in warnings)


def test_check_survives_unreadable_files_and_symlink_loops(
    clean: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    (clean.root / "daily/locked.md").write_text("x\n")
    (clean.root / "daily/loop.md").symlink_to(clean.root / "daily/loop.md")
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    problems = check_vault(clean)
    assert [(p.level, p.path) for p in problems] == [("warning", "daily/locked.md")]
    assert "Permission denied" in problems[0].message


def test_topic_pages_need_no_sources_section(clean: Vault) -> None:
    (clean.root / "digest/topics").mkdir()
    (clean.root / "digest/topics/2026-06-20.md").write_text(
        "---\ntitle: Topics\n---\n# Topics\n\n- Search, from [[daily/2026-06-20.md]].\n")
    assert check_vault(clean) == []


def test_check_ignores_links_in_a_yaml_comment_heading(clean: Vault) -> None:
    text = GOOD_NODE.replace("---\nname:", "---\n# made by vaultlink\nname:", 1)
    (clean.root / "digest/wiki/hybrid-search.md").write_text(text)
    assert check_vault(clean) == []


# -- the sample vault -----------------------------------------------------------

CASES = Path(__file__).resolve().parent / "fixtures" / "sample_vault_cases.json"


@pytest.fixture(scope="module")
def sample() -> tuple[Vault, dict[str, Any]]:
    if not SAMPLE_VAULT.is_dir():  # pragma: no cover - the sample vault ships with the repo
        pytest.fail("sample_vault/ is missing")
    return Vault(SAMPLE_VAULT), json.loads(CASES.read_text(encoding="utf-8"))


def test_sample_vault_digest_has_no_errors(sample: tuple[Vault, dict[str, Any]]) -> None:
    vault, _ = sample
    errors = [str(p) for p in check_vault(vault) if p.level == "error"]
    assert errors == []


def test_sample_vault_broken_link_and_broken_yaml_are_warnings(
    sample: tuple[Vault, dict[str, Any]],
) -> None:
    vault, cases = sample
    warnings = [p for p in check_vault(vault) if p.level == "warning"]
    broken = cases["broken_user_link"]
    assert [(p.path, p.message.startswith("unreadable: ")) for p in warnings
            if p.path == cases["broken_yaml"]] == [(cases["broken_yaml"], True)]
    link_warnings = [p for p in warnings if p.path == broken["source"]]
    assert len(link_warnings) == 1
    assert f"broken link [[{broken['link']}]]" in link_warnings[0].message
    lines = (SAMPLE_VAULT / broken["source"]).read_text(encoding="utf-8").split("\n")
    assert f"[[{broken['link']}]]" in lines[link_warnings[0].line - 1]
    assert len(warnings) == 2


def test_sample_vault_code_holds_no_links_and_variants_resolve(
    sample: tuple[Vault, dict[str, Any]],
) -> None:
    vault, cases = sample
    graph = build_graph(vault)
    raws = [e.raw for e in graph.outlinks[cases["code_links"]]]
    for non_link in cases["code_non_links"]:
        assert not any(non_link in raw for raw in raws)
    for variant in cases["link_variants"].values():
        edges = {e.raw: e.target for e in graph.outlinks[variant["source"]]}
        assert edges[f"[[{variant['link']}]]"] == variant["resolves_to"]
