"""Scale-out benchmark: node_search and search served by a Chroma server (``chroma run``).

    python -m bench.bench_scale_out --sections 100000             # a few minutes
    python -m bench.bench_scale_out --sections 1000000 --embedded  # the issue's size
    python -m bench.bench_scale_out --sections 10000 --no-recall   # a quick check
    python -m bench.bench_scale_out --work DIR --queries-only      # again, on kept data

Starts a Chroma server in a temporary folder, then prints, each with the machine's load
average beside it:

* recall@20 of node_search on linkdocs (379 real pages, their links the truth,
  ``bench/quality/realrecall.py``) with the vectors in state.sqlite (exact) and on the
  server (its HNSW), the same MiniLM vectors moved there without embedding again; and
  the share of the exact top 20 by vector alone that the server's ANN returns;
* the load: ``--sections`` section vectors and ``--nodes`` (default a tenth) node
  vectors written to the server through the index's own writer (``ServedVectors``,
  metadata and batches as a sync writes them), their docs and FTS rows to state.sqlite;
* node_search and search p50/p95 through the server, in a fresh process (the query
  embedded by MiniLM, the vectors random unit ones: a query's cost does not depend on
  what they are, and random vectors are the hard case for HNSW), that process's peak
  RSS, and the server's RSS; with ``--embedded`` the same data and queries with the
  vectors in state.sqlite, searched exactly in memory.

Texts are pseudo-words drawn by a Zipf law from 50,000 (a real vocabulary's shape: a
few words in every section, most in a few); query words skip the 50 most common, as
the product's stop words would. The queries ask without a sync first (the daemon's and
MCP's path): a sync would walk a vault that holds no files.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_daemon import memory_kb
from bench.bench_scale import HashVectors, percentiles
from bench.scaleout_data import VOCAB, Corpus, chroma_server, load, say

PY = sys.executable


def recall_rows(port: int) -> None:
    """recall@20 of node_search on linkdocs, exact (state.sqlite) and through the server."""
    from bench.quality.realdocs import load_corpus, truth_pairs
    from bench.quality.realdocs._build import corpora
    from bench.quality.realrecall import (
        configured_embedder,
        real_nodes,
        recall_at,
        truth_by_page,
        write_nodes,
    )
    from vaultlink.index.nodes import NodeIndex
    from vaultlink.index.store import open_server
    from vaultlink.vault.notes import Vault

    embedder, body_chars = configured_embedder()
    pages = load_corpus(corpora()["linkdocs"].root)
    nodes = real_nodes(pages)
    truth = truth_by_page(pages, truth_pairs(pages))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        write_nodes(root, nodes)
        db = root / ".vaultlink" / "state.sqlite"
        vault = Vault(root)
        page_of = {n.rel: n.page for n in nodes}
        vectors = {n.page: embedder.embed([n.query])[0] for n in nodes}

        def ranked(index: NodeIndex) -> dict[str, list[str]]:
            return {n.page: [p for p in (page_of[h.path] for h in index.node_search(
                n.query, 21)) if p != n.page][:20] for n in nodes}

        exact_ix = NodeIndex(vault, db, None, embedder, body_chars=body_chars)
        t0 = time.perf_counter()
        exact_ix.sync()
        built = time.perf_counter() - t0
        exact = ranked(exact_ix)
        exact_top = {p: [i for i, _ in exact_ix._matrix().search(v, 20)]
                     for p, v in vectors.items()}
        exact_ix.close()
        client = open_server("127.0.0.1", port)
        served_ix = NodeIndex(vault, db, client, embedder, body_chars=body_chars,
                              namespace="linkdocs")
        served_ix.sync()  # the vectors move to the server: nothing embedded again
        served = ranked(served_ix)
        assert served_ix.served is not None
        ann = [len(set(i for i, _ in served_ix.served.nearest(v, 20)) & set(exact_top[p])) / 20
               for p, v in vectors.items()]
        served_ix.close()
    say("linkdocs: pages, nodes built (MiniLM)", f"{len(nodes)}, {built:.0f} s")
    say("node_search recall@20, vectors in state.sqlite", f"{recall_at(exact, truth, 20):.3f}")
    say("node_search recall@20, through the Chroma server", f"{recall_at(served, truth, 20):.3f}")
    say("server ANN top 20 vs exact top 20 (vectors only)", f"{np.mean(ann):.3f}")


def query_process(root: Path, mode: str, port: int, queries: int, seed: int) -> dict[str, Any]:
    """node_search and search p50/p95 in a fresh process, with its peak RSS."""
    out = subprocess.run([PY, "-m", "bench.bench_scale_out", "--query", str(root), "--mode",
                          mode, "--port", str(port), "--queries", str(queries), "--seed",
                          str(seed)], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"the query process failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def queries_of(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [VOCAB[min(50 + int(r), len(VOCAB) - 1)] for r in rng.zipf(1.1, size=n * 8)]
    pick = random.Random(seed)
    return [" ".join(words[i * 8: i * 8 + pick.randint(2, 8)]) for i in range(n)]


def query_main(root: Path, mode: str, port: int, n: int, seed: int) -> None:
    """The query process: open the indexes as the daemon does, ask, print JSON."""
    from vaultlink.cli.settings import model_cache_dir
    from vaultlink.index.embed import MiniLMEmbedder
    from vaultlink.index.recall import open_indexes
    from vaultlink.vault.notes import Vault

    # as the CLI, the daemon and MCP load it: the graph optimised once per machine and
    # kept in the user's cache (optimising it in this process peaked at ~300 MB)
    minilm = MiniLMEmbedder(cache_dir=model_cache_dir())
    minilm.embed(["a query before any index is open"])
    if mode == "http":
        import chromadb  # noqa: F401  (its import is part of the floor in http mode)
    floor = memory_kb(os.getpid())["VmRSS"] / 1024  # the model, the libraries: no index
    indexes = open_indexes(Vault(root), minilm, chroma_mode=mode,
                           chroma_host="127.0.0.1", chroma_port=port)
    qs = queries_of(n, seed)
    t0 = time.perf_counter()
    indexes.nodes.node_search(qs[0], 20)  # opens the client or loads the matrix
    first = time.perf_counter() - t0
    nodes = percentiles(lambda q: indexes.nodes.node_search(q, 20), qs)
    sections = percentiles(lambda q: indexes.chunks.search(q, 10), qs)
    mem = memory_kb(os.getpid())
    # where a query's time goes: the vector search alone (the server's, or the exact
    # product), and BM25 over FTS5 alone (in this process in both modes), asked for the
    # terms a query asks for (in a large index its rarest, ``index.keywords``)
    vectors = {q: minilm.embed([q])[0] for q in qs}
    parts = {}
    for kind, index in (("node", indexes.nodes), ("search", indexes.chunks)):
        parts[f"{kind}_vec"] = percentiles(
            lambda q, ix=index: ix._nearest(vectors[q], 60, {}, ""), qs)  # type: ignore[misc]
        parts[f"{kind}_fts"] = percentiles(
            lambda q, ix=index: ix._keyword_ids(ix._keyword_match(q) or '""',  # type: ignore[misc]
                                                ix.bm25_weights, 60), qs)
    indexes.close()
    print(json.dumps({"first_s": first, "node_p50": nodes[0], "node_p95": nodes[1],
                      "node_cpu": nodes[2], "search_p50": sections[0],
                      "search_p95": sections[1], "search_cpu": sections[2],
                      "hwm_mb": mem["VmHWM"] / 1024, "rss_mb": mem["VmRSS"] / 1024,
                      "floor_mb": floor, "parts": parts}))


def report(label: str, r: dict[str, Any]) -> None:
    say(f"node_search p50/p95 ({label})", f"{r['node_p50']:.1f} / {r['node_p95']:.1f} ms; "
        f"{r['node_cpu']:.1f} ms CPU per query; first query {r['first_s']:.2f} s")
    say(f"search p50/p95 ({label})", f"{r['search_p50']:.1f} / {r['search_p95']:.1f} ms; "
        f"{r['search_cpu']:.1f} ms CPU per query")
    for kind in ("node", "search"):
        vec, fts = r["parts"][f"{kind}_vec"], r["parts"][f"{kind}_fts"]
        say(f"  {kind}: its vector search / its BM25 alone",
            f"p50 {vec[0]:.1f} / p95 {vec[1]:.1f} ms; p50 {fts[0]:.1f} / p95 {fts[1]:.1f} ms")
    say(f"query process RSS ({label})", f"{r['rss_mb']:.0f} MB after the queries, peak "
        f"{r['hwm_mb']:.0f} MB; {r['rss_mb'] - r['floor_mb']:.0f} MB above the same process "
        f"with the model loaded and no index open ({r['floor_mb']:.0f} MB)")


def queries_again(work: Path, queries: int, seed: int) -> int:
    """The query phase alone, on data loaded by an earlier run with ``--work``: a load of
    a million sections takes most of an hour, and on a shared machine the queries are
    best timed when it is quiet."""
    say("machine", f"{os.cpu_count()} cores; queries on the data kept in {work}")
    with chroma_server(work / "chroma") as server:
        report("server", query_process(work / "served", "http", server.port, queries, seed))
        say("Chroma server RSS after the queries", f"{server.rss_mb():.0f} MB")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, default=None, help="default: sections / 10")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedded", action="store_true",
                        help="also measure the same data with the vectors in state.sqlite")
    parser.add_argument("--no-recall", action="store_true", help="skip linkdocs recall")
    parser.add_argument("--load-minutes", type=float, default=None,
                        help="stop loading sections after this long; measure what is held")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=None, help="keep the data here")
    parser.add_argument("--queries-only", action="store_true",
                        help="measure the queries again on the data an earlier run kept in "
                             "--work (its server restarted on it), loading nothing")
    parser.add_argument("--query", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="http", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.query:
        query_main(args.query, args.mode, args.port, args.queries, args.seed)
        return 0
    if args.queries_only:
        if args.work is None or not (args.work / "served").is_dir():
            parser.error("--queries-only needs --work with the data of an earlier run")
        return queries_again(args.work, args.queries, args.seed)
    nodes = args.nodes if args.nodes is not None else args.sections // 10
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        say("machine", f"{os.cpu_count()} cores")
        with chroma_server(work / "chroma") as server:
            if not args.no_recall:
                recall_rows(server.port)
            corpus = Corpus(args.sections, nodes, args.seed)
            held = load(work / "served", corpus, server, HashVectors(), args.load_minutes)
            report("server", query_process(work / "served", "http", server.port,
                                           args.queries, args.seed))
            say("Chroma server RSS after the queries", f"{server.rss_mb():.0f} MB")
            if args.embedded:
                corpus = Corpus(held["sections"], held["nodes"], args.seed)  # the same data
                load(work / "embedded", corpus, None, HashVectors())
                report("embedded, exact", query_process(work / "embedded", "embedded", 0,
                                                        args.queries, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
