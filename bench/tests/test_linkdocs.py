"""The linkdocs corpus (bench/quality/linkdocs) and the link forms it needs resolved."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.quality.realdocs import (
    Page,
    load_corpus,
    markdown_links,
    resolve_target,
    resolved_links,
    unlink,
)
from bench.quality.realdocs._build import drop_host_links, mask_hosts, title_of
from bench.quality.realdocs.linkdocs_sets import ROOT, SETS

PREFIXES = {ds.name: ds.site_prefixes for ds in SETS}
PAGES = load_corpus(ROOT)


def _by_set(pages: list[Page]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for p in pages:
        out.setdefault(p.set, {})[p.original_path] = p.path
    return out


def test_manifest_is_large_enough() -> None:
    sizes = Counter(p.set for p in PAGES)
    assert len(PAGES) >= 350
    assert len(sizes) >= 6
    assert sum(1 for n in sizes.values() if n >= 50) >= 3
    assert set(sizes) == set(PREFIXES)
    assert all(100 <= len(p.text.split()) <= 6000 for p in PAGES)


def test_every_manifest_link_is_a_page_of_the_same_set() -> None:
    paths = {p.path: p for p in PAGES}
    by_set = _by_set(PAGES)
    for p in PAGES:
        for q in p.links:
            assert q in paths and paths[q].set == p.set and q != p.path, (p.path, q)
        found = resolved_links(p.text, p.original_path, by_set[p.set], PREFIXES[p.set])
        assert found == list(p.links), p.path


@pytest.mark.parametrize("name", sorted(PREFIXES))
def test_unlink_leaves_no_resolved_link(name: str) -> None:
    pages = [p for p in PAGES if p.set == name]
    known = {p.original_path for p in pages}
    assert sum(len(p.links) for p in pages) > 0
    for p in pages:
        # called as realrecall calls it: no site prefixes
        body = unlink(p.text, p.original_path, known)
        left = [
            t
            for t in markdown_links(body)
            if resolve_target(p.original_path, t, known, PREFIXES[name]) is not None
        ]
        assert left == [], p.path


def test_site_absolute_links_resolve_only_with_a_prefix() -> None:
    known = {"commands/npm-install.md", "using-npm/config.md"}
    here = "commands/npm-ci.md"
    assert resolve_target(here, "/commands/npm-install", known, ("/",)) == (
        "commands/npm-install.md"
    )
    assert resolve_target(here, "/using-npm/config#save", known, ("/",)) == "using-npm/config.md"
    assert resolve_target(here, "/commands/npm-install", known) is None  # realdocs: none
    assert resolve_target(here, "//commands/npm-install", known, ("/",)) is None
    api = {"api/Client.md", "api/Dispatcher.md"}
    prefixes = ("/docs/docs/", "/docs/")
    assert resolve_target("api/Pool.md", "/docs/docs/api/Client.md", api, prefixes) == (
        "api/Client.md"
    )
    proxy = "best-practices/proxy.md"
    assert resolve_target(proxy, "/docs/api/Dispatcher.md#x", api, prefixes) == (
        "api/Dispatcher.md"
    )
    assert resolve_target("api/Pool.md", "/other/api/Client.md", api, prefixes) is None


def test_unlink_removes_site_absolute_links_without_prefixes() -> None:
    text = (
        "Like [`npm install`](/commands/npm-install), see [config][c] and "
        "[Client](/docs/docs/api/Client.md#new) or [the site](https://example.org/x).\n\n"
        "[c]: /using-npm/config#save\n"
    )
    out = unlink(text, "commands/npm-ci.md", {"commands/npm-install.md"})
    assert out.startswith("Like `npm install`, see config and Client or [the site](")
    assert "/using-npm/config" not in out


def test_registry_hosts_are_masked() -> None:
    hosts = ["registry-host.test"]
    text = (
        "Get it from [the index](https://www.registry-host.test/p/x), "
        "default `https://pkgs.registry-host.test/`, mail a@registry-host.test; "
        "not other-registry-host.test.\n"
    )
    out = drop_host_links(text, hosts)
    assert out == (
        "Get it from the index, default `https://registry.example/`, mail a@registry.example; "
        "not other-registry-host.test.\n"
    )
    assert mask_hosts(text, []) == text


def test_no_page_names_a_masked_host() -> None:
    # the build replaced every mention of a registry host by this name
    masked = sum(p.text.count("registry.example") for p in PAGES)
    assert masked > 0
    npm = [p for p in PAGES if p.set == "npm"]
    assert any("https://registry.example" in p.text for p in npm)


def test_npm_pages_are_kept_as_published() -> None:
    # npm's pages have their title and lead only in front matter, as its site reads them:
    # the build keeps the block and makes no heading of it
    npm = [p for p in PAGES if p.set == "npm"]
    assert len(npm) >= 80
    for p in npm:
        assert p.text.startswith("---\n"), p.path
        head, _, body = p.text[4:].partition("\n---\n")
        assert f"title: {p.title}" in head.split("\n"), p.path
        assert not body.lstrip().startswith(f"# {p.title}"), p.path


def test_title_of_reads_front_matter_when_there_is_no_h1() -> None:
    page = "---\ntitle: npm-ci\ndescription: Clean install a project\n---\n\n### Synopsis\n"
    assert title_of(page, "fallback") == "npm-ci"
    assert title_of("---\ntitle: t\n---\n\n# The H1\n", "f") == "The H1"
    assert title_of("## Only an H2\n", "f") == "Only an H2"
