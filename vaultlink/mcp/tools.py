"""What ``vaultlink mcp`` answers, without the protocol: six read-side tools over one
vault, each answer capped and its note text fenced (``answers.py``).

One writer per vault. Each call asks the running daemon through its API (as
``vaultlink node-search`` does) when the daemon holds the vault; otherwise it takes the
writer lock for that call alone, opens recall here (its embedders loaded once and kept
across calls) and lets go, so a daemon started meanwhile is never kept waiting for long.
Nothing here writes a note; ``integrate_now`` only asks the daemon to queue one.
"""

from __future__ import annotations

import collections.abc
import contextlib
import dataclasses
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from vaultlink.daemon.client import ask_daemon, daemon_status, iso
from vaultlink.daemon.process import lock_holder, writer_or_daemon
from vaultlink.daemon.views import Views, decision, node_sources
from vaultlink.errors import DaemonError, NoteNotFound, VaultlinkError
from vaultlink.index.fusion import above_floor
from vaultlink.markdown.links import LinkResolver
from vaultlink.markdown.sections import sections
from vaultlink.mcp import answers as a
from vaultlink.options import AssistOptions
from vaultlink.pipeline.integrate.review import proposal_view
from vaultlink.vault.actions import DECISIONS, Action
from vaultlink.vault.graph import resolve_note
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

# The journal rows recent() shows: what changed a node (not a note's reading, SKIP).
SHOWN_ACTIONS = frozenset((*DECISIONS, Action.UNDO, Action.REDO, Action.RELINK))
DAEMON_TIMEOUT = 600.0  # a section search after many changed notes embeds them first


