"""A state machine that drives a small vault through random dreams, edits, undos and
redos, checking vaultlink's promises after every step. ``tests/test_undo_property.py``
runs it in CI (>= 300 sequences); ``bench/undo_property.py`` runs more.

The promises checked after each step:

* ``vaultlink check`` finds no error in digest/ (no broken link, every node cites a
  source, no bare link line, every node readable);
* the journal replays to the files on disk: for every node, each journal row starts
  from the text the previous row (or the user's own edit) left, and the last one left
  what is on disk;
* no write intent and no work file is left over;
* an undo or redo that is refused changes nothing; one that is done and then reverted
  again puts back every file exactly.

Real parts: real files, the offline integrator, the real embedder (one per session),
real SQLite with the vectors in it (the embedded mode).
"""

from __future__ import annotations

import shutil
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import event as _hyp_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.crashkit import BASE_DAY, BASE_NODE, BASE_NODE_TEXT
from tests.fakes.embedders import RememberingEmbedder
from vaultlink.cli.settings import load_settings
from vaultlink.errors import StateError
from vaultlink.index.chunks import ChunkIndex
from vaultlink.index.embed import make_embedder
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.recall import Indexes, LazyChroma
from vaultlink.options import PipelineOptions, Provider
from vaultlink.pipeline import history
from vaultlink.pipeline.compose import Parts, dream_context
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

STEPS = build_steps(["dream_extract_step", "dream_integrate_step", "dream_topics_step",
                     "dream_finish_step"])
TOPICS = ["cache", "index", "deploy", "backup", "queue", "search"]
VERBS = ["rebuild", "rotate", "throttle", "compact"]
SEEN: Counter[str] = Counter()  # what the sequences did, for a bench to print


def event(what: str) -> None:
    """Count an outcome (hypothesis's own statistics skip stateful runs in a test)."""
    SEEN[what] += 1
    _hyp_event(what)


def section(topic: str, verb: str, n: int) -> str:
    """A section the offline extractor turns into one unit about ``topic``."""
    return (f"\n## {topic.capitalize()} {verb} plan {n}\n\nWe decided to {verb} the {topic} "
            f"every {10 + n} minutes, because the {topic} grew past {100 + n} MB and slowed "
            f"the search path for everyone. The owner is team B, who will review the {topic} "
            "numbers again next week.\n")


def _no_server() -> Any:
    raise AssertionError("the vectors are in state.sqlite: no Chroma server is opened")


class Session:
    """What every sequence of a test session shares: the embedder and the options."""

    def __init__(self) -> None:
        # sequences repeat the same few texts: each is embedded once
        self.embedder = RememberingEmbedder(
            make_embedder("local", "minilm-l6-v2-int8", "", 10.0))
        settings = load_settings(Path("/nonexistent"), environ={}).with_overrides(
            {"llm.provider": "offline", "auto_dream.max_units": 3})
        self.options: PipelineOptions = settings.pipeline()


