"""The guard's invariants, exercised through the six tools exactly as a model calls them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.vaults import write_notes
from vaultlink.errors import GuardRefusal
from vaultlink.pipeline.context import Hit
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.prose.units import Receipt, Unit
from vaultlink.vault.notes import Vault

SOURCE = "daily/2026-07-01.md"
NODE = "digest/wiki/search.md"
NODE_TEXT = """---
name: Search
description: How search works.
---
Search uses [[digest/wiki/ranking.md|ranking]]. The old depth is 100 per list.

## Sources

- First described in [[daily/2026-06-01.md]].
"""


class NoRecall:
    """An index that knows no nodes: these tests are about writes, not recall."""

    def node_search(self, query: str, limit: int = 20) -> Sequence[Hit]:
        return []


@pytest.fixture()
def vault(tmp_path: Path) -> Vault:
    return Vault(write_notes(tmp_path, {
        SOURCE: "## A\n\nDepth is now 200.\n", "daily/2026-06-01.md": "x\n", NODE: NODE_TEXT,
        "digest/wiki/ranking.md": "---\nname: R\ndescription: d\n---\nr\n",
        ".vaultlink/token": "secret\n"}))


def toolbox(vault: Vault, bucket: str = "wiki") -> Toolbox:
    unit = Unit("depth", bucket, "Depth is now 200.", [SOURCE])
    existed = frozenset(p for p in vault.iter_files(["digest"]))
    return Toolbox(vault, NoRecall(), Guard(unit, existed, vault.iter_files))


def call(box: Toolbox, tool: str, /, **args: object) -> dict[str, object]:
    answer: dict[str, object] = json.loads(box.call(tool, dict(args)))
    return answer


GOOD = f"Depth is 200, see [[{NODE}]].\n\n## Sources\n\n- The change is in [[{SOURCE}]].\n"


def test_create_in_the_units_bucket_lands(vault: Vault) -> None:
    box = toolbox(vault)
    assert call(box, "write", path="digest/wiki/depth.md", name="Depth",
                description="Candidate depth.", content=GOOD)["ok"] is True
    assert "[[daily/2026-07-01.md]]" in (vault.root / "digest/wiki/depth.md").read_text()


@pytest.mark.parametrize("path, reason", [
    ("digest/procedure/depth.md", "belongs in digest/wiki/"),
    ("../outside.md", "'..'"),
    ("daily/x.md", "not a digest node path"),
    ("digest/wiki/Bad Slug.md", "kebab-case"),
    ("digest/topics/2026-07-01.md", "not a digest node path"),
])
def test_writes_outside_the_rules_are_refused(vault: Vault, path: str, reason: str) -> None:
    box = toolbox(vault)
    answer = call(box, "write", path=path, name="D", description="d", content=GOOD)
    assert reason in str(answer["error"])


def test_create_over_an_existing_node_is_refused(vault: Vault) -> None:
    box = toolbox(vault)
    clobber = call(box, "write", path=NODE, name="D", description="d", content=GOOD)
    assert "additive" in str(clobber["error"])
    kept = NODE_TEXT.split("---\n", 2)[2] + f"\nNow 200, per [[{SOURCE}]].\n"
    kept = kept.replace("## Sources\n", f"## Sources\n\n- Changed in [[{SOURCE}]] today.\n")
    assert call(box, "write", path=NODE, name="D", description="d", content=kept)["ok"]
    with pytest.raises(GuardRefusal, match="CREATE needs a new node"):
        box.guard.check_result(Receipt("CREATE", NODE), NODE_TEXT, box.current[NODE])


def test_one_target_per_unit(vault: Vault) -> None:
    box = toolbox(vault)
    call(box, "write", path="digest/wiki/depth.md", name="D", description="d", content=GOOD)
    answer = call(box, "write", path="digest/wiki/other.md", name="D", description="d",
                  content=GOOD)
    assert "exactly one digest node" in str(answer["error"])


def test_edit_that_drops_a_link_is_refused_but_an_alias_change_is_not(vault: Vault) -> None:
    box = toolbox(vault)
    dropped = call(box, "edit", path=NODE, old="[[digest/wiki/ranking.md|ranking]]",
                   new="ranking")
    assert "additive" in str(dropped["error"])
    renamed = call(box, "edit", path=NODE, old="[[digest/wiki/ranking.md|ranking]]",
                   new="[[digest/wiki/ranking.md|the ranking rule]]")
    assert renamed["ok"] is True


def test_bare_link_lines_and_unresolved_links_are_refused(vault: Vault) -> None:
    box = toolbox(vault)
    bare = call(box, "write", path="digest/wiki/depth.md", name="D", description="d",
                content=f"Depth.\n\n## Sources\n\n- [[{SOURCE}]]\n")
    assert "bare link line" in str(bare["error"])
    short = call(box, "write", path="digest/wiki/depth.md", name="D", description="d",
                 content=GOOD.replace(f"[[{NODE}]]", "[[search]]"))
    assert f"Write it as [[{NODE}]]" in str(short["error"])
    missing = call(box, "write", path="digest/wiki/depth.md", name="D", description="d",
                   content=GOOD.replace(f"[[{NODE}]]", "[[digest/wiki/nope.md]]"))
    assert "does not name an existing note" in str(missing["error"])


def test_links_resolve_against_the_listing_until_a_write_lands(vault: Vault) -> None:
    """The listing taken at the unit's start serves every check until a write changes
    the vault; a refused path never becomes a link target of a later write."""
    unit = Unit("depth", "wiki", "Depth is now 200.", [SOURCE])
    guard = Guard(unit, frozenset({NODE}), vault.iter_files, files=frozenset({SOURCE, NODE}))
    late = "digest/wiki/late.md"
    head = "---\nname: D\ndescription: d\n---\n"
    (vault.root / late).write_text(head + "l\n")
    linking = head + f"Depth, as in [[{late}]].\n" + GOOD
    with pytest.raises(GuardRefusal, match="does not name an existing note"):
        guard.check_write("digest/wiki/depth.md", None, linking)
    with pytest.raises(GuardRefusal, match="does not name an existing note"):
        guard.check_write("digest/wiki/other.md", None,
                          head + GOOD.replace(f"[[{NODE}]]", "[[digest/wiki/depth.md]]"))
    first = guard.check_write("digest/wiki/depth.md", None, head + GOOD)
    guard.accept_write(first, created=True)
    assert guard.check_write(first, head + GOOD, linking) == first


def test_frontmatter_needs_name_and_description(vault: Vault) -> None:
    box = toolbox(vault)
    answer = call(box, "frontmatter_update", path=NODE, metadata={"description": ""})
    assert "non-empty 'description'" in str(answer["error"])


def test_a_write_without_a_description_takes_the_nodes_or_the_units(vault: Vault) -> None:
    """The 0.5B wrote a node of a link and a gif with no description, was refused twice
    and the unit failed. A node it makes is described by its unit, in the owner's words;
    a node it rewrites keeps its own description."""
    box = toolbox(vault)
    assert call(box, "write", path="digest/wiki/depth.md", name="Depth", description=" ",
                content=GOOD)["ok"] is True
    assert "description: Depth is now 200." in (vault.root / "digest/wiki/depth.md").read_text()
    box = toolbox(vault)
    body = NODE_TEXT.split("---\n", 2)[2] + f"- The new depth is in [[{SOURCE}]].\n"
    answer = call(box, "write", path=NODE, name="Search", description="", content=body)
    assert answer.get("ok") is True, answer
    assert "description: How search works." in (vault.root / NODE).read_text()


def test_edit_needs_old_text_that_occurs_once(vault: Vault) -> None:
    box = toolbox(vault)
    assert "non-empty" in str(call(box, "edit", path=NODE, old="", new="x")["error"])
    assert "does not occur" in str(call(box, "edit", path=NODE, old="zzz", new="x")["error"])
    assert "occurs 2 times" in str(call(box, "edit", path=NODE, old="[[d", new="x")["error"])


def test_the_model_cannot_read_vaultlink_state(vault: Vault) -> None:
    answer = call(toolbox(vault), "read", path=".vaultlink/token")
    assert "dot-files and dot-folders" in str(answer["error"])


def test_a_users_concurrent_edit_survives(vault: Vault) -> None:
    box = toolbox(vault)
    call(box, "read", path=NODE)
    user_text = NODE_TEXT + "\nMy own line.\n"
    (vault.root / NODE).write_text(user_text)
    answer = call(box, "edit", path=NODE, old="## Sources",
                  new=f"Now 200, per [[{SOURCE}]].\n\n## Sources")
    assert "changed on disk" in str(answer["error"])
    assert (vault.root / NODE).read_text() == user_text


def test_result_must_cite_the_units_source(vault: Vault) -> None:
    box = toolbox(vault)
    call(box, "edit", path=NODE, old="## Sources", new="Depth matters.\n\n## Sources")
    with pytest.raises(GuardRefusal, match="cite the unit's source"):
        box.guard.check_result(Receipt("REFINE", NODE), NODE_TEXT, box.current[NODE])


def test_correct_must_keep_the_old_claim_visible(vault: Vault) -> None:
    old = "The old depth is 100 per list."
    deleting = NODE_TEXT.replace(old, f"Corrected: depth is 200 per [[{SOURCE}]].")
    box = toolbox(vault)
    with pytest.raises(GuardRefusal, match="superseded statement visible"):
        box.guard.target = NODE
        box.guard.check_result(Receipt("CORRECT", NODE), NODE_TEXT,
                               deleting + f"\n- The fix is recorded in [[{SOURCE}]].\n")
    striking = NODE_TEXT.replace(old, f"~~{old}~~ Corrected: depth is 200 per [[{SOURCE}]].")
    striking = striking.rstrip("\n") + f"\n- The correction is recorded in [[{SOURCE}]].\n"
    assert box.guard.check_result(Receipt("CORRECT", NODE), NODE_TEXT, striking).action == \
        "CORRECT"


def test_long_answers_are_cut_but_stay_valid_json(vault: Vault) -> None:
    long_note = "digest/wiki/long.md"
    (vault.root / long_note).write_text("---\nname: L\ndescription: d\n---\n"
                                        + "A line of text here.\n" * 2000)
    raw = toolbox(vault).call("read", {"path": long_note})
    answer = json.loads(raw)
    assert len(raw) <= 6000 and "truncated" in answer
    assert answer["text"].startswith("---\nname: L")
