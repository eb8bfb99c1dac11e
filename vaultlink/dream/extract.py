"""dream_extract_step: changed notes in, memory units out.

Changed means a daily/ or resource/ note whose content hash differs from its
checkpoint. Each note is cut into sections; sections whose fingerprint the checkpoint
already holds are context, the others are marked new, so already-integrated material
is not extracted again. Units beyond ``max_units`` wait in ``pending_units`` for the
next run and their notes are not checkpointed: a busy day is spread, never dropped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from typing import Any

from vaultlink.dream.backfill import adopt, batch_size, held_back
from vaultlink.dream.context import DreamContext, PassedOver, RunState, SourceNote
from vaultlink.dream.prompts import prompt
from vaultlink.dream.readings import reasons_text, record_readings
from vaultlink.dream.units import UNIT_SCHEMA, Unit
from vaultlink.errors import ModelOutputError, NoteUnreadable, PromptTooLarge, VaultError
from vaultlink.llm.chat import ChatModel, estimate_tokens, extract_json, require_content
from vaultlink.markdown.links import unlinkable_reason
from vaultlink.markdown.sections import chunk_note
from vaultlink.vault.notes import Note

log = logging.getLogger(__name__)


def fingerprint(text: str) -> str:
    """A section's identity across edits: whitespace-insensitive hash of its text."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


def source_note(note: Note, known: frozenset[str]) -> tuple[SourceNote, tuple[str, ...]]:
    """Cut a note into sections, marking those the checkpoint does not know as new."""
    title = note.path.rsplit("/", 1)[-1].removesuffix(".md")
    chunks = chunk_note(note.body, title, max_chars=4000)
    prints = tuple(fingerprint(c.text) for c in chunks)
    sections = [(c.breadcrumb, c.text, p not in known) for c, p in zip(chunks, prints,
                                                                        strict=True)]
    return SourceNote(note.path, title, sections, note.text), prints


def extract_step(ctx: DreamContext, run: RunState) -> None:
    """Find changed notes, extract units, apply the per-run cap."""
    vault, state = ctx.vault, ctx.state
    infos = vault.scan([vault.daily, vault.resource], cache=state)  # reads changed notes only
    run.scanned = len(infos)
    # The first start holds back older notes (dream.backfill); they wait while unchanged.
    held = adopt(state, infos, time.time(), ctx.backfill_days, record=not ctx.dry_run)
    if held:
        ctx.report("backlog_held", count=len(held), days=ctx.backfill_days)
    held.update(held_back(state, ctx.only, batch_size(state, ctx.provider, ctx.max_units)))
    checkpoints = state.checkpoints()
    # Files the walk left out (a symlink leading out of the vault) are notes not read:
    # the summary and `vaultlink status` say so, with why.
    left_out = vault.skipped_in([vault.daily, vault.resource])
    for path, why in left_out.items():
        run.skipped[path] = run.unread[path] = why
    present = {i.path for i in infos} | set(left_out)
    unread = {u["path"] for u in state.unread_notes()}
    run.gone = sorted(p for p in {*checkpoints, *unread} if p not in present)
    if run.gone and not ctx.dry_run:
        state.drop_checkpoints(run.gone)
        state.forget_readings(run.gone)
    yields = state.note_yields()
    notes: list[SourceNote] = []
    for info in infos:
        cp = checkpoints.get(info.path)
        if held.get(info.path) == info.hash:
            continue
        gave, rules = yields.get(info.path, (1, ""))
        if cp is not None and cp.hash == info.hash and (gave or rules == ctx.extractor.rules):
            if info.path in unread:  # broken, then put back as it was when integrated
                run.readable.append(info.path)
            continue
        if cp is not None and cp.hash == info.hash:
            cp = None  # it gave nothing under other rules (or without a model): read it again
        if ctx.only is not None and info.path not in ctx.only:
            continue
        # A note no wikilink can name would give units that cannot cite it: it waits,
        # not checkpointed, until the user renames it.
        reason, note = unlinkable_reason(info.path), None
        if reason is None:
            try:
                note = vault.read_note(info.path)
            except (NoteUnreadable, VaultError) as exc:
                reason = exc.reason if isinstance(exc, NoteUnreadable) else str(exc)
        if note is None:
            run.skipped[info.path] = run.unread[info.path] = reason or "unreadable"
            log.info("skipping %s: %s", info.path, reason)  # progress shows it; status too
            ctx.report("note_skipped", path=info.path, reason=reason)
            continue
        src, prints = source_note(note, frozenset(cp.sections if cp else ()))
        run.changed[info.path] = note.hash
        run.sections[info.path] = prints
        if src.new_text().strip():
            notes.append(src)
    pending = state.pending_units()
    # Pending units are for notes already extracted: don't extract those notes again.
    pending_paths = {p for _, u in pending for p in u.get("paths", [])}
    sent = [n for n in notes if n.path not in pending_paths]
    fresh = ctx.extractor.extract(sent) if sent else []
    sizes = {i.path: i.size for i in infos}
    run.extracted = (len(sent), sum(sizes.get(n.path, 0) for n in sent), len(fresh))
    found = {p for u in fresh for p in u.paths}
    run.passed_over += ctx.extractor.passed if sent else []
    run.yields.update({n.path: sum(n.path in u.paths for u in fresh) for n in sent})
    record_readings(ctx, run, sent)
    for sent_note in sent:  # checkpointed all the same: say so, or it looks lost
        if sent_note.path not in found:
            why = reasons_text([p for p in run.passed_over if p.path == sent_note.path])
            ctx.report("note_without_units", path=sent_note.path,
                       reason=why or ctx.extractor.passes_over)
    if ctx.dry_run:
        queued: list[tuple[int, Unit]] = [(i, Unit.from_dict(u)) for i, u in pending]
        queued += [(0, u) for u in fresh]
    else:
        # Every unit waits in pending_units until integrate decides it, so a run killed
        # midway loses none: the notes of pending units are not extracted again.
        state.add_pending(u.to_dict() for u in fresh)
        queued = [(i, Unit.from_dict(u)) for i, u in state.pending_units()]
    run.pending_ids = [i for i, _ in queued[:ctx.max_units]]  # aligned with run.units
    run.units = [u for _, u in queued[:ctx.max_units]]
    overflow = [u for _, u in queued[ctx.max_units:]]
    ctx.report("extracted", units=[u.name for u in run.units], changed=len(run.changed))
    if overflow:
        run.deferred_paths = {p for u in overflow for p in u.paths}
        ctx.report("units_deferred", count=len(overflow))
        log.info("%d unit(s) over the cap of %d wait for the next run", len(overflow),
                 ctx.max_units)


