"""The names the owner's links use, which no digest node may take.

Obsidian resolves ``[[name]]`` by file name, in any folder, without case (and in NFC):
a digest node ``digest/wiki/copp.md`` beside the owner's ``resource/CoPP.md`` makes every
``[[CoPP]]`` of the owner's notes ambiguous, and a node named after an alias an owner's
note lists (front matter ``aliases``) takes that alias's links. So a node's file name is
compared with every other file of the vault (notes, attachments, any file: ``.md``
dropped, and an attachment's name without its extension too, which Obsidian's link
suggestions show beside it) and with every alias of the owner's notes. Nor is a node
named by a date, a file id or a number: a vault that links days or Zettelkasten ids
would find its links taken the day a note of that name appears. Nor does a node take
the name of a link the owner wrote to a note not written yet (``[[clflush]]`` with no
``clflush.md``): that link waits for the owner's note, not for one of vaultlink's.

``NameIndex`` answers who holds a name; ``owner_aliases`` and ``owner_links`` read the
aliases and link targets of the owner's notes (every note outside the digest folder),
each file read again only when it changed (a stat per note per listing).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from vaultlink.errors import FrontmatterError, VaultlinkError
from vaultlink.markdown.frontmatter import read_frontmatter, split_frontmatter
from vaultlink.markdown.links import link_targets
from vaultlink.markdown.names import file_keys, name_key, numbered_name

if TYPE_CHECKING:  # a type only: the import chain from the integrators stays short
    from vaultlink.vault.notes import Vault

# How much of a note is read for its front matter: Obsidian's properties sit at the top.
HEAD_BYTES = 64 * 1024
# How much of a note is read for the links it holds (a bigger note is read this far).
LINK_BYTES = 1024 * 1024

@dataclass
class NameIndex:
    """Who holds each name of the vault: its files, and the aliases of the owner's notes."""

    files: Iterable[str]
    aliases: Mapping[str, list[str]] = field(default_factory=dict)  # alias key -> notes
    links: Mapping[str, list[str]] = field(default_factory=dict)  # link target key -> notes
    _holders: dict[str, list[str]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._holders = {}
        for path in self.files:
            for key in file_keys(path):
                self._holders.setdefault(key, []).append(path)

    def files_named(self, name: str) -> list[str]:
        """The files that answer to ``[[name]]`` (any folder, any case), sorted."""
        return sorted(self._holders.get(name_key(name), []))

    def holder(self, path: str) -> str:
        """What already answers to the name of a node at ``path`` (another file, or an
        alias of an owner's note), in words; '' when the name is free."""
        key = name_key(path)
        others = [p for p in self.files_named(path) if p != path]
        if others:
            return others[0]
        notes = sorted(n for n in self.aliases.get(key, []) if n != path)
        if notes:
            return f"an alias of {notes[0]}"
        return ""

    def awaited(self, path: str) -> str:
        """The owner's note whose link names ``path``'s name while no file holds it (a
        note the owner means to write), or ''."""
        notes = sorted(n for n in self.links.get(name_key(path), []) if n != path)
        return notes[0] if notes and not self.holder(path) else ""

    def taken(self, path: str) -> str:
        """Why a digest node may not be at ``path``: its name is another file's or an
        alias of an owner's note, or a date, an id or a number; '' when it may."""
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        if numbered_name(stem):
            return f"{stem!r} is a date, a file id or a number"
        who = self.holder(path)
        if who.startswith("an alias"):
            return f"{stem!r} is {who}"
        if who:
            return f"{stem!r} is the name of {who}"
        waiting = self.awaited(path)
        if waiting:
            return f"[[{stem}]] in {waiting} names a note the owner has not written yet"
        return ""


def shadow_advice(path: str, why: str) -> str:
    """The refusal's words: what the name would do, and how to qualify it."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return (f"refused: a new node at {path} would take a name the owner's links use: "
            f"{why}, and Obsidian resolves [[{stem}]] by file name in any folder, without "
            "case, so the owner's links would change meaning. Qualify the name with what "
            f"the node is about (e.g. {stem}-<subject>.md, name \"<Name> (<subject>)\"); "
            "a date, an id or a number is never a node's name: name it by its subject.")


# -- the owner's aliases and links ---------------------------------------------------


class NoteNames(NamedTuple):
    """The names an owner's note gives: the keys of its aliases and of its link targets."""

    aliases: tuple[str, ...]
    links: tuple[str, ...]


NO_NAMES = NoteNames((), ())
_cache_lock = threading.Lock()
# (vault root, note path) -> ((mtime_ns, size), its names): a note is read again only
# when it changed
_cache: dict[tuple[str, str], tuple[tuple[int, int], NoteNames]] = {}


def aliases_of(text: str) -> list[str]:
    """The ``aliases`` (or ``alias``) a note's front matter lists, as written."""
    head, _, _ = split_frontmatter(text)
    if not head:
        return []
    try:
        meta, _ = read_frontmatter(text)
    except FrontmatterError:
        return []
    return _listed_aliases(meta)


def owner_aliases(vault: Vault, files: Iterable[str]) -> dict[str, list[str]]:
    """Alias key -> the owner's notes that list it, over the ``.md`` files of ``files``
    outside the digest folder."""
    return _owner_keys(vault, files, lambda names: names.aliases)


def owner_links(vault: Vault, files: Iterable[str]) -> dict[str, list[str]]:
    """Link target key -> the owner's notes that link to it, over the ``.md`` files of
    ``files`` outside the digest folder (``NameIndex.awaited`` keeps those no file holds)."""
    return _owner_keys(vault, files, lambda names: names.links)


def _owner_keys(vault: Vault, files: Iterable[str],
                which: Callable[[NoteNames], tuple[str, ...]]) -> dict[str, list[str]]:
    """Key -> the owner's notes that name it, as ``which`` of their names says."""
    out: dict[str, list[str]] = {}
    root = str(vault.root)
    for rel in files:
        if not rel.lower().endswith(".md") or vault.folder_of(rel) == "digest":
            continue
        for key in which(_names_cached(vault, root, rel)):
            out.setdefault(key, []).append(rel)
    return out


def _names_cached(vault: Vault, root: str, rel: str) -> NoteNames:
    """A note's alias keys and link target keys, read again only when it changed."""
    try:
        path = vault.abs(rel)
        st = os.stat(path)
    except (OSError, VaultlinkError):
        return NO_NAMES
    stamp = (st.st_mtime_ns, st.st_size)
    with _cache_lock:
        hit = _cache.get((root, rel))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        with open(path, "rb") as fh:
            text = fh.read(LINK_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return NO_NAMES
    aliases = tuple(dict.fromkeys(name_key(a) for a in aliases_of(text[:HEAD_BYTES])))
    links = tuple(dict.fromkeys(name_key(target) for target in link_targets(text)))
    with _cache_lock:
        _cache[(root, rel)] = (stamp, NoteNames(aliases, links))
    return NoteNames(aliases, links)


def vault_names(vault: Vault, files: Iterable[str]) -> NameIndex:
    """The name index of a vault's listing: its files and its owner's aliases."""
    listed = list(files)
    return NameIndex(listed, owner_aliases(vault, listed))


def shadowing_nodes(vault: Vault, files: Iterable[str],
                    meta: Mapping[str, Mapping[str, object]]) -> dict[str, str]:
    """Digest nodes whose file name the owner's links use: node path -> what it shadows
    (an owner's file, or an alias of an owner's note). ``meta`` holds each note's front
    matter, as the link graph read it. A day's topics page is not a node."""
    listed = sorted(files)
    owner = [p for p in listed if vault.folder_of(p) != "digest"]
    aliases: dict[str, list[str]] = {}
    for rel in owner:
        for alias in _listed_aliases(meta.get(rel) or {}):
            aliases.setdefault(name_key(alias), []).append(rel)
    index = NameIndex(owner, aliases)
    out: dict[str, str] = {}
    for rel in listed:
        parts = rel.split("/")
        if (vault.folder_of(rel) != "digest" or not rel.endswith(".md") or len(parts) != 3
                or parts[1] == "topics"):
            continue
        who = index.holder(rel)
        if who:
            out[rel] = who
    return out


def _listed_aliases(meta: Mapping[str, object]) -> list[str]:
    out: list[str] = []
    for key in ("aliases", "alias"):
        value = meta.get(key)
        items = value if isinstance(value, list) else [value] if value is not None else []
        out += [str(v).strip() for v in items
                if isinstance(v, (str, int, float)) and str(v).strip()]
    return out
