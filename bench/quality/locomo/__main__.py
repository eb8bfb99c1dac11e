"""LoCoMo's ten conversations as a journal of day notes; session-level recall of search.

    python -m bench.quality.locomo [--convs 26,30] [--dream offline|none] [--json out.json]
    python -m bench.quality.locomo --convs 30,49 --llm ollama \
        --ollama-host http://127.0.0.1:11435 --model qwen2.5-coder:0.5b
    python -m bench.quality.locomo --self-check

Each conversation is its own vault (``vault.py`` says how a session becomes a day note).
Per question, each system's hits become a ranking of sessions (``measure.py``); R@5 and
R@10 count a question only when all its evidence sessions are in the top k, any@5 when one
is. Systems, in one run: vaultlink ``search`` over the notes, the same after an offline
dream, BM25 over whole notes (``run.py``). Tune on conversations 26, 30, 41, 42, 43 only;
44, 47, 48, 49, 50 are the held-out half, reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.quality.locomo.data import CATEGORIES, HELD_OUT, TUNE, load
from bench.quality.locomo.measure import GROUPS, aggregate, score

RESULTS = Path(__file__).resolve().parent / "results"
SYSTEMS = {"notes": "vaultlink search, notes only",
           "dream": "vaultlink search after dream --llm offline",
           "bm25": "BM25 over whole notes"}


def splits(convs: list[str]) -> dict[str, list[str]]:
    out = {"tune": [c for c in convs if c in TUNE],
           "held-out": [c for c in convs if c in HELD_OUT], "all": convs}
    return {k: v for k, v in out.items() if v}


def fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.3f}"


def print_tables(summary: dict, convs: list[str]) -> None:
    parts = splits(convs)
    for system, label in SYSTEMS.items():
        if system not in summary:
            continue
        print(f"\n{label}")
        head = "| category | " + " | ".join(f"{s}: R@5 / R@10 / any@5 (n)" for s in parts) + " |"
        print(head)
        print("|---" * (len(parts) + 1) + "|")
        for g in GROUPS:
            name = f"{g} {CATEGORIES[int(g)]}" if g.isdigit() else g
            cells = []
            for s in parts:
                t = summary[system][s][g]
                cells.append(f"{fmt(t['R@5'])} / {fmt(t['R@10'])} / {fmt(t['any@5'])} ({t['n']})")
            print(f"| {name} | " + " | ".join(cells) + " |")


def strip_text(out: dict) -> None:
    """Leave LoCoMo's own words out of the results: ids, ranks and scores stay."""
    for r in out["questions"]:
        r.pop("question", None)
        for key in ("notes_hits", "dream_hits"):  # [path, line, score, similarity, keyword rank]
            if key in r:
                r[key] = [[h["path"], h["line"], h["score"], h["similarity"], h["keyword_rank"]]
                          for h in r[key]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=None,
                    help="the snapshot's git dir (default "
                         "/work/.mirror/snap-research+locomo/repo), locomo10.zip, "
                         "locomo10.json, or a folder of NN.json")
    ap.add_argument("--convs", default="", help="conversation ids, e.g. 26,30 (default: all ten)")
    ap.add_argument("--dream", choices=("offline", "none"), default="offline")
    ap.add_argument("--dream-convs", default="",
                    help="dream only these conversations (default: every one measured)")
    ap.add_argument("--llm", choices=("offline", "ollama"), default="offline",
                    help="who reads and integrates in the dream: the offline rules, or a "
                         "model an Ollama server serves (--ollama-host, --model)")
    ap.add_argument("--ollama-host", default="http://127.0.0.1:11434")
    ap.add_argument("--model", default="qwen2.5-coder:0.5b")
    ap.add_argument("--limit", type=int, default=50, help="search hits asked per question")
    ap.add_argument("--reranker", default="none",
                    help="index.reranker for every search of the run (e.g. ms-marco-minilm-l12)")
    ap.add_argument("--daemon-conv", default="",
                    help="also ask this conversation's questions through the daemon's GET /search "
                         "('' : the first measured; 'none': skip)")
    ap.add_argument("--json", type=Path, default=None,
                    help="results JSON (default: results/<stamp>.json)")
    ap.add_argument("--keep", type=Path, default=None, help="build the vaults here and keep them")
    ap.add_argument("--with-text", action="store_true",
                    help="keep the questions' and hits' text in the JSON (LoCoMo's words: for a "
                         "local look at misses, never to commit, see SOURCE.md)")
    ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args(argv)
    if args.self_check:
        from bench.quality.locomo.selfcheck import main as check
        return check()

    from bench.quality.locomo import run
    from bench.quality.personal.run import Model
    from vaultlink.cli.settings import load_settings
    from vaultlink.index.recall import recall_embedders

    conversations, source = load(args.data)
    wanted = [c.strip().removeprefix("conv-") for c in args.convs.split(",") if c.strip()]
    conversations = [c for c in conversations if not wanted or c.conv in wanted]
    convs = [c.conv for c in conversations]
    dream_convs = ({c.strip() for c in args.dream_convs.split(",") if c.strip()} or set(convs)
                   if args.dream == "offline" else set())
    model = Model(args.llm, args.ollama_host, args.model)
    if args.reranker != "none":  # set in every vault's config.yaml after its init
        for system in ("notes", "dream"):
            SYSTEMS[system] += f", reranker {args.reranker}"
    if args.llm == "ollama":
        SYSTEMS["dream"] = f"vaultlink search after dream with {args.model}"
    daemon_conv = "" if args.daemon_conv == "none" else (args.daemon_conv or convs[0])
    work = args.keep or Path(tempfile.mkdtemp(prefix="locomo-"))
    work.mkdir(parents=True, exist_ok=True)
    started = datetime.now(UTC)
    out: dict = {"started": started.isoformat(timespec="seconds"), "data": source,
                 "vaultlink_commit": run.code_commit(), "vaultlink_at": str(run.VL_ROOT),
                 "limit": args.limit, "convs": convs, "reranker": args.reranker,
                 "dream_llm": args.llm if args.dream == "offline" else None,
                 "dream_model": args.model if args.llm == "ollama" else None,
                 "dream_convs": sorted(dream_convs),
                 "loadavg_start": os.getloadavg(), "questions": [], "per_conv": {}}
    print(f"LoCoMo from {source.get('repo', source['read_from'])} @ "
          f"{source.get('commit', '-')[:12]}; vaultlink {out['vaultlink_commit']}; "
          f"vaults in {work}", flush=True)
    embedders = None
    timings: dict[str, list[float]] = {"notes": [], "dream": []}
    rows = out["questions"]
    try:
        for conv in conversations:
            root = work / f"conv-{conv.conv}"
            if root.exists():
                shutil.rmtree(root)
            root.mkdir()
            t0 = time.monotonic()
            from bench.quality.locomo.vault import write_vault
            layout = write_vault(conv, root)
            reindex_s = run.init_and_reindex(root)
            if args.reranker != "none":
                run.use_reranker(root, args.reranker)
            if embedders is None:
                embedders = recall_embedders(load_settings(root, environ={}).pipeline())
            qs = conv.questions
            mine = [{"conv": conv.conv, "index": q.index, "category": q.category,
                     "question": q.question, "evidence": list(q.evidence),
                     "sessions": sorted({conv.session_of(d) for d in q.evidence})} for q in qs]
            info: dict = {"sessions": len(conv.sessions), "questions": len(qs),
                          "reindex_s": round(reindex_s, 1), "dropped": conv.dropped,
                          "notes": {str(n): p for n, p in layout.note_of.items()}}
            ranked, hits, secs = run.vl_search(root, layout, qs, args.limit, embedders)
            timings["notes"] += secs
            for r, rk, h in zip(mine, ranked, hits, strict=True):
                r["notes"] = score(rk, set(r["sessions"]))
                r["notes_ranked"] = rk[:10]
                r["notes_hits"] = h[:5]
            for r, rk in zip(mine, run.bm25(root, layout, qs), strict=True):
                r["bm25"] = score(rk, set(r["sessions"]))
                r["bm25_ranked"] = rk[:10]
            if conv.conv in dream_convs:
                info["dream"] = run.dream(root, layout, model)
                info["dream"].update(run.evidence_cited(root, layout, conv, info["dream"]["nodes"]))
                ranked, hits, secs = run.vl_search(root, layout, qs, args.limit, embedders)
                timings["dream"] += secs
                for r, rk, h in zip(mine, ranked, hits, strict=True):
                    r["dream"] = score(rk, set(r["sessions"]))
                    r["dream_ranked"] = rk[:10]
                    r["dream_hits"] = h[:5]
            if conv.conv == daemon_conv:
                ranked, secs = run.daemon_search(root, layout, qs, args.limit)
                sys_ = "dream" if conv.conv in dream_convs else "notes"
                same = sum(rk[:10] == r[f"{sys_}_ranked"]
                           for rk, r in zip(ranked, mine, strict=True))
                out["daemon"] = {"conv": conv.conv, "vault": sys_, **run.quantiles(secs),
                                 "same_top10_as_in_process": f"{same} of {len(mine)}",
                                 "loadavg": os.getloadavg()}
            info["seconds"] = round(time.monotonic() - t0, 1)
            rows += mine
            out["per_conv"][conv.conv] = info
            d = info.get("dream", {})
            print(f"conv-{conv.conv}: {len(conv.sessions)} sessions, {len(qs)} questions, "
                  f"reindex {reindex_s:.1f} s"
                  + (f", dream {d['runs']} runs {d['seconds']} s, {d['units']} units, "
                     f"{d['failed_units']} failed "
                     f"({d['failed_units_never_done']} never integrated), "
                     f"{len(d['nodes'])} nodes, "
                     f"{d['cited_by_a_node']}/{d['evidence_turns']} evidence turns cited"
                     if d else "") + f"; {info['seconds']} s", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    parts = splits(convs)
    out["summary"] = {s: {name: aggregate(rows, s, cs) for name, cs in parts.items()}
                      for s in SYSTEMS if any(s in r for r in rows)}
    # the dream's rows only where it ran: compare with the notes on the same questions
    if dream_convs and dream_convs != set(convs):
        out["summary"]["notes_on_dreamed"] = {
            name: aggregate(rows, "notes", [c for c in cs if c in dream_convs])
            for name, cs in parts.items()}
    out["timings"] = {s: run.quantiles(t) for s, t in timings.items() if t}
    dreams = [i["dream"] for i in out["per_conv"].values() if "dream" in i]
    if dreams:
        out["dream_totals"] = {k: sum(d[k] for d in dreams) for k in (
            "units", "integrated", "failed_units", "failed_units_never_done",
            "failed_units_first_run", "failed_notes_first_run",
            "failed_units_last_run", "runs_with_failures", "turn_paragraphs",
            "turn_paragraphs_passed_over", "evidence_turns", "cited_by_a_node")}
        out["dream_totals"]["nodes"] = sum(len(d["nodes"]) for d in dreams)
        out["dream_totals"]["not_settled"] = [c for c, i in out["per_conv"].items()
                                              if "dream" in i and not i["dream"]["settled"]]
    out["loadavg_end"] = os.getloadavg()
    out["seconds"] = round((datetime.now(UTC) - started).total_seconds(), 1)
    print_tables(out["summary"], convs)
    if "notes_on_dreamed" in out["summary"]:
        print("\n(notes only, on the dreamed conversations alone)")
        print_tables({"notes": out["summary"]["notes_on_dreamed"]},
                     sorted(dream_convs, key=int))
    print(f"\nsearch in-process: {out['timings']}")
    if "daemon" in out:
        print(f"search through the daemon (GET /search): {out['daemon']}")
    if dreams:
        print(f"dream totals: {out['dream_totals']}")
    if not args.with_text:
        strip_text(out)
    target = args.json or RESULTS / f"{started:%Y%m%dT%H%M%S}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    indent = None if len(out["questions"]) > 300 else 1
    target.write_text(json.dumps(out, indent=indent, default=str) + "\n", "utf-8")
    print(f"results: {target}  ({out['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
