"""Vault-relative paths: the one form every stored or written path takes (``/``, NFC,
no ``..``), and the file names that are never notes."""

from __future__ import annotations

import re
import unicodedata

from vaultlink.errors import PathRefused

# Editor temp/backup files and sync-tool conflict copies: not the user's notes, and
# reading them would integrate the same material twice.
# Conflict copies carry a date or time, so a note titled "Meeting (conflict
# resolution)" stays a note.
_SKIPPED_FILE = re.compile(
    r"""^(\..*\.tmp|.*~|\.\#.*|.*\.sw[po]|\..*\.swx
        |.*\.sync-conflict-\d{8}-\d{6}-.*                 # Syncthing
        |.*\ \(conflict(?:ed\ copy)?\ [^)]*\d{4}[^)]*\).*  # Obsidian Sync, Nextcloud
        |.*\ \([^)]*conflicted\ copy\ [^)]*\d{4}[^)]*\).*   # Dropbox
        )$""",
    re.VERBOSE | re.IGNORECASE,
)


def is_skipped_name(name: str) -> bool:
    """True for editor temp, backup and sync-conflict file names."""
    return bool(_SKIPPED_FILE.match(name))


_DRIVE = re.compile(r"[A-Za-z]:")


def normalize_rel(raw: str) -> str:
    """Validate and normalise a vault-relative path; raise ``PathRefused`` otherwise.

    Refused: empty, NUL, backslashes, absolute paths (also ``C:`` drives), ``..`` and
    ``.`` segments. The result uses ``/`` and Unicode NFC (macOS hands out NFD names).
    """
    if not isinstance(raw, str) or not raw.strip():
        raise PathRefused(str(raw), "the path is empty")
    if "\x00" in raw:
        raise PathRefused(raw, "the path contains a NUL byte")
    if "\\" in raw:
        raise PathRefused(raw, "use '/' in vault paths, not backslashes")
    if raw.startswith("/") or _DRIVE.match(raw):
        raise PathRefused(raw, "absolute paths are not vault paths; give it relative to the vault")
    parts = raw.split("/")
    if ".." in parts:
        raise PathRefused(raw, "'..' would leave the vault")
    if "" in parts or "." in parts:  # a walk's paths have none: no list built for them
        parts = [p for p in parts if p not in ("", ".")]
    if not parts:
        raise PathRefused(raw, "the path names no file")
    return unicodedata.normalize("NFC", "/".join(parts))
