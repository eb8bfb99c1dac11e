"""What the crash tests and ``bench/crash_loop.py`` share: a vault that keeps getting
new notes, a scripted model for the fake Ollama server, and the invariants a kill must
never break.

Two checks. :func:`whole` right after a SIGKILL, before anything recovers: every digest
file parses, and every node that existed is either at its name or set aside whole
beside it (``.vaultlink.old``, put back by the next writer). :func:`settled` after a clean
run: ``vaultlink check`` finds no error, nothing is in flight, the journal matches the
files, no unit made two nodes, and every source note is checkpointed at its current
text with each of its units decided.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from tests.fakes.ollama_server import reply
from tests.fakes.sample_vault_model import (
    is_decision_request,
    is_topics_request,
    oneshot_unit,
    topics_by_bucket,
    unit_of,
)
from vaultlink.errors import NoteUnreadable
from vaultlink.pipeline.extract.step import source_note
from vaultlink.pipeline.offline import OfflineExtractor
from vaultlink.prose.units import slugify
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault, parse_note
from vaultlink.vault.state import State

BASE_NODE = "digest/procedure/search-index-rebuild.md"
BASE_NODE_TEXT = """---
name: Search index rebuild
description: How the search index is rebuilt when it falls behind; use during an outage.
---
Rebuild the search index by draining the queue first, then compacting the index.

## Sources

- The procedure was agreed in [[daily/2026-07-01.md]], after the outage.
"""
BASE_DAY = """## Index rebuild

