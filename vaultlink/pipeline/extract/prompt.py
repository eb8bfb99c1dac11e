"""What the model extractor asks: its instructions with a worked example in the note's
language, the schema its answer must fit, and the repair turn.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from vaultlink.markdown.language import language_of
from vaultlink.pipeline.prompts import prompt
from vaultlink.prose.units import BUCKETS

MAX_UNITS = 3  # per note and call: few, rich units
EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "units": {
            "type": "array",
            "maxItems": MAX_UNITS,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "bucket": {"type": "string", "enum": list(BUCKETS)},
                    "summary": {"type": "string"},
                },
                "required": ["name", "bucket", "summary"],
            },
        }
    },
    "required": ["units"],
}
REPAIR = ('That was not the JSON asked for. Answer again with JSON only: '
          '{"units": [{"name": "...", "bucket": "...", "summary": "..."}]}')
LANGUAGE_NAMES = {"de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
                  "pt": "Portuguese", "nl": "Dutch", "ru": "Russian", "zh": "Chinese",
                  "ja": "Japanese", "ko": "Korean"}


def extract_prompt(language: str) -> str:
    """The extract instructions with their worked example in ``language`` (English for a
    language without one): small models follow the example's language over the note's
    (docs/quality.md, "The measurements behind the model extractor's guards")."""
    return prompt("extract").replace("{example}", example_of(language))


def example_of(language: str) -> str:
    """The worked example of the extract prompt in ``language`` (else English)."""
    examples = resources.files("vaultlink.pipeline.prompts") / "examples"
    example = examples / f"extract.{language}.md"
    if not example.is_file():
        example = examples / "extract.en.md"
    return example.read_text("utf-8").strip()


def language_hint(text: str) -> str:
    """A closing line asking for units in the note's language ('' for English): small
    models answer in English unless told, even for a Chinese note."""
    name = LANGUAGE_NAMES.get(language_of(text))
    return f"\n\n(The note is in {name}: write the units in {name}.)" if name else ""
