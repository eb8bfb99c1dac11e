"""``vaultlink dream`` with a real local model, on sample_vault and on real documents.

Run from the repository root (llama-cpp-python installed, see requirements.txt)::

    python -m bench.realmodel [--model qwen2.5-coder-1.5b] [--corpus sample --corpus realdocs]
        [--max-units 10] [--pages 4] [--runs 1] [--host URL] [--out bench/results]

It fetches the model, serves it with ``bench.realmodel.server`` on a free port (or uses
``--host``), copies the corpus to a new vault (sample_vault/, or a few pages of
bench/quality/realdocs written as resource/ notes), and runs the installed
``vaultlink dream --json`` with shipped defaults: only ``--ollama-host``, ``--model``
(the served model's name) and ``--max-units`` are passed, no environment override.
``--runs 2`` runs again on the same vault (failed units are retried then). It writes
``<out>/realmodel-<corpus>-<model>.json`` and ``.md``: units extracted / integrated /
failed, decisions by kind, tool calls by form, guard refusals by code, model seconds
and tokens per unit and per note, wall time, the
machine load, and the quality of what the model wrote (``measure.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.realmodel.fetch_model import CACHE_ENV, DEFAULT_CACHE, MODELS, fetch
from bench.realmodel.measure import (
    journal_of,
    node_quality,
    outside_digest_changed,
    snapshot,
    summarise,
)
from bench.realmodel.smoke import REPO, free_port, wait_up
from vaultlink.vault.state import State


class Load:
    """The 1-minute load average, sampled every 15 s while a run goes on."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(15)

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict[str, float]:
        s = self.samples or [0.0]
        return {"mean": round(sum(s) / len(s), 2), "max": round(max(s), 2),
                "cores": os.cpu_count() or 0}


def make_vault(corpus: str, dest: Path, pages: int) -> Path:
    """A fresh vault of the corpus at ``dest``."""
    if corpus == "sample":
        shutil.copytree(REPO / "sample_vault", dest,
                        ignore=shutil.ignore_patterns(".vaultlink", ".obsidian"))
        return dest
    from bench.quality.realdocs import load_corpus, write_as_vault  # stdlib only

    chosen = pick_pages(load_corpus(), pages)
    write_as_vault(chosen, dest)
    (dest / "daily").mkdir(parents=True, exist_ok=True)
    (dest / "digest").mkdir(parents=True, exist_ok=True)
    return dest


def pick_pages(pages: list[Any], n: int) -> list[Any]:
    """``n`` pages of one set that link to each other (so decisions can meet), short
    first: the model reads every word, at a few hundred tokens a minute."""
    by_set: dict[str, list[Any]] = {}
    for p in pages:
        by_set.setdefault(p.set, []).append(p)
    best = max(by_set.values(), key=lambda ps: sum(len(p.links) for p in ps))
    linked = sorted((p for p in best if p.links), key=lambda p: len(p.text))
    chosen = linked[:1]
    for p in linked[1:]:
        if len(chosen) >= n:
            break
        if any(q.path in p.links or p.path in q.links for q in chosen):
            chosen.append(p)
    return chosen


