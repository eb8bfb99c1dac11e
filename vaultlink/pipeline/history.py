"""Undo and redo of journaled decisions, without ever leaving a broken link.

Every journal row that changed a file holds its text before and after, so reverting a
row means writing its "before" back, compare-and-swap against its "after": a later
edit (the user's or another decision's) is never thrown away. An undo is planned in
full before anything is written (:func:`plan`), on a simulated vault:

* a row whose node changed since needs the later rows on that node reverted first;
* a node an undo removes (a CREATE undone) must not be linked from anywhere: each
  digest node linking to it needs the decisions that added the link reverted, and a
  day's topics page drops the node from its topics;
* nothing may end up linking to a file that is not there.

Without ``cascade`` a plan that needs more than the decision asked for is refused,
naming what else it would revert; with it, the whole plan is applied as one journaled
group, all or nothing (write intents make a killed undo roll back at the next start).
A user's own note linking to the node, or a node edited by hand, always refuses.

Reverting an UNDO row is a redo; reverting any row of a group reverts its whole group.
What a killed process left half-done is rolled back by ``recovery.recover``.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field

from vaultlink.errors import (
    NoteUnreadable,
    StateError,
    UndoConflict,
    UndoNeedsCascade,
    VaultError,
    WriteConflict,
)
from vaultlink.markdown.links import LinkResolver, find_wikilinks
from vaultlink.markdown.names import name_key
from vaultlink.pipeline.stored import stored_name
from vaultlink.pipeline.topics import without_nodes
from vaultlink.vault.actions import Action
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.faults import crash_point
from vaultlink.vault.graph import LinkGraph, build_graph
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import JournalEntry, Row, State, diff_of

log = logging.getLogger(__name__)

ABSENT = "-"  # an intent's "written" mark for a file a writer removes


def mark_of(text: str | None) -> str:
    """What an intent records of a text about to land: its hash (ABSENT: removed)."""
    return ABSENT if text is None else content_hash(text.encode("utf-8"))


def write_or_delete(vault: Vault, path: str, old: str | None, new: str | None) -> None:
    """Replace ``old`` by ``new`` at ``path`` (None: absent), compare-and-swap."""
    expected = None if old is None else content_hash(old.encode("utf-8"))
    if new is None:
        if expected is not None:
            vault.delete(path, expected)
    else:
        vault.write(path, new, expected)

SHOWN = 12  # decisions a refusal lists before it counts the rest


@dataclass(frozen=True)
class Step:
    """One file change of a plan: ``old`` -> ``new`` (None: absent)."""

    path: str
    old: str | None
    new: str | None
    reverts: JournalEntry | None  # None: a topics page losing a removed node
    why: str


@dataclass
class Plan:
    """What an undo or redo would change, in the order it would change it."""

    asked: list[JournalEntry]
    redo: bool
    steps: list[Step] = field(default_factory=list)

    @property
    def extra(self) -> list[Step]:
        """The other decisions the plan reverts (what ``--cascade`` adds). A day's topics
        page losing a removed node is no decision: it follows without asking."""
        asked = {e.id for e in self.asked}
        return [s for s in self.steps if s.reverts is not None and s.reverts.id not in asked]

    @property
    def paths(self) -> list[str]:
        """Every file the plan changes, once."""
        return list(dict.fromkeys(s.path for s in self.steps))


@dataclass(frozen=True)
class Outcome:
    """An applied plan: the journal rows it added (first = its group) and the files."""

    ids: list[int]
    paths: list[str]
    reverted: dict[int, int]  # reverted row id -> the row that reverted it


def undo(vault: Vault, state: State, entry_id: int, cascade: bool = False) -> Outcome:
    """Undo decision ``entry_id`` (and, with ``cascade``, what depends on it)."""
    entry = _get(state, entry_id)
    if entry.undone_by is not None:
        raise StateError(f"decision #{entry_id} was already undone by #{entry.undone_by}; "
                         f"`vaultlink redo {entry_id}` brings it back")
    if not entry.changes_file:
        raise StateError(f"decision #{entry_id} ({entry.action}) wrote nothing to undo")
    return _run(vault, state, entry, cascade)


def redo(vault: Vault, state: State, entry_id: int, cascade: bool = False) -> Outcome:
    """Bring back what an undo removed: ``entry_id`` is the undone decision or its UNDO."""
    entry = _get(state, entry_id)
    if entry.action != Action.UNDO:
        if entry.undone_by is None:
            raise StateError(f"decision #{entry_id} is not undone: there is nothing to redo")
        entry = _get(state, entry.undone_by)
    if entry.undone_by is not None:
        raise StateError(f"#{entry.id} was already redone by #{entry.undone_by}")
    return _run(vault, state, entry, cascade)


def undo_decision(vault: Vault, state: State, entry_id: int, cascade: bool = False) -> int:
    """Undo one decision; returns the id of the row that reverted it."""
    return undo(vault, state, entry_id, cascade).reverted[entry_id]


def _get(state: State, entry_id: int) -> JournalEntry:
    entry = state.journal_get(entry_id)
    if entry is None:
        raise StateError(f"no decision #{entry_id}; `vaultlink log` lists them")
    return entry


def _run(vault: Vault, state: State, entry: JournalEntry, cascade: bool) -> Outcome:
    p = plan(vault, state, entry)
    if p.extra and not cascade:
        raise UndoNeedsCascade(_needs_cascade(p, entry), [
            {"id": s.reverts.id, "action": s.reverts.action, "path": s.path, "why": s.why}
            for s in p.extra if s.reverts is not None])
    return apply(vault, state, p)


def _needs_cascade(p: Plan, entry: JournalEntry) -> str:
    verb = "redoing" if p.redo else "undoing"
    lines = [f"{verb} #{entry.id} alone would leave {entry.target} changed since or "
             "linked from other notes; it also needs:"]
    shown = [s for s in p.extra if s.reverts is not None]
    for s in shown[:SHOWN]:
        assert s.reverts is not None
        lines.append(f"  #{s.reverts.id} {s.reverts.action} {s.path} ({s.why})")
    if len(shown) > SHOWN:
        lines.append(f"  ... and {len(shown) - SHOWN} more (each decision that links to a "
                     "node the group removes goes too)")
    command = "redo" if p.redo else "undo"
    lines.append(f"run `vaultlink {command} {entry.id} --cascade` to revert all of these "
                 "as one group (`vaultlink redo` brings them back)")
    return "\n".join(lines)


# -- planning ----------------------------------------------------------------------


def plan(vault: Vault, state: State, entry: JournalEntry,
         graph: LinkGraph | None = None) -> Plan:
    """Everything reverting ``entry`` (its whole group) takes; raises ``UndoConflict``
    when it cannot be done without losing an edit or breaking a link."""
    planner = _Planner(vault, state, graph or build_graph(vault))
    members = planner.group_of(entry)
    result = Plan(members, redo=entry.action == Action.UNDO)
    planner.revert(entry, "asked for")
    planner.fix_links()
    result.steps = planner.steps
    return result


class _Planner:
    """The simulated vault an undo is planned on."""

    def __init__(self, vault: Vault, state: State, graph: LinkGraph) -> None:
        self.vault, self.state, self.graph = vault, state, graph
        self.files = set(vault.iter_files())
        self.sim: dict[str, str | None] = {}
        self.steps: list[Step] = []
        self.reverted: set[int] = set()
        self._rows: dict[str, list[JournalEntry]] = {}
        # names a reverted RENAME gives back to a node that shadowed an owner's note: the
        # owner's links to that name are ambiguous again, as they were before the rename
        self.shadowing: set[str] = set()

    def text(self, path: str) -> str | None:
        if path in self.sim:
            return self.sim[path]
        try:
            return self.vault.read_bytes(path).decode("utf-8", "replace")
        except VaultError:
            return None

    def _live(self, e: JournalEntry) -> bool:
        """Not reverted, in the journal or by this plan (an undo this plan redoes
        brings its decision back to life)."""
        return e.id not in self.reverted and (e.undone_by is None
                                              or e.undone_by in self.reverted)

    def live_on(self, path: str) -> list[JournalEntry]:
        if path not in self._rows:
            self._rows[path] = [e for e in self.state.journal_of(path) if e.changes_file]
        return [e for e in self._rows[path] if self._live(e)]

    def group_of(self, entry: JournalEntry) -> list[JournalEntry]:
        if entry.group_id is None:
            return [entry]
        return [e for e in self.state.journal_group(entry.group_id)
                if e.changes_file and self._live(e)] or [entry]

    def revert(self, entry: JournalEntry, why: str) -> None:
        for member in sorted(self.group_of(entry), key=lambda e: -e.id):
            self._revert_one(member, why)

    def _revert_one(self, e: JournalEntry, why: str) -> None:
        if e.id in self.reverted:
            return
        while self.text(e.target) != e.after_text:
            later = [x for x in self.live_on(e.target) if x.id > e.id]
            if not later:
                raise UndoConflict(
                    f"{e.target} changed since #{e.id} wrote it (an edit no decision "
                    f"explains: by hand?), so #{e.id} cannot be reverted without losing "
                    "that edit; nothing was changed. "
                    f"Undo it by hand (`vaultlink log --diff --note {e.target}`)")
            self.revert(later[-1], f"it changed {e.target} after #{e.id}")
        self.reverted.add(e.id)
        if e.action == Action.RENAME and e.before_text is not None and e.after_text is None:
            self.shadowing.add(name_key(e.target))
        self.sim[e.target] = e.before_text
        self.steps.append(Step(e.target, e.after_text, e.before_text, e, why))

    def fix_links(self) -> None:
        """Revert or prune until no file links to a file the plan removes."""
        for _ in range(10_000):  # each round reverts or prunes something, or stops
            broken = self.new_broken()
            if not broken:
                return
            blockers: list[str] = []
            for source, raws in sorted(broken.items()):
                why = f"it links to {', '.join(sorted(raws))}"
                if self._prune(source, why) or self._revert_linker(source, why):
                    continue
                blockers.append(f"{source} ({self._whose(source)}) {why.removeprefix('it ')}")
            if blockers:
                raise UndoConflict("this would leave broken links, which vaultlink never "
                                   "does; nothing was changed:\n  " + "\n  ".join(blockers)
                                   + "\nremove those links by hand first")
        raise UndoConflict("the undo does not settle; nothing was changed")

    def new_broken(self) -> dict[str, set[str]]:
        """Links that resolve now and would not after the plan: source -> raw links."""
        removed = {p for p, t in self.sim.items() if t is None and p in self.files}
        added = {p for p, t in self.sim.items() if t is not None and p not in self.files}
        resolver = LinkResolver((self.files - removed) | added)
        sources = {p for p, t in self.sim.items() if t is not None}
        for path in removed:
            sources |= {e.source for e in self.graph.backlinks.get(path, [])}
        if added:  # a new file can make a unique name ambiguous anywhere
            sources |= set(self.graph.outlinks)
        found: dict[str, set[str]] = {}
        for source in sources - removed:
            text = self.sim.get(source, self.graph.texts.get(source))
            if text is None:
                continue
            was_broken = {e.raw for e in self.graph.outlinks.get(source, [])
                          if e.target is None}
            for link in find_wikilinks(text):
                if link.raw in was_broken:
                    continue
                res = resolver.resolve(link.target, source)
                if res.path is None and not (name_key(link.target) in self.shadowing
                                             and "ambiguous" in res.reason):
                    found.setdefault(source, set()).add(link.raw)
        return found

    def _prune(self, source: str, why: str) -> bool:
        if not source.startswith(f"{self.vault.digest}/topics/"):
            return False
        old = self.text(source)
        if old is None:
            return False
        gone = {p for p, t in self.sim.items() if t is None}
        try:
            new = without_nodes(source, old, gone)
        except NoteUnreadable:
            return False
        if new == old:
            return False
        self.sim[source] = new
        self.steps.append(Step(source, old, new, None, why))
        return True

    def _revert_linker(self, source: str, why: str) -> bool:
        if self.vault.folder_of(source) != "digest":
            return False
        live = self.live_on(source)
        if not live or self.text(source) != live[-1].after_text:
            return False
        self.revert(live[-1], why)
        return True

    def _whose(self, source: str) -> str:
        if self.vault.folder_of(source) != "digest":
            return "your note"
        if self.live_on(source):
            return "edited by hand since vaultlink wrote it"
        return "no decision of the journal wrote it"


# -- applying ----------------------------------------------------------------------


def apply(vault: Vault, state: State, p: Plan) -> Outcome:
    """Write the plan's steps (compare-and-swap each) and journal them as one group.

    A conflict half-way puts back the steps already written; a process killed half-way
    leaves intents that :func:`recover` rolls back. Either way: all or nothing.
    """
    firsts: dict[str, str | None] = {}
    for s in p.steps:
        firsts.setdefault(s.path, s.old)
    for s in p.steps:
        state.intend(s.path, firsts[s.path], mark_of(s.new))
    done: list[Step] = []
    try:
        for s in p.steps:
            if done:
                crash_point("mid_undo")
            write_or_delete(vault, s.path, s.old, s.new)
            done.append(s)
    except (WriteConflict, VaultError, OSError) as exc:
        stuck: set[str] = set()
        for s in reversed(done):
            try:
                write_or_delete(vault, s.path, s.new, s.old)
            except (WriteConflict, VaultError, OSError) as again:
                log.warning("could not put back %s (%s)", s.path, again)
                stuck.add(s.path)
        # What could not be put back keeps its intent: the next writer's recover()
        # rolls it back once the disk lets it.
        state.settle(p for p in firsts if p not in stuck)
        if stuck:
            raise UndoConflict(f"{exc}: the undo stopped half-way and could not put back "
                               f"{', '.join(sorted(stuck))} yet; the next vaultlink "
                               "command puts it back") from None
        raise UndoConflict(f"{exc}: nothing was changed; fix that and try again") from None
    action = Action.REDO if p.redo else Action.UNDO
    rows = [_row(s, action) for s in p.steps]
    ids = state.journal_add_group(rows)
    reverted = {s.reverts.id: i for s, i in zip(p.steps, ids, strict=True) if s.reverts}
    log.info("%s of #%d: %d file change(s), journal #%d-#%d", action.lower(), p.asked[0].id,
             len(p.steps), ids[0], ids[-1])
    return Outcome(ids, p.paths, reverted)


def _row(s: Step, action: Action) -> Row:
    e = s.reverts
    if e is None:
        return Row(None, {"name": "topics"}, action, s.path,
                   f"dropped what no longer exists from the topics ({s.why})",
                   diff_of(s.path, s.old, s.new), s.old, s.new)
    verb = "redid" if e.action == Action.UNDO else "undid"
    return Row(e.run_id, e.unit, action, s.path, f"{verb} #{e.id} ({e.action}): {s.why}",
               diff_of(s.path, s.old, s.new), s.old, s.new, undo_of=e.id)


def describe(entry: JournalEntry) -> str:
    """One line per decision for ``vaultlink log``."""
    when = dt.datetime.fromtimestamp(entry.at).strftime("%Y-%m-%d %H:%M")
    unit = stored_name(entry.unit, "?")
    mark = f" (undone by #{entry.undone_by})" if entry.undone_by else ""
    target = f" {entry.target}" if entry.target else ""
    note = f": {entry.note}" if entry.note else ""
    by = f" ({entry.integrator})" if entry.integrator else ""  # which integrator decided
    return f"#{entry.id} {when} {entry.action}{by}{target} [{unit}]{note}{mark}"
