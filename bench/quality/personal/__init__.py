"""A bench of personal Obsidian vaults as their owners keep them (issue 37, item 8)."""
