"""``python -m bench.quality.personal``: dream each personal vault and count what its owner
would notice (``measures.py`` says how each figure is counted; ``corpus.py`` where the
vaults come from).

    python -m bench.quality.personal                      # every vault, offline
    python -m bench.quality.personal --vault 11ze         # one vault
    python -m bench.quality.personal --llm ollama --ollama-host http://127.0.0.1:11435 \\
        --model qwen2.5-coder:0.5b --vault kha-dinh       # a real model (bench/realmodel)
    python -m bench.quality.personal --keep /tmp/pv-out   # keep the dreamed vaults
    python -m bench.quality.personal --self-check         # the measures on a tiny vault
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.quality.personal import corpus
from bench.quality.personal.measures import Report, load_labels, measure
from bench.quality.personal.run import Model, dream_vault

RESULTS = Path(__file__).resolve().parent / "results"
COLUMNS = [("owner_links_changed", "links changed"), ("bad_names", "date/id/tpl names"),
           ("duplicate_names", "dup names"), ("template_only_cited", "tpl-only cited"),
           ("unbacked_share", "unbacked"), ("landed_share", "day paras landed"),
           ("failed_units", "failed"), ("parked_notes", "parked"), ("link_precision", "link P"),
           ("wrong_merges", "wrong merges")]


def table(reports: list[Report]) -> str:
    head = ["vault", "notes (days)", "nodes"] + [c[1] for c in COLUMNS] + ["unlabelled l/m"]
    rows = [head, ["---"] * len(head)]
    for r in reports:
        f = r.figures()
        cells = [r.name, f"{f['notes']} ({f['day_notes']})", str(f["nodes"])]
        for key, _ in COLUMNS:
            v = f[key]
            if key == "unbacked_share":
                v = f"{f['sources_unbacked']}/{f['sources_lines']}"
            elif key == "landed_share":
                v = f"{f['landed']}/{f['day_paragraphs']}"
            elif key == "link_precision":
                v = "-" if v is None else f"{v} ({f['links_labelled']})"
            elif key == "wrong_merges":
                v = f"{v}/{f['merges_labelled']}"
            cells.append(str(v))
        cells.append(f"{f['links_unlabelled']}/{f['merges_unlabelled']}")
        rows.append(cells)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def detail(r: Report) -> str:
    out = [f"\n## {r.name}: {r.nodes} nodes, template {r.template_files or '(none found)'}, "
           f"{r.template_only_days} template-only day notes"]
    out.append("names: " + "; ".join(f"{n}" for _, n in sorted(r.node_names, key=lambda x: x[0])))
    for title, items in (("owner links changed", r.links_changed), ("bad names", r.bad_names),
                         ("unbacked Sources lines", r.unbacked), ("failed units", r.failed),
                         ("parked notes", r.parked)):
        if items:
            out.append(f"{title} ({len(items)}):")
            out += [f"  - {json.dumps(i, ensure_ascii=False)}" for i in items[:8]]
    if r.duplicates:
        out.append(f"duplicate names: {r.duplicates[:8]}")
    if r.template_only_cited:
        out.append(f"template-only days cited: {r.template_only_cited[:8]}")
    return "\n".join(out)


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.quality.personal")
    ap.add_argument("--vault", action="append", help="only this vault (repeatable)")
    ap.add_argument("--llm", choices=("offline", "ollama"), default="offline")
    ap.add_argument("--ollama-host", default="http://127.0.0.1:11434")
    ap.add_argument("--model", default="qwen2.5-coder:0.5b")
    ap.add_argument("--keep", type=Path, help="dream in this folder and keep the vaults")
    ap.add_argument("--build", action="store_true", help="rebuild the vaults from snapshots")
    ap.add_argument("--out", type=Path, help="results JSON (default results/<date>[-model].json)")
    ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args(argv)
    if args.self_check:
        from bench.quality.personal.selfcheck import self_check
        return self_check()
    manifest = corpus.load_manifest()
    names = [v["name"] for v in manifest if not args.vault or v["name"] in args.vault]
    missing = [n for n in names if not (corpus.VAULTS / n / "vault").is_dir()]
    if args.build or missing:
        for n in (names if args.build else missing):
            corpus.build(n)
    model = Model(args.llm, args.ollama_host, args.model)
    labels = load_labels()
    reports = []
    with tempfile.TemporaryDirectory(prefix="vaultlink-personal-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for name in names:
            print(f"dreaming {name} ({model.provider}) ...", file=sys.stderr, flush=True)
            d = dream_vault(name, corpus.VAULTS / name / "vault", work, model)
            rep = measure(name, d.root, d.before, d.runs, labels)
            rep.settled, rep.runs, rep.seconds = d.settled, len(d.runs), d.seconds
            reports.append(rep)
            print(detail(rep), flush=True)
    print("\n" + table(reports))
    date = dt.date.today().isoformat()
    suffix = "" if model.provider == "offline" else "-" + model.model.replace(":", "-")
    out = args.out or RESULTS / f"{date}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"date": date, "commit": commit(), "llm": model.provider,
               "model": model.model if model.provider == "ollama" else None,
               "vaults": {r.name: {"figures": r.figures(), "template_files": r.template_files,
                                   "node_names": r.node_names,
                                   "owner_links_changed": r.links_changed,
                                   "bad_names": r.bad_names, "duplicates": r.duplicates,
                                   "template_only_cited": r.template_only_cited,
                                   "unbacked": r.unbacked, "failed": r.failed,
                                   "parked": r.parked,
                                   "woven": r.woven, "merges": r.merges}
                          for r in reports}}
    out.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    print(f"\nwritten {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
