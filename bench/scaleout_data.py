"""The data and the server of ``bench_scale_out``: a Chroma server started for the run,
a synthetic corpus of nodes and sections, and its load through the index's own writer."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_daemon import memory_kb

CHROMA = Path(sys.executable).parent / "chroma"
DIM = 384
BATCH = 5000  # docs per transaction (and per server write, as a sync's flush)
BUCKETS = ("wiki", "procedure", "personal", "project")
SECTIONS_PER_NOTE = 10


def _pseudo_words(n: int, seed: int) -> list[str]:
    """``n`` distinct made-up words (no language's stop list applies to them)."""
    rng = random.Random(seed)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(seen)


VOCAB = _pseudo_words(50_000, 11)


def load_avg() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def say(what: str, value: str) -> None:
    print(f"{what:<52} {value}   ({load_avg()})", flush=True)


@dataclass
class Server:
    """A running ``chroma run``."""

    port: int
    proc: subprocess.Popen[bytes]

    def rss_mb(self) -> float:
        return memory_kb(self.proc.pid).get("VmRSS", 0) / 1024


@contextmanager
def chroma_server(data: Path) -> Iterator[Server]:
    """A Chroma server on a free port with its data in ``data``, stopped at the end."""
    data.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (data / "server.log").open("ab")
    proc = subprocess.Popen([str(CHROMA), "run", "--path", str(data / "db"), "--host",
                             "127.0.0.1", "--port", str(port)], stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat",
                                            timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("chroma run did not start; see " + str(data)) from None
                time.sleep(0.2)
        yield Server(port, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


class Corpus:
    """``sections`` sections in notes of ten, and ``nodes`` digest nodes: pseudo-word
    texts drawn by a Zipf law, random unit vectors, all from ``seed``."""

    def __init__(self, sections: int, nodes: int, seed: int) -> None:
        self.sections, self.nodes, self.seed = sections, nodes, seed

    def _words(self, rng: np.random.Generator, n: int) -> list[str]:
        ranks = np.minimum(rng.zipf(1.1, size=n), len(VOCAB)) - 1
        return [VOCAB[int(r)] for r in ranks]

    def batches(self, kind: str) -> Iterator[tuple[list[tuple[Any, ...]], np.ndarray]]:
        """Per batch: docs as (path, ord, name, description, fts texts) and their vectors."""
        rng = np.random.default_rng([self.seed, 0 if kind == "nodes" else 1])
        total = self.nodes if kind == "nodes" else self.sections
        for start in range(0, total, BATCH):
            n = min(BATCH, total - start)
            docs = []
            for i in range(start, start + n):
                if kind == "nodes":
                    w = self._words(rng, 75)
                    path = f"digest/{BUCKETS[i % len(BUCKETS)]}/n{i}.md"
                    name, desc = " ".join(w[:3]), " ".join(w[3:15])
                    docs.append((path, 0, name, desc, (name, desc, " ".join(w[15:]))))
                else:
                    note, ord_ = divmod(i, SECTIONS_PER_NOTE)
                    folder = ("daily", "resource", "digest/wiki")[note % 3]
                    w = self._words(rng, 43)
                    crumb = " ".join(w[:3])
                    docs.append((f"{folder}/s{note}.md", ord_, f"s{note}", "",
                                 (crumb, " ".join(w[3:]))))
            vectors = rng.standard_normal((n, DIM), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            yield docs, vectors


def load(root: Path, corpus: Corpus, server: Server | None, embedder: Any,
         minutes: float | None = None) -> dict[str, int]:
    """Write the corpus into the indexes of a vault at ``root`` (vectors on ``server``, or
    in state.sqlite when None) through ``_store_vectors``, as a sync's flush does. Stops
    loading sections after ``minutes``; returns what each index holds."""
    from vaultlink.index.recall import open_indexes
    from vaultlink.index.tables import Doc
    from vaultlink.vault.notes import Vault

    (root / "digest").mkdir(parents=True, exist_ok=True)
    mode = "http" if server is not None else "embedded"
    where = "server" if server is not None else "state.sqlite"
    indexes = open_indexes(Vault(root), embedder, chroma_mode=mode, chroma_host="127.0.0.1",
                           chroma_port=server.port if server is not None else 0)
    held: dict[str, int] = {}
    started = time.perf_counter()
    try:
        for kind, index in (("nodes", indexes.nodes), ("sections", indexes.chunks)):
            t0, count, next_id = time.perf_counter(), 0, 1
            total = corpus.nodes if kind == "nodes" else corpus.sections
            for docs, vectors in corpus.batches(kind):
                ids = list(range(next_id, next_id + len(docs)))
                next_id += len(docs)
                with index._tx() as db:
                    files = {d[0]: d for d in docs if d[1] == 0}
                    db.executemany(
                        f"INSERT OR REPLACE INTO {index._files_t} VALUES (?,?,?,?,?,?,?,?)",
                        [(p, 1, 1, 1, "x", None, d[2], d[3]) for p, d in files.items()])
                    metas = []
                    for doc_id, (path, ord_, _, _, fts) in zip(ids, docs, strict=True):
                        doc = Doc("\n".join(fts), fts)
                        db.execute(f"INSERT INTO {index._docs_t} (id, path, ord, line, "
                                   "text_hash) VALUES (?,?,?,?,?)",
                                   (doc_id, path, ord_, 1, doc.text_hash))
                        index._fts_write(db, doc_id, doc)
                        metas.append(index.metadata(path, doc.text_hash))
                    index._store_vectors(db, ids, vectors, metas)  # type: ignore[arg-type]
                count += len(docs)
                if count % max(BATCH, total // 10 // BATCH * BATCH) == 0 or count == total:
                    say(f"  {kind} loaded to {where}", f"{count:,} of {total:,} in "
                        f"{time.perf_counter() - t0:.0f} s")
                if minutes is not None and time.perf_counter() - started > minutes * 60:
                    say(f"  stopped loading {kind} (--load-minutes)", f"{count:,} held")
                    break
            held[kind] = count
            say(f"{kind}: {count:,} vectors to {where}", f"{time.perf_counter() - t0:.0f} s, "
                f"{count / max(time.perf_counter() - t0, 1e-9):,.0f} per s")
    finally:
        indexes.close()
    size = sum(f.stat().st_size for f in (root / ".vaultlink").glob("state.sqlite*"))
    say(f"state.sqlite ({where} mode)", f"{size / 1e6:,.0f} MB")
    return held
