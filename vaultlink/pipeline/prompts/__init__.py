"""The prompts the dream sends, one Markdown file each, shipped with the package."""

from importlib import resources


def prompt(name: str) -> str:
    """The text of ``vaultlink/pipeline/prompts/<name>.md``."""
    return (resources.files(__name__) / f"{name}.md").read_text("utf-8")
