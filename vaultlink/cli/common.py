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
from vaultlink.daemon.process import VaultLock
from vaultlink.errors import ConfigError, VaultBusy, VaultlinkError
from vaultlink.markdown.links import LinkResolver, parse_link_body
from vaultlink.vault.atomic import recover_work_files
from vaultlink.vault.notes import STATE_DIR, Vault

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


def writer_or_daemon(v: Vault, command: str) -> VaultLock | None:
    """The writer lock for ``command``, or None when the running daemon holds it: then
    the command asks the daemon (``daemon.client.ask_daemon``) instead of opening the index.
    Raises ``VaultBusy`` when another command holds it."""
    lock = VaultLock(v.state_dir, command)
    try:
        lock.acquire()
    except VaultBusy as busy:
        if busy.holder != "daemon":
            raise
        return None
    try:
        recover_after_crash(v)
    except BaseException:
        lock.release()
        raise
    return lock


def recover_after_crash(v: Vault) -> None:
    """What every writer does first: finish what a killed process left behind (work
    files of an atomic write, and writes it never journaled: ``upkeep.recover``)."""
    # the journal, undo and its rollback: ~40 ms that --help need not pay
    from vaultlink.dream.upkeep import recover
    from vaultlink.vault.state import State

    recover_work_files(v.root, [v.digest, STATE_DIR])
    if not (v.state_dir / "state.sqlite").exists():
        return
    state = State(v.state_dir / "state.sqlite")
    try:
        recover(v, state)
    finally:
        state.close()


def note_argument(v: Vault, given: str, gone_ok: bool = False,
                  resolver: LinkResolver | None = None) -> str:
    """The vault path a user means by a note argument: a vault path, an absolute path
    inside the vault, or a name as written in a link (``hybrid-search``,
    ``[[hybrid-search|alias]]``), resolved the way Obsidian resolves links. With
    ``gone_ok``, a vault path that no longer exists is taken as given (the journal
    remembers deleted notes). ``resolver``: one already built over the vault's files."""
    text = given.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = parse_link_body(text[2:-2])[0]
    elif Path(text).is_absolute():
        inside = _vault_path_of(v, Path(text))
        if inside is None and Path(text).exists():
            raise VaultlinkError(f"{given} is not inside the vault {v.root}")
        text = inside or text.lstrip("/")  # else a vault-root path, as in [[/daily/x]]
    res = (resolver or LinkResolver(v.iter_files())).resolve(text)
    if res.path is not None:
        return res.path
    if gone_ok and "/" in text:
        return v.rel(text if text.endswith(".md") else text + ".md")
    raise VaultlinkError(f"{given}: {res.reason}")


def _vault_path_of(v: Vault, path: Path) -> str | None:
    """The vault path of an absolute path inside the vault, also through a symlinked root."""
    try:
        return v.relative_of(path)
    except ValueError:
        pass
    try:
        return path.resolve().relative_to(v.root.resolve()).as_posix()
    except ValueError:
        return None


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
