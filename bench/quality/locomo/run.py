"""The three systems on one conversation's vault, in one run.

(a) ``vaultlink search`` over the notes: ``vaultlink init`` and ``vaultlink reindex`` run as
    a user runs them (``python -m vaultlink``, the vaultlink this bench imports), then each
    question goes through ``ChunkIndex.search`` and ``above_floor``, what ``vaultlink search
    --json`` prints (``vaultlink/cli/recall.py``), in this process with the models loaded
    once, and timed per query.
(b) the same after ``dream --llm offline`` (or a model an Ollama server serves) until a
    run integrates nothing (``compose`` + ``run_dream`` with the configured steps, every
    unit in one run, as ``bench/quality/personal`` does), then the section index brought
    up to date.
(c) BM25 (``rank_bm25.BM25Okapi``, k1 1.5, b 0.75) over whole day notes, front matter left
    out, words lower-cased (``[a-z0-9]+``), nothing stemmed or dropped.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import vaultlink
from bench.quality.locomo.data import Conversation
from bench.quality.locomo.measure import node_reader, ranked_sessions
from bench.quality.locomo.vault import Layout
from bench.quality.personal.run import Model
from bench.quality.personal.run import dream_once as model_dream

MAX_RUNS = 12
VL_ROOT = Path(vaultlink.__file__).resolve().parent.parent  # where `python -m vaultlink` runs
_WORD = re.compile(r"[a-z0-9]+")


def code_commit() -> str:
    """The commit of the vaultlink measured (``+dirty`` when its files differ from it)."""
    marker = VL_ROOT / "COMMIT"
    if marker.is_file():  # an exported tree (git archive) carries its commit here
        return marker.read_text().strip()
    try:
        head = subprocess.run(["git", "-C", str(VL_ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(VL_ROOT), "status", "--porcelain", "--",
                                "vaultlink"], capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cli(root: Path, *args: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTLINK_")}
    return subprocess.run([sys.executable, "-m", "vaultlink", *args, "--vault", str(root)],
                          cwd=VL_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
                          check=True)


def use_reranker(root: Path, name: str) -> None:
    """Set ``index.reranker`` in the vault's config.yaml, as its owner would edit it: the
    in-process searches and the daemon's read it from there."""
    config = root / ".vaultlink" / "config.yaml"
    text = config.read_text(encoding="utf-8")
    edited, n = re.subn(r"(?m)^(  reranker: )none\b", rf"\g<1>{name}", text)
    if n != 1:
        raise SystemExit(f"{config}: no 'reranker: none' line under index: to set")
    config.write_text(edited, encoding="utf-8")


def init_and_reindex(root: Path) -> float:
    """``vaultlink init`` then ``vaultlink reindex``; the reindex's wall seconds."""
    cli(root, "init")
    t0 = time.monotonic()
    cli(root, "reindex", "--json")
    return time.monotonic() - t0


def hit_row(h: dict[str, Any]) -> dict[str, Any]:
    return {"path": h["path"], "line": h["line"], "score": round(float(h["score"]), 5),
            "similarity": round(float(h["similarity"]), 4),
            "keyword_rank": int(h.get("keyword_rank", 0)),
            "text": " ".join(str(h["text"]).split())[:200]}