We rebuild the search index every night, because the index grew past 300 MB and slowed
the query path. The owner is team A, who reviews the index numbers again next week.
"""
_WORK = re.compile(r"^\.(?P<name>.+)\.\d+-[0-9a-f]+\.vaultlink\.(?P<kind>tmp|old)$")


def make_vault(root: Path) -> Path:
    """A small vault: one day note and one digest node it feeds. Review is off: these
    chains check that every note ends integrated, and a held decision waits for its
    owner by design (its note is not checkpointed; ``tests/test_review.py``)."""
    (root / "daily").mkdir(parents=True)
    (root / "digest/procedure").mkdir(parents=True)
    (root / ".vaultlink").mkdir()
    (root / ".vaultlink/config.yaml").write_text("review:\n  mode: 'off'\n")
    (root / "daily/2026-07-01.md").write_text(BASE_DAY)
    (root / BASE_NODE).write_text(BASE_NODE_TEXT)
    return root


def add_note(root: Path, n: int) -> str:
    """A new note of the same day (so its topics page is updated in place) with two
    sections: one new subject, one that refines the search index node."""
    path = f"daily/2026-07-01/part-{n:03d}.md"
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(
        f"## Cache plan {n}\n\nWe decided to rotate the cache every {10 + n} minutes, "
        f"because the cache grew past {100 + n} MB and slowed the search path for everyone. "
        "Team B owns the cache and will review the numbers again next week.\n\n"
        f"## Index rebuild detail {n}\n\nThe search index rebuild now drains the queue and "
        f"compacts the index in {n + 2} steps, because the old rebuild left the index "
        "behind for hours. Team A checks the rebuild numbers after every outage.\n")
    return path


class CrashModel:
    """A small competent model: one unit per new section; a section about the index
    refines the index node, any other creates its own node; a unit already written
    (a retry after a kill) is answered with a receipt and no write."""

    def __call__(self, request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            return topics_by_bucket(request)
        if is_decision_request(request):
            return self.decide(request["messages"], offered_targets(request["format"]))
        if request.get("format"):
            return self.extract(request["messages"][-1]["content"])
        return self.integrate(request["messages"])

    @staticmethod
    def extract(text: str) -> Any:
        # The extractor sends one note: "Note <path>" and its new sections, each under
        # its own heading. A unit named after its heading would be renamed by the
        # extractor (headings are where, not what): the name adds "-decision".
        path = re.match(r"Note (\S+)", text)
        units = [{"name": unit_name(title), "bucket": "wiki",
                  "summary": f"{title}: what the note decided and why."}
                 for title in re.findall(r"^#+ (.*)$", text, flags=re.MULTILINE)]
        assert path is not None, text[:200]
        return reply(json.dumps({"units": units}))

    @staticmethod
    def decide(messages: list[dict[str, Any]], targets: set[str]) -> Any:
        """The one-shot decision (a retry's other mode): refine the index node, else
        create the unit's node, or corroborate it when a killed run already wrote it.
        Only an offered target is named, as from a server that holds the answer to the
        schema: once many "Cache plan N" nodes sit closer to an "Index rebuild detail N"
        unit than the index node does, the index node is not offered and the unit gets
        a node of its own."""
        name = oneshot_unit(messages)
        own = f"digest/wiki/{name}.md"
        if name.startswith("index-rebuild") and BASE_NODE in targets:
            decision = {"target": BASE_NODE, "action": "REFINE"}
        elif own in targets:
            decision = {"target": own, "action": "CORROBORATE"}
        else:
            decision = {"target": "", "action": "CREATE"}
        return reply(json.dumps({**decision, "old": "", "links": []}))

    @staticmethod
    def integrate(messages: list[dict[str, Any]]) -> Any:
        unit = unit_of(messages)
        source = unit["paths"][0]
        refine = unit["name"].startswith("index-rebuild")
        target = BASE_NODE if refine else f"digest/wiki/{unit['name']}.md"
        answers = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        if not answers:
            return reply(tool_calls=[("read", {"path": target})])
        last = answers[-1]
        if "text" in last:  # the node exists
            if f"[[{source}]]" in last["text"]:
                return reply(json.dumps({"action": "CORROBORATE", "target_path": target,
                                         "note": "already there"}))
            return reply(tool_calls=[("edit", {
                "path": target, "old": "## Sources\n",
                "new": f"## Sources\n\n- More detail came in [[{source}]], for the "
                       f"{unit['name']} step.\n"})])
        if "error" in last and len(answers) == 1:
            body = (f"{unit['summary']}\n\n## Sources\n\n- This was decided in "
                    f"[[{source}]], as the note says.\n")
            return reply(tool_calls=[("write", {"path": target, "name": unit["name"],
                                                "description": unit["summary"],
                                                "content": body})])
        action = "CREATE" if last.get("created") else "REFINE"
        return reply(json.dumps({"action": action, "target_path": target, "note": "done"}))


def offered_targets(schema: dict[str, Any]) -> set[str]:
    """The node paths a one-shot decision's schema lets ``target`` name."""
    return {t for choice in [schema, *schema.get("anyOf", [])]
            for t in choice.get("properties", {}).get("target", {}).get("enum", []) if t}


def nodes(root: Path) -> dict[str, bytes]:
    """Every digest note's bytes, by vault path."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in (root / "digest").rglob("*.md") if not p.name.startswith(".")}


def stable_nodes(root: Path) -> dict[str, bytes]:
    """The nodes a next run must keep: all but those a killed run created without
    journaling them (its recovery rolls those back, by design)."""
    found = nodes(root)
    db = root / ".vaultlink/state.sqlite"
    if not db.exists():
        return found
    state = State(db)
    try:
        created = {i.path for i in state.intents() if i.before_text is None}
    finally:
        state.close()
    return {p: d for p, d in found.items() if p not in created}


def whole(root: Path, before: dict[str, bytes]) -> list[str]:
    """Right after a kill: no torn file, no node lost (at its name or set aside whole)."""
    problems = []
    now = nodes(root)
    aside: dict[str, list[bytes]] = {}
    for p in (root / "digest").rglob(".*.vaultlink.*"):
        m = _WORK.match(p.name)
        if m and m["kind"] == "old":
            rel = (p.parent / m["name"]).relative_to(root).as_posix()
            aside.setdefault(rel, []).append(p.read_bytes())
    for path, data in now.items():
        try:
            parse_note(path, data)
        except NoteUnreadable as exc:
            problems.append(f"{path} is torn: {exc}")
    for path in before:
        if path not in now and path not in aside:
            problems.append(f"{path} is gone and not set aside")
    return problems


def settled(root: Path, provider: str, initial: dict[str, str] | None = None) -> list[str]:
    """After a clean run: every promise, see the module docstring. ``initial``: the
    nodes the vault had before vaultlink wrote, with their text (default: the base
    node); nobody else edits the digest meanwhile, so every row must start from what
    the row before it (or the initial text) left."""
    initial = {BASE_NODE: BASE_NODE_TEXT} if initial is None else initial
    vault = Vault(root)
    problems = [str(p) for p in check_vault(vault) if p.level == "error"]
    problems += [f"work file left: {p}" for p in (root / "digest").rglob(".*.vaultlink.*")]
    state = State(root / ".vaultlink/state.sqlite")
    try:
        journal = sorted(state.journal(limit=1_000_000), key=lambda e: e.id)
        checkpoints, intents = state.checkpoints(), state.intents()
    finally:
        state.close()
    problems += [f"write still in flight: {i.path}" for i in intents]
    files = nodes(root)
    last: dict[str, str | None] = {}
    for e in journal:
        if e.changes_file and "/topics/" not in e.target:
            if e.before_text != last.get(e.target, initial.get(e.target)):
                problems.append(f"#{e.id} {e.action} {e.target} does not start from the "
                                "text the journal left there: a write went unrecorded")
            last[e.target] = e.after_text
    problems += [f"{p}: a node no journal row wrote" for p in files
                 if p not in last and p not in initial and "/topics/" not in p]
    for path, text in last.items():
        if "/topics/" not in path and (files.get(path, b"").decode() if path in files
                                       else None) != text:
            problems.append(f"{path}: the journal's last row does not match the file")
    creates = Counter((e.unit.get("name"), tuple(e.unit.get("paths", [])))
                      for e in journal if e.action == "CREATE" and e.undone_by is None)
    problems += [f"unit {u} created {c} nodes" for u, c in creates.items() if c > 1]
    bodies = Counter(" ".join(parse_note(p, d).body.split()) for p, d in files.items()
                     if "/topics/" not in p)
    problems += [f"{c} nodes hold the same text" for b, c in bodies.items() if c > 1]
    for info in vault.scan([vault.daily, vault.resource]):
        cp = checkpoints.get(info.path)
        if cp is None or cp.hash != info.hash:
            problems.append(f"{info.path} is not checkpointed at its text")
            continue
        decided = {str(e.unit.get("name")) for e in journal
                   if info.path in e.unit.get("paths", [])}
        missing = expected_units(vault, info.path, provider) - decided
        if missing:
            problems.append(f"{info.path}: unit(s) {sorted(missing)} never decided")
    return problems


def expected_units(vault: Vault, path: str, provider: str) -> set[str]:
    """The names of the units a note gives (it is written once, so all of them)."""
    src, _ = source_note(vault.read_note(path), frozenset())
    if provider == "offline":
        return {u.name for u in OfflineExtractor().extract_note(src)}
    return {unit_name(crumb.split(" > ")[-1]) for crumb, _, _ in src.sections
            if crumb.split(" > ")[-1] != src.title}


def unit_name(heading: str) -> str:
    """The name ``CrashModel`` gives the unit of a section."""
    return f"{slugify(heading)}-decision"