class _Standalone:
    """What ``Views`` reads of a daemon, served from the vault and state.sqlite while no
    daemon runs (the API's views, so both ways answer alike)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.generation = 0  # bumped per call: Views re-reads only the notes that changed
        self._state: State | None = None

    @property
    def state(self) -> State:
        if self._state is None:
            raise DaemonError("the state database is not open")
        return self._state

    @property
    def parts(self) -> Any:
        raise DaemonError("no daemon runs on this vault")

    def status(self) -> dict[str, Any]:
        raise DaemonError("no daemon runs on this vault")

    def rerun(self, paths: list[str]) -> list[str]:
        raise DaemonError("no daemon runs on this vault")

    def digest_changed(self, path: str) -> None:
        raise DaemonError("no daemon runs on this vault")

    def backfill(self, body: dict[str, Any]) -> dict[str, Any]:
        raise DaemonError("no daemon runs on this vault")

    def proposals(self, state: Any) -> list[dict[str, Any]]:
        raise DaemonError("no daemon runs on this vault")

    def settle(self, proposal_id: int, verb: str) -> dict[str, Any]:
        raise DaemonError("no daemon runs on this vault")


class Assistant:
    """The six tools as plain methods; each raises ``VaultlinkError`` with plain words."""

    def __init__(self, vault: Vault, options: AssistOptions) -> None:
        self.vault = vault
        self.options = options
        self._embedders: Any = None
        self._served = _Standalone(vault)
        self._views = Views(self._served)
        self._one_at_a_time = threading.Lock()  # one writer lock per process, one call
        self.answer_chars = a.ANSWER_CHARS  # an answer's JSON stays under this

    # -- reaching the vault: through the daemon, or here under the writer lock --------

    @contextlib.contextmanager
    def _local(self, command: str) -> collections.abc.Iterator[bool]:
        """True (the writer lock held) when this process may open the indexes; False
        when the daemon holds the vault and must be asked."""
        with self._one_at_a_time:
            lock = writer_or_daemon(self.vault, command)
            if lock is None:
                yield False
                return
            try:
                yield True
            finally:
                lock.release()

    def _ask(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return ask_daemon(self.vault.state_dir, method, path, body, timeout=DAEMON_TIMEOUT)

    def _hits(self, kind: str, query: str, limit: int) -> list[dict[str, Any]]:
        """Hits as ``GET /search`` gives them, above the relevance floor."""
        if not query.strip():
            raise VaultlinkError("give some words to look for")
        limit = max(1, min(a.MAX_HITS, limit))
        with self._local("mcp") as local:
            if not local:
                found = self._ask("GET", "/search?" + urlencode(
                    {"q": query, "limit": limit, "in": kind}))["hits"]
            else:
                # Imported here: recall (numpy, onnxruntime) is ~0.5 s that starting the
                # server and answering status() or recent() need not pay.
                from vaultlink.index.recall import open_recall, recall_embedders

                if self._embedders is None:
                    self._embedders = recall_embedders(self.options.pipeline)
                indexes = open_recall(self.vault, self.options.pipeline, self._embedders)
                try:
                    index = indexes.nodes if kind == "nodes" else indexes.chunks
                    index.sync(None)
                    hits = (indexes.nodes.node_search(query, limit) if kind == "nodes"
                            else indexes.chunks.search(query, limit))
                finally:
                    indexes.close()
                found = [dataclasses.asdict(h) for h in hits]
        return above_floor(found, self.options.min_similarity)

    # -- the tools ------------------------------------------------------------------

    def node_search(self, query: str, limit: int = 8) -> a.NodeSearchAnswer:
        """Digest nodes by meaning, words and name, each with its sources."""
        fence = a.Fence()
        resolver = LinkResolver(self.vault.iter_files())
        hits: list[a.NodeHit] = []
        for h in self._hits("nodes", query, limit):
            description, _ = a.cut(str(h.get("description") or ""), a.DESCRIPTION_CHARS)
            hits.append({"path": h["path"], "link": a.link(h["path"]), "name": h["name"],
                         "description": fence(description), "score": round(h["score"], 4),
                         "similarity": round(h["similarity"], 3),
                         "sources": self._sources(h["path"], resolver, fence)})
        answer: a.NodeSearchAnswer = {"query": query, "hits": hits, "cut": False, "note": ""}
        dropped = a.fit(answer, hits, self.answer_chars)
        answer["cut"] = dropped > 0
        answer["note"] = (f"{dropped} more hit(s) left out to fit; ask with a lower limit"
                          if dropped else "" if hits else
                          "no digest node matches; try search() over all notes")
        return answer

    def _sources(self, rel: str, resolver: LinkResolver, fence: a.Fence) -> list[a.SourceRef]:
        try:
            body = self.vault.read_note(rel).body
        except VaultlinkError:  # gone or unreadable since it was indexed: no sources
            return []
        return [{"path": s["path"], "link": a.link(s["path"]), "sentence": fence(s["sentence"])}
                for s in node_sources(body, rel, resolver)[:a.LIST_ITEMS]]

    def search(self, query: str, limit: int = 5) -> a.SearchAnswer:
        """Sections of all notes, with the notes each links to and is linked from."""
        fence = a.Fence()
        hits: list[a.SectionHit] = []
        cut_texts = 0
        for h in self._hits("sections", query, limit):
            text, left = a.cut(h["text"], a.SECTION_CHARS)
            cut_texts += left > 0
            hits.append({"path": h["path"], "link": a.link(h["path"]), "line": h["line"],
                         "heading": h["breadcrumb"], "text": fence(text),
                         "score": round(h["score"], 4),
                         "links_to": [r["path"] for r in h["outlinks"][:a.LIST_ITEMS]],
                         "linked_from": [r["path"] for r in h["inlinks"][:a.LIST_ITEMS]]})
        answer: a.SearchAnswer = {"query": query, "hits": hits, "cut": False, "note": ""}
        dropped = a.fit(answer, hits, self.answer_chars)
        answer["cut"] = bool(dropped or cut_texts)
        notes = []
        if cut_texts:
            notes.append(f"{cut_texts} section text(s) cut at {a.SECTION_CHARS} characters; "
                         "read(path, section) gives one whole")
        if dropped:
            notes.append(f"{dropped} more hit(s) left out to fit; ask with a lower limit")
        if not hits:
            notes.append("nothing found")
        answer["note"] = "; ".join(notes)
        return answer

    def note_path(self, given: str) -> str:
        """The vault path meant by a path or a name; PathRefused for one outside the
        vault (``..``, an absolute path elsewhere, a symlink leading out)."""
        text = given.strip()
        if not text:
            raise VaultlinkError("give a vault path (digest/wiki/x.md) or a note's name")
        if "/" in text and not Path(text).is_absolute() and not text.startswith("[["):
            rel = self.vault.rel(text)  # refuses '..' and the like, with the reason
            for candidate in (rel, rel + ".md"):
                if self.vault.abs(candidate).is_file():
                    return self.vault.readable(candidate)
        return self.vault.readable(resolve_note(self.vault, text))

    def read(self, path_or_name: str, section: str = "") -> a.ReadAnswer:
        """A note's text (or one section of it); a digest node's sources resolved."""
        rel = self.note_path(path_or_name)
        note = self.vault.read_note(rel)
        meta = self._note_meta(rel)
        fence = a.Fence()
        heads = sections(note.body)
        lines = note.body.split("\n")
        text = note.body
        if section.strip():
            wanted = section.strip().lstrip("#").strip().lower()
            match = next((s for s in heads if s.title.strip().lower() == wanted), None)
            if match is None:
                raise VaultlinkError(f"{rel} has no section {section!r}; its sections: "
                                     + "; ".join(s.title for s in heads[:30]))
            text = "\n".join(lines[match.start:match.end])
        body, left = a.cut(text, a.READ_CHARS)
        answer: a.ReadAnswer = {
            "path": rel, "link": a.link(rel), "kind": meta.get("kind", "other"),
            "name": note.name, "description": fence(note.description),
            "section": section.strip(), "text": fence(body),
            "sections": [s.title for s in heads][:40],
            "sources": [{"path": s["path"], "link": a.link(s["path"]),
                         "sentence": fence(s["sentence"])}
                        for s in meta.get("sources", [])[:a.LIST_ITEMS * 3]],
            "related": [r["path"] for r in meta.get("related", [])[:a.LIST_ITEMS]],
            "backlinks": [r["path"] for r in meta.get("backlinks", [])[:a.LIST_ITEMS]],
            "cut": left > 0, "note": ""}
        if left:
            answer["note"] = (f"text cut: {left} more character(s); read(path, section) "
                              "with one of `sections` gives that part whole")
        return answer

    def _note_meta(self, rel: str) -> dict[str, Any]:
        """``GET /note``: from the daemon, or the same view read here."""
        with self._local("mcp") as local:
            if not local:
                meta: dict[str, Any] = self._ask("GET", "/note?" + urlencode({"path": rel}))
                return meta
            view: dict[str, Any] = self._standalone(lambda: self._views.note(rel))
            return view

    def _standalone(self, read: collections.abc.Callable[[], Any]) -> Any:
        self._served.generation += 1
        # made if missing (under .vaultlink/, with the writer lock held): an empty journal
        self._served._state = State(self.vault.state_dir / "state.sqlite")
        try:
            return read()
        finally:
            self._served._state.close()
            self._served._state = None

    def recent(self, days: int = 7, limit: int = 10) -> a.RecentAnswer:
        """Decisions of the journal in the last ``days``, newest first."""
        days, limit = max(1, min(365, days)), max(1, min(50, limit))
        since = iso(time.time() - days * 86400) or ""
        with self._local("mcp") as local:
            if not local:
                rows = self._ask("GET", "/decisions?limit=500")["decisions"]
            else:
                rows = self._standalone(
                    lambda: [decision(e) for e in self._served.state.journal(500)])
        rows = [r for r in rows if r["action"] in SHOWN_ACTIONS and r["at"] >= since]
        fence = a.Fence()
        shown: list[a.Decision] = []
        for r in rows[:limit]:
            diff, _ = a.cut(r.get("diff") or "", a.DIFF_CHARS)
            shown.append({"id": r["id"], "at": r["at"], "action": r["action"],
                          "target": r["target"], "link": a.link(r["target"]),
                          "sources": list(r.get("unit", {}).get("paths", []))[:a.LIST_ITEMS],
                          "note": fence(r.get("note") or ""), "diff": fence(diff),
                          "undone": bool(r.get("undone")),
                          "integrator": r.get("integrator") or ""})
        answer: a.RecentAnswer = {"days": days, "decisions": shown, "cut": False, "note": ""}
        dropped = a.fit(answer, shown, self.answer_chars) + max(0, len(rows) - limit)
        answer["cut"] = dropped > 0
        answer["note"] = (f"{dropped} more decision(s) in these {days} day(s); "
                          "`vaultlink log` lists them all" if dropped
                          else "" if shown else f"no decision in the last {days} day(s)")
        return answer

    def status(self) -> a.StatusAnswer:
        """The daemon's state, or the saved one: queue, failures, parked and unread notes."""
        data = daemon_status(self.vault.state_dir)
        problems: list[a.Problem] = []
        for f in data.get("failed") or []:
            problems.append({"kind": f"failed {f.get('kind') or 'unit'}",
                             "paths": list(f["paths"]), "reason": f["error"],
                             "parked": bool(f.get("parked"))})
        for u in data.get("unreadable") or []:
            problems.append({"kind": "unreadable", "paths": [u["path"]], "reason": u["reason"],
                             "parked": False})
        for b in data.get("barren") or []:
            problems.append({"kind": "nothing kept", "paths": [b["path"]],
                             "reason": ", ".join(b["reasons"]), "parked": False})
        last = data.get("last_run")
        last_words = (f"run #{last['id']} finished {last['finished_at']}: " + ", ".join(
            f"{k} {v}" for k, v in last["counts"].items()) if last else "no run yet")
        total = len(problems)
        answer: a.StatusAnswer = {
            "running": bool(data.get("running")),
            "state": data.get("state") or data.get("reason") or "",
            "queue_length": int(data.get("queue_length", 0)),
            "queue": [f"{q['path']} ({q['state']})" for q in data.get("queue", [])][:a.LIST_ITEMS],
            "problems": problems[:a.LIST_ITEMS * 2],
            "backlog_waiting": int((data.get("backlog") or {}).get("waiting", 0)),
            "proposals_waiting": int(data.get("proposals") or 0),
            "proposals": self._proposals() if data.get("proposals") else [],
            "last_run": last_words, "cut": False, "note": ""}
        dropped = total - len(answer["problems"])
        dropped += max(0, answer["proposals_waiting"] - len(answer["proposals"]))
        dropped += a.fit(answer, answer["proposals"], self.answer_chars)
        dropped += a.fit(answer, answer["problems"], self.answer_chars)
        answer["cut"] = dropped > 0 or answer["queue_length"] > len(answer["queue"])
        if answer["cut"]:
            answer["note"] = "lists cut; `vaultlink status` shows them all"
        return answer

    def _proposals(self) -> list[a.Proposal]:
        """The proposals waiting for review, newest first, read from state.sqlite (a
        read needs no writer lock); settling them is the owner's: `vaultlink review`."""
        state = State(self.vault.state_dir / "state.sqlite")
        try:
            views = [proposal_view(p, self.vault) for p in state.proposals(limit=a.LIST_ITEMS)]
        finally:
            state.close()
        fence = a.Fence()
        shown: list[a.Proposal] = []
        for p in views:
            diff, _ = a.cut(p["diff"], a.DIFF_CHARS)
            summary, _ = a.cut(p["unit"]["summary"], a.DIFF_CHARS)
            shown.append({"id": p["id"], "at": p["at"] or "", "action": p["action"],
                          "target": p["target"], "link": a.link(p["target"]),
                          "sources": p["unit"]["paths"][:a.LIST_ITEMS], "held": p["reason"],
                          "why": fence(p["why"]), "summary": fence(summary),
                          "diff": fence(diff), "stale": bool(p["stale"])})
        return shown

    def integrate_now(self, path: str) -> a.IntegrateAnswer:
        """Ask the running daemon to take a daily/ or resource/ note now."""
        rel = self.note_path(path)
        holder = lock_holder(self.vault.state_dir)
        if holder is None or holder["holder"] != "daemon":
            raise DaemonError("integrate_now needs the daemon, and none runs on this vault: "
                              "start `vaultlink watch`, or run `vaultlink dream` once")
        if not self.vault.exists(rel):
            raise NoteNotFound(rel)
        queued = list(self._ask("POST", "/rerun", {"path": rel})["queued"])
        return {"queued": queued,
                "note": "queued, ready now; status() shows it, recent() its decisions once done"}
