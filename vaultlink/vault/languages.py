"""The languages a vault's notes are written in, from a small sample.

``vaultlink init`` reads this to choose the embedding model: MiniLM is an English
model, so a vault whose notes are not mostly English gets the multilingual one. Each
note's language is ``markdown.language.language_of``: its script where that decides
it, else py3langid (BSD-3-Clause, a maintained fork of langid.py: a naive Bayes model
of byte n-grams over 97 languages, shipped inside the package), so every Latin-script
language is told apart (counting scripts alone would take German for English).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vaultlink.errors import VaultError
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import SAMPLE_CHARS, language_of
from vaultlink.vault.notes import Vault

log = logging.getLogger(__name__)

SAMPLE_NOTES = 60    # notes read at most, spread evenly over the sorted paths
# Fewer letters than this say too little (a title, a link list): the note abstains.
MIN_LETTERS = 20
# "Mostly English": at least this share of the notes that got a verdict. Below it,
# one note in five or more is in another language, which MiniLM cannot embed.
MOSTLY = 0.8
ENGLISH = "en"

def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of the language ``text`` is written in, or None when it has
    fewer than :data:`MIN_LETTERS` letters (too little to tell)."""
    if sum(1 for c in text[:SAMPLE_CHARS] if c.isalpha()) < MIN_LETTERS:
        return None
    return language_of(text)


def spread(paths: Sequence[str], count: int) -> list[str]:
    """At most ``count`` of ``paths``, evenly spaced (first and last included), so a
    sample sees old and new notes and every folder in the sorted order."""
    if len(paths) <= count:
        return list(paths)
    if count <= 1:
        return list(paths[:count])
    step = (len(paths) - 1) / (count - 1)
    return [paths[round(i * step)] for i in range(count)]


@dataclass(frozen=True)
class LanguageSample:
    """Notes per detected language in a sample; ``read`` notes were read in all
    (those with too little text abstain)."""

    counts: dict[str, int] = field(default_factory=dict)
    read: int = 0

    @property
    def judged(self) -> int:
        """Notes that got a verdict."""
        return sum(self.counts.values())

    @property
    def mostly_english(self) -> bool:
        """At least :data:`MOSTLY` of the judged notes are English; True with none."""
        if not self.judged:
            return True
        return self.counts.get(ENGLISH, 0) >= MOSTLY * self.judged

    def describe(self) -> str:
        """E.g. "zh 12, en 3 (15 of 16 notes)"."""
        if not self.judged:
            return f"no language told ({self.read} notes with text read)"
        langs = ", ".join(f"{k} {v}" for k, v in
                          sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{langs} ({self.judged} of {self.read} notes)"


def sample_languages(vault: Vault, folders: Iterable[str],
                     notes: int = SAMPLE_NOTES) -> LanguageSample:
    """Languages of up to ``notes`` Markdown notes under ``folders`` (front matter left
    out); a note that cannot be read is passed over."""
    paths = [p for p in vault.iter_files(list(folders)) if p.endswith(".md")]
    counts: Counter[str] = Counter()
    read = 0
    for rel in spread(paths, notes):
        try:
            text = vault.read_bytes(rel)[:SAMPLE_CHARS * 4].decode("utf-8", "ignore")
        except VaultError as exc:
            log.info("language sample: passing over %s: %s", rel, exc)
            continue
        read += 1
        language = detect_language(split_frontmatter(text)[1])
        if language is not None:
            counts[language] += 1
    return LanguageSample(dict(counts), read)
