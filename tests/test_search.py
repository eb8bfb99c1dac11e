"""Memory search over chunks of all notes, link expansion, and the recall CLI commands."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.embedders import CountingEmbedder
from tests.vaults import write_note, write_notes
from vaultlink.cli import app
from vaultlink.errors import SearchIndexError
from vaultlink.index.chunks import ChunkIndex
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.index.recall import Indexes, open_indexes
from vaultlink.vault.notes import Vault

DAY = """---
mood: fine
---
# Monday

Standup was short.

## Database

Autovacuum fell behind on the documents table; dead tuples piled up. See
[[digest/wiki/autovacuum.md]] and [[resource/vacuum-guide]].

## Lunch

Tried the new ramen place near the office.
"""

NODE = """---
name: Postgres autovacuum
description: Why autovacuum falls behind on update-heavy tables.
---
Autovacuum yields to locks. Manual fallback: [[digest/procedure/vacuum.md]].

## Sources

- Diagnosed in [[daily/2026-06-11.md|the June 11 note]].
"""


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(write_notes(tmp_path / "vault", {
        "daily/2026-06-11.md": DAY,
        "digest/wiki/autovacuum.md": NODE,
        "digest/procedure/vacuum.md": "---\nname: Vacuum by hand\ndescription: "
                                      "Run VACUUM on the documents table.\n---\nRun it at night.\n",
        "resource/vacuum-guide.md": "# Vacuum guide\n\nThresholds and scale factors.\n",
        "notes-outside.md": "# Not in a searched folder\n\nramen autovacuum\n"}))


@pytest.fixture
def indexes(vault: Vault, minilm: MiniLMEmbedder) -> Iterator[Indexes]:
    ix = open_indexes(vault, CountingEmbedder(minilm))  # type: ignore[arg-type]
    yield ix
    ix.close()


def counting(index: ChunkIndex) -> CountingEmbedder:
    emb = index.embedder
    assert isinstance(emb, CountingEmbedder)
    return emb


def test_search_returns_sections_with_breadcrumb_and_file_line(indexes: Indexes,
                                                               vault: Vault) -> None:
    report = indexes.chunks.sync()
    assert "notes-outside.md" not in report.added and len(report.added) == 4
    hit = indexes.chunks.search("ramen lunch", limit=1)[0]
    assert hit.path == "daily/2026-06-11.md"
    assert hit.breadcrumb == "2026-06-11 > Monday > Lunch"
    lines = (vault.root / hit.path).read_text().split("\n")
    assert lines[hit.line - 1] == "## Lunch"  # 1-based line in the file, frontmatter counted
    assert "ramen" in hit.text and "Standup" not in hit.text


def test_topics_pages_are_not_searched_over_the_notes_they_quote(indexes: Indexes,
                                                                  vault: Vault) -> None:
    """A day's topics quote its notes in a few short lines, which outranked the notes."""
    write_note(vault.root, "digest/topics/2026-06-11-topics.md",
               "## Ramen\n\nNew in the digest: Tried the new ramen place near the office. "
               "The material is in [[daily/2026-06-11.md]].\n")
    report = indexes.chunks.sync()
    assert "digest/topics/2026-06-11-topics.md" not in report.added
    hits = [h.path for h in indexes.chunks.search("ramen place", limit=10)]
    assert hits[0] == "daily/2026-06-11.md" and not any("topics" in p for p in hits)


def test_empty_headings_and_a_nodes_sources_are_never_hits(indexes: Indexes,
                                                          vault: Vault) -> None:
    """A template's empty headings and a node's Sources lines ranked among the hits of a
    real vault: only content is searched."""
    write_note(vault.root, "daily/2026-06-12.md",
               "## Gratitudes\n\n## Exercise\n\n## Diagnosed\n\nThe replica lagged.\n")
    indexes.chunks.sync()
    for query in ("gratitudes", "exercise", "diagnosed june note"):
        for hit in indexes.chunks.search(query, limit=10):
            assert hit.text.strip() and not hit.text.startswith(("## Gratitudes",
                                                                  "## Sources")), hit
            assert "Diagnosed in [[daily" not in hit.text, hit


