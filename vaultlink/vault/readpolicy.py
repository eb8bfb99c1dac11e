"""The one read policy: what vaultlink reads on someone else's behalf.

The model's tools, the MCP server and the status API read notes for callers that are
not the owner (a model steered by a clipped page, an assistant, another local process).
They read only the vault's Markdown notes in the folders vaultlink reads or writes
(``daily/``, ``resource/``, ``digest/``): never a dot-file or dot-folder (``.vaultlink/``
holds the API token, ``.obsidian/`` other plugins' keys, ``.git/`` remote credentials),
never a note elsewhere in the vault, never what a symlink resolves to outside those
folders. The walker applies the same rule to symlinked files, so nothing it lists can
lead a reader out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vaultlink.errors import PathRefused


def is_hidden(rel: str) -> bool:
    """True when any part of a vault path is a dot-name (``.vaultlink``, ``.git``...)."""
    return any(part.startswith(".") for part in rel.split("/"))


@dataclass(frozen=True)
class ReadPolicy:
    """The rule for one vault: its root, its real (resolved) root, the read folders."""

    root: Path
    real_root: Path
    folders: Sequence[str]

    def check_target(self, rel: str) -> None:
        """Raise ``PathRefused`` unless ``rel`` resolves inside the vault to no dot-path,
        and, for a path in a read folder, inside a read folder as it resolves."""
        try:
            real = (self.root / rel).resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before 3.13)
            raise PathRefused(rel, "it is a symlink loop or cannot be resolved") from None
        if real != self.real_root and self.real_root not in real.parents:
            raise PathRefused(rel, "it is a symlink whose target is outside the vault")
        if is_hidden(real.relative_to(self.real_root).as_posix()):
            raise PathRefused(rel, "it is a symlink to a hidden file of the vault")
        if rel.split("/", 1)[0] in self.folders and not any(
                Path(os.path.realpath(self.root / f)) in real.parents for f in self.folders):
            raise PathRefused(rel, "it is a symlink whose target is outside "
                                   + ", ".join(f"{f}/" for f in self.folders))

    def readable(self, rel: str) -> str:
        """``rel`` if a caller may read it; else ``PathRefused`` saying why.

        ``rel`` is a vault path already normalised (``normalize_rel``).
        """
        if is_hidden(rel):
            raise PathRefused(rel, "dot-files and dot-folders (.vaultlink, .obsidian, .git) "
                                   "are never read for a caller")
        if rel.split("/", 1)[0] not in self.folders or "/" not in rel:
            raise PathRefused(rel, "only notes in " + ", ".join(f"{f}/" for f in self.folders)
                                   + " are read for a caller")
        if not rel.endswith(".md"):
            raise PathRefused(rel, "only Markdown notes (.md) are read for a caller")
        self.check_target(rel)
        return rel
