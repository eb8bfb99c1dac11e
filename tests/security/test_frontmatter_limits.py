"""Finding 1 of the security review: a note's YAML front matter is untrusted input.

A 424-byte note of YAML anchors (``l0: &l0 [...]`` ... ``name: *l6``) expanded to
gigabytes when its name was read as text and killed the daemon. Front matter is now
parsed within limits (block size, nesting, what aliases expand to); a name or
description is read as one bounded line; a note past a limit is reported unreadable.
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultlink.errors import BrokenFrontmatter, VaultlinkError
from vaultlink.markdown.frontmatter import MAX_BLOCK_BYTES, read_frontmatter, text_value
from vaultlink.vault.notes import DESCRIPTION_CHARS, NAME_CHARS, Vault, parse_note


def alias_bomb(levels: int, key: str = "name") -> bytes:
    """The review's note: each level a list of nine aliases of the one before."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return ("---\n" + "\n".join(lines) + f"\n{key}: *l{levels - 1}\n---\nA note.\n").encode()


def test_the_reviews_424_byte_alias_bomb_is_refused_without_expanding_it() -> None:
    data = alias_bomb(7)
    assert len(data) < 500
    tracemalloc.start()
    try:
        with pytest.raises(BrokenFrontmatter, match="aliases"):
            parse_note("resource/bomb.md", data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"parsing the bomb took {peak:,} bytes"


def test_a_bomb_under_description_or_tags_is_refused_too() -> None:
    for key in ("description", "tags", "aliases"):
        with pytest.raises(BrokenFrontmatter, match="aliases"):
            parse_note("resource/bomb.md", alias_bomb(7, key))


def test_aliases_that_stay_small_still_parse_and_a_name_is_one_bounded_line() -> None:
    note = parse_note("resource/ok.md", alias_bomb(4))
    assert len(note.name) <= NAME_CHARS
    meta, _ = read_frontmatter("---\nbase: &b {a: 1}\nother: *b\nname: Hybrid search\n---\nx\n")
    assert meta["other"] == {"a": 1} and meta["name"] == "Hybrid search"


def test_nesting_past_the_limit_is_refused_with_what_to_do() -> None:
    deep = ("---\nname: " + "[" * 5000 + "]" * 5000 + "\n---\nbody\n").encode()
    with pytest.raises(BrokenFrontmatter, match="nests deeper"):
        parse_note("daily/deep.md", deep)


def test_a_block_past_its_size_limit_is_refused_naming_the_limit() -> None:
    big = ("---\nname: x\nblob: " + "a" * MAX_BLOCK_BYTES + "\n---\nbody\n").encode()
    with pytest.raises(BrokenFrontmatter, match="move the long values"):
        parse_note("daily/big.md", big)


def test_a_long_name_or_description_is_read_as_a_bounded_line() -> None:
    text = f"---\nname: {'word ' * 5000}\ndescription: {'x' * 50_000}\n---\nbody\n"
    note = parse_note("resource/long.md", text.encode())
    assert len(note.name) == NAME_CHARS and "\n" not in note.name
    assert len(note.description) == DESCRIPTION_CHARS


def test_text_value_reads_lists_dates_and_numbers_and_not_mappings() -> None:
    import datetime
    assert text_value(["a", 2, datetime.date(2026, 6, 1)]) == "a, 2, 2026-06-01"
    assert text_value({"a": "b"}) == ""
    assert text_value("  two\n lines ") == "two lines"


def test_a_body_with_two_rules_is_not_read_as_front_matter() -> None:
    """Only a block at the top of the note is front matter (a '---' rule in the body
    is Markdown); the bounded parser must not change that."""
    meta, body = read_frontmatter("intro\n---\nfoo: bar\n---\nrest")
    assert meta == {} and body.startswith("intro")


# -- random YAML: bounded time and memory whatever the block holds ---------------------

_scalar = st.one_of(st.text(max_size=40), st.integers(), st.just("*a"), st.just("&a x"),
                    st.binary(max_size=20).map(lambda b: b.decode("latin-1")))


def _yaml_value(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _scalar.map(str)
    inner = _yaml_value(depth - 1)
    return st.one_of(
        inner,
        st.lists(inner, max_size=12).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.tuples(st.integers(0, 3), inner).map(lambda t: f"&x{t[0]} {t[1]}"),
        st.integers(0, 3).map(lambda i: f"*x{i}"),
        st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
        st.integers(1, 200_000).map(lambda n: "q" * n),
    )


_block = st.lists(st.tuples(st.sampled_from(["name", "description", "tags", "aliases", "k"]),
                            _yaml_value(3)), max_size=10)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_block, st.integers(1, 7))
def test_any_front_matter_parses_or_is_refused_within_bounded_time_and_memory(
        entries: list[tuple[str, str]], bomb_levels: int) -> None:
    head = "\n".join(f"{k}: {v}" for k, v in entries)
    bomb = alias_bomb(bomb_levels).decode().split("\n---\n")[0].removeprefix("---\n")
    for block in (head, bomb + "\n" + head):
        data = f"---\n{block}\n---\nbody\n".encode("utf-8", "surrogatepass")
        tracemalloc.start()
        began = time.monotonic()
        try:
            note = parse_note("daily/random.md", data)
        except VaultlinkError:
            note = None
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        # generous bounds: what they catch is an expansion (seconds and gigabytes)
        assert time.monotonic() - began < 10
        assert peak < 200_000_000
        if note is not None:
            assert len(note.name) <= NAME_CHARS and len(note.description) <= DESCRIPTION_CHARS


def test_a_vault_reports_the_bomb_note_unreadable_and_reads_its_neighbours(
        tmp_path: Path) -> None:
    (tmp_path / "resource").mkdir()
    (tmp_path / "resource/bomb.md").write_bytes(alias_bomb(7))
    (tmp_path / "resource/fine.md").write_text("---\nname: Fine\n---\nok\n")
    vault = Vault(tmp_path)
    with pytest.raises(BrokenFrontmatter) as caught:
        vault.read_note("resource/bomb.md")
    assert "instead of repeating YAML anchors" in str(caught.value)
    assert vault.read_note("resource/fine.md").name == "Fine"
