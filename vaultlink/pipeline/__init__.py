"""The auto_dream pipeline: extract -> integrate (auto_link) -> topics -> finish.

``pipeline.run_dream`` runs it; ``context`` holds what the steps share. Nothing is
re-exported here, so importing one module of the package (``history`` for ``vaultlink
log``) does not load the whole pipeline.
"""
