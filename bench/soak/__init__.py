"""The soak bench: a week of notes beside ``vaultlink watch`` with a real local model."""