class UndoMachine(RuleBasedStateMachine):
    """One sequence on a fresh small vault; ``session`` and ``workdir`` are set by the
    caller before the machine is run."""

    session: Session
    workdir: Path

    def __init__(self) -> None:
        super().__init__()
        self.root = self.workdir / uuid.uuid4().hex[:12]
        (self.root / "daily").mkdir(parents=True)
        (self.root / "digest/procedure").mkdir(parents=True)
        (self.root / "daily/2026-07-01.md").write_text(BASE_DAY)
        (self.root / BASE_NODE).write_text(BASE_NODE_TEXT)
        self.vault = Vault(self.root)
        self.state = State(self.vault.state_dir / "state.sqlite")
        ns = uuid.uuid4().hex[:10]
        db = self.vault.state_dir / "state.sqlite"
        nodes = NodeIndex(self.vault, db, None, self.session.embedder, namespace=ns)
        chunks = ChunkIndex(self.vault, db, None, self.session.embedder, namespace=ns)
        self.parts = Parts(self.vault, self.state, self.session.embedder,
                           Indexes(nodes, chunks, LazyChroma(_no_server)))
        self.notes = 1
        # The user's own edits of digest nodes, as (journal rows before it, path, text).
        self.user_edits: list[tuple[int, str, str | None]] = []
        self.initial = self._digest()

    def teardown(self) -> None:
        SEEN["sequences"] += 1  # one machine, one sequence: what the test counts
        for index in (self.parts.indexes.nodes, self.parts.indexes.chunks):
            index.close()
        self.state.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers ---------------------------------------------------------------------

    def _digest(self) -> dict[str, str]:
        return {p.relative_to(self.root).as_posix(): p.read_text("utf-8")
                for p in (self.root / "digest").rglob("*.md")}

    def _rows(self) -> list[Any]:
        return [e for e in self.state.journal(limit=100_000) if e.changes_file]

    def _last_id(self) -> int:
        rows = self.state.journal(limit=1)
        return rows[0].id if rows else 0

    # -- rules -----------------------------------------------------------------------

    @rule(topic=st.sampled_from(TOPICS), verb=st.sampled_from(VERBS), n=st.integers(1, 3),
          new_day=st.booleans())
    def user_writes_a_note(self, topic: str, verb: str, n: int, new_day: bool) -> None:
        """The user adds a section to today's note, or starts a new day."""
        if new_day:
            self.notes += 1
        path = self.root / f"daily/2026-07-{self.notes:02d}.md"
        old = path.read_text() if path.exists() else ""
        path.write_text(old + section(topic, verb, n))

    @rule()
    def dream(self) -> None:
        """One run of the pipeline (offline integrator), as ``vaultlink dream`` does."""
        self.parts.index.sync()
        ctx = dream_context(self.parts, self.session.options, Provider.OFFLINE)
        run = run_dream(ctx, STEPS)
        for r in run.report.results:
            event(f"dream: {r.action or r.status}")

    @precondition(lambda self: self._digest_nodes())
    @rule(pick=st.integers(0, 1_000), line=st.sampled_from(TOPICS))
    def user_edits_a_node(self, pick: int, line: str) -> None:
        """The user adds a line of their own to a digest node, in Obsidian."""
        nodes = self._digest_nodes()
        path = nodes[pick % len(nodes)]
        file = self.root / path
        text = file.read_text() + f"\nMy own note on the {line}.\n"
        file.write_text(text)
        self.user_edits.append((self._last_id(), path, text))

    def _digest_nodes(self) -> list[str]:
        return sorted(p for p in self._digest() if "/topics/" not in p)

    @precondition(lambda self: self._rows())
    @rule(pick=st.integers(0, 1_000), cascade=st.booleans(), then_redo=st.booleans(),
          any_row=st.integers(0, 4))
    def undo(self, pick: int, cascade: bool, then_redo: bool, any_row: int) -> None:
        """Undo a decision: mostly a live one; sometimes any row (an undone one must be
        refused, an UNDO's undo is a redo)."""
        rows = self._rows()
        live = [e for e in rows if e.undone_by is None]
        if live and any_row:
            rows = live
        entry = rows[pick % len(rows)]
        self._revert(history.undo, entry.id, cascade, then_redo)

    @precondition(lambda self: any(e.action == "UNDO" for e in self._rows()))
    @rule(pick=st.integers(0, 1_000), cascade=st.booleans())
    def redo(self, pick: int, cascade: bool) -> None:
        """Redo an undone decision, by its own id or by its UNDO's."""
        rows = [e for e in self._rows() if e.action == "UNDO" or e.undone_by]
        entry = rows[pick % len(rows)]
        self._revert(history.redo, entry.id, cascade, then_redo=False)

    def _revert(self, run: Any, entry_id: int, cascade: bool, then_redo: bool) -> None:
        before = self._digest()
        try:
            outcome = run(self.vault, self.state, entry_id, cascade)
        except StateError as exc:  # refused: nothing may have changed
            event(f"{run.__name__} refused: {type(exc).__name__}")
            assert self._digest() == before, "a refused undo or redo changed files"
            return
        event(f"{run.__name__} done" + (" with a cascade" if len(outcome.ids) > 1 else ""))
        assert outcome.ids and outcome.paths
        if then_redo:  # an undo at once redone (its group, cascade and all) is no change
            history.undo(self.vault, self.state, outcome.ids[0], cascade=True)
            assert self._digest() == before, "undo then redo did not put every file back"

    # -- the promises ----------------------------------------------------------------

    @invariant()
    def check_finds_no_error(self) -> None:
        errors = [str(p) for p in check_vault(self.vault) if p.level == "error"]
        assert errors == [], errors

    @invariant()
    def nothing_left_in_flight(self) -> None:
        assert self.state.intents() == []
        work = [p.name for p in (self.root / "digest").rglob(".*.vaultlink.*")]
        assert work == [], work

    @invariant()
    def journal_replays_to_the_files(self) -> None:
        disk = self._digest()
        rows = sorted(self._rows(), key=lambda e: e.id)
        for path in {e.target for e in rows} | {p for _, p, _ in self.user_edits}:
            if "/topics/" in path:
                continue  # topics pages are written unjournaled, by design
            text: str | None = self.initial.get(path)
            edits = [(i, t) for i, p, t in self.user_edits if p == path]
            for e in (r for r in rows if r.target == path):
                for _, t in [x for x in edits if x[0] < e.id]:
                    text = t
                edits = [x for x in edits if x[0] >= e.id]
                assert e.before_text == text, f"#{e.id} on {path} starts from another text"
                text = e.after_text
            for _, t in edits:
                text = t
            assert disk.get(path) == text, f"{path} on disk is not what the journal left"
