"""The daemon: watching the vault, the settle queue, the lock and process files, the status
API and the client the CLI uses to reach it.
"""
