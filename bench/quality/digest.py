"""Would a person keep this digest? The offline integrator on real documents and sample_vault.

    .venv/bin/python -m bench.quality.digest                 # both corpora, about 2 min
    .venv/bin/python -m bench.quality.digest --json out.json --keep /tmp/digests
    .venv/bin/python -m bench.quality.digest --only sample_vault --show 3

Builds two vaults in a temporary folder (``--keep DIR`` keeps them for reading): the
70 real documentation pages of ``realdocs/`` (their page links removed, kept as the
truth) and ``sample_vault/`` plus one 25-word decision under ``# Standup``. Each is
dreamed offline until settled (``digest_run``), scored (``digest_measures``), and then
some notes are read a second time under new paths to see them corroborate. The
targets are those of issue #16; a missed one is marked ``MISSED``.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python bench/quality/digest.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.quality.digest_measures import Measures, load_nodes, measure
from bench.quality.digest_run import (
    DECISION,
    DECISION_NOTE,
    SAMPLE,
    SAMPLE_REPEATS,
    Corpus,
    realdocs_corpus,
    realdocs_repeats,
    repeat,
    sample_corpus,
)
from bench.quality.realdocs import load_corpus
from bench.quality.realdocs._build import corpora
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.vault.notes import Vault


def row(name: str, value: object, target: str = "", ok: bool | None = None) -> str:
    """One table line: measure, value, target and whether it is met."""
    text = f"{value:.2f}" if isinstance(value, float) else str(value)
    mark = "" if ok is None else ("ok" if ok else "MISSED")
    return f"| {name:<50} | {text:>9} | {target:<10} | {mark}"


def superseded(root: Path) -> tuple[bool, int]:
    """sample_vault's hybrid search node after the 20 June correction: is the candidate
    depth 200 now, and how many 'Earlier' sentences keep the 100?"""
    node = load_nodes(Vault(root)).get("digest/wiki/hybrid-search.md")
    if node is None:
        return False, 0
    # by sentence: the corrected value and "Earlier: <the old one>" may share a line
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(node.main.split("\n")))
    earlier = [s for s in sentences if "Earlier" in s and "100" in s]
    current = " ".join(s for s in sentences if "Earlier" not in s and "~~" not in s)
    return ("200" in current and "top 100 from BM25" not in current), len(earlier)


def decision_kept(root: Path) -> bool:
    """Whether a node citing the decision note holds the decision's words."""
    want = " ".join(DECISION.lower().split()[:8])
    for node in load_nodes(Vault(root)).values():
        if DECISION_NOTE in node.cited and want in " ".join(node.main.lower().split()):
            return True
    return False


