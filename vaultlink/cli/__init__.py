"""The ``vaultlink`` command: one typer app, one error handler, one line per error.

Every command takes ``--vault PATH`` (default ``$VAULTLINK_VAULT``, else the current
folder). Commands that print results take ``--json``. Errors from the vaultlink tree
print ``vaultlink: <message>`` on stderr and exit non-zero, never with a traceback.
Commands live in one module per concern; importing them registers them on ``app``.
"""

from __future__ import annotations

import os
import sys

import typer

from vaultlink.cli import mcp, notes, pipeline, recall, review, service  # noqa: F401  (registers commands)
from vaultlink.cli.common import app
from vaultlink.errors import VaultlinkError
from vaultlink.vault.faults import arm_from_env

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``vaultlink`` script and ``python -m vaultlink``."""
    try:
        # test-only fault seams, armed only here (vault/faults.py); unset: a no-op
        arm_from_env(os.environ)
    except ValueError as exc:
        typer.echo(f"vaultlink: {exc}", err=True)
        sys.exit(2)
    try:
        app()
    except VaultlinkError as exc:
        typer.echo(f"vaultlink: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        # Writes are atomic and the journal commits per decision: nothing is half done.
        typer.echo("vaultlink: interrupted; what was done is recorded, and the rest waits "
                   "for the next run", err=True)
        sys.exit(130)