def dream(root: Path, host: str, model: str,
          max_units: int) -> tuple[int, dict[str, Any], float, str]:
    """One ``vaultlink dream --json``: exit code, its JSON, wall seconds, its stderr."""
    cmd = [sys.executable, "-m", "vaultlink", "dream", "--vault", str(root), "--ollama-host",
           host, "--model", model, "--max-units", str(max_units), "--json"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTLINK_")}
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.monotonic() - t0
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        data = {"error": proc.stdout[-2000:]}
    return proc.returncode, data, wall, proc.stderr[-4000:]


def report_run(corpus: str, model: str, root: Path, before: dict[str, bytes],
               runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of every run on one vault, and the quality of the digest after."""
    state = State(root / ".vaultlink/state.sqlite")
    try:
        failures = state.failures()
    finally:
        state.close()
    journal = journal_of(root / ".vaultlink/state.sqlite")
    after = snapshot(root)
    touched = sorted({j["target"] for j in journal
                      if j["action"] in ("CREATE", "CORROBORATE", "REFINE", "CORRECT")})
    sources = {p for j in journal if j["action"] in ("CREATE", "CORROBORATE", "REFINE",
                                                     "CORRECT") for p in j["unit"]["paths"]}
    created = [j["target"] for j in journal if j["action"] == "CREATE"]
    quality = node_quality(root, touched)
    quality["nodes_per_source_note"] = round(len(created) / len(sources), 2) if sources else 0
    quality["outside_digest_changed"] = outside_digest_changed(before, after)
    per_run = []
    for r in runs:
        run_journal = [j for j in journal if j["run_id"] == r["json"].get("run_id")]
        per_run.append({"exit_code": r["code"], "load": r["load"],
                        **summarise(r["json"], run_journal, [], r["wall"]),
                        "stderr_tail": r["stderr"][-600:] if r["code"] not in (0, 4) else ""})
    total = summarise({"extract": {}, "counts": {}}, journal, failures,
                      sum(r["wall"] for r in runs))
    return {"corpus": corpus, "model": model, "runs": per_run, "total": total,
            "quality": quality, "nodes": touched}


def markdown(rep: dict[str, Any]) -> str:
    """A short table of one corpus's report."""
    lines = [f"## {rep['corpus']} with {rep['model']}", "",
             "| run | exit | wall s | load (mean/max, cores) | notes | units | integrated | "
             "failed | decisions | model s/unit | prompt+answer tok/unit | "
             "extract s/note | tool calls | refusals |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for i, r in enumerate(rep["runs"], start=1):
        pu, pn, ld = r["per_unit"], r["per_note_extract"], r["load"]
        lines.append(
            f"| {i} | {r['exit_code']} | {r['wall_seconds']:.0f} | {ld['mean']}/{ld['max']}, "
            f"{ld['cores']} | {r['notes_extracted']} | {r['units_decided']} | "
            f"{r['integrated']} | {r['failed_units']}+{r['failed_notes']} notes | "
            f"{_kv(r['decisions'])} | {pu['model_seconds']} | "
            f"{pu['prompt_tokens']:.0f}+{pu['answer_tokens']:.0f} | {pn['model_seconds']} | "
            f"{_kv(r['tool_calls'])} | {_kv(r['refusals'])} |")
    q = rep["quality"]
    lines += ["", f"Quality: {len(rep['nodes'])} nodes written, "
              f"{q['nodes_per_source_note']} new nodes per source note, "
              f"{len(q['generic_or_fragment_names'])} generic/fragment names, "
              f"{len(q['bodies_not_starting_a_sentence'])} bodies not starting a sentence, "
              f"{q['broken_links']} broken links, {q['nodes_without_sources']} nodes without "
              f"sources, `vaultlink check` {q['check_errors']} errors, "
              f"{len(q['outside_digest_changed'])} files outside digest/ changed; "
              f"open failures: {len(rep['total']['open_failures'])}."]
    return "\n".join(lines) + "\n"


def _kv(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "-"


def main(argv: list[str] | None = None) -> int:
    """Serve the model, dream each corpus, write the reports."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-1.5b", choices=sorted(MODELS))
    p.add_argument("--corpus", action="append", choices=["sample", "realdocs"])
    p.add_argument("--max-units", type=int, default=10)
    p.add_argument("--pages", type=int, default=4, help="realdocs pages in the vault")
    p.add_argument("--runs", type=int, default=1, help="dreams on the same vault")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--host", help="use this server instead of starting one")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    p.add_argument("--keep", type=Path, help="copy each vault there afterwards, to read")
    args = p.parse_args(argv)
    with tempfile.TemporaryFile() as log:
        return _serve_and_run(args, log)


def _serve_and_run(args: argparse.Namespace, log: Any) -> int:
    spec = MODELS[args.model]
    server = None
    host = args.host
    if host is None:
        path = fetch(args.model, Path(os.environ.get(CACHE_ENV, DEFAULT_CACHE)).expanduser())
        host = f"http://127.0.0.1:{free_port()}"
        server = subprocess.Popen(
            [sys.executable, "-m", "bench.realmodel.server", "--model", str(path), "--port",
             host.rsplit(":", 1)[1], "--threads", str(args.threads)],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        wait_up(host, server)
    try:
        for corpus in args.corpus or ["sample"]:
            with tempfile.TemporaryDirectory(prefix=f"vaultlink-real-{corpus}-") as tmp:
                root = make_vault(corpus, Path(tmp) / "vault", args.pages)
                before = snapshot(root)
                runs = []
                for n in range(args.runs):
                    with Load() as load:
                        code, data, wall, err = dream(root, host, spec.ollama_name,
                                                      args.max_units)
                    runs.append({"code": code, "json": data, "wall": wall, "stderr": err,
                                 "load": load.figures()})
                    print(f"{corpus} run {n + 1}: exit {code}, {wall:.0f} s, "
                          f"{data.get('counts')}", flush=True)
                rep = report_run(corpus, spec.ollama_name, root, before, runs)
                if args.keep:
                    shutil.copytree(root, args.keep / corpus, dirs_exist_ok=True)
            args.out.mkdir(parents=True, exist_ok=True)
            stem = f"realmodel-{corpus}-{args.model}"
            (args.out / f"{stem}.json").write_text(json.dumps(rep, indent=1) + "\n")
            (args.out / f"{stem}.md").write_text(markdown(rep))
            print(markdown(rep), flush=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
    return 0
