"""The values that flow through the dream pipeline: units, receipts, buckets, slugs.

Pure data and pure functions; no I/O. A unit is what extract found worth remembering;
a receipt is what integrate says it did with it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from vaultlink.vault.actions import Action, decision_of

BUCKETS = ("procedure", "personal", "wiki")
CLASSES = ("same_abstraction", "related", "unrelated")


def normalize_bucket(value: object) -> str:
    """A known bucket, or ``wiki`` for anything else (the origin's rule)."""
    text = str(value or "").strip().lower()
    return text if text in BUCKETS else "wiki"


def slugify(text: str, max_len: int = 60) -> str:
    """Lowercase kebab-case slug in the text's own letters (Obsidian and every file
    system take them: "Übersicht" -> ``übersicht``, "使用 Fetch" -> ``使用-fetch``); never
    empty. Letters, digits and combining marks stay, in NFC; anything else is a hyphen."""
    norm = unicodedata.normalize("NFC", text).lower()
    kept = "".join(ch if unicodedata.category(ch)[0] in "LNM" else "-" for ch in norm)
    slug = re.sub(r"-+", "-", kept).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0] or slug[:max_len]
    return slug.strip("-") or "note"


def is_slug(text: str) -> bool:
    """Whether ``text`` is a slug as :func:`slugify` makes them."""
    return bool(text) and slugify(text, max_len=len(text)) == text


MAX_CONTEXT = 8000  # characters of a note's further prose an offline unit carries


@dataclass
class Unit:
    """One memory unit: a kebab-case handle, its bucket, a grounded summary, its sources.

    ``title``, ``description`` and ``siblings`` are optional: the offline extractor names
    its subject as written ("RRF formula", not ``rrf-formula``), says in one sentence what
    it is about, lists the other subjects it found in the same note (which the
    integrator must not merge it into), and carries the rest of the note's prose as
    ``context`` (what else the note names, for links; never written into a node).
    """

    name: str
    bucket: str
    summary: str
    paths: list[str] = field(default_factory=list)
    title: str = ""
    description: str = ""
    siblings: list[str] = field(default_factory=list)  # other subjects of the same note
    context: str = ""  # the rest of the note's prose: what it names beyond the summary
    corroborates: str = ""  # a repeat of an integrated note: the node it confirms
    repeats: str = ""  # ... and the note it repeats

    def to_dict(self) -> dict[str, Any]:
        """As stored in the journal and pending table (empty optional keys left out)."""
        data = asdict(self)
        for key in ("title", "description", "siblings", "context", "corroborates", "repeats"):
            if not data[key]:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Unit:
        """From a stored or model-given mapping; the bucket is normalised."""
        return cls(slugify(str(data.get("name", ""))), normalize_bucket(data.get("bucket")),
                   str(data.get("summary", "")).strip(),
                   [str(p) for p in data.get("paths", []) if isinstance(p, str)],
                   " ".join(str(data.get("title") or "").split())[:120],
                   " ".join(str(data.get("description") or "").split())[:400],
                   [str(s) for s in data.get("siblings") or [] if isinstance(s, str)][:20],
                   str(data.get("context") or "")[:MAX_CONTEXT],
                   str(data.get("corroborates") or ""), str(data.get("repeats") or ""))


@dataclass
class Receipt:
    """What an integrate session says it did: one action on one digest node."""

    action: Action
    target_path: str
    note: str = ""
    classification: dict[str, str] = field(default_factory=dict)


def parse_receipt(data: Any) -> Receipt | None:
    """A receipt from the model's final answer, or None when it is unusable."""
    if not isinstance(data, dict):
        return None
    action = decision_of(data.get("action", ""))
    target = str(data.get("target_path", "") or data.get("target", "")).strip()
    if action is None or not target:
        return None
    cls = data.get("classification")
    classification = ({str(k): str(v) for k, v in cls.items() if str(v) in CLASSES}
                      if isinstance(cls, dict) else {})
    return Receipt(action, target, str(data.get("note", "")).strip(), classification)


UNIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "units": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "kebab-case handle"},
                    "bucket": {"type": "string", "enum": list(BUCKETS)},
                    "summary": {"type": "string"},
                    "paths": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name", "bucket", "summary", "paths"],
            },
        }
    },
    "required": ["units"],
}
