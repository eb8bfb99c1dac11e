"""What the status API answers: the views behind each route of ``docs/status-api.md``.

``api.py`` owns the transport (bind, token, parsing); this module turns a request's
parameters into a JSON-ready answer from the daemon's vault, state and indexes, and
raises ``ApiError`` with plain words for anything the client got wrong.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from vaultlink.daemon.client import iso
from vaultlink.daemon.indexes import SectionsSynced
from vaultlink.errors import NoteNotFound, StateError, UndoNeedsCascade
from vaultlink.markdown.frontmatter import split_frontmatter, text_value
from vaultlink.markdown.links import LinkResolver, find_wikilinks
from vaultlink.markdown.sections import find_sources_section
from vaultlink.pipeline import history
from vaultlink.pipeline.stored import stored_paths
from vaultlink.vault.actions import DECISIONS
from vaultlink.vault.graph import LinkGraph, ParseCache, build_graph
from vaultlink.vault.notes import DESCRIPTION_CHARS, NAME_CHARS, Vault
from vaultlink.vault.proposals import ProposalState
from vaultlink.vault.readpolicy import is_hidden
from vaultlink.vault.state import JournalEntry, State

if TYPE_CHECKING:  # a type only: the API never opens parts itself
    from vaultlink.pipeline.compose import Parts

SEARCH_KINDS = ("nodes", "sections")


class SourceState(StrEnum):
    """Where a source note stands (``GET /notes/...``'s ``state``)."""

    SETTLING = "settling"  # queued, still changing
    QUEUED = "queued"
    FAILED = "failed"  # a unit of it, or its reading, failed
    INTEGRATED = "integrated"  # checkpointed
    UNSEEN = "unseen"


class ServedDaemon(Protocol):
    """What the API reads of the daemon it serves (``service.Daemon``)."""

    generation: int

    @property
    def vault(self) -> Vault:
        """The vault served (the daemon's records its own writes)."""
        ...

    @property
    def state(self) -> State:
        """The vault's open state database."""
        ...

    @property
    def parts(self) -> Parts:
        """The open state and indexes; raises ``DaemonError`` while starting or stopping."""
        ...

    def status(self) -> dict[str, Any]:
        """``GET /status``."""
        ...

    def rerun(self, paths: list[str]) -> list[str]:
        """Queue notes again, ready at once; the paths queued."""
        ...

    def digest_changed(self, path: str) -> None:
        """A digest node was written outside the dream (an undo): re-index it."""
        ...

    def backfill(self, body: dict[str, Any]) -> dict[str, Any]:
        """Estimate, and with ``queue``, queue notes of the backlog."""
        ...

    def proposals(self, state: ProposalState | None) -> list[dict[str, Any]]:
        """The proposals held for review in ``state`` (None: all), as the API shows them."""
        ...

    def settle(self, proposal_id: int, verb: str) -> dict[str, Any]:
        """Approve, reject or write as new (``verb``) one open proposal; ``StateError``
        when it cannot be (settled meanwhile, no new node possible)."""
        ...


def node_sources(body: str, rel: str, resolver: LinkResolver) -> list[dict[str, str]]:
    """The ``## Sources`` of digest node ``rel`` (its body): each link resolved to the
    vault path it cites, with the sentence that cites it."""
    sources: list[dict[str, str]] = []
    sec = find_sources_section(body)
    if sec is not None:
        lines = body.split("\n")[sec.start:sec.end]
        for link in find_wikilinks("\n".join(lines)):
            target = resolver.resolve(link.target, rel).path or link.target
            sentence = lines[link.line - 1].strip().removeprefix("- ").removeprefix("* ")
            sources.append({"path": target, "sentence": sentence})
    return sources


class ApiError(Exception):
    """An answer other than 200: HTTP status, plain words, and ``detail`` keys to add."""

    def __init__(self, status: int, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail


def decision(entry: JournalEntry) -> dict[str, Any]:
    """A journal entry as the API shows a decision (ISO time)."""
    data = entry.public()
    data["at"] = iso(entry.at)
    return data


class Views:
    """The read side of the API, over a daemon's vault and state."""

    def __init__(self, daemon: ServedDaemon) -> None:
        self.daemon = daemon
        self._graph: tuple[int, LinkGraph] | None = None
        self._parsed = ParseCache()  # a rebuild re-reads only the notes that changed
        self._lock = threading.Lock()
        self._sections = SectionsSynced()

    def graph(self) -> LinkGraph:
        """The vault's link graph, rebuilt only after the watcher saw a change."""
        with self._lock:
            gen = self.daemon.generation
            if self._graph is None or self._graph[0] != gen:
                self._graph = (gen, build_graph(self.daemon.vault, cache=self._parsed))
            return self._graph[1]

    def ref(self, graph: LinkGraph, path: str) -> dict[str, str]:
        """``{path, name, description}`` of a note."""
        meta = graph.meta.get(path, {})
        name = (text_value(meta.get("name"), NAME_CHARS)
                or path.rsplit("/", 1)[-1].removesuffix(".md"))
        return {"path": path, "name": name,
                "description": text_value(meta.get("description"), DESCRIPTION_CHARS)}

    def note(self, raw: str) -> dict[str, Any]:
        """``GET /note``: a digest node, a source note, or another note."""
        vault = self.daemon.vault
        rel = vault.rel(raw)
        if is_hidden(rel):  # not even whether it exists: the read policy's first rule
            vault.readable(rel)
        if not vault.abs(rel).is_file():
            raise NoteNotFound(rel)
        kind = vault.folder_of(rel)
        if not rel.endswith(".md") or kind is None:
            return {"path": rel, "kind": "other"}
        vault.readable(rel)
        if kind == "digest":
            return self._digest(rel)
        return self._source(rel)

    def _digest(self, rel: str) -> dict[str, Any]:
        note = self.daemon.vault.read_note(rel)
        graph = self.graph()
        sources = node_sources(note.body, rel, graph.resolver)
        cited = {s["path"] for s in sources}
        related: list[dict[str, str]] = []
        for edge in graph.outlinks.get(rel, []):
            t = edge.target
            if (t and t != rel and t not in cited and self.daemon.vault.folder_of(t) == "digest"
                    and t not in {r["path"] for r in related}):
                related.append(self.ref(graph, t))
        back: list[dict[str, str]] = []
        for edge in graph.backlinks.get(rel, []):
            if edge.source not in {b["path"] for b in back}:
                back.append(self.ref(graph, edge.source))
        return {"path": rel, "kind": "digest", "name": note.name,
                "description": note.description, "sources": sources, "related": related,
                "backlinks": back, "decisions": self._decisions(rel)}

    def _source(self, rel: str) -> dict[str, Any]:
        state, now = self.daemon.state, time.time()
        item = next((i for i in state.queue() if i.path == rel), None)
        failed = [f for f in state.failures() if rel in f["paths"]]
        failed += [{"error": u["reason"]} for u in state.unread_notes() if u["path"] == rel]
        error: str | None = failed[0]["error"] if failed else None
        settles: float | None = None
        if item is not None:
            settles = round(max(0.0, item.ready_at - now), 1)
            status = SourceState.SETTLING if item.ready_at > now else SourceState.QUEUED
            error = item.last_error or error
        elif failed:
            status = SourceState.FAILED
        elif rel in state.checkpoints():
            status = SourceState.INTEGRATED
        else:
            status = SourceState.UNSEEN
        graph = self.graph()
        fed: list[str] = []
        for entry in state.journal(limit=200, path=rel):
            if (entry.action in DECISIONS and entry.undone_by is None and entry.target
                    and rel in stored_paths(entry.unit) and entry.target in graph.meta):
                fed.append(entry.target)
        for edge in graph.backlinks.get(rel, []):
            if self.daemon.vault.folder_of(edge.source) == "digest" and self._cites(
                    graph, edge.source, rel):
                fed.append(edge.source)
        unique = list(dict.fromkeys(fed))
        return {"path": rel, "kind": "source", "state": status, "settles_in_seconds": settles,
                "error": error or None, "fed": [self.ref(graph, p) for p in unique],
                "decisions": self._decisions(rel)}

    @staticmethod
    def _cites(graph: LinkGraph, node: str, source: str) -> bool:
        _, body, _ = split_frontmatter(graph.texts.get(node, ""))
        sec = find_sources_section(body)
        if sec is None:
            return False
        text = "\n".join(body.split("\n")[sec.start:sec.end])
        return any(graph.resolver.resolve(link.target, node).path == source
                   for link in find_wikilinks(text))

    def _decisions(self, path: str | None, limit: int = 50) -> list[dict[str, Any]]:
        return [decision(e) for e in self.daemon.state.journal(limit=limit, path=path)]

    def decisions(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """``GET /decisions?limit=N&path=P``, newest first."""
        raw_limit = query.get("limit", ["50"])[-1]
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 1000:
            raise ApiError(400, "limit must be a whole number from 1 to 1000")
        path = query.get("path", [None])[-1]
        rel = self.daemon.vault.rel(path) if path is not None else None
        return {"decisions": self._decisions(rel, int(raw_limit))}

    def search(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """``GET /search?q=...&limit=N&in=nodes|sections`` (and ``bucket=`` for nodes,
        ``digest_only=1`` for sections): what ``vaultlink node-search`` and ``vaultlink
        search`` print with ``--json``."""
        text = query.get("q", [""])[-1]
        if not text.strip():
            raise ApiError(400, "give the words to look for as ?q=<query>")
        kind = query.get("in", ["nodes"])[-1]
        if kind not in SEARCH_KINDS:
            raise ApiError(400, f"in must be one of {', '.join(SEARCH_KINDS)}, not {kind!r}")
        raw_limit = query.get("limit", ["20" if kind == "nodes" else "10"])[-1]
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 500:
            raise ApiError(400, "limit must be a whole number from 1 to 500")
        indexes = self.daemon.parts.indexes
        hits: list[Any]
        if kind == "sections":
            # The daemon keeps digest nodes indexed as they change, sections only on
            # demand: the first section search after changes pays for their embedding.
            gen, now = self.daemon.generation, time.monotonic()
            if self._sections.due(gen, now):
                indexes.chunks.sync(self._stop_if_stopping)
                self._sections.done(gen, now)
            hits = indexes.chunks.search(text, int(raw_limit),
                                         digest_only=query.get("digest_only", [""])[-1] == "1")
        else:
            hits = indexes.nodes.node_search(text, int(raw_limit),
                                             bucket=query.get("bucket", [""])[-1] or None)
        return {"hits": [dataclasses.asdict(h) for h in hits]}

    def _stop_if_stopping(self, done: int, total: int) -> None:
        """A sync's progress hook: a stopping daemon must not wait for a long sync."""
        self.daemon.parts  # noqa: B018 - raises DaemonError once the daemon stops

    def rerun(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /rerun``: one note, or every failed unit's notes, queued ready now."""
        vault = self.daemon.vault
        if body.get("failed") is True:
            self.daemon.state.unpark()  # asked for by the user: parked ones are retried too
            paths = {p for f in self.daemon.state.failures() for p in f["paths"]}
            return {"queued": self.daemon.rerun(sorted(p for p in paths if vault.exists(p)))}
        raw = body.get("path")
        if not isinstance(raw, str):
            raise ApiError(400, 'send {"path": "daily/..."} or {"failed": true}')
        rel = vault.rel(raw)
        if vault.folder_of(rel) not in ("daily", "resource") or not rel.endswith(".md"):
            raise ApiError(400, f"{rel} is not a daily/ or resource/ note; only those "
                                "are integrated")
        if not vault.exists(rel):
            raise NoteNotFound(rel)
        return {"queued": self.daemon.rerun([rel])}

    def backfill(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /backfill``: ``{"since": <epoch seconds> | null, "queue": bool}``; the
        estimate of the backlog's waiting notes changed since then, queued with ``queue``."""
        since, queue = body.get("since"), body.get("queue", False)
        if (since is not None and (isinstance(since, bool)
                                   or not isinstance(since, int | float))) or not isinstance(
                queue, bool):
            raise ApiError(400, 'send {"since": <seconds since the epoch> or null, '
                                '"queue": true or false}')
        return self.daemon.backfill({"since": since, "queue": queue})

    def undo(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /undo``: revert a decision (409 with ``needs`` when it takes more)."""
        return self._revert(body, redo=False)

    def redo(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /redo``: bring back what an undo removed."""
        return self._revert(body, redo=True)

    def _revert(self, body: dict[str, Any], redo: bool) -> dict[str, Any]:
        entry_id, cascade = body.get("id"), body.get("cascade", False)
        if not isinstance(entry_id, int) or isinstance(entry_id, bool):
            raise ApiError(400, 'send {"id": <decision id>} (and "cascade": true to revert '
                                "what depends on it too)")
        if not isinstance(cascade, bool):
            raise ApiError(400, '"cascade" is true or false')
        state = self.daemon.state
        entry = state.journal_get(entry_id)
        if entry is None:
            raise ApiError(404, f"no decision #{entry_id}")
        try:
            run = history.redo if redo else history.undo
            outcome = run(self.daemon.vault, state, entry_id, cascade)
        except UndoNeedsCascade as exc:
            raise ApiError(409, str(exc), needs=exc.needs) from None
        except StateError as exc:  # changed since, already undone, nothing to undo
            raise ApiError(409, str(exc)) from None
        for path in outcome.paths:
            self.daemon.digest_changed(path)
        key = entry_id if entry_id in outcome.reverted else (entry.undone_by or entry_id)
        row = state.journal_get(outcome.reverted.get(key, outcome.ids[0]))
        assert row is not None
        return {"redone" if redo else "undone": entry_id, "ids": outcome.ids,
                "decision": decision(row)}

    # -- proposals held for review (pipeline/integrate/review.py) -----------------------

    def proposals(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """``GET /proposals[?state=open|all|approved|rejected|created|stale]``: newest
        first; open ones whose node changed since say ``stale: true``."""
        wanted = (query.get("state") or ["open"])[-1]
        if wanted != "all" and wanted not in {s.value for s in ProposalState}:
            raise ApiError(400, "state is open, approved, rejected, created, stale or all")
        state = None if wanted == "all" else ProposalState(wanted)
        return {"proposals": self.daemon.proposals(state),
                "open": self.daemon.state.proposal_count()}

    def settle(self, proposal_id: int, verb: str) -> dict[str, Any]:
        """``POST /proposals/{id}/approve|reject|new``: settle one open proposal. A stale
        one (its node changed since) answers 200 with ``stale: true``: nothing written,
        its unit is decided again by the next run, which is queued now."""
        p = self.daemon.state.proposal_get(proposal_id)
        if p is None:
            raise ApiError(404, f"no proposal #{proposal_id}")
        if p.state is not ProposalState.OPEN:
            raise ApiError(409, f"proposal #{proposal_id} is {p.state.value} already")
        try:
            return self.daemon.settle(proposal_id, verb)
        except StateError as exc:  # settled meanwhile, or no new node can be written
            raise ApiError(409, str(exc)) from None

