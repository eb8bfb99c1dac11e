"""``python -m vaultlink``: the same as the ``vaultlink`` command."""

from vaultlink.cli import main

main()
