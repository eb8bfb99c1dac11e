"""The vault on disk: sandboxed vault-relative paths, reading notes, the one write.

Every path vaultlink stores or writes is vault-relative, uses ``/``, is NFC-normalised
and includes its extension. ``Vault`` is the only place that turns such a path into a
real file, and ``Vault.write`` is the only function that changes a file: atomic (temp
file beside the target, fsync, rename) and compare-and-swap against the hash the caller
read (``atomic.py``), so a user's concurrent edit is never overwritten.
"""

from __future__ import annotations

import logging
import os
import stat
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultlink.errors import (
    BinaryNote,
    BrokenFrontmatter,
    FrontmatterError,
    NoteNotFound,
    NoteTooLarge,
    NoteUnreadable,
    NotUtf8,
    PathRefused,
    VaultError,
    WriteFailed,
)
from vaultlink.markdown.frontmatter import (
    read_frontmatter,
    render_frontmatter,
    split_frontmatter,
    text_value,
)
from vaultlink.vault.atomic import content_hash, remove_file, replace_file
from vaultlink.vault.paths import is_skipped_name, normalize_rel
from vaultlink.vault.readpolicy import ReadPolicy
from vaultlink.vault.walk import StatCache, StatEntry, entry_of, unchanged, walk_entries

log = logging.getLogger(__name__)

STATE_DIR = ".vaultlink"
DEFAULT_MAX_NOTE_BYTES = 2_000_000
# a name is a title, a description a paragraph: longer values are cut when read as text
NAME_CHARS = 200
DESCRIPTION_CHARS = 1_000

# Folders that are never notes: Obsidian's own, its trash, ours, version control.
SKIPPED_DIRS = frozenset({".obsidian", ".trash", STATE_DIR, ".git"})
@dataclass(frozen=True)
class NoteInfo:
    """What a scan knows of one note without parsing it."""

    path: str
    size: int
    mtime: float
    hash: str


@dataclass
class Note:
    """A parsed note: frontmatter as a dict, the body below it, the hash of the bytes read."""

    path: str
    text: str
    frontmatter: dict[str, Any]
    body: str
    hash: str

    @property
    def name(self) -> str:
        """The ``name`` key as one bounded line, or the file name without ``.md``."""
        value = text_value(self.frontmatter.get("name"), NAME_CHARS)
        return value or self.path.rsplit("/", 1)[-1].removesuffix(".md")

    @property
    def description(self) -> str:
        """The ``description`` key as one bounded line, or the empty string."""
        return text_value(self.frontmatter.get("description"), DESCRIPTION_CHARS)


