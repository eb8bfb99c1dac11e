"""vaultlink's benchmarks, a project of their own (bench/pyproject.toml): see bench/README.md."""
