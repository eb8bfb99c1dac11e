"""vaultlink: a local memory daemon for Obsidian vaults.

It reads the user's ``daily/`` and ``resource/`` notes, extracts memory units, and
writes linked ``digest/<bucket>/<slug>.md`` notes. The public API is small on purpose:
the error tree, the vault, and the wikilink helpers; everything else is reached
through the ``vaultlink`` command.
"""

from vaultlink.errors import VaultlinkError

__version__ = "0.1.0"

__all__ = ["VaultlinkError", "__version__"]