def table(c: Corpus, m: Measures) -> list[str]:
    """The rows of one corpus."""
    lines = [row(f"{c.name.upper()}: {m.sources_cited} source notes cited, {m.nodes} nodes",
                 "", "target")]
    lines += [
        row("digest nodes per source note", m.nodes_per_source, "<= 2.5",
            m.nodes_per_source <= 2.5),
        row("  most nodes citing one note", m.max_per_source),
        row("generic or fragment names", len(m.bad_names), "0", not m.bad_names),
        row("bodies that do not start a sentence", len(m.bad_starts), "0", not m.bad_starts),
        row("embeds / site-relative links in bodies", len(m.dangling), "0", not m.dangling),
        row("append-log lines ('Added from' ...)", m.append_lines, "0", m.append_lines == 0),
        row("node pairs from one source on one subject", len(m.same_subject), "0",
            not m.same_subject),
        row(f"link sentences sharing one opening ({m.link_share[2]})", m.link_share[0],
            "<= 0.30", m.link_share[0] <= 0.30),
        row(f"  most common: '{m.link_share[1]}'", ""),
        row(f"Sources sentences sharing one opening ({m.source_share[2]})", m.source_share[0],
            "<= 0.50", m.source_share[0] <= 0.50),
        row(f"  most common: '{m.source_share[1]}'", ""),
        row("woven links (node pairs)", m.woven),
        row("woven links per node", m.woven / max(m.nodes, 1), ">= 0.5",
            m.woven / max(m.nodes, 1) >= 0.5),
    ]
    if c.truth:
        lines += [row("woven-link precision (human links)", m.precision, ">= 0.75",
                      m.precision >= 0.75),
                  row("  of which: nodes sharing a source", m.woven_same_source),
                  row(f"woven-link recall ({m.truth_pairs} human pairs)", m.recall)]
    lines += [
        row(f"paragraphs neither used nor reported (of {m.paragraphs})", len(m.unaccounted),
            "0", not m.unaccounted),
        row("  paragraphs reported as passed over", m.reported),
        row("nodes without a source link", m.no_source, "0", m.no_source == 0),
        row("broken links", m.broken, "0", m.broken == 0),
        row("check errors", len(m.errors), "0", not m.errors),
        row("nothing outside digest/ touched", c.outside_digest_untouched, "True",
            c.outside_digest_untouched),
        row(f"settled after {c.settle_runs} run(s); another run changes nothing",
            c.stays_settled, "True", c.settled and c.stays_settled),
        row("  held for review, approved by the bench", c.approved, "", None),
        row("topic keywords that are stop words or numbers", len(m.topics_bad_keywords), "0",
            not m.topics_bad_keywords),
        row("topics with fewer than 2 or more than 5 keywords",
            sum(not 2 <= k <= 5 for k in m.topics_keyword_counts), "0",
            all(2 <= k <= 5 for k in m.topics_keyword_counts)),
    ]
    return lines


def repeat_rows(c: Corpus) -> list[str]:
    """How the second reading of some notes was integrated."""
    acts = [a for _, a in c.repeats]
    share = acts.count("CORROBORATE") / len(acts) if acts else 0.0
    return [row(f"repeated notes ({len(c.repeat_notes)}): units corroborating", share,
                ">= 0.9", share >= 0.9),
            row("  their actions", ", ".join(f"{a} {acts.count(a)}" for a in sorted(set(acts))))]


def details(m: Measures) -> list[str]:
    """The names, starts and pairs behind the counts, for reading."""
    out = [f"  name  {p}: {n!r} ({why})" for p, n, why in m.bad_names]
    out += [f"  start {p}: {t!r} ({why})" for p, t, why in m.bad_starts]
    out += [f"  pair  {a} + {b} ({s})" for a, b, s in m.same_subject]
    out += [f"  lost  {p}:{line}: {t!r}" for p, line, t in m.unaccounted[:15]]
    if len(m.unaccounted) > 15:
        out.append(f"  lost  ... and {len(m.unaccounted) - 15} more")
    return out


