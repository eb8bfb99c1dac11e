"""The vault on disk: sandboxed paths, reading notes, atomic compare-and-swap writes, the
link graph and ``check``, and ``state.sqlite``.
"""
