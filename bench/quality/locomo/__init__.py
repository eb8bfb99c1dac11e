"""LoCoMo (snap-research/locomo) as day notes: session-level recall of ``vaultlink search``."""
