"""dream_extract_step: changed notes in, memory units out.

Changed: a daily/ or resource/ note whose hash differs from its checkpoint. Sections the
checkpoint holds are context, the others new, so nothing is extracted twice. Units
beyond ``max_units`` wait in ``pending_units`` and their notes are not checkpointed: a
busy day is spread, never dropped. A note the model fails on is recorded in
``failed_units`` (kind ``note``) and extracted again by a later run until parked; units
that failed before are taken up first, as they are (docs/pipeline.md).
"""

from __future__ import annotations

import datetime as dt
import logging
import time

from vaultlink.errors import (
    IndexServerUnavailable,
    ModelError,
    ModelOutputError,
    ModelUnavailable,
    NoteUnreadable,
    StateError,
    VaultError,
    WriteFailed,
    unexpected,
)
from vaultlink.index.dates import note_date
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import unlinkable_reason
from vaultlink.markdown.sections import chunk_note
from vaultlink.pipeline.backfill import adopt, batch_size, held_back
from vaultlink.pipeline.context import DreamContext, Extractor, Retry, RunState, SourceNote
from vaultlink.pipeline.events import (
    BacklogHeld,
    Extracted,
    NoteFailed,
    NoteFinished,
    NotesDeferred,
    NoteSkipped,
    NoteStarted,
    NoteWithoutUnits,
    ProposalStale,
    Stopped,
    UnitsDeferred,
)
from vaultlink.pipeline.extract.readings import reasons_text, record_readings
from vaultlink.pipeline.extract.repeats import fingerprint, repeat_units, twin_of
from vaultlink.pipeline.extract.template import NO_TEMPLATE, DayTemplate, day_template
from vaultlink.pipeline.integrate.review import requeue_stale
from vaultlink.pipeline.stored import (
    add_pending,
    failed_unit,
    note_hash,
    pending_units,
    record_note_failure,
    stored_name,
)
from vaultlink.pipeline.usage import NoteSpend
from vaultlink.prose.units import Unit
from vaultlink.vault.checkpoints import unchanged_since, waiting_paths
from vaultlink.vault.notes import Note, NoteInfo
from vaultlink.vault.runs import FailureKind
from vaultlink.vault.state import Checkpoint, Failure

log = logging.getLogger(__name__)


def source_note(note: Note, known: frozenset[str], template: DayTemplate = NO_TEMPLATE
                ) -> tuple[SourceNote, tuple[str, ...]]:
    """Cut what the owner wrote in a note into sections, marking those the checkpoint
    does not know as new: a day note's template and Obsidian's machinery (fields,
    queries, comments, navigation) are left out, line for line (``extract/template.py``)."""
    title = note.path.rsplit("/", 1)[-1].removesuffix(".md")
    text = template.owner_text(note.path, note.text)
    chunks = chunk_note(split_frontmatter(text)[1], title, max_chars=4000)
    prints = tuple(fingerprint(c.text) for c in chunks)
    sections = [(c.breadcrumb, c.text, p not in known) for c, p in zip(chunks, prints,
                                                                        strict=True)]
    return SourceNote(note.path, title, sections, text), prints