@dataclass
class Vault:
    """A vault folder and the few rules for touching it.

    ``daily``, ``resource`` and ``digest`` are the folder names from the configuration.
    Only ``digest`` and ``.vaultlink`` are ever written.
    """

    root: Path
    daily: str = "daily"
    resource: str = "resource"
    digest: str = "digest"
    max_note_bytes: int = DEFAULT_MAX_NOTE_BYTES
    _real_root: Path = field(init=False, repr=False)
    # what walks left out, and why (a symlink out of the vault): the run's summary and
    # `vaultlink status` report these once, not every command that walks
    skipped: dict[str, str] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        # abspath drops '..' (or no walked file is "inside"); a symlinked path stays as given
        self.root = Path(os.path.abspath(Path(self.root).expanduser()))
        if not self.root.is_dir():
            raise NoteNotFound(str(self.root))
        self._real_root = self.root.resolve()

    # -- paths ---------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        """``.vaultlink/`` inside the vault (not created here)."""
        return self.root / STATE_DIR

    def rel(self, raw: str) -> str:
        """A validated vault-relative path (see ``normalize_rel``)."""
        return normalize_rel(raw)

    def abs(self, raw: str) -> Path:
        """The real file for a vault path; refuses symlinks that lead out of the vault."""
        rel = normalize_rel(raw)
        path = self.root / rel
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before 3.13)
            raise PathRefused(rel, "it is a symlink loop or cannot be resolved") from None
        if real != self._real_root and self._real_root not in real.parents:
            raise PathRefused(rel, "it is a symlink whose target is outside the vault")
        return path

    @property
    def policy(self) -> ReadPolicy:
        """What may be read for a caller who is not the owner (``readpolicy.py``)."""
        return ReadPolicy(self.root, self._real_root, (self.daily, self.resource, self.digest))

    def readable(self, raw: str) -> str:
        """The vault path, if a caller (a model, an assistant, the plugin) may read it;
        ``PathRefused`` with the reason otherwise."""
        return self.policy.readable(normalize_rel(raw))

    def relative_of(self, path: Path) -> str:
        """The vault path of an absolute file path inside the vault."""
        rel = Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        return unicodedata.normalize("NFC", rel)

    def folder_of(self, rel: str) -> str | None:
        """``"daily"``, ``"resource"`` or ``"digest"`` for a path in one of them, else None."""
        top = rel.split("/", 1)[0]
        for kind, name in (("daily", self.daily), ("resource", self.resource),
                           ("digest", self.digest)):
            if top == name and "/" in rel:
                return kind
        return None

    def is_writable(self, rel: str) -> bool:
        """True only under ``digest/`` and ``.vaultlink/``: the user's notes are read-only."""
        top = rel.split("/", 1)[0]
        return "/" in rel and top in (self.digest, STATE_DIR)

    def _check_real_folders(self, rel: str) -> None:
        """Refuse a write whose folder, as it resolves, is not inside the digest (or
        state) folder as that resolves, or lies in the owner's notes: a symlinked
        ``digest/wiki`` pointing at ``daily/`` must not turn a node into an owner's note.
        (``digest/`` itself may be a link to a folder of the vault.)"""
        top, parent = rel.split("/", 1)[0], Path(os.path.realpath(self.root / rel)).parent
        home = Path(os.path.realpath(self.root / top))
        owners = [Path(os.path.realpath(self.root / f)) for f in (self.daily, self.resource)]
        inside = parent == home or home in parent.parents
        if not inside or any(parent == o or o in parent.parents for o in owners):
            raise PathRefused(rel, f"{rel.rsplit('/', 1)[0]}/ is a symlink that leads out "
                                   f"of {top}/; vaultlink writes only into {top}/'s own "
                                   "folders: replace the link with a folder")

    def exists(self, raw: str) -> bool:
        """True if the vault path names a regular file inside the vault."""
        try:
            return self.abs(raw).is_file()
        except PathRefused:
            return False

    # -- scanning ------------------------------------------------------------

    def _walk(self, folders: Iterable[str] | None,
              on_skip: Callable[[str, Exception], None]) -> Iterator[tuple[str, os.DirEntry[str]]]:
        tops: list[str] | None = None
        if folders is not None:
            tops = []
            for top in folders:
                if (self.root / top).is_symlink():  # a linked top folder must stay inside
                    try:
                        self.abs(top)
                    except PathRefused as exc:
                        self._skip(top, exc.reason)
                        continue
                tops.append(top)
        # os.walk would not enter linked folders, so only a linked file can lead out of
        # the vault; resolving every path costs 10x more
        return walk_entries(str(self.root), tops, SKIPPED_DIRS, is_skipped_name, normalize_rel,
                            self.policy.check_target, on_skip)

    def iter_files(self, folders: Iterable[str] | None = None) -> Iterator[str]:
        """Vault paths of every file (any extension) below the given top folders, sorted.

        With ``folders=None`` the whole vault. Skipped folders, temp and conflict files
        and symlinks leaving the vault are left out.
        """
        return iter(sorted(rel for rel, _ in self._walk(folders, self._skipped_entry)))

    def _skipped_entry(self, path: str, exc: Exception) -> None:
        """What the walker could not take: a link out of the vault is listed with its
        reason (status shows it); anything else only logged (a file gone mid-walk)."""
        if isinstance(exc, PathRefused):
            self._skip(exc.path, exc.reason)
        else:
            log.info("skipping %s: %s", path, exc)

    def _skip(self, rel: str, reason: str) -> None:
        if rel not in self.skipped:  # walked before every unit: once is enough
            log.info("skipping %s: %s", rel, reason)
        self.skipped[rel] = reason

    def skipped_in(self, folders: Iterable[str]) -> dict[str, str]:
        """The files left out by walks below ``folders`` so far, with the reason."""
        tops = tuple(folders)
        return {p: r for p, r in self.skipped.items()
                if any(p == t or p.startswith(t + "/") for t in tops)}

    def scan(self, folders: Iterable[str] | None = None,
             cache: StatCache | None = None) -> list[NoteInfo]:
        """Size, mtime and content hash of every ``.md`` note below ``folders``, by path.

        Defaults to the daily, resource and digest folders. With a ``cache`` a note whose
        stat (size, mtime, ctime, inode) is what it was when it was last hashed, and
        older than that moment, keeps its stored hash and is not read: a scan of an
        unchanged vault reads nothing. Files over the size limit, or that cannot be
        read (permission denied, I/O error), are reported with an empty hash: reading
        them raises the error that says why. Only a vanished file is left out, since
        leaving out a present one would pass it for deleted.
        """
        tops = [self.daily, self.resource, self.digest] if folders is None else list(folders)
        known = cache.stat_entries() if cache is not None else {}
        fresh: dict[str, StatEntry] = {}
        infos = []
        for rel, entry in self._walk(tops, self._skipped_entry):
            if not rel.endswith(".md"):
                continue
            try:
                st = entry.stat()
            except OSError:  # vanished between walk and stat, or a link loop
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read forever
                continue
            old = known.get(rel)
            if unchanged(old, st):
                assert old is not None
                infos.append(NoteInfo(rel, st.st_size, st.st_mtime, old.hash))
                continue
            hashed_ns = time.time_ns()
            digest = ""
            if st.st_size <= self.max_note_bytes:
                try:
                    digest = content_hash(self.read_bytes(rel))
                except NoteNotFound:
                    continue
                except VaultError as exc:
                    log.info("cannot hash %s: %s", rel, exc)
            if digest:
                fresh[rel] = entry_of(st, digest, hashed_ns)
            infos.append(NoteInfo(rel, st.st_size, st.st_mtime, digest))
        if cache is not None:
            present = {i.path for i in infos}
            gone = [p for p in known if p not in present and p.split("/", 1)[0] in tops]
            if fresh or gone:
                cache.store_stat_entries(fresh, gone)
        return sorted(infos, key=lambda i: i.path)

    # -- reading -------------------------------------------------------------

    def read_bytes(self, raw: str) -> bytes:
        """The bytes of a note, refusing missing and oversized files."""
        rel = normalize_rel(raw)
        path = self.abs(rel)
        try:
            size = path.stat().st_size
            if not path.is_file():
                raise NoteNotFound(rel)
            if size > self.max_note_bytes:
                raise NoteTooLarge(rel, f"{size:,} bytes is over the limit of "
                                        f"{self.max_note_bytes:,} (vault.max_note_bytes)")
            return path.read_bytes()
        except FileNotFoundError:
            raise NoteNotFound(rel) from None
        except OSError as exc:  # permission denied, I/O error: one note, not the run
            raise NoteUnreadable(rel, f"it cannot be read ({exc.strerror or exc})") from None

    def read_note(self, raw: str) -> Note:
        """Read and parse a note; each kind of bad input raises its own typed error."""
        rel = normalize_rel(raw)
        data = self.read_bytes(rel)
        return parse_note(rel, data)

    # -- writing -------------------------------------------------------------

    def write(self, raw: str, content: str, expected_hash: str | None) -> str:
        """Atomically write ``content`` to a digest or state file; return the new hash.

        ``expected_hash`` is the hash the caller read; ``None`` means the file must not
        exist yet. If the file on disk differs, ``WriteConflict`` is raised and nothing
        changes. Paths outside ``digest/`` and ``.vaultlink/`` are refused.
        """
        rel = normalize_rel(raw)
        if not self.is_writable(rel):
            raise PathRefused(rel, f"vaultlink writes only under {self.digest}/ and "
                                   f"{STATE_DIR}/; the user's notes are read-only")
        path = self.abs(rel)
        data = content.encode("utf-8")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._check_real_folders(rel)  # not the text: where the folders really are
            replace_file(path, rel, data, expected_hash)
        except OSError as exc:  # full, read-only, I/O error: the old text stays whole
            raise WriteFailed(rel, exc) from None
        return content_hash(data)

    def delete(self, raw: str, expected_hash: str) -> None:
        """Remove a digest file, only if it still has ``expected_hash`` (used by undo)."""
        rel = normalize_rel(raw)
        if not self.is_writable(rel):
            raise PathRefused(rel, "vaultlink deletes only its own digest and state files")
        try:
            self._check_real_folders(rel)
            remove_file(self.abs(rel), rel, expected_hash)
        except OSError as exc:
            raise WriteFailed(rel, exc) from None