def test_hits_carry_outlinks_and_inlinks_with_names(indexes: Indexes) -> None:
    indexes.chunks.sync()
    hit = next(h for h in indexes.chunks.search("autovacuum dead tuples", limit=10)
               if h.path == "daily/2026-06-11.md")
    assert [r.path for r in hit.outlinks] == ["digest/wiki/autovacuum.md",
                                              "resource/vacuum-guide.md"]
    assert hit.outlinks[0].name == "Postgres autovacuum"
    assert "update-heavy" in hit.outlinks[0].description
    assert [r.path for r in hit.inlinks] == ["digest/wiki/autovacuum.md"]
    node_hit = next(h for h in indexes.chunks.search("autovacuum yields to locks", limit=10)
                    if h.path == "digest/wiki/autovacuum.md")
    assert [r.path for r in node_hit.outlinks] == ["digest/procedure/vacuum.md",
                                                   "daily/2026-06-11.md"]
    assert [r.path for r in node_hit.inlinks] == ["daily/2026-06-11.md"]


def test_links_are_capped_at_ten_each_way(indexes: Indexes, vault: Vault) -> None:
    for i in range(12):
        write_note(vault.root, f"resource/r{i:02}.md", f"# R{i}\n\nLinks back to [[hub]].\n")
    write_note(vault.root, "digest/wiki/hub.md", "---\nname: Hub\ndescription: d\n---\n" +
               " ".join(f"[[resource/r{i:02}.md]]" for i in range(12)) + "\n")
    indexes.chunks.sync()
    out, inl = indexes.chunks.links_of("digest/wiki/hub.md")
    assert [r.path for r in out] == [f"resource/r{i:02}.md" for i in range(10)]
    assert len(inl) == 10


def test_link_table_follows_the_vault(indexes: Indexes, vault: Vault) -> None:
    chunks = indexes.chunks
    chunks.sync()
    write_note(vault.root, "daily/2026-06-12.md",
               "# Tue\n\nMore on [[autovacuum]] and [[later]].\n")
    chunks.sync()
    _, inl = chunks.links_of("digest/wiki/autovacuum.md")
    assert "daily/2026-06-12.md" in [r.path for r in inl]
    out, _ = chunks.links_of("daily/2026-06-12.md")
    assert [r.path for r in out] == ["digest/wiki/autovacuum.md"]  # [[later]] is broken

    write_note(vault.root, "resource/later.md", "# Later\n\nNow it exists.\n")
    chunks.sync()  # the old link resolves without re-reading the note that holds it
    out, _ = chunks.links_of("daily/2026-06-12.md")
    assert [r.path for r in out] == ["digest/wiki/autovacuum.md", "resource/later.md"]

    (vault.root / "daily/2026-06-12.md").unlink()
    chunks.sync()
    _, inl = chunks.links_of("digest/wiki/autovacuum.md")
    assert [r.path for r in inl] == ["daily/2026-06-11.md"]


def test_editing_one_section_embeds_only_that_section(indexes: Indexes, vault: Vault) -> None:
    chunks = indexes.chunks
    chunks.sync()
    emb = counting(chunks)
    emb.texts.clear()
    write_note(vault.root, "daily/2026-06-11.md", DAY.replace("new ramen place", "new udon place"))
    report = chunks.sync()
    assert report.updated == ["daily/2026-06-11.md"]
    assert len(emb.texts) == 1 and "udon" in emb.texts[0]
    hit = chunks.search("udon", limit=1)[0]
    assert "udon" in hit.text and hit.path == "daily/2026-06-11.md"


