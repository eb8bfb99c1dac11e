"""Recall: embedders, the stores (SQLite FTS5 + Chroma), rank fusion, the digest node index
and the section index.
"""
