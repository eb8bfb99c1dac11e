"""Recall: embedders, the stores (SQLite FTS5 and the vectors, in state.sqlite or on a
Chroma server), rank fusion, the digest node index and the section index.
"""