def vl_search(root: Path, layout: Layout, questions: list[Any], limit: int,
              embedders: Any) -> tuple[list[list[int]], list[list[dict]], list[float]]:
    """Ranked sessions, the hits, and the seconds of each question's search."""
    from vaultlink.cli.common import open_vault
    from vaultlink.index.fusion import above_floor
    from vaultlink.index.recall import open_recall

    v, settings = open_vault(root)
    floor = float(settings.get("index.min_similarity"))
    indexes = open_recall(v, settings.pipeline(), embedders)
    cites = node_reader(root, layout)
    ranked, hits, seconds = [], [], []
    try:
        indexes.nodes.sync()
        indexes.chunks.sync()
        for q in questions:
            t0 = time.perf_counter()
            found = above_floor([dataclasses.asdict(h) for h in
                                 indexes.chunks.search(q.question, limit)], floor)
            seconds.append(time.perf_counter() - t0)
            rows = [hit_row(h) for h in found]
            hits.append(rows)
            ranked.append(ranked_sessions([r["path"] for r in rows], layout, cites))
    finally:
        indexes.close()
    return ranked, hits, seconds


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def body(text: str) -> str:
    """A note without its front matter."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            return text[end + 5:]
    return text


def bm25(root: Path, layout: Layout, questions: list[Any]) -> list[list[int]]:
    from rank_bm25 import BM25Okapi

    sessions = sorted(layout.note_of)
    corpus = [words(body((root / layout.note_of[n]).read_text("utf-8"))) for n in sessions]
    index = BM25Okapi(corpus)
    out = []
    for q in questions:
        scores = index.get_scores(words(q.question))
        order = sorted(range(len(sessions)), key=lambda i: (-scores[i], sessions[i]))
        out.append([sessions[i] for i in order])
    return out


def dream(root: Path, layout: Layout, model: Model | None = None) -> dict[str, Any]:
    """Dream (offline unless ``model`` says otherwise) until a run integrates nothing;
    what it did and failed."""
    t0 = time.monotonic()
    runs = []
    for _ in range(MAX_RUNS):
        run = model_dream(root, model or Model())
        runs.append(run)
        # nothing extracted, nothing to integrate
        if not run.extraction.units and not run.report.results:
            break
    turn_lines = {(p.path, p.line) for p in layout.turns.values()}
    passed = {(po.path, ln) for run in runs for po in run.extraction.passed_over
              for ln in range(po.line, po.end_line + 1)} & turn_lines
    last = runs[-1]

    def key(r: Any) -> tuple[str, tuple[str, ...]]:
        return r.unit.name, tuple(r.unit.paths)
    failed = {key(r) for run in runs for r in run.report.results if r.status == "failed"}
    failed |= {(u.name, tuple(u.paths)) for run in runs for u in run.report.failed_units}
    done = {key(r) for run in runs for r in run.report.results if r.status != "failed"}
    return {
        "runs": len(runs), "settled": not last.extraction.units and not last.report.results,
        "failed_units": len(failed), "failed_units_never_done": len(failed - done),
        "notes_held_at_end": sorted(last.extraction.held_paths | last.report.parked_paths),
        "seconds": round(time.monotonic() - t0, 1),
        "units": len({(u.name, tuple(u.paths)) for r in runs for u in r.extraction.units}),
        "integrated": sum(r.status == "integrated" for run in runs for r in run.report.results),
        "failed_units_first_run": len(runs[0].report.failed_units),
        "failed_notes_first_run": len(runs[0].extraction.failed_notes),
        "runs_with_failures": sum(bool(r.report.failed_units or r.extraction.failed_notes)
                                  for r in runs),
        "failed_units_last_run": len(last.report.failed_units),
        "failed_units_all_runs": sum(len(r.report.failed_units) for r in runs),
        "failure_reasons": sorted({r.error[:160] for run in runs for r in run.report.results
                                   if r.status == "failed"})[:8],
        "turn_paragraphs": len(turn_lines),
        "turn_paragraphs_passed_over": len(passed),
        "nodes": sorted(p.relative_to(root).as_posix() for p in (root / "digest").rglob("*.md")
                        if "topics" not in p.relative_to(root).parts),
    }


def grams(text: str, n: int = 5) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i:i + n]) for i in range(max(1, len(w) - n + 1))} if w else set()


def evidence_cited(root: Path, layout: Layout, conv: Conversation,
                   nodes: list[str]) -> dict[str, int]:
    """Evidence turns a node cites: the node's Sources link the turn's note and five words
    in a row of the turn (all of it, if shorter) are in the node's text."""
    cites = node_reader(root, layout)
    node_grams = {p: grams((root / p).read_text("utf-8")) for p in nodes}
    text_of = {t.dia_id: t.text for s in conv.sessions for t in s.turns}
    evidence = {d for q in conv.questions for d in q.evidence if d in layout.turns}
    cited = 0
    for dia in evidence:
        n = conv.session_of(dia)
        g = grams(text_of[dia])
        if any(n in cites(p) and g & node_grams[p] for p in nodes):
            cited += 1
    return {"evidence_turns": len(evidence), "cited_by_a_node": cited}


def daemon_search(root: Path, layout: Layout, questions: list[Any], limit: int
                  ) -> tuple[list[list[int]], list[float]]:
    """Every question through a daemon's ``GET /search`` (the vault's own daemon, started
    here and stopped after): ranked sessions and wall seconds per request."""
    from vaultlink.cli.settings import load_settings
    from vaultlink.daemon.client import ask_daemon
    from vaultlink.index.fusion import above_floor

    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTLINK_")}
    log = open(root.parent / f"{root.name}-daemon.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "vaultlink", "watch", "--foreground",
                             "--vault", str(root)], cwd=VL_ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    state = root / ".vaultlink"
    floor = float(load_settings(root, environ={}).get("index.min_similarity"))
    cites = node_reader(root, layout)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                ask_daemon(state, "GET", "/status", timeout=5)
                break
            except Exception:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the daemon did not start: see {log.name}") from None
                time.sleep(0.5)
        # one warm-up request (the first section search syncs the section index)
        ask_daemon(state, "GET", "/search?" + urlencode({"q": "hello", "limit": limit,
                                                         "in": "sections"}), timeout=3600)
        ranked, seconds = [], []
        for q in questions:
            t0 = time.perf_counter()
            answer = ask_daemon(state, "GET", "/search?" + urlencode(
                {"q": q.question, "limit": limit, "in": "sections"}), timeout=600)
            seconds.append(time.perf_counter() - t0)
            rows = above_floor(answer["hits"], floor)
            ranked.append(ranked_sessions([r["path"] for r in rows], layout, cites))
        return ranked, seconds
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def quantiles(seconds: list[float]) -> dict[str, float]:
    if not seconds:
        return {}
    s = sorted(seconds)
    p95 = s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
    return {"n": len(s), "p50_ms": round(statistics.median(s) * 1000, 1),
            "p95_ms": round(p95 * 1000, 1), "max_ms": round(s[-1] * 1000, 1)}