def extract_step(ctx: DreamContext, run: RunState) -> None:
    """Find changed notes, extract units, apply the per-run cap."""
    found, report = run.extraction, run.report
    state, vault = ctx.state, ctx.vault
    infos = vault.scan([vault.daily, vault.resource], cache=state)  # reads changed notes only
    found.scanned = len(infos)
    held = _held_back(ctx, infos)
    checkpoints = state.checkpoints()
    present, unread = _drop_gone(ctx, run, set(checkpoints), {i.path for i in infos})
    notes, template = _changed_notes(ctx, run, infos, checkpoints, held, unread)
    if not ctx.dry_run:  # a proposal whose node changed since: its unit is decided again
        for stale in requeue_stale(vault, state):
            ctx.report(ProposalStale(stale.id, stored_name(stale.unit), stale.target))
    pending = pending_units(state)
    failures = state.open_failures()
    gone = [f for f in failures if f.paths and not set(f.paths) & present]
    if gone and not ctx.dry_run:  # its source was deleted: nothing left to integrate
        state.resolve_failure(f.id for f in gone)
    failures = [f for f in failures if f not in gone]
    note_failures = {f.paths[0]: f for f in failures if f.kind == FailureKind.NOTE and f.paths}
    # Notes whose units wait (pending, failed, or held for review) are not extracted
    # again: their units are taken up as they are, and the run that integrates the last
    # one (or settling its last proposal, ``pipeline/integrate/review.py``) checkpoints them.
    found.held_paths = waiting_paths(state, failed_notes=False, failures=failures)
    sent = [n for n in notes if n.path not in found.held_paths
            and not _parked_as_is(note_failures.get(n.path), found.changed[n.path])]
    report.parked_paths.update(n.path for n in notes if n not in sent
                               and n.path not in found.held_paths)
    retries = [f for f in failures if f.kind == FailureKind.UNIT and not f.parked
               and (ctx.only is None or set(f.paths) & ctx.only)]
    # Extract only what this run can integrate: a slow model spends minutes per note,
    # and the notes left wait (unchecked) for the next run.
    room = max(ctx.max_units - len(retries) - len(pending), 0)
    sent.sort(key=written_order)
    fresh = _extract_notes(ctx, run, sent, note_failures, room, set(checkpoints), template)
    sizes = {i.path: i.size for i in infos}
    read = [n for n in sent if n.path in found.yields]  # extracted now, not failed or deferred
    found.extracted = (len(read), sum(sizes.get(n.path, 0) for n in read), len(fresh))
    record_readings(ctx, run, read)
    _take_units(ctx, run, retries, pending, fresh)


def written_order(note: SourceNote) -> tuple[bool, dt.date, str]:
    """Notes in the order their owner wrote them: those with a date in their path by that
    date (a correction of 2026-06-20 comes after the 2026-06-17 sync it corrects, a
    resource "search-sync-transcript-2026-06-17" among the days), then the rest by path."""
    day = note_date(note.path)
    return (day is None, day or dt.date.max, note.path)


def _held_back(ctx: DreamContext, infos: list[NoteInfo]) -> dict[str, str]:
    """Path -> hash of the backlog notes this run passes over while unchanged."""
    state = ctx.state
    # The first start holds back older notes (pipeline/backfill.py); they wait while unchanged.
    held = adopt(state, infos, time.time(), ctx.backfill_days, record=not ctx.dry_run)
    if held:
        ctx.report(BacklogHeld(len(held), ctx.backfill_days))
    held.update(held_back(state, ctx.only, batch_size(state, ctx.provider, ctx.max_units)))
    return held


def _drop_gone(ctx: DreamContext, run: RunState, checkpointed: set[str],
               scanned: set[str]) -> tuple[set[str], set[str]]:
    """The paths present (scanned or left out by the walk) and the notes recorded
    unread; the checkpoints and readings of notes gone are dropped."""
    found, report = run.extraction, run.report
    vault, state = ctx.vault, ctx.state
    # Files the walk left out (a symlink leading out of the vault) are notes not read:
    # the summary and `vaultlink status` say so, with why.
    left_out = vault.skipped_in([vault.daily, vault.resource])
    for path, why in left_out.items():
        report.skipped[path] = found.unread[path] = why
    present = scanned | set(left_out)
    unread = {u["path"] for u in state.unread_notes()}
    found.gone = sorted(p for p in checkpointed | unread if p not in present)
    if found.gone and not ctx.dry_run:
        state.drop_checkpoints(found.gone)
        state.forget_readings(found.gone)
    return present, unread


def _changed_notes(ctx: DreamContext, run: RunState, infos: list[NoteInfo],
                   checkpoints: dict[str, Checkpoint], held: dict[str, str],
                   unread: set[str]) -> tuple[list[SourceNote], DayTemplate]:
    """The notes to extract: changed since their checkpoint (or read under other rules
    and given nothing), not ``held`` back in the backlog, readable, with new text."""
    yields = ctx.state.note_yields()
    notes: list[SourceNote] = []
    template: DayTemplate | None = None  # found once, when a note is read
    for info in infos:
        cp = checkpoints.get(info.path)
        if held.get(info.path) == info.hash:
            continue
        if unchanged_since(cp, info.hash):
            gave, rules = yields.get(info.path, (1, ""))
            if gave or rules == ctx.extractor.rules:
                if info.path in unread:  # broken, then put back as it was when integrated
                    run.extraction.readable.append(info.path)
                continue
            cp = None  # it gave nothing under other rules (or without a model): read it again
        if ctx.only is not None and info.path not in ctx.only:
            continue
        note = _read(ctx, run, info.path)
        if note is None:
            continue
        if template is None:
            template = day_template(ctx.vault, [i for i in infos
                                                if i.path.startswith(f"{ctx.vault.daily}/")])
        src, prints = source_note(note, frozenset(cp.sections if cp else ()), template)
        run.extraction.changed[info.path] = note.hash
        run.extraction.sections[info.path] = prints
        if src.new_text().strip():
            notes.append(src)
    return notes, template or NO_TEMPLATE


