"""Two vaults dreamed offline until settled: real documentation pages, and sample_vault.

Each corpus is laid out as a fresh vault in a temporary folder, then ``dream`` runs with
the offline integrator, the way ``vaultlink dream --llm offline`` runs it (the same
``dream.compose`` parts and configured steps), until a run integrates nothing; after each
run what it held for review is approved, as an owner who agrees would. Then:

* one more run, which must leave every file as it was (a settled vault stays settled);
* repeats: some source notes copied under new paths and dreamed again, to see whether a
  document read twice corroborates its node instead of growing a second one;
* for sample_vault, a 25-word decision under a ``# Standup`` heading, to see that a
  short decision becomes a unit.

The runs are kept (vault root, every run's results) for ``digest_measures`` to score.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench.quality.realdocs import Page, load_corpus, truth_pairs, write_as_vault
from vaultlink.cli.settings import load_settings
from vaultlink.options import Provider
from vaultlink.pipeline.compose import close_models, dream_context, open_parts
from vaultlink.pipeline.context import RunState
from vaultlink.pipeline.integrate.settle import approve
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

SAMPLE = Path(__file__).resolve().parents[2] / "sample_vault"
MAX_RUNS = 12
# The decision the issue quotes: 25 words under a logistics heading.
DECISION_NOTE = "daily/2026-06-22.md"
DECISION = ("We decided to run the nightly re-embedding job on the read replica from now on, "
            "because on the primary it blocked autovacuum twice this sprint.")
DECISION_TEXT = f"# Standup\n\n{DECISION}\n"


@dataclass
class Corpus:
    """One dreamed vault and what is known about it."""

    name: str
    root: Path
    truth: set[frozenset[str]] = field(default_factory=set)  # vault paths, undirected
    runs: list[RunState] = field(default_factory=list)
    settle_runs: int = 0
    settled: bool = False
    stays_settled: bool = False
    outside_digest_untouched: bool = False
    repeats: list[tuple[str, str]] = field(default_factory=list)  # (unit name, action)
    repeat_notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    approved: int = 0  # proposals held for review that the bench approved


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault but the state folder."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".vaultlink" not in p.relative_to(root).parts}


OFFLINE_ALL = {"llm.provider": "offline", "auto_dream.max_units": 1000}


def dream_once(root: Path, overrides: dict[str, object] | None = None,
               provider: Provider = Provider.OFFLINE) -> RunState:
    """One ``dream`` over the vault, every unit in one go (``dream --llm offline`` unless
    ``overrides`` and ``provider`` say otherwise)."""
    settings = load_settings(root, environ={}).with_overrides(overrides or OFFLINE_ALL)
    options = settings.pipeline()
    parts = open_parts(Vault(root), options)
    try:
        parts.index.sync()
        ctx = dream_context(parts, options, provider)
        try:
            return run_dream(ctx, build_steps(settings.get("auto_dream.steps")))
        finally:
            close_models(ctx)
    finally:
        parts.close()


def approve_held(root: Path) -> int:
    """Approve every proposal held for review, as an owner who reads ``vaultlink
    review`` and agrees would (``review.mode`` uncertain holds every CORRECT): the bench
    scores the digest the owner keeps, and a held note would stay changed forever."""
    vault = Vault(root)
    state = State(vault.state_dir / "state.sqlite")
    try:
        held = state.proposals()
        for proposal in held:
            approve(vault, state, proposal.id)
        return len(held)
    finally:
        state.close()


def settle(corpus: Corpus) -> None:
    """Dream until a run integrates nothing, then once more to see nothing moves."""
    for _ in range(MAX_RUNS):
        run = dream_once(corpus.root)
        corpus.runs.append(run)
        corpus.settle_runs += 1
        corpus.approved += approve_held(corpus.root)
        if not run.extraction.changed and not run.report.results:
            corpus.settled = True
            break
    before = snapshot(corpus.root)
    corpus.runs.append(dream_once(corpus.root))
    corpus.stays_settled = snapshot(corpus.root) == before


def repeat(corpus: Corpus, notes: list[str]) -> None:
    """Copy ``notes`` as ``<name>-again.md`` and dream them: each unit's action."""
    for rel in notes:  # beside the original, so the copy belongs to the same place
        copy = corpus.root / (rel.removesuffix(".md") + "-again.md")
        shutil.copy(corpus.root / rel, copy)
        corpus.repeat_notes.append(copy.relative_to(corpus.root).as_posix())
    for _ in range(MAX_RUNS):
        run = dream_once(corpus.root)
        corpus.runs.append(run)
        corpus.repeats += [(r.unit.name, r.action or r.status) for r in run.report.results]
        corpus.approved += approve_held(corpus.root)
        if not run.extraction.changed and not run.report.results:
            break


@contextmanager
def timed(corpus: Corpus) -> Iterator[None]:
    """Measure the wall time of a corpus's runs."""
    started = time.monotonic()
    yield
    corpus.seconds = time.monotonic() - started


def realdocs_corpus(dest: Path, pages: list[Page] | None = None,
                    name: str = "realdocs") -> Corpus:
    """The real documentation pages as ``resource/<set>/<slug>.md``, dreamed until settled."""
    pages = pages if pages is not None else load_corpus()
    root = dest / name
    for folder in ("daily", "resource", "digest"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    written = write_as_vault(pages, root)
    truth = {frozenset(written[p] for p in pair) for pair in truth_pairs(pages)}
    corpus = Corpus(name, root, truth)
    untouched = {k: v for k, v in snapshot(root).items() if not k.startswith("digest/")}
    with timed(corpus):
        settle(corpus)
    corpus.outside_digest_untouched = untouched == {
        k: v for k, v in snapshot(root).items() if not k.startswith("digest/")}
    return corpus


def realdocs_repeats(corpus: Corpus) -> list[str]:
    """Every seventh page of the real documents, to be read a second time."""
    pages = sorted(p.relative_to(corpus.root).as_posix()
                   for p in (corpus.root / "resource").rglob("*.md"))
    return pages[::7]


def sample_corpus(dest: Path) -> Corpus:
    """sample_vault plus the 25-word decision note, dreamed until settled."""
    root = dest / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".vaultlink", ".obsidian"))
    (root / DECISION_NOTE).write_text(DECISION_TEXT)
    corpus = Corpus("sample_vault", root)
    untouched = {k: v for k, v in snapshot(root).items() if not k.startswith("digest/")}
    with timed(corpus):
        settle(corpus)
    corpus.outside_digest_untouched = untouched == {
        k: v for k, v in snapshot(root).items() if not k.startswith("digest/")}
    return corpus


SAMPLE_REPEATS = ["resource/rrf-paper-notes.md", "resource/on-small-pull-requests.md",
                  "daily/2026-06-21.md"]
