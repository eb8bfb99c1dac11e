"""Markdown as text: wikilinks and how Obsidian resolves them, sections, frontmatter. Pure
functions; imports nothing of vaultlink but ``errors``.
"""
