"""The vaults tests run on: a fresh copy of ``sample_vault/`` or notes written from a
dict, and a snapshot of a vault's files to compare. The fixtures that use them are in
``tests/conftest.py``."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

SAMPLE_VAULT = Path(__file__).resolve().parent.parent / "sample_vault"


def copy_sample_vault(dest: Path) -> Path:
    """A copy of ``sample_vault/`` at ``dest``, without any ``.vaultlink/`` state."""
    # new mtimes (shutil.copy): the notes are fresh, inside the first start's backfill window
    shutil.copytree(SAMPLE_VAULT, dest, ignore=shutil.ignore_patterns(".vaultlink"),
                    copy_function=shutil.copy)
    return dest


def write_note(root: Path, rel: str, text: str | bytes) -> Path:
    """Writes ``text`` (UTF-8) or bytes at ``root/rel``, making its folders."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def write_notes(root: Path, notes: Mapping[str, str | bytes]) -> Path:
    """Writes every note of ``notes`` (path in the vault: text) and returns ``root``."""
    for rel, text in notes.items():
        write_note(root, rel, text)
    return root


def vault_with(root: Path, notes: Mapping[str, str | bytes]) -> Path:
    """A vault at ``root``: the folders a default configuration reads (``daily``,
    ``resource``, ``digest``), even empty, and ``notes``."""
    for folder in ("daily", "resource", "digest"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    return write_notes(root, notes)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault but ``.vaultlink/``, by vault path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".vaultlink" not in p.parts}


def node_text(name: str, description: str, body: str) -> str:
    """A digest node: its frontmatter (``name``, ``description``) and ``body``."""
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
