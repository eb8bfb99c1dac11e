"""What a real-model dream did and wrote, measured from the vault and state.sqlite.

Pure reading: the run's JSON (``vaultlink dream --json``), the journal of that run, the
open failures, and the digest as it is afterwards. The quality measures are the ones a
reader notices (the offline-quality issue's): nodes per source note, generic or
fragment names, bodies that do not start a sentence, broken links, nodes without
sources, and anything outside ``digest/`` that changed.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import STOP_WORDS
from vaultlink.markdown.sections import cited_sources, without_sources
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault, parse_note

GENERIC = frozenset("""note notes standup stand-up decisions decision reading summary log
ideas thoughts today journal update updates misc meeting meetings discussion context
background details learnings preferences observations research todo lunch agenda
attendees retro incident review status overview introduction""".split())


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault but .vaultlink/, by vault path."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".vaultlink" not in p.parts}


def outside_digest_changed(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """Paths outside digest/ that were added, changed or removed."""
    paths = set(before) | set(after)
    return sorted(p for p in paths if not p.startswith("digest/")
                  and before.get(p) != after.get(p))


def generic_name(name: str) -> bool:
    """A node name that says where it came from, not what it is about (or a fragment)."""
    words = re.findall(r"[\w-]+", name.lower())
    if not words:
        return True
    if len(words) == 1 and (words[0] in GENERIC or re.fullmatch(r"[\d-]+", words[0])):
        return True
    return words[-1] in STOP_WORDS  # "Rotation of the", a name cut off


def starts_a_sentence(body: str) -> bool:
    """Whether a body's first line of prose starts like a sentence (capital, digit,
    link or code), not mid-phrase, with a list marker or with punctuation."""
    for line in without_sources(body).split("\n"):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        return bool(re.match(r"(\[\[|`|\*\*|[A-Z0-9\u00C0-\u024F])", text))
    return False


def node_quality(root: Path, touched: list[str]) -> dict[str, Any]:
    """The quality measures over the digest nodes the run created or changed."""
    vault = Vault(root)
    problems = [p for p in check_vault(vault) if p.level == "error"]
    broken = [p for p in problems if "broken link" in p.message]
    sourceless = [p for p in problems if "no source link" in p.message]
    names, fragments, no_source_nodes = [], [], []
    for rel in touched:
        path = root / rel
        if not path.is_file():
            continue
        note = parse_note(rel, path.read_bytes())
        name = str(note.frontmatter.get("name") or "")
        if generic_name(name):
            names.append(f"{rel}: {name!r}")
        _, body, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        if not starts_a_sentence(body):
            fragments.append(rel)
        if not cited_sources(path.read_text(encoding="utf-8")):
            no_source_nodes.append(rel)
    return {"check_errors": len(problems), "broken_links": len(broken),
            "nodes_without_sources": len(sourceless) + len(
                [n for n in no_source_nodes if all(n not in p.path for p in sourceless)]),
            "generic_or_fragment_names": names, "bodies_not_starting_a_sentence": fragments,
            "problems": [str(p) for p in problems[:20]]}


def journal_of(db: Path) -> list[dict[str, Any]]:
    """Every decision of the journal with what the model spent on it."""
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        cols = {r[1] for r in con.execute("PRAGMA table_info(journal)")}
        rows = [dict(r) for r in con.execute("SELECT * FROM journal ORDER BY id")]
    finally:
        con.close()
    for r in rows:
        for key in ("refusals", "calls", "unit"):
            if key in cols and isinstance(r.get(key), str):
                r[key] = json.loads(r[key])
    return rows


def summarise(run: dict[str, Any], journal: list[dict[str, Any]], failures: list[Any],
              wall: float) -> dict[str, Any]:
    """The run's figures: units, decisions by kind, tool-call forms, refusals, spending."""
    decided = [j for j in journal if j["action"] not in ("UNDO",)]
    actions = Counter(j["action"] for j in decided)
    calls: Counter[str] = Counter()
    refusals: Counter[str] = Counter()
    for j in decided:
        calls.update(j.get("calls") or {})
        refusals.update(j.get("refusals") or [])
    extract = run.get("extract", {})
    units = [j for j in decided if j["action"] not in ("FAILED",)]
    per_unit = {
        "model_seconds": _mean([j.get("model_seconds", 0) for j in decided]),
        "prompt_tokens": _mean([j.get("prompt_tokens", 0) for j in decided]),
        "answer_tokens": _mean([j.get("answer_tokens", 0) for j in decided]),
    }
    per_note = {
        "model_seconds": _mean([e["model_seconds"] for e in extract.values()]),
        "prompt_tokens": _mean([e["prompt_tokens"] for e in extract.values()]),
        "answer_tokens": _mean([e["answer_tokens"] for e in extract.values()]),
        "units": _mean([e["units"] for e in extract.values()]),
    }
    return {
        "counts": run.get("counts", {}), "wall_seconds": round(wall, 1),
        "notes_extracted": len(extract), "units_decided": len(decided),
        "integrated": sum(a in ("CREATE", "CORROBORATE", "REFINE", "CORRECT")
                          for a in (j["action"] for j in units)),
        "failed_units": actions.get("FAILED", 0), "skipped": actions.get("SKIP", 0),
        "failed_notes": len(run.get("failed_notes", [])),
        "open_failures": [{"kind": f["kind"], "unit": f["unit"], "parked": f["parked"],
                           "error": f["error"][:200]} for f in failures],
        "decisions": dict(actions), "tool_calls": dict(calls), "refusals": dict(refusals),
        "per_unit": per_unit, "per_note_extract": per_note,
        "integrators": dict(Counter(j.get("integrator", "") for j in decided)),
    }


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 1) if values else 0.0
