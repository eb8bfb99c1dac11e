"""The langdocs corpus (bench/quality/langdocs): one documentation set in several languages,
pages as published, its own links as the truth."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from bench.quality.realdocs import (
    load_corpus,
    markdown_links,
    resolve_target,
    resolved_links,
    unlink,
)
from bench.quality.realdocs.langdocs_sets import (
    CORE,
    DOCS,
    LANGS,
    ROOT,
    SITE_PREFIXES,
    front_matter_title,
    untranslated_share,
)

PAGES = load_corpus(ROOT)
MANIFEST = json.loads((ROOT / "MANIFEST.json").read_text(encoding="utf-8"))


def test_the_core_languages_hold_the_same_pages() -> None:
    by_lang: dict[str, set[str]] = {}
    for p in PAGES:
        by_lang.setdefault(p.set, set()).add(p.original_path)
    assert set(by_lang) == {s.lang for s in LANGS}
    core = [by_lang[lang] for lang in CORE]
    assert all(pages == core[0] for pages in core)
    assert len(core[0]) >= 60
    # the other languages take only pages of the core set
    assert all(pages <= core[0] for pages in by_lang.values())


def test_every_manifest_link_resolves_inside_its_language() -> None:
    paths = {p.path: p for p in PAGES}
    by_set: dict[str, dict[str, str]] = {}
    for p in PAGES:
        by_set.setdefault(p.set, {})[p.original_path] = p.path
    for p in PAGES:
        for q in p.links:
            assert q in paths and paths[q].set == p.set and q != p.path, (p.path, q)
        assert resolved_links(p.text, p.original_path, by_set[p.set], SITE_PREFIXES) == list(
            p.links
        ), p.path
    pairs = Counter(p.set for p in PAGES for _ in p.links)
    assert all(n >= 100 for n in pairs.values()), pairs


def test_unlink_leaves_no_page_link_in_any_language() -> None:
    for lang in {p.set for p in PAGES}:
        pages = [p for p in PAGES if p.set == lang]
        known = {p.original_path for p in pages}
        for p in pages:
            body = unlink(p.text, p.original_path, known)  # as realrecall calls it
            left = [t for t in markdown_links(body)
                    if resolve_target(p.original_path, t, known, SITE_PREFIXES)]
            assert left == [], p.path
            assert "](/docs/" not in body, p.path


def test_html_links_of_a_site_find_the_markdown_page() -> None:
    known = {"hooks-intro.md", "hooks-state.md"}
    assert resolve_target("hooks-effect.md", "/docs/hooks-intro.html#no", known,
                          SITE_PREFIXES) == "hooks-intro.md"
    assert resolve_target("hooks-effect.md", "hooks-state.html", known) == "hooks-state.md"
    assert resolve_target("hooks-effect.md", "/blog/2018/x.html", known, SITE_PREFIXES) is None


def test_titles_come_from_front_matter_and_pages_keep_it() -> None:
    for e in MANIFEST:
        text = (ROOT / e["path"]).read_text(encoding="utf-8")
        assert text.startswith("---\n"), e["path"]  # nothing was put before or instead of it
        assert front_matter_title(text) == e["title"], e["path"]
    ja = next(e for e in MANIFEST if e["path"] == "ja/hooks-intro.md")
    assert ja["title"] == "フックの導入"


def test_translation_rule() -> None:
    english = "---\ntitle: A\n---\n\n" + "\n\n".join(
        f"This is an English sentence number {i} of a page." for i in range(6))
    assert untranslated_share(english, english) == 1.0
    german = english.replace("This is an English sentence", "Das ist ein deutscher Satz")
    assert untranslated_share(german, english) == 0.0
    half = "\n\n".join(english.split("\n\n")[:4] + german.split("\n\n")[4:])
    assert 0.3 < untranslated_share(half, english) < 0.8


def _git_dir(repo: str) -> Path | None:
    for base in (Path("/work/.mirror"),):
        d = base / repo.replace("/", "+") / "repo"
        if d.is_dir():
            return d
    return None


@pytest.mark.skipif(shutil.which("git") is None or _git_dir(LANGS[0].repo) is None,
                    reason="the source repositories are not on this machine")
def test_pages_are_byte_identical_to_the_source() -> None:
    for s in LANGS:
        git_dir = _git_dir(s.repo)
        if git_dir is None:
            continue
        for e in (e for e in MANIFEST if e["set"] == s.lang):
            src = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show",
                 f"{s.commit}:{DOCS}/{e['original_path']}"],
                check=True, capture_output=True).stdout
            assert (ROOT / e["path"]).read_bytes() == src, e["path"]
