"""The generated vault of ``bench/bench_scale.py``: a big Obsidian vault as a user has it.

``--notes`` daily and resource notes of about 234 words each (three or four sections of
sentences built from word lists, a fixed seed), with wikilinks to earlier notes, dated
over the last three years (file mtimes too, so a first start's backfill window holds
about two weeks of them), and ``--nodes`` digest nodes that cite them, as a vault
integrated for a while would have. Everything is deterministic for a seed.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import time
from pathlib import Path

ADJ = ("stale slow fast hybrid manual nightly broken weekly shared local remote quiet noisy "
       "large small incremental partial full private public urgent minor critical cheap "
       "expensive flaky stable legacy new careful rough").split()
NOUN = ("index cache query vector table backup deploy release budget meeting review garden "
        "recipe journey paper summary draft question server cluster pipeline schema migration "
        "token embedding memory habit sleep coffee bicycle invoice contract lease doctor "
        "insurance tax passport flight hotel concert novel podcast lecture exam thesis "
        "kubernetes postgres vacuum replica shard latency throughput outage incident "
        "alert dashboard metric feature flag rollout rollback sprint roadmap hiring "
        "onboarding mentor salary bonus vacation apartment kitchen balcony tomato basil").split()
VERB = ("rebuilds breaks slows fixes replaces documents explains measures schedules blocks "
        "improves doubles halves delays triggers monitors cleans migrates reviews "
        "approves rejects postpones").split()
PEOPLE = "Mara Jonas Priya Tom Aiko Lena Omar Sven Chloe Ravi".split()
BUCKETS = ("wiki", "procedure", "personal")
DAYS = 3 * 365
WORDS_PER_NOTE = 234


def sentence(rng: random.Random) -> str:
    """One sentence of 8-20 words with some structure, so BM25 and vectors both have signal."""
    parts = [rng.choice(PEOPLE), "says the", rng.choice(ADJ), rng.choice(NOUN), rng.choice(VERB),
             "the", rng.choice(NOUN)]
    if rng.random() < 0.6:
        parts += ["because the", rng.choice(ADJ), rng.choice(NOUN), rng.choice(VERB), "it"]
    if rng.random() < 0.4:
        parts += ["during the", rng.choice(NOUN), rng.choice(NOUN)]
    return " ".join(parts) + "."


def note_text(rng: random.Random, title: str, links: list[str]) -> str:
    """About 234 words in three or four sections, the links woven into the first one."""
    sections: list[list[str]] = [[] for _ in range(rng.randint(3, 4))]
    words = 0
    while words < WORDS_PER_NOTE:
        s = sentence(rng)
        sections[rng.randrange(len(sections))].append(s)
        words += len(s.split())
    if links:
        sections[0].append("See also " + ", ".join(f"[[{link}]]" for link in links) + ".")
    body = "\n\n".join(f"## {rng.choice(ADJ).title()} {rng.choice(NOUN)}\n\n{' '.join(p)}"
                       for p in sections if p)
    return f"# {title}\n\n{body}\n"


def write(root: Path, rel: str, text: str, when: float) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (when, when))


def make_vault(root: Path, notes: int, nodes: int, seed: int,
               now: float | None = None) -> tuple[list[str], list[str]]:
    """Write the vault; returns (source note paths oldest first, digest node paths)."""
    rng = random.Random(seed)
    now = time.time() if now is None else now
    today = dt.date.fromtimestamp(now)
    sources: list[str] = []
    for i in range(notes):
        age = DAYS * (notes - 1 - i) / max(notes - 1, 1)  # oldest first, the last is today
        day = today - dt.timedelta(days=int(age))
        title = f"{rng.choice(ADJ).title()} {rng.choice(NOUN)} {i}"
        rel = (f"daily/{day.isoformat()}/{title.lower().replace(' ', '-')}.md" if i % 5 < 3
               else f"resource/{day.year}/{title.lower().replace(' ', '-')}.md")
        links = [p.rsplit("/", 1)[-1][:-3] for p in rng.sample(sources, min(len(sources),
                                                                          rng.randint(0, 3)))]
        write(root, rel, note_text(rng, title, links), now - age * 86_400 - rng.random() * 3600)
        sources.append(rel)
    digest: list[str] = []
    for i in range(nodes):
        bucket = BUCKETS[i % 3]
        title = f"{rng.choice(ADJ).title()} {rng.choice(NOUN)} {rng.choice(NOUN)}"
        rel = f"digest/{bucket}/{title.lower().replace(' ', '-')}-{i}.md"
        related = " ".join(f"[[{p}]]" for p in rng.sample(digest, min(2, len(digest))))
        src = rng.choice(sources) if sources else ""
        body = (" ".join(sentence(rng) for _ in range(rng.randint(3, 6)))
                + (f" Related: {related}" if related else "") + "\n\n## Sources\n\n"
                + (f"- The claim about the {rng.choice(NOUN)} comes from [[{src}]].\n"
                   if src else ""))
        text = (f"---\nname: {title}\ndescription: {sentence(rng)} Use when the "
                f"{rng.choice(NOUN)} {rng.choice(VERB)} the {rng.choice(NOUN)}.\n---\n{body}")
        write(root, rel, text, now - rng.random() * DAYS * 86_400)
        digest.append(rel)
    (root / ".vaultlink").mkdir(parents=True, exist_ok=True)
    (root / ".vaultlink" / "config.yaml").write_text(
        "llm:\n  provider: offline\napi:\n  port: 0\nwatch:\n  quiet_seconds: 1\n")
    return sources, digest