def test_rename_moves_chunks_without_embedding(indexes: Indexes, vault: Vault) -> None:
    chunks = indexes.chunks
    chunks.sync()
    emb = counting(chunks)
    emb.texts.clear()
    os.rename(vault.root / "resource/vacuum-guide.md", vault.root / "resource/guide.md")
    report = chunks.sync()
    assert report.moved == [("resource/vacuum-guide.md", "resource/guide.md")]
    assert emb.texts == []
    hits = chunks.search("thresholds and scale factors", limit=3)
    assert hits[0].path == "resource/guide.md"
    assert hits[0].breadcrumb.startswith("guide > ")  # the title follows the new name


def test_chunk_search_errors_and_weird_queries(indexes: Indexes) -> None:
    indexes.chunks.sync()
    with pytest.raises(SearchIndexError):
        indexes.chunks.search("  ")
    for query in ['"', "NEAR(", "a:b*", "-x", "ünïcödé 検索", "q" * 100_000]:
        indexes.chunks.search(query, limit=3)


# -- CLI --------------------------------------------------------------------------


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_cli_node_search_json(vault: Vault) -> None:
    code, out = run("node-search", "why autovacuum falls behind", "--vault", str(vault.root),
                    "--json", "--limit", "2")
    assert code == 0, out
    hits = json.loads(out)["hits"]
    assert len(hits) == 2
    assert hits[0]["path"] == "digest/wiki/autovacuum.md"
    assert set(hits[0]) == {"path", "score", "name", "description", "similarity", "keyword_rank"}
    assert hits[0]["name"] == "Postgres autovacuum"


def test_cli_bucket_and_digest_only_scope_the_hits(vault: Vault) -> None:
    code, out = run("node-search", "why autovacuum falls behind", "--vault", str(vault.root),
                    "--json", "--bucket", "procedure")
    assert code == 0, out
    assert [h["path"] for h in json.loads(out)["hits"]] == ["digest/procedure/vacuum.md"]
    code, out = run("search", "autovacuum", "--vault", str(vault.root), "--json",
                    "--digest-only")
    assert code == 0, out
    paths = {h["path"] for h in json.loads(out)["hits"]}
    assert paths and all(p.startswith("digest/") for p in paths)
    code, out = run("search", "autovacuum", "--vault", str(vault.root), "--json")
    assert any(not h["path"].startswith("digest/") for h in json.loads(out)["hits"])


def test_cli_search_readable_and_json(vault: Vault) -> None:
    code, out = run("search", "ramen", "--vault", str(vault.root), "--limit", "1")
    assert code == 0, out
    assert "daily/2026-06-11.md:" in out and "Lunch" in out
    code, out = run("search", "dead tuples", "--vault", str(vault.root), "--json")
    assert code == 0, out
    hit = json.loads(out)["hits"][0]
    assert {"path", "score", "breadcrumb", "text", "line", "outlinks", "inlinks"} <= set(hit)
    assert all({"path", "name", "description"} <= set(r) for r in hit["outlinks"])


def test_cli_reindex_counts_and_empty_query(vault: Vault) -> None:
    write_note(vault.root, "daily/broken.md", "---\nkey: [unclosed\n---\nx\n")
    code, out = run("reindex", "--vault", str(vault.root), "--json")
    assert code == 0, out
    summary = json.loads(out[out.index("{"):])
    assert summary["nodes"]["indexed"] == 2 and summary["chunks"]["indexed"] == 4
    assert "daily/broken.md" in summary["chunks"]["skipped"]
    code, out = run("reindex", "--vault", str(vault.root))  # a sync: nothing changed
    assert code == 0 and "nodes: 0 notes indexed, 0 texts embedded, 2 unchanged" in out
    assert "skipped daily/broken.md" in out
    write_note(vault.root, "daily/new.md", "# New\n\nA note written since.\n")
    code, out = run("reindex", "--vault", str(vault.root), "--json")
    assert (json.loads(out[out.index("{"):])["chunks"]["indexed"], code) == (1, 0)
    code, out = run("reindex", "--full", "--vault", str(vault.root))
    assert code == 0 and "nodes: 2 notes indexed, 2 texts embedded, 0 unchanged" in out
    result = CliRunner().invoke(app, ["search", " ", "--vault", str(vault.root)])
    assert isinstance(result.exception, SearchIndexError)
