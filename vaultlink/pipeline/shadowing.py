"""Digest nodes that shadow an owner's note, renamed to a qualified name.

A node named as an owner's note is (``digest/wiki/copp.md`` beside ``resource/CoPP.md``)
or as an alias one lists makes Obsidian resolve the owner's ``[[CoPP]]`` to either. Each
moves to a free qualified name and every digest link to it follows, in one
compare-and-swap group of ``RENAME`` rows (``vaultlink undo`` puts it all back); the
owner's notes are never touched. ``vaultlink rename-shadowing`` runs it on demand, the
first run after the upgrade once (:func:`repair_once`); docs/pipeline.md.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from vaultlink.errors import UndoConflict, VaultError, WriteConflict
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import relinked
from vaultlink.markdown.sections import without_sources
from vaultlink.pipeline.history import mark_of, write_or_delete
from vaultlink.prose.phrase_names import subject_name
from vaultlink.prose.sentences import summary_lines
from vaultlink.prose.units import slugify
from vaultlink.vault.actions import Action
from vaultlink.vault.graph import LinkGraph, build_graph
from vaultlink.vault.names import NameIndex, owner_aliases, owner_links, shadowing_nodes
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import Row, State, diff_of

log = logging.getLogger(__name__)

REPAIRED_KEY = "owner_names_repaired"  # vault_meta: the upgrade repair ran
MAX_TRIES = 50


@dataclass(frozen=True)
class Rename:
    """One node to move: from ``old`` to ``new``, because it shadows ``why``."""

    old: str
    new: str
    why: str


@dataclass(frozen=True)
class Renamed:
    """A repair carried out: the renames, the digest notes relinked, the journal rows."""

    renames: list[Rename]
    relinked: list[str]
    ids: list[int]

    @property
    def paths(self) -> list[str]:
        """Every file the repair changed (for the node index)."""
        return sorted({p for r in self.renames for p in (r.old, r.new)} | set(self.relinked))


def plan_renames(vault: Vault, graph: LinkGraph | None = None) -> list[Rename]:
    """The nodes that shadow an owner's name, each with the free path it would take."""
    graph = graph or build_graph(vault)
    files = set(vault.iter_files())
    shadows = shadowing_nodes(vault, files, graph.meta)
    taken = NameIndex(files | set(), owner_aliases(vault, files), owner_links(vault, files))
    used: set[str] = set()
    out: list[Rename] = []
    for old, why in sorted(shadows.items()):
        folder, stem = old.rsplit("/", 1)
        stem = stem.removesuffix(".md")
        for slug in _candidates(stem, graph.meta.get(old) or {}, graph.texts.get(old, "")):
            new = f"{folder}/{slug}.md"
            if new in used or new in files or taken.taken(new):
                continue
            used.add(new)
            out.append(Rename(old, new, why))
            break
    return out


def _candidates(stem: str, meta: dict[str, object], text: str) -> list[str]:
    """Slugs for a node called ``stem``: qualified by its description's subject, by its
    name, by its text's subject, then "-node" and numbers."""
    subjects: list[str] = []
    description = str(meta.get("description") or "")
    name = str(meta.get("name") or "")
    body = without_sources(split_frontmatter(text)[1]) if text else ""
    for said in (description, name, body):
        lines = [ln for ln in summary_lines(said) if ln.strip()] if said else []
        subject = subject_name(lines[:6], []) if lines else ""
        if subject:
            subjects.append(subject)
    out = [slugify(f"{stem} {s}") for s in subjects if slugify(s) != stem]
    out += [f"{stem}-node"] + [f"{stem}-node-{n}" for n in range(2, MAX_TRIES)]
    return [s for s in dict.fromkeys(out) if s and s != stem]



def apply_renames(vault: Vault, state: State, renames: list[Rename],
                  note: str = "renamed: it shadowed") -> Renamed:
    """Move the nodes and relink digest notes, as one journaled group (all or nothing)."""
    if not renames:
        return Renamed([], [], [])
    graph = build_graph(vault)
    files = set(vault.iter_files())
    moved = {r.old: r.new for r in renames}
    moved_text: dict[str, str] = {}
    for r in renames:
        text = graph.texts.get(r.old)
        if text is None:
            raise VaultError(f"{r.old} cannot be read; nothing was renamed")
        moved_text[r.old] = text
    relinks: list[tuple[str, str, str]] = []  # a digest note, its text, its text relinked
    for source, text in sorted(graph.texts.items()):
        if vault.folder_of(source) != "digest":
            continue  # the owner's notes are never touched
        fresh = text
        for old, new in moved.items():
            if old.rsplit("/", 1)[-1].removesuffix(".md").lower() in fresh.lower():
                fresh = relinked(fresh, source, old, new, files)
        if source in moved:
            moved_text[source] = fresh  # the node itself, linking itself
        elif fresh != text:
            relinks.append((source, text, fresh))
    steps: list[tuple[str, str | None, str | None, str]] = []  # path, old, new, why
    for r in renames:
        steps.append((r.new, None, moved_text[r.old], f"{note} {r.why} (was {r.old})"))
        steps.append((r.old, graph.texts[r.old], None, f"{note} {r.why} (now {r.new})"))
    said = ", ".join(f"{o} is now {n}" for o, n in moved.items())
    steps += [(source, text, fresh, f"relinked: {said}") for source, text, fresh in relinks]
    relinked_paths = [source for source, _, _ in relinks]
    firsts = {p: o for p, o, _, _ in steps}
    for step in steps:
        state.intend(step[0], firsts[step[0]], mark_of(step[2]))
    done: list[tuple[str, str | None, str | None, str]] = []
    try:
        for step in steps:
            write_or_delete(vault, step[0], step[1], step[2])
            done.append(step)
    except (WriteConflict, VaultError, OSError) as exc:
        for step in reversed(done):
            try:
                write_or_delete(vault, step[0], step[2], step[1])
            except (WriteConflict, VaultError, OSError) as again:
                log.warning("could not put back %s (%s)", step[0], again)
        state.settle(firsts)
        raise UndoConflict(f"{exc}: nothing was renamed; try again") from None
    rows = [Row(None, {"name": "rename-shadowing", "paths": [r.old for r in renames]},
                Action.RENAME, step[0], step[3], diff_of(step[0], step[1], step[2]), step[1],
                step[2]) for step in steps]
    ids = state.journal_add_group(rows)
    for r in renames:
        log.warning("renamed %s to %s: it shadowed %s (journal #%d; `vaultlink undo %d` "
                    "puts it back)", r.old, r.new, r.why, ids[0], ids[0])
    return Renamed(renames, relinked_paths, ids)


def repair_once(vault: Vault, state: State) -> Renamed:
    """The upgrade's repair: rename shadowing nodes once per vault (``vault_meta``)."""
    rows = state.query("SELECT value FROM vault_meta WHERE key=?", (REPAIRED_KEY,))
    if rows:
        return Renamed([], [], [])
    renames = plan_renames(vault)
    done = apply_renames(vault, state, renames, note="renamed on upgrade: it shadowed")
    with state.transaction() as db:
        db.execute("INSERT OR REPLACE INTO vault_meta VALUES (?, ?)",
                   (REPAIRED_KEY, str(len(done.renames))))
    if done.renames:
        log.warning("vaultlink renamed %d digest node(s) whose names your links use: %s",
                    len(done.renames), ", ".join(f"{r.old} -> {r.new}" for r in done.renames))
    return done