def _read(ctx: DreamContext, run: RunState, path: str) -> Note | None:
    """The note at ``path``, or None when it cannot be read or cited (reported)."""
    # A note no wikilink can name would give units that cannot cite it: it waits,
    # not checkpointed, until the user renames it.
    reason, note = unlinkable_reason(path), None
    if reason is None:
        try:
            note = ctx.vault.read_note(path)
        except (NoteUnreadable, VaultError) as exc:
            reason = exc.reason if isinstance(exc, NoteUnreadable) else str(exc)
    if note is None:
        run.report.skipped[path] = run.extraction.unread[path] = reason or "unreadable"
        log.info("skipping %s: %s", path, reason)  # progress shows it; status too
        ctx.report(NoteSkipped(path, reason))
    return note


def _take_units(ctx: DreamContext, run: RunState, retries: list[Failure],
                pending: list[tuple[int, Unit]], fresh: list[Unit]) -> None:
    """The run's units: failed ones first, then pending, then fresh, up to the cap; the
    rest wait (their notes are not checkpointed)."""
    found = run.extraction
    queued: list[tuple[Unit, int | None, Retry | None]] = [
        (failed_unit(f), None, Retry(f.id, f.attempts, f.error)) for f in retries]
    if ctx.dry_run:
        queued += [(u, None, None) for _, u in pending]
        queued += [(u, None, None) for u in fresh]
    else:
        # Every unit waits in pending_units until integrate decides it, so a run killed
        # midway loses none: the notes of pending units are not extracted again.
        add_pending(ctx.state, fresh)
        queued += [(u, i, None) for i, u in pending_units(ctx.state)]
    taken = queued[:ctx.max_units]
    found.units = [u for u, _, _ in taken]
    found.pending_ids = [i for _, i, _ in taken]  # aligned with found.units
    found.retries = {n: r for n, (_, _, r) in enumerate(taken) if r is not None}
    overflow = [u for u, _, _ in queued[ctx.max_units:]]
    ctx.report(Extracted(tuple(u.name for u in found.units), len(found.changed),
                         len(found.retries)))
    if overflow:
        found.deferred_paths.update(p for u in overflow for p in u.paths)
        ctx.report(UnitsDeferred(len(overflow)))
        log.info("%d unit(s) over the cap of %d wait for the next run", len(overflow),
                 ctx.max_units)


def _parked_as_is(failure: Failure | None, digest: str) -> bool:
    """A note whose extraction failed until parked, and that has not changed since."""
    return failure is not None and failure.parked and note_hash(failure) == digest


