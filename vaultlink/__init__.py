"""vaultlink: a local memory daemon for Obsidian vaults.

It reads the user's ``daily/`` and ``resource/`` notes, extracts memory units, and
writes linked ``digest/<bucket>/<slug>.md`` notes. Everything is reached through the
``vaultlink`` command; the package itself exports its version and the root of its one
exception tree (``vaultlink.errors``). ``docs/architecture.md`` maps the packages.
"""

from vaultlink.errors import VaultlinkError

__version__ = "0.1.0"

__all__ = ["VaultlinkError", "__version__"]
