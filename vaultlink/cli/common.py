"""What every ``vaultlink`` command shares: the typer app, the common options, and the
one place commands read configuration (``open_vault``)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from vaultlink import __version__
from vaultlink.cli.settings import Settings, load_settings
from vaultlink.daemon.process import VaultLock, recover_after_crash
from vaultlink.errors import ConfigError, VaultBusy
from vaultlink.vault.notes import Vault

app = typer.Typer(
    name="vaultlink",
    help=(
        "A local memory daemon for Obsidian vaults.\n\n"
        "It reads your daily/ and resource/ notes and writes linked digest notes under "
        "digest/<bucket>/<slug>.md, each with a ## Sources section. Your own notes are "
        "never changed.\n\n"
        "Start with:  vaultlink demo    (runs on a copy of the sample vault, no model needed)\n\n"
        "Then, in your vault:  vaultlink init && vaultlink dream"
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

VaultOpt = Annotated[
    Path,
    typer.Option("--vault", envvar="VAULTLINK_VAULT", show_default="current folder",
                 help="The Obsidian vault folder (or set VAULTLINK_VAULT)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def open_vault(vault: Path, overrides: dict[str, Any] | None = None,
               any_folder: bool = False) -> tuple[Vault, Settings]:
    """The vault and its merged settings; the only place commands read configuration.

    A folder with none of ``.obsidian/``, ``.vaultlink/`` and the configured note folders
    is refused (unless ``any_folder``): running in the wrong folder would otherwise build
    an index and state there and report, falsely, that there was nothing to do.
    """
    # As typed: '~' (quoted, or from VAULTLINK_VAULT), '..', a trailing slash. Made
    # absolute without resolving symlinks, so a vault reached through a link keeps its name.
    vault = Path(os.path.abspath(vault.expanduser()))
    if not vault.is_dir():
        raise ConfigError(f"{vault} is not a folder; pass --vault PATH or set VAULTLINK_VAULT")
    settings = load_settings(vault)
    if overrides:
        settings = settings.with_overrides(overrides)
    marks = [".obsidian", ".vaultlink", *(str(settings.get(f"folders.{k}"))
                                          for k in ("daily", "resource", "digest"))]
    if not any_folder and not any((vault / m).is_dir() for m in marks):
        raise ConfigError(
            f"{vault} does not look like a vault: it has none of "
            f"{', '.join(m + '/' for m in marks)}. Pass --vault PATH (or set "
            f"VAULTLINK_VAULT), or run `vaultlink init --vault {vault}` to use it anyway")
    v = Vault(
        vault,
        daily=settings.get("folders.daily"),
        resource=settings.get("folders.resource"),
        digest=settings.get("folders.digest"),
        max_note_bytes=settings.get("vault.max_note_bytes"),
    )
    return v, settings


@contextlib.contextmanager
def vault_writer(v: Vault, command: str, if_daemon: str = "") -> Iterator[None]:
    """Hold the vault's writer lock while ``command`` runs.

    Raises ``VaultBusy`` when another process holds it; ``if_daemon`` is the advice
    shown when that process is the daemon.
    """
    lock = VaultLock(v.state_dir, command)
    try:
        lock.acquire()
    except VaultBusy as busy:
        if busy.holder == "daemon" and if_daemon:
            raise VaultBusy(busy.pid, busy.holder, if_daemon) from None
        raise
    try:
        recover_after_crash(v)
        yield
    finally:
        lock.release()


def emit_json(data: Any) -> None:
    """Print JSON for machines, one document per command."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True,
                                         help="More log output (-vv for debug).")] = 0,
) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if version:
        typer.echo(f"vaultlink {__version__}")
        raise typer.Exit()


LlmOpt = Annotated[str | None, typer.Option(
    "--llm", help="auto | ollama | offline (overrides llm.provider).")]
HostOpt = Annotated[str | None, typer.Option(
    "--ollama-host", help="Ollama URL (overrides llm.host).")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="Ollama model (overrides llm.model).")]


def model_overrides(llm: str | None, host: str | None, model: str | None) -> dict[str, Any]:
    """The model flags of dream and watch, as setting overrides."""
    return {"llm.provider": llm, "llm.host": host, "llm.model": model}