def parse_note(rel: str, data: bytes) -> Note:
    """Parse a note's bytes into frontmatter and body, with typed errors for bad input."""
    if b"\x00" in data:
        raise BinaryNote(rel, "it contains NUL bytes, so it is a binary file, not a note")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8(rel, f"it is not UTF-8 (bad byte at offset {exc.start}); "
                           "re-save it as UTF-8") from None
    text = text.removeprefix("\ufeff")
    try:
        meta, body = read_frontmatter(text)
    except FrontmatterError as exc:
        raise BrokenFrontmatter(rel, str(exc)) from None
    return Note(rel, text, meta, body, content_hash(data))


def body_only_note(rel: str, data: bytes) -> Note:
    """A UTF-8 note whose frontmatter does not parse, read as its body with no keys:
    enough to recall it by what it says while its owner fixes the block."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    return Note(rel, text, {}, split_frontmatter(text)[1], content_hash(data))


def render_note(meta: dict[str, Any], body: str) -> str:
    """Frontmatter and body as note text, keys in the order given."""
    return render_frontmatter(meta, body)


def walk_notes(vault: Vault, folders: Sequence[str] | None, wants: Callable[[str], bool],
               seen: set[str] | None = None) -> dict[str, os.stat_result]:
    """The stat of every wanted file below ``folders`` (None: the whole vault).

    Skips what ``Vault.iter_files`` skips, in one ``scandir`` pass: only a symlink needs
    the (slower) check that it stays inside the vault. Every file's path goes to ``seen``.
    """
    out: dict[str, os.stat_result] = {}
    for rel, entry in vault._walk(folders, lambda path, exc: log.info("skipping %s: %s",
                                                                       path, exc)):
        if seen is not None:
            seen.add(rel)
        if wants(rel):
            try:
                out[rel] = entry.stat()
            except OSError as exc:
                log.info("skipping %s: %s", entry.path, exc)
    return out
