"""Run every quality benchmark and print one table.

    python -m bench.quality                       # offline integrator, shipped thresholds
    python -m bench.quality --ollama-host URL [--model M]   # end-to-end with a model too
    python -m bench.quality --same 0.7 --related 0.4        # try other thresholds

Link recovery and the end-to-end stream use the shipped thresholds (``integrate.*`` in
``vaultlink/config.py``) unless ``--same``/``--related`` are given; the dedup sweep
prints the thresholds it would choose, which is how the shipped ones were set.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # `python bench/quality/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.quality.dedup import run_dedup
from bench.quality.endtoend import EndToEnd, run_stream
from bench.quality.linkrecall import run_link_recall
from vaultlink.cli.settings import DEFAULTS
from vaultlink.index.embed import MiniLMEmbedder
from vaultlink.llm.ollama import is_reachable
from vaultlink.pipeline.offline.policy import MAX_RELATED


def row(name: str, value: object, note: str = "") -> str:
    """One table line."""
    text = f"{value:.3f}" if isinstance(value, float) else str(value)
    return f"| {name:<44} | {text:>10} | {note}"


def e2e_rows(res: EndToEnd) -> list[str]:
    """The end-to-end block of the table."""
    acts = ", ".join(f"{k} {v}" for k, v in sorted(res.actions.items()))
    out = [row("notes fed (one dream run each)", res.notes),
           row("units extracted", res.units, acts),
           row("units failed", res.failed),
           row("digest nodes created", res.nodes),
           row("duplicates left (node pairs, same topic)", res.duplicate_pairs,
               "; ".join(f"{t}: {a} + {b}" for t, a, b in res.duplicates)),
           row("mixed nodes (several topics in one)", res.mixed_nodes),
           row("trivia units (from unlabelled sections)", res.trivia_units),
           row("related links between digest nodes", res.related_links),
           row("broken links", res.broken_links, "must be 0"),
           row("nodes without a source link", res.no_source, "must be 0"),
           row("bare link lines", res.bare_lines, "must be 0"),
           row("run time (s)", round(res.seconds, 1),
               f"{res.seconds / max(res.notes, 1):.2f} s per note")]
    out += [row("other check errors", 1, e) for e in res.other_errors]
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; returns 1 when an end-to-end invariant is broken."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ollama-host", help="also run the end-to-end part with Ollama here")
    parser.add_argument("--model", help="the Ollama model (default: llm.model)")
    parser.add_argument("--same", type=float, help="same_threshold to use instead of shipped")
    parser.add_argument("--related", type=float, help="related_threshold instead of shipped")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    shipped = (float(DEFAULTS["integrate"]["same_threshold"]),
               float(DEFAULTS["integrate"]["related_threshold"]))
    same = args.same if args.same is not None else shipped[0]
    related = args.related if args.related is not None else shipped[1]
    embedder = MiniLMEmbedder()
    started = time.monotonic()
    lines = [f"vaultlink quality benchmark; thresholds used: same {same:.2f}, "
             f"related {related:.2f} (shipped {shipped[0]:.2f} / {shipped[1]:.2f})", "",
             row("metric", "value", "note"), "|" + "-" * 46 + "|" + "-" * 12 + "|" + "-" * 30]

    links = run_link_recall(embedder, related)
    lines += [row("LINK RECOVERY (data/link_vault)", ""),
              row("notes / human links hidden", f"{links.notes} / {links.links}"),
              row("node_search recall@20 of hidden outlinks", links.recall_at_20,
                  "query: the note's name + description"),
              row(f"woven links (>= related, max {MAX_RELATED} per note)", links.woven,
                  f"{links.per_note_woven:.1f} per note"),
              row("woven link precision", links.woven_precision,
                  "a human link either way between the two notes"),
              row("woven link recall", links.woven_recall, "of the note's own outlinks")]

    dedup = run_dedup(embedder)
    same_at, rel_at = dedup.at(same, related)
    n = len(dedup.rows)
    lines += [row("DEDUP (data/dedup_pairs.json)", ""),
              row("labelled pairs", n, ", ".join(
                  f"{lab} {sum(r[0] == lab for r in dedup.rows)}"
                  for lab in ("same_abstraction", "related", "unrelated"))),
              row(f"same_abstraction P / R / F1 @ {same:.2f}",
                  f"{same_at.precision:.2f}/{same_at.recall:.2f}/{same_at.f1:.2f}"),
              row(f"related-or-same P / R / F1 @ {related:.2f}",
                  f"{rel_at.precision:.2f}/{rel_at.recall:.2f}/{rel_at.f1:.2f}"),
              row("sweep: best same_threshold", dedup.same_best,
                  f"F1 {dedup.same_best_prf.f1:.2f} (P {dedup.same_best_prf.precision:.2f}"
                  f", R {dedup.same_best_prf.recall:.2f})"),
              row("sweep: best related_threshold", dedup.related_best,
                  f"F1 {dedup.related_best_prf.f1:.2f} (P "
                  f"{dedup.related_best_prf.precision:.2f}, R "
                  f"{dedup.related_best_prf.recall:.2f})")]

    offline = run_stream("offline", thresholds=(same, related))
    lines += [row("END-TO-END, offline (data/stream)", ""), *e2e_rows(offline)]
    broken = offline.broken_links + offline.no_source + offline.bare_lines
    if args.ollama_host:
        if not is_reachable(args.ollama_host):
            lines.append(row("END-TO-END, ollama", "skipped", f"nothing answers at "
                             f"{args.ollama_host}"))
        else:
            model = args.model or str(DEFAULTS["llm"]["model"])
            res = run_stream("ollama", args.ollama_host, model, thresholds=(same, related))
            lines += [row(f"END-TO-END, ollama {model}", ""), *e2e_rows(res)]
            broken += res.broken_links + res.no_source + res.bare_lines
    lines += ["", f"total time {time.monotonic() - started:.1f} s"]
    print("\n".join(lines))
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