class ModelExtractor:
    """Extract through a chat model with structured output, packing notes by budget."""

    def __init__(self, model: ChatModel, num_ctx: int) -> None:
        self.model = model
        self.num_ctx = num_ctx
        self.system = prompt("extract")
        self.passes_over = "the model found nothing worth keeping in its new sections"
        self.rules = "model"
        self.passed: list[PassedOver] = []  # a model reads every paragraph

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        """One structured-output call per batch of notes that fits the context."""
        units: list[Unit] = []
        for batch in self._batches(notes):
            units.extend(self._call(batch))
        return units

    def _budget(self) -> int:
        # Half the context for the notes: the rest is the instructions, the schema and
        # the answer, which Ollama would otherwise truncate silently.
        return self.num_ctx // 2 - estimate_tokens(self.system)

    def _batches(self, notes: Sequence[SourceNote]) -> list[list[tuple[str, str]]]:
        budget = max(self._budget(), 256)
        parts: list[tuple[str, str]] = []
        for note in notes:
            blocks = [f"#### {crumb}{' [new]' if new else ''}\n{text}"
                      for crumb, text, new in note.sections]
            chunk: list[str] = []
            for block in blocks:
                block = _truncate_tokens(block, budget - 64)
                if chunk and estimate_tokens("\n\n".join([*chunk, block])) > budget - 32:
                    parts.append((note.path, "\n\n".join(chunk)))
                    chunk = []
                chunk.append(block)
            if chunk:
                parts.append((note.path, "\n\n".join(chunk)))
        batches: list[list[tuple[str, str]]] = []
        used = 0
        for path, text in parts:
            cost = estimate_tokens(text) + 16
            if batches and used + cost <= budget:
                batches[-1].append((path, text))
                used += cost
            else:
                batches.append([(path, text)])
                used = cost
        return batches

    def _call(self, batch: list[tuple[str, str]]) -> list[Unit]:
        sent = {path for path, _ in batch}
        user = "\n\n".join(f"### {path}\n{text}" for path, text in batch)
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system},
                                          {"role": "user", "content": user}]
        try:
            reply = self.model.chat(messages, schema=UNIT_SCHEMA)
        except PromptTooLarge:
            if len(batch) == 1:
                raise
            half = len(batch) // 2
            return self._call(batch[:half]) + self._call(batch[half:])
        data = extract_json(require_content(reply))
        if not isinstance(data, dict) or not isinstance(data.get("units"), list):
            raise ModelOutputError("extract: the model's answer is not {\"units\": [...]}: "
                                   + json.dumps(getattr(reply, "content", ""))[:200])
        units = []
        for raw in data["units"]:
            if not isinstance(raw, dict):
                continue
            unit = Unit.from_dict(raw)
            # Only paths that were really sent count as sources.
            unit.paths = [p for p in unit.paths if p in sent]
            if unit.paths and unit.summary:
                units.append(unit)
            else:
                log.info("dropping unit %r: no valid source path or empty summary", unit.name)
        return units


def _truncate_tokens(text: str, budget: int) -> str:
    if estimate_tokens(text) <= budget:
        return text
    # estimate_tokens counts bytes/3: cut by bytes, on a character boundary
    return text.encode()[: max(budget, 16) * 3].decode("utf-8", "ignore") + "\n…"
