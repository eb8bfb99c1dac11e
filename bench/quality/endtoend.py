"""End-to-end: a stream of daily notes into an empty vault, one dream run per note.

The notes in ``data/stream/daily`` repeat, extend and contradict each other;
``data/stream/labels.json`` names the topic of every section (null for trivia).
Each run goes through ``vaultlink.pipeline.compose`` and ``run_dream`` with the configured
steps, exactly like ``vaultlink dream``. Afterwards every integrated unit is traced to
its section (by its quoted sentences, else by word overlap) and so to a topic:

* duplicates left: pairs of nodes that hold the same topic (should have been one);
* mixed nodes: nodes holding more than one topic (merged what should be apart);
* trivia units: units cut from a section labelled as trivia;
* broken links, nodes without a source link, bare link lines: from ``check_vault``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.quality.common import DATA
from vaultlink.cli.settings import load_settings
from vaultlink.markdown.sections import chunk_note
from vaultlink.markdown.text import LIST_MARK
from vaultlink.options import Provider
from vaultlink.pipeline.compose import close_models, dream_context, open_parts
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.prose.sentences import content_words, summary_lines
from vaultlink.prose.units import Unit
from vaultlink.vault.graph import build_graph, check_vault
from vaultlink.vault.notes import Vault

STREAM = DATA / "stream"


@dataclass
class EndToEnd:
    """The outcome of one stream."""

    provider: str
    notes: int = 0
    units: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    failed: int = 0
    nodes: int = 0
    duplicate_pairs: int = 0
    duplicates: list[tuple[str, str, str]] = field(default_factory=list)
    mixed_nodes: int = 0
    trivia_units: int = 0
    related_links: int = 0
    broken_links: int = 0
    no_source: int = 0
    bare_lines: int = 0
    other_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def section_texts(path: Path, rel: str) -> dict[str, str]:
    """Heading -> whitespace-normalised text of a stream note's sections."""
    out = {}
    for chunk in chunk_note(path.read_text(), rel, max_chars=100_000):
        heading = chunk.breadcrumb.rsplit(" > ", 1)[-1]
        out[heading] = " ".join(LIST_MARK.sub("", ln) for ln in chunk.text.split("\n"))
    return {h: " ".join(t.split()) for h, t in out.items()}


def topic_of(unit: Unit, sections: dict[str, dict[str, str]],
             labels: dict[str, dict[str, str | None]]) -> str | None:
    """The labelled topic of the section a unit came from."""
    path = unit.paths[0] if unit.paths else ""
    secs = sections.get(path, {})
    for line in summary_lines(unit.summary):
        quoted = " ".join(LIST_MARK.sub("", line).split())
        for heading, text in secs.items():
            if quoted and quoted in text:
                return labels[path].get(heading)
    words = set(content_words(unit.summary))  # a model's own words: nearest section
    best = max(secs, key=lambda h: len(words & set(content_words(secs[h]))), default=None)
    return labels.get(path, {}).get(best) if best else None


def run_stream(provider: str = "offline", host: str | None = None, model: str | None = None,
               thresholds: tuple[float, float] | None = None) -> EndToEnd:
    """Feed the stream note by note into an empty vault; measure the digest it leaves."""
    labels: dict[str, dict[str, str | None]] = json.loads(
        (STREAM / "labels.json").read_text())["sections"]
    notes = sorted((STREAM / "daily").glob("*.md"))
    result = EndToEnd(provider, notes=len(notes))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        for folder in ("daily", "resource", "digest"):
            (root / folder).mkdir(parents=True)
        same, related = thresholds or (None, None)
        settings = load_settings(root, environ={}).with_overrides(
            {"llm.provider": provider, "llm.host": host, "llm.model": model,
             "integrate.same_threshold": same, "integrate.related_threshold": related})
        vault = Vault(root)
        parts = open_parts(vault, settings.pipeline())
        sections: dict[str, dict[str, str]] = {}
        by_node: dict[str, list[str | None]] = defaultdict(list)
        started = time.monotonic()
        try:
            parts.index.sync()
            for note in notes:
                rel = f"daily/{note.name}"
                shutil.copy(note, root / rel)
                sections[rel] = section_texts(note, rel)
                ctx = dream_context(parts, settings.pipeline(), Provider(provider))
                run = run_dream(ctx, build_steps(settings.get("auto_dream.steps")))
                close_models(ctx)
                result.units += len(run.extraction.units)
                result.failed += len(run.report.failed_units)
                for r in run.report.results:
                    topic = topic_of(r.unit, sections, labels)
                    result.trivia_units += topic is None
                    if r.status == "integrated":
                        result.actions[r.action] += 1
                        by_node[r.target].append(topic)
                    elif r.action == "SKIP":
                        result.actions["SKIP"] += 1
        finally:
            parts.close()
        result.seconds = time.monotonic() - started
        _score_nodes(result, by_node)
        _check(result, vault)
    return result


def _score_nodes(result: EndToEnd, by_node: dict[str, list[str | None]]) -> None:
    nodes_of: dict[str, set[str]] = defaultdict(set)
    for node, topics in by_node.items():
        real = {t for t in topics if t}
        result.mixed_nodes += len(real) > 1
        for t in real:
            nodes_of[t].add(node)
    for topic, nodes in sorted(nodes_of.items()):
        ordered = sorted(nodes)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                result.duplicates.append((topic, a, b))
    result.duplicate_pairs = len(result.duplicates)


def _check(result: EndToEnd, vault: Vault) -> None:
    graph = build_graph(vault)
    digest = [p for p in graph.texts if p.startswith("digest/") and "/topics/" not in p]
    result.nodes = len(digest)
    result.related_links = sum(1 for p in digest for e in graph.outlinks.get(p, [])
                               if e.target and e.target.startswith("digest/")
                               and "/topics/" not in e.target and e.target != p)
    for problem in check_vault(vault, graph):
        if problem.level != "error":
            continue
        msg: Any = problem.message
        if msg.startswith("broken link"):
            result.broken_links += 1
        elif msg.startswith("no source link"):
            result.no_source += 1
        elif msg.startswith("bare link line"):
            result.bare_lines += 1
        else:
            result.other_errors.append(str(problem))