def _extract_notes(ctx: DreamContext, run: RunState, notes: list[SourceNote],
                   failures: dict[str, Failure], room: int, checkpointed: set[str],
                   template: DayTemplate = NO_TEMPLATE) -> list[Unit]:
    """Units of each note, until there are ``room`` units; a note the model fails on is
    recorded and the run goes on; a new note that repeats a ``checkpointed`` one gives
    the units that corroborate its twin's nodes (``extract/repeats.py``, on what the owner
    wrote: ``template``'s lines are no part of either note)."""
    found = run.extraction
    fresh: list[Unit] = []
    for i, note in enumerate(notes, start=1):
        stopping = ctx.should_stop is not None and ctx.should_stop()
        if len(fresh) >= room or stopping:  # the rest waits, unchecked, for the next run
            later = [n.path for n in notes[i - 1:]]
            found.deferred_paths.update(later)
            if stopping:
                ctx.report(Stopped(len(later)))
            else:
                ctx.report(NotesDeferred(len(later)))
            break
        ctx.report(NoteStarted(i, len(notes), note.path))
        failure = failures.get(note.path)
        before = _spent(ctx)
        try:
            # a note that repeats an integrated one corroborates its nodes, with no model
            twin = twin_of(ctx, note, checkpointed, template) \
                if note.path not in checkpointed else None
            units, reader = (repeat_units(note, *twin), ctx.extractor) if twin \
                else _units_of(ctx, run, note, failure)
        except (ModelUnavailable, IndexServerUnavailable):
            raise  # no server: the run stops, nothing is checkpointed
        except ModelError as exc:
            _note_failed(ctx, run, note, failure, str(exc),
                         counts=isinstance(exc, ModelOutputError))
            continue
        except (WriteFailed, StateError):
            raise  # the disk or the state refuses: the run stops with what to do
        except Exception as exc:  # a note vaultlink cannot handle fails alone
            log.exception("extract %s: unexpected error", note.path)
            _note_failed(ctx, run, note, failure, unexpected(exc), counts=True)
            continue
        if failure is not None and not ctx.dry_run:
            ctx.state.resolve_failure([failure.id])
        after = _spent(ctx)
        spent = (after[0] - before[0], after[1] - before[1], after[2] - before[2])
        found.extract_usage[note.path] = NoteSpend(len(units), spent[0], spent[1],
                                                   round(spent[2], 2))
        ctx.report(NoteFinished(note.path, len(units), (spent[0], spent[1]), spent[2]))
        if twin:
            log.info("%s repeats %s: it corroborates %d node(s)", note.path, twin[0],
                     len(units))
        # this note's paragraphs passed over (a repeat's extractor did not read it)
        passed = [] if twin else list(reader.passed)
        found.passed_over += passed
        found.yields[note.path] = len(units)
        if not units:  # checkpointed all the same: say so, or it looks lost
            ctx.report(NoteWithoutUnits(
                note.path, reasons_text(passed) or ctx.extractor.passes_over))
        fresh.extend(units)
    return fresh


def _units_of(ctx: DreamContext, run: RunState, note: SourceNote, failure: Failure | None
              ) -> tuple[list[Unit], Extractor]:
    """The note's units and who read it: the extractor, or on the run that would park a
    note the model gave no usable answer for, the offline rules (``ctx.rules``): a note
    a small model cannot answer for (an export's templates in code blocks) is read as
    the offline digest reads it, never left unread."""
    try:
        return ctx.extractor.extract([note]), ctx.extractor
    except ModelOutputError as exc:
        tries = (failure.attempts if failure is not None else 0) + 1
        if ctx.rules is None or tries < ctx.park_after:
            raise
        warning = (f"{note.path}: read by the offline rules, the model gave no usable "
                   f"answer for it in {tries} runs ({exc})")
        log.warning("%s", warning)
        run.report.warnings.append(warning)
        return ctx.rules.extract([note]), ctx.rules


def _spent(ctx: DreamContext) -> tuple[int, int, float]:
    """Prompt and answer tokens and model seconds the extractor has spent so far (a model
    extractor counts its calls; the others spend nothing)."""
    usage = ctx.extractor.usage
    if usage is None:
        return 0, 0, 0.0
    return sum(usage.prompt_tokens), usage.answer_tokens, usage.seconds


def _note_failed(ctx: DreamContext, run: RunState, note: SourceNote, failure: Failure | None,
                 error: str, counts: bool) -> None:
    """Record a note that gave no units because extracting it failed: it is not
    checkpointed, it is retried next run, and it is parked after ``park_after`` failures
    that ``counts`` (a wrong answer or a bug, not a server that failed or timed out)."""
    found, report = run.extraction, run.report
    found.failed_notes[note.path] = error
    parked = False
    if not ctx.dry_run:
        parked = record_note_failure(
            ctx.state, run.run_id, note.path, found.changed[note.path], error,
            attempts=int(counts), failure_id=failure.id if failure else None,
            park_after=ctx.park_after)
    (report.parked_paths if parked else report.failed_paths).add(note.path)
    log.warning("extract %s failed: %s", note.path, error)
    ctx.report(NoteFailed(note.path, error, parked))
