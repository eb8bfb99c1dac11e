"""The six tools of an integrate session, bound to the vault, the node index and a guard.

``node_search, read, frontmatter_read, write, edit, frontmatter_update``, exactly the
seed's toolchain. Every tool answers with a JSON string, errors included, because the
answer goes back to the model; only the guard decides whether a write may land.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vaultlink.errors import (
    GuardRefusal,
    IndexServerUnavailable,
    NoteNotFound,
    PathRefused,
    Refusal,
    VaultError,
    VaultlinkError,
    WriteConflict,
    WriteFailed,
)
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.pipeline.context import NodeSearch
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.prose.node_names import node_description, title_slugs
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.faults import crash_point
from vaultlink.vault.notes import Vault, parse_note, render_note
from vaultlink.vault.state import State

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 6000


def _fn(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": props, "required": required}}}


_S = {"type": "string"}
TOOL_SCHEMAS: list[dict[str, Any]] = [
    _fn("node_search", "Recall digest nodes (path, score, name, description; no body) for "
        "deduplication and related links. Call several times with different words.",
        {"query": _S, "limit": {"type": "integer", "description": "20 to 30 recommended"}},
        ["query"]),
    _fn("read", "Read a note's lines (1-based, inclusive).",
        {"path": _S, "start_line": {"type": "integer"}, "end_line": {"type": "integer"}},
        ["path"]),
    _fn("frontmatter_read", "Read a note's frontmatter: {path, exists, frontmatter}; for a digest "
        "path not taken yet, `taken` says why a new node may not have that name.",
        {"path": _S}, ["path"]),
    _fn("write", "Create a digest node (or overwrite one, keeping all its links): "
        "frontmatter name and description, Markdown body with ## Sources.",
        {"path": _S, "name": _S, "description": _S, "content": _S,
         "metadata": {"type": "object"}}, ["path", "name", "description", "content"]),
    _fn("edit", "Replace the literal text `old` with `new` in a note's body "
        "(frontmatter untouched). `old` must occur exactly once.",
        {"path": _S, "old": _S, "new": _S}, ["path", "old", "new"]),
    _fn("frontmatter_update", "Merge keys into a note's frontmatter.",
        {"path": _S, "metadata": {"type": "object"}}, ["path", "metadata"]),
]
TOOL_NAMES = tuple(t["function"]["name"] for t in TOOL_SCHEMAS)


@dataclass
class Toolbox:
    """The tools of one unit's session; remembers what it searched and wrote.

    With ``dry_run`` the writes land in an overlay that later reads see, and the
    vault is left alone. With ``intents`` (the state database) every write is announced
    before it lands, so a process killed before the unit's journal row is written has
    its writes rolled back at the next start (``pipeline/recovery.py``).

    With ``hold`` (review before write, ``integrate/review.py``) the checked writes
    also wait in the overlay: ``land()`` writes them, compare-and-swap against what the
    session read, once the decision is known to need no review; ``rollback()`` drops them.
    """

    vault: Vault
    index: NodeSearch
    guard: Guard
    dry_run: bool = False
    intents: State | None = None
    # A model sees path, name and description of at most ``hit_limit`` hits: scores as
    # digits and long hit lists only lengthen its prompt. The offline policy decides by
    # the similarity, so it gets the scores.
    scores: bool = True
    hit_limit: int = 50
    hold: bool = False
    schemas: ClassVar[list[dict[str, Any]]] = TOOL_SCHEMAS  # what the model is offered
    queries: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # guard refusal codes, in order
    before: dict[str, str | None] = field(default_factory=dict)
    current: dict[str, str] = field(default_factory=dict)
    _hash: dict[str, str | None] = field(default_factory=dict)

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run one tool call; always returns a JSON answer for the model."""
        if name not in TOOL_NAMES:
            return _error(f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}")
        if not isinstance(args, dict) or "_raw" in args:
            return _error(f"the arguments of {name} must be a JSON object")
        try:
            result = getattr(self, "_" + name)(**args)
        except (TypeError, ValueError) as exc:  # a missing key, "ten" as a limit
            return _error(f"bad arguments for {name}: {exc}")
        except GuardRefusal as exc:
            log.info("guard refused %s: %s", name, exc)
            self.refusals.append(exc.code.value)
            return _error(str(exc), exc.code, **exc.detail)
        except PathRefused as exc:  # the vault's no (read policy, a linked folder): journaled
            log.info("refused %s of %s: %s", name, exc.path, exc.reason)
            self.refusals.append(Refusal.PATH_REFUSED.value)
            return _error(str(exc), Refusal.PATH_REFUSED)
        except (WriteFailed, IndexServerUnavailable):
            # A full or broken disk is no answer the model can act on, and a unit it
            # made give up would be skipped and checkpointed: fail the attempt instead,
            # so the unit is retried once the disk is fixed. The same for the Chroma
            # server (index.chroma.mode: http) gone: no recall is no answer either.
            raise
        except VaultlinkError as exc:
            return _error(str(exc))
        return _fit(result)

    # -- the six tools ---------------------------------------------------------

    def _node_search(self, query: str, limit: int = 20) -> dict[str, Any]:
        limit = max(1, min(int(limit), self.hit_limit))
        hits = self.index.node_search(str(query), limit)
        self.queries.append({"query": query, "limit": limit,
                             "hits": [{"path": h.path, "score": round(h.score, 5),
                                       "similarity": round(h.similarity, 4)} for h in hits]})
        if not self.scores:  # the journal keeps them all the same (``queries``)
            return {"hits": [{"path": h.path, "name": h.name, "description": h.description}
                             for h in hits]}
        return {"hits": [{"path": h.path, "score": round(h.score, 5),
                          "similarity": round(h.similarity, 4), "name": h.name,
                          "description": h.description} for h in hits]}

    def _read(self, path: str, start_line: int | None = None,
              end_line: int | None = None) -> dict[str, Any]:
        rel = self.vault.rel(path)
        lines = self.text_of(rel).split("\n")
        start = max(1, int(start_line or 1))
        end = min(len(lines), int(end_line or len(lines)))
        return {"path": rel, "start_line": start, "end_line": end, "total_lines": len(lines),
                "text": "\n".join(lines[start - 1:end])}

    def _frontmatter_read(self, path: str) -> dict[str, Any]:
        rel = self.vault.rel(path)
        try:
            text = self.text_of(rel)
        except NoteNotFound:
            answer: dict[str, Any] = {"path": rel, "exists": False, "frontmatter": {}}
            if rel.startswith(f"{self.guard.digest}/"):  # may a new node take this name?
                taken = self.guard.name_taken(rel)
                if taken:
                    answer["taken"] = f"{taken}: a new node may not be named so"
                    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
                    answer["named_by"] = self.guard.files_named(title_slugs(stem))
            return answer
        return {"path": rel, "exists": True,
                "frontmatter": parse_note(rel, text.encode()).frontmatter}

    def _write(self, path: str, name: str, description: str, content: str,
               metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": str(name), "description": str(description)}
        if isinstance(metadata, dict):
            meta.update({k: v for k, v in metadata.items() if k not in meta})
        rel = self.guard.check_path(path)
        old = self._text_or_none(rel)
        old_meta = parse_note(rel, old.encode()).frontmatter if old is not None else {}
        if not str(description or "").strip():
            # a small model leaves it out (a node of a link and a gif, refused twice): the
            # node's own, else what the unit says its node is about, in the owner's words
            meta["description"] = old_meta.get("description") or node_description(
                self.guard.unit)
        return self._commit(rel, old, render_note({**old_meta, **meta}, str(content)))

    def _edit(self, path: str, old: str, new: str) -> dict[str, Any]:
        rel = self.guard.check_path(path)
        if not old:
            raise GuardRefusal(Refusal.BAD_EDIT, "edit needs a non-empty `old` text to replace")
        text = self._text_or_none(rel)
        if text is None:
            raise NoteNotFound(rel)
        head, body, _ = split_frontmatter(text)
        count = body.count(old)
        if count == 0:
            raise GuardRefusal(Refusal.BAD_EDIT,
                               f"`old` does not occur in the body of {rel}; read it first")
        if count > 1:
            raise GuardRefusal(Refusal.BAD_EDIT,
                               f"`old` occurs {count} times in {rel}; include more context")
        return self._commit(rel, text, head + body.replace(old, str(new), 1))

    def _frontmatter_update(self, path: str, metadata: dict[str, Any]) -> dict[str, Any]:
        rel = self.guard.check_path(path)
        if not isinstance(metadata, dict):
            raise GuardRefusal(Refusal.BAD_ARGUMENTS,
                               "metadata must be an object of keys and values")
        text = self._text_or_none(rel)
        if text is None:
            raise NoteNotFound(rel)
        note = parse_note(rel, text.encode())
        return self._commit(rel, text, render_note({**note.frontmatter, **metadata}, note.body))

    # -- plumbing --------------------------------------------------------------

    def text_of(self, rel: str) -> str:
        """The note as this session sees it (its own writes included)."""
        if rel in self.current:
            return self.current[rel]
        note_bytes = self.vault.read_bytes(self.vault.readable(rel))
        text = note_bytes.decode("utf-8", errors="replace")
        self._hash.setdefault(rel, content_hash(note_bytes))
        return text

    def _text_or_none(self, rel: str) -> str | None:
        try:
            return self.text_of(rel)
        except NoteNotFound:
            self._hash.setdefault(rel, None)
            return None

    def _commit(self, rel: str, old: str | None, new: str) -> dict[str, Any]:
        self.guard.check_write(rel, old, new)
        if not self.dry_run and not self.hold:
            self._land(rel, self.before.get(rel, old), new)
        elif self.hold and rel in self._hash and rel not in self.current:
            self._still_as_read(rel)
        self.before.setdefault(rel, old)
        self.current[rel] = new
        self.guard.accept_write(rel, created=old is None)
        return {"ok": True, "path": rel, "created": old is None and self.before[rel] is None}

    def _land(self, rel: str, before: str | None, new: str) -> None:
        """Write ``new`` at ``rel``, announced first, compare-and-swap against the hash
        this session read (or wrote last)."""
        if self.intents is not None:
            self.intents.intend(rel, before, content_hash(new.encode()))
        try:
            self._hash[rel] = self.vault.write(rel, new, self._hash.get(rel))
        except WriteConflict as exc:
            self.current.pop(rel, None)
            self._hash.pop(rel, None)
            if self.intents is not None and (self.hold or rel not in self.before):
                self.intents.settle([rel])  # nothing of ours landed there
            raise VaultError(f"{exc} (the user is editing it)") from None
        crash_point("after_node_write")

    def _still_as_read(self, rel: str) -> None:
        """A held session's first change of a node the owner has saved since it was read
        is refused at once, as a write would refuse it, so the model can read it again."""
        try:
            now: str | None = content_hash(self.vault.read_bytes(rel))
        except NoteNotFound:
            now = None
        if now != self._hash[rel]:
            self._hash.pop(rel, None)
            raise VaultError(f"{WriteConflict(rel)} (the user is editing it)")

    def land(self) -> None:
        """Write what a ``hold`` session decided (nothing in a dry run); a node changed
        since it was read is a ``VaultError`` and nothing of it is written."""
        if self.hold and not self.dry_run:
            for rel, new in list(self.current.items()):
                self._land(rel, self.before.get(rel), new)
        self.hold = False

    def put(self, rel: str, new: str) -> None:
        """Write ``new`` at ``rel`` as a tool write does (the guard, the intent, the
        compare-and-swap against the text read): how an approved proposal lands."""
        self._commit(rel, self._text_or_none(rel), new)

    def read_hash(self, rel: str) -> str | None:
        """The hash of ``rel`` as this session first read it (None: it did not exist)."""
        return self._hash.get(rel)

    def rollback(self) -> None:
        """Undo this session's writes (a failed attempt leaves nothing half-done)."""
        if self.dry_run:
            self.current.clear()
            return
        if self.hold:  # nothing landed: the overlay goes
            self.current.clear()
            self.before.clear()
            return
        for rel, old in self.before.items():
            expected = self._hash.get(rel)
            try:
                if old is None and expected is not None:
                    self.vault.delete(rel, expected)
                elif old is not None:
                    self.vault.write(rel, old, expected)
            except (WriteConflict, VaultError) as exc:
                log.warning("could not roll back %s (%s); the user's version is kept", rel, exc)
        if self.intents is not None and self.before:
            self.intents.settle(self.before)
        self.current.clear()
        self.before.clear()


def _fit(result: dict[str, Any]) -> str:
    """The answer as JSON of at most MAX_RESULT_CHARS, still valid JSON.

    A long ``read`` loses the end of its text, a long ``node_search`` its last hits;
    either way the answer says so, so the model can ask for less.
    """
    text = json.dumps(result, ensure_ascii=False)
    while len(text) > MAX_RESULT_CHARS:
        if isinstance(result.get("text"), str) and result["text"]:
            over = len(text) - MAX_RESULT_CHARS + 100
            result = {**result, "text": result["text"][:max(0, len(result["text"]) - over)],
                      "truncated": "the text was cut; read fewer lines at a time"}
        elif isinstance(result.get("hits"), list) and result["hits"]:
            result = {**result, "hits": result["hits"][:-1],
                      "truncated": "fewer hits than asked: the answer was too long"}
        else:
            return _error("the answer is too long to return; ask for less")
        text = json.dumps(result, ensure_ascii=False)
    return text


def _error(message: str, code: Refusal | None = None, **detail: str) -> str:
    """A tool's failure as the model reads it; a guard refusal also carries its code."""
    answer: dict[str, Any] = {"error": message}
    if code is not None:
        answer.update(code=code.value, **detail)
    return json.dumps(answer, ensure_ascii=False)
