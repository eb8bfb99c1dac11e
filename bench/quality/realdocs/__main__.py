"""``python -m bench.quality.realdocs``: a summary of the corpus.

Prints the sets, pages, words per page (min/median/max), truth pairs and the pages
that take part in no pair. With ``--check`` it also verifies that every manifest link
is a page of the same set, that the links in each page's text resolve to exactly the
manifest's links, and that ``write_as_vault`` leaves no page link behind; exit status
1 on any mismatch.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.quality.realdocs import (
    Page,
    load_corpus,
    markdown_links,
    resolve_target,
    resolved_links,
    truth_pairs,
    write_as_vault,
)
from bench.quality.realdocs._build import corpora


def _words(page: Page) -> int:
    return len(page.text.split())


def _row(name: str, pages: list[Page]) -> str:
    words = [_words(p) for p in pages]
    pairs = truth_pairs(pages)
    linked = {path for pair in pairs for path in pair}
    no_out = sum(1 for p in pages if not p.links)
    return (
        f"{name:<16} {len(pages):>5} {min(words):>6} {int(statistics.median(words)):>6} "
        f"{max(words):>6} {len(pairs):>6} {no_out:>7} {len(pages) - len(linked):>7}"
    )


def summary(pages: list[Page]) -> str:
    sets = sorted({p.set for p in pages}, key=lambda s: min(p.path for p in pages if p.set == s))
    head = (
        f"{'set':<16} {'pages':>5} {'w.min':>6} {'w.med':>6} {'w.max':>6} {'pairs':>6} "
        f"{'no-out':>7} {'no-pair':>7}"
    )
    lines = [head, "-" * len(head)]
    lines += [_row(s, [p for p in pages if p.set == s]) for s in sets]
    lines.append("-" * len(head))
    lines.append(_row("all", pages))
    licenses = Counter(p.license for p in pages)
    lines.append("licenses: " + ", ".join(f"{k} ({v})" for k, v in sorted(licenses.items())))
    lonely = sorted(p.path for p in pages if not any(p.path in pair for pair in truth_pairs(pages)))
    lines.append("pages in no truth pair: " + (", ".join(lonely) if lonely else "none"))
    return "\n".join(lines)


def check(pages: list[Page], site_prefixes: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Problems of the manifest, the text and the vault; ``site_prefixes``: set -> the
    prefixes its absolute links are resolved with (none by default, as in realdocs)."""
    prefixes = site_prefixes or {}
    problems: list[str] = []
    paths = {p.path: p for p in pages}
    by_set: dict[str, dict[str, str]] = {}
    for p in pages:
        by_set.setdefault(p.set, {})[p.original_path] = p.path
    for p in pages:
        for q in p.links:
            if q not in paths or paths[q].set != p.set or q == p.path:
                problems.append(f"{p.path}: manifest link {q} is not another page of its set")
        found = resolved_links(
            p.text, p.original_path, by_set[p.set], prefixes.get(p.set, ())
        )
        if found != list(p.links):
            problems.append(f"{p.path}: text links {found} != manifest {list(p.links)}")
    with tempfile.TemporaryDirectory() as tmp:
        written = write_as_vault(pages, Path(tmp))
        for p in pages:
            text = (Path(tmp) / written[p.path]).read_text(encoding="utf-8")
            left = [
                t
                for t in markdown_links(text)
                if resolve_target(p.original_path, t, by_set[p.set], prefixes.get(p.set, ()))
                is not None
            ]
            if left:
                problems.append(f"{written[p.path]}: page links left in the vault: {left}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.realdocs")
    parser.add_argument("--root", type=Path, default=None, help="corpus folder (default: here)")
    parser.add_argument(
        "--corpus", choices=sorted(corpora()), default=None, help="a corpus by name"
    )
    parser.add_argument("--check", action="store_true", help="verify manifest, text and vault")
    args = parser.parse_args(argv)
    root, prefixes = args.root, None
    if args.corpus is not None:
        spec = corpora()[args.corpus]
        root = spec.root if root is None else root
        prefixes = {ds.name: ds.site_prefixes for ds in spec.sets}
    pages = load_corpus(root)
    print(summary(pages))
    if args.check:
        problems = check(pages, prefixes)
        for line in problems:
            print("problem:", line)
        print(f"check: {len(problems)} problem(s)")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
