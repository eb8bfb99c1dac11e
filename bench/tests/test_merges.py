"""bench/quality/merges: what counts as a merge, where its unit sits, and the labels file."""

from __future__ import annotations

from pathlib import Path

from bench.quality.merges import Label, cited, find_merges, load_labels, ranges, unit_lines
from vaultlink.vault.actions import Action
from vaultlink.vault.state import State

NODE = "---\nname: Flush + Flush\n---\nTiming of clflush.\n\n## Sources\n\n- {}\n"


def test_cited_reads_only_the_sources_section() -> None:
    text = "See [[resource/b.md|B]].\n\n## Sources\n\n- taken from [[resource/a.md|A]]\n"
    assert cited(text) == {"resource/a.md"}
    assert cited(None) == set()


def test_ranges_join_lines_across_one_blank() -> None:
    assert ranges([3, 4, 5, 9, 11, 20]) == "3-5, 9-11, 20"
    assert ranges([]) == ""


def test_unit_lines_find_the_summary_in_its_note(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("# Title\n\n- The attack needs [[Shared Memory|shared memory]].\nOther.\n")
    assert unit_lines(note, "- The attack needs shared memory.") == "3"


def test_a_merge_is_an_update_with_a_note_the_node_did_not_cite(tmp_path: Path) -> None:
    state = State(tmp_path / ".vaultlink" / "state.sqlite")
    first = NODE.format("[[resource/flush-flush.md|Flush + Flush]]")
    second = first + "- and [[resource/flush-reload.md|Flush + Reload]]\n"
    target = "digest/wiki/flush-flush.md"
    state.journal_add(1, {"paths": ["resource/flush-flush.md"]}, Action.CREATE, target,
                      before_text=None, after_text=first)
    state.journal_add(1, {"paths": ["resource/flush-flush.md"], "summary": "x"},
                      Action.REFINE, target, before_text=first, after_text=first + "more\n")
    state.journal_add(1, {"paths": ["resource/flush-reload.md"], "summary": "y"},
                      Action.REFINE, target, "offline: same abstraction", before_text=first,
                      after_text=second)
    state.close()
    merges, held = find_merges("v", tmp_path)
    assert held == 0
    assert [(m.target, m.note, m.action, m.earlier) for m in merges] == [
        (target, "resource/flush-reload.md", "REFINE", ["resource/flush-flush.md"])]


def test_every_label_is_a_label_with_a_reason() -> None:
    labels = load_labels()
    assert len(labels) >= 30
    for entry in labels.values():
        Label(entry["label"])
        assert entry["reason"].strip()