def figures(c: Corpus, m: Measures) -> dict[str, Any]:
    """The numbers, for --json."""
    acts = [a for _, a in c.repeats]
    return {"nodes": m.nodes, "sources_cited": m.sources_cited,
            "nodes_per_source": round(m.nodes_per_source, 3), "bad_names": len(m.bad_names),
            "bad_starts": len(m.bad_starts), "dangling": len(m.dangling),
            "append_lines": m.append_lines, "same_subject_pairs": len(m.same_subject),
            "link_opening_share": round(m.link_share[0], 3), "link_sentences": m.link_share[2],
            "sources_opening_share": round(m.source_share[0], 3),
            "woven": m.woven, "woven_per_node": round(m.woven / max(m.nodes, 1), 3),
            "precision": round(m.precision, 3), "recall": round(m.recall, 3),
            "paragraphs": m.paragraphs, "unaccounted": len(m.unaccounted),
            "reported": m.reported, "check_errors": len(m.errors),
            "outside_untouched": c.outside_digest_untouched, "stays_settled": c.stays_settled,
            "approved": c.approved,
            "repeat_corroborate": round(acts.count("CORROBORATE") / len(acts), 3)
            if acts else None, "topic_titles": m.topic_titles,
            "bad_keywords": m.topics_bad_keywords, "seconds": round(c.seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    """Run, score and print; exit 1 when an invariant (sources, links, check) breaks."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality.digest", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["realdocs", "sample_vault"])
    parser.add_argument("--linkdocs-set", action="append", default=[], metavar="SET",
                        choices=[ds.name for ds in corpora()["linkdocs"].sets],
                        help="instead of realdocs and sample_vault: this set of linkdocs "
                             "(repeatable), e.g. npm, whose pages keep their front matter")
    parser.add_argument("--keep", type=Path, help="build the vaults here and keep them")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--corpus", choices=["langdocs"], default=None,
                        help="langdocs: the language axis instead (digest_lang.py), one "
                             "vault per language, pages fed one at a time")
    parser.add_argument("--language", action="append", default=[], metavar="LANG",
                        help="with --corpus langdocs: this language (repeatable; default "
                             "en, de, ja, zh-hans)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    if args.corpus is not None:
        return _languages(args)
    embedder = MiniLMEmbedder()
    dest = args.keep or Path(tempfile.mkdtemp(prefix="vaultlink-digest-bench-"))
    dest.mkdir(parents=True, exist_ok=True)
    lines, out, broken = [], {}, 0
    sample_nodes = {f"digest/{p.parent.name}/{p.name}" for p in (SAMPLE / "digest").rglob("*.md")}
    builds = [("realdocs", realdocs_corpus, realdocs_repeats, None),
              ("sample_vault", sample_corpus, lambda c: SAMPLE_REPEATS, sample_nodes)]
    if args.linkdocs_set:  # instead: sets of linkdocs, as published (npm: front matter)
        linkdocs = load_corpus(corpora()["linkdocs"].root)
        builds = [(f"linkdocs-{s}", partial(realdocs_corpus, name=f"linkdocs-{s}",
                                             pages=[p for p in linkdocs if p.set == s]),
                   realdocs_repeats, None) for s in args.linkdocs_set]
    for name, build, repeats, people in builds:
        if args.only and args.only != name and not args.linkdocs_set:
            continue
        corpus = build(dest)
        m = measure(corpus.root, embedder, corpus.truth or None, people)
        lines += table(corpus, m)
        if name == "sample_vault":
            replaced, earlier = superseded(corpus.root)
            lines += [row("superseded value replaced (top 100 -> 200)", replaced, "True",
                          replaced),
                      row("  kept as 'Earlier' sentences", earlier, "1", earlier == 1),
                      row("the 25-word decision under # Standup is kept", decision_kept(
                          corpus.root), "True", decision_kept(corpus.root))]
        repeat(corpus, repeats(corpus))
        lines += repeat_rows(corpus)
        lines += [row("run time (s)", round(corpus.seconds, 1)), *details(m), ""]
        out[name] = figures(corpus, m)
        broken += m.no_source + m.broken + len(m.errors)
    print("\n".join(lines))
    if args.keep:
        print(f"vaults in {dest}")
    else:
        shutil.rmtree(dest, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 1 if broken else 0


def _languages(args: argparse.Namespace) -> int:
    """``--corpus langdocs``: the per-language table (exit 0 even when pages failed)."""
    from dataclasses import asdict

    from bench.quality.digest_lang import DEFAULT_LANGUAGES, language_table, run_languages

    dest = args.keep or Path(tempfile.mkdtemp(prefix="vaultlink-digest-lang-"))
    dest.mkdir(parents=True, exist_ok=True)
    results = run_languages(dest, args.corpus, tuple(args.language) or DEFAULT_LANGUAGES)
    print(language_table(results))
    if args.keep:
        print(f"vaults in {dest}")
    else:
        shutil.rmtree(dest, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(
            [{**asdict(r), "nodes_per_page": round(r.nodes_per_page, 3)} for r in results],
            indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
