"""Every invariant of a proposed write, in one place.

Model output is untrusted input. Whatever proposes a write, the model through its
tools or the offline integrator, the write passes ``Guard.check_write`` before it
touches the vault, and the session's result passes ``Guard.check_result`` before it
counts. A refusal is a ``GuardRefusal`` whose message the model sees and can act on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from vaultlink.errors import GuardRefusal, NoteUnreadable, PathRefused, Refusal, VaultlinkError
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.links import LinkResolver, find_wikilinks
from vaultlink.markdown.names import numbered_name
from vaultlink.markdown.remote import RemoteKind, RemoteRef, remote_refs, strip_remote, url_in
from vaultlink.markdown.sections import bare_link_lines, cited_sources, removed_links
from vaultlink.markdown.text import LIST_MARK
from vaultlink.prose.units import BUCKETS, Receipt, Unit, is_slug
from vaultlink.vault.actions import DECISIONS, UPDATE_ACTIONS, Action
from vaultlink.vault.names import NameIndex, shadow_advice
from vaultlink.vault.notes import Note, parse_note
from vaultlink.vault.paths import normalize_rel


@dataclass
class Guard:
    """The rules for one unit's session.

    ``existed`` holds the digest nodes that existed when the unit started: only they
    may be updated. ``list_files`` lists the vault's files, for link resolution;
    ``files``, when given, is a listing just taken, used until a write lands.
    ``read_source`` reads a note of the vault by its path (raising ``VaultlinkError``
    when it cannot): a node may hold a URL only if the unit's source notes do; without
    it no new URL passes. ``aliases`` gives the aliases of the owner's notes (alias key
    -> notes) and ``links`` the targets of their links (key -> notes): a new node takes
    no name the owner's links use or wait for (``vault/names.py``).
    """

    unit: Unit
    existed: frozenset[str]
    list_files: Callable[[], Iterable[str]]
    digest: str = "digest"
    files: frozenset[str] | None = field(default=None, repr=False)
    read_source: Callable[[str], str] | None = field(default=None, repr=False)
    aliases: Callable[[], Mapping[str, list[str]]] | None = field(default=None, repr=False)
    links: Callable[[], Mapping[str, list[str]]] | None = field(default=None, repr=False)
    target: str | None = None
    created: bool = False
    _resolver: LinkResolver | None = field(default=None, repr=False)
    _resolver_for: str = field(default="", repr=False)
    _source: str | None = field(default=None, repr=False)
    # the text each written node had before the unit's first write to it, and the
    # write just checked (path, old text), which ``accept_write`` records as landed
    _started: dict[str, str | None] = field(default_factory=dict, repr=False)
    _checked: tuple[str, str | None] | None = field(default=None, repr=False)
    _names: NameIndex | None = field(default=None, repr=False)

    def check_path(self, raw: str) -> str:
        """The normalised path, if it is a digest node path of a known bucket."""
        try:
            path = normalize_rel(raw)
        except PathRefused as exc:
            raise GuardRefusal(Refusal.NOT_A_NODE_PATH,
                               f"refused: {exc.reason}. Write digest nodes as "
                               f"{self.digest}/<bucket>/<slug>.md", digest=self.digest) from None
        parts = path.split("/")
        if (len(parts) != 3 or parts[0] != self.digest or parts[1] not in BUCKETS
                or not parts[2].endswith(".md") or not is_slug(parts[2][:-3])):
            raise GuardRefusal(
                Refusal.NOT_A_NODE_PATH,
                f"refused: {path!r} is not a digest node path. Only "
                f"{self.digest}/<bucket>/<slug>.md may be written, with bucket one of "
                f"{', '.join(BUCKETS)} and a lowercase kebab-case slug.", digest=self.digest)
        return path

    def check_write(self, raw: str, old_text: str | None, new_text: str) -> str:
        """Check one proposed write; returns the path. ``old_text`` None means create."""
        path = self.check_path(raw)
        if self.target is not None and path != self.target:
            raise GuardRefusal(Refusal.OTHER_TARGET,
                               f"refused: this unit already writes {self.target}; "
                               "a unit is written to exactly one digest node")
        if old_text is None:
            if path in self.existed:
                raise GuardRefusal(Refusal.EXISTS,
                                   f"refused: {path} exists; CREATE never overwrites. "
                                   "Read it and update it with edit instead.")
            bucket = path.split("/")[1]
            if bucket != self.unit.bucket:
                raise GuardRefusal(Refusal.WRONG_BUCKET,
                                   f"refused: a new node for this unit belongs in "
                                   f"{self.digest}/{self.unit.bucket}/, not {bucket}/")
            why = self.name_taken(path)
            if why:
                code = (Refusal.NUMBERED_NAME if numbered_name(path.rsplit("/", 1)[-1])
                        else Refusal.SHADOWS_NAME)
                raise GuardRefusal(code, shadow_advice(path, why))
        elif path not in self.existed and not (self.created and path == self.target):
            raise GuardRefusal(Refusal.NOT_EXISTING,
                               f"refused: {path} did not exist before this unit; "
                               "updates only go to nodes that already existed")
        try:
            note = parse_note(path, new_text.encode("utf-8"))
        except NoteUnreadable as exc:
            raise GuardRefusal(Refusal.UNREADABLE, f"refused: {exc.reason}") from None
        for key in ("name", "description"):
            if not str(note.frontmatter.get(key) or "").strip():
                raise GuardRefusal(Refusal.MISSING_KEY,
                                   f"refused: the frontmatter needs a non-empty {key!r}")
        self._check_remote(path, old_text, note)
        if old_text is not None:
            lost = removed_links(old_text, new_text)
            if lost:
                raise GuardRefusal(Refusal.NOT_ADDITIVE,
                                   "refused: updates are additive, but " + "; ".join(lost)
                                   + ". Keep every existing link and source entry.")
        bare = bare_link_lines(note.body)
        if bare:
            raise GuardRefusal(
                Refusal.BARE_SOURCE_LINE,
                f"refused: bare link line under ## Sources: {bare[0][1].strip()!r}. Put each "
                "source link inside a sentence that says what the source supports.")
        self._check_links(path, old_text, new_text)
        self._checked = (path, old_text)
        return path

    def _check_remote(self, path: str, old_text: str | None, note: Note) -> None:
        """No image or tag that loads from outside the vault, and no URL the unit's
        sources do not hold: Obsidian fetches a remote image when it shows the node, so
        a prompt-injected model could send a private note out in a URL. What the node
        held before the write is the owner's, not judged again."""
        held = {ref.raw for ref in _remote_refs_of(path, old_text)} if old_text else set()
        for ref in _remote_refs_of(path, note):
            if ref.raw in held:
                continue
            if ref.kind is RemoteKind.URL and url_in(ref.url, self.source_text()):
                continue
            raise _remote_refusal(ref)

    def source_text(self) -> str:
        """The unit's source notes, read once: where a node's URLs must come from."""
        if self._source is None:
            texts = []
            for source in self.unit.paths:
                try:
                    texts.append(self.read_source(source) if self.read_source else "")
                except VaultlinkError:
                    texts.append("")  # gone or unreadable: it vouches for no URL
            self._source = "\n".join(texts)
        return self._source

    def without_remote(self, text: str) -> str:
        """``text`` as a writer may propose it: no remote image, no tag that loads or
        runs, and no URL but those the unit's sources hold (a link keeps its label)."""
        return strip_remote(text, self.source_text())

    def _check_links(self, path: str, old_text: str | None, new_text: str) -> None:
        old_raws = {link.raw for link in find_wikilinks(old_text)} if old_text else set()
        resolver = self._resolver_with(path)
        for link in find_wikilinks(new_text):
            if link.raw in old_raws:
                continue  # existing links are the user's business, not ours to judge
            if link.target in resolver:
                continue
            res = resolver.resolve(link.target, path)
            hint = (f" Write it as [[{res.path}]]." if res.path else
                    " Link only to notes that exist (node_search finds digest nodes).")
            raise GuardRefusal(Refusal.UNRESOLVED_LINK,
                               f"refused: the link {link.raw} does not name an existing "
                               f"note by its full vault path.{hint}")

    def name_taken(self, path: str) -> str:
        """Why a new node may not be at ``path`` ('' when it may): its file name is another
        file's of the vault (any folder, any case) or an alias of an owner's note, or it
        is a date, a file id or a number."""
        return self._name_index().taken(path)

    def files_named(self, slugs: Iterable[str]) -> list[str]:
        """The vault's files, in any folder, that answer to one of the file names
        ``slugs`` (as ``[[slug]]`` finds them: any case), sorted."""
        index = self._name_index()
        return sorted({f for slug in slugs for f in index.files_named(slug)})

    def _listed(self) -> frozenset[str]:
        """The vault's files, listed once until a write lands."""
        if self.files is None:
            self.files = frozenset(self.list_files())
        return self.files

    def _name_index(self) -> NameIndex:
        """Who holds each name of the vault, indexed once per listing (every candidate
        name of a new node asks it)."""
        files = self._listed()
        if self._names is None or self._names.files is not files:
            aliases = self.aliases() if self.aliases is not None else {}
            links = self.links() if self.links is not None else {}
            self._names = NameIndex(files, aliases, links)
        return self._names

    def link_target(self, target: str, path: str) -> str | None:
        """The full vault path that a link to ``target`` written in ``path`` names, or
        None when it names no note (so a writer can fix a link before proposing it)."""
        resolver = self._resolver_with(path)
        if target in resolver:
            return target
        return resolver.resolve(target, path).path or None

    def _resolver_with(self, path: str) -> LinkResolver:
        """Resolution over the vault plus ``path``, the note being written (a node may
        link to itself, and a new one does not exist yet)."""
        if self._resolver is None or self._resolver_for != path:
            self._resolver, self._resolver_for = LinkResolver(self._listed() | {path}), path
        return self._resolver

    def accept_write(self, path: str, created: bool) -> None:
        """Record that a checked write landed: it fixes the unit's one target."""
        self.target = path
        self.created = self.created or created
        if self._checked is not None and self._checked[0] == path:
            self._started.setdefault(path, self._checked[1])
        self._resolver = self.files = None  # the vault changed: list it again

    def check_result(self, receipt: Receipt, before: str | None, after: str) -> Receipt:
        """Check the session's result against its receipt; returns the receipt to record."""
        if receipt.target_path != self.target:
            raise GuardRefusal(Refusal.RECEIPT_MISMATCH,
                               f"the receipt names {receipt.target_path!r} but the session "
                               f"wrote {self.target!r}")
        # Judged from the text the node had before the unit's first write: a session
        # that writes twice must not launder a change through its own second write.
        before = self._started.get(receipt.target_path, before)
        if before is None and receipt.action != Action.CREATE:
            raise GuardRefusal(Refusal.WRONG_ACTION,
                               f"{receipt.action} needs a node that existed; the session "
                               "created a new one, so the action is CREATE")
        if before is not None and receipt.action == Action.CREATE:
            raise GuardRefusal(Refusal.WRONG_ACTION,
                               "CREATE needs a new node, but the target existed; use one "
                               f"of {', '.join(a for a in DECISIONS if a in UPDATE_ACTIONS)}")
        if before == after:
            raise GuardRefusal(Refusal.NO_CHANGE, "the session changed nothing")
        cited = cited_sources(after)
        if not cited & set(self.unit.paths):
            raise GuardRefusal(
                Refusal.NO_SOURCE,
                "the node must cite the unit's source under ## Sources, in a sentence: "
                + ", ".join(f"[[{p}]]" for p in self.unit.paths))
        if before is not None and receipt.action == Action.CORRECT:
            _check_correction(before, after, self.unit.paths)
        elif before is not None:
            _check_kept(before, after, receipt.action)
        return receipt


_STRIKE = re.compile(r"~~(.+?)~~")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _remote_refs_of(path: str, text: str | Note) -> Iterator[RemoteRef]:
    """The remote references of a note's body and of its frontmatter's values."""
    if isinstance(text, Note):
        note = text
    else:
        try:
            note = parse_note(path, text.encode("utf-8"))
        except NoteUnreadable:  # an old text that does not parse: read it whole
            yield from remote_refs(text)
            return
    yield from remote_refs(note.body)
    for value in _strings(note.frontmatter):
        yield from remote_refs(value)


def _strings(value: Any) -> Iterator[str]:
    """Every string of a frontmatter value, keys included, however deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _remote_refusal(ref: RemoteRef) -> GuardRefusal:
    """The refusal of one remote reference, saying what to write instead."""
    shown = " ".join(ref.raw.split())[:100]
    if ref.kind is RemoteKind.IMAGE:
        return GuardRefusal(
            Refusal.REMOTE_IMAGE,
            f"refused: {shown!r} shows an image from outside the vault; Obsidian fetches it "
            "when the note is opened, which sends its URL to that server. Leave the image "
            "out (an image of the vault is embedded as ![[path]]).")
    if ref.kind is RemoteKind.HTML:
        return GuardRefusal(
            Refusal.RAW_HTML,
            f"refused: raw HTML {shown!r}: a tag that loads, runs or links (img, iframe, "
            "script, a, style, svg, ..., or any tag with attributes) is never written into a "
            "node. Say it in plain Markdown; a command that holds HTML goes in `code`.")
    return GuardRefusal(
        Refusal.UNSOURCED_URL,
        f"refused: the URL {ref.url[:100]!r} is in none of this unit's source notes, and a "
        "node links only to URLs its sources give. Leave it out, or copy the link exactly "
        "as the source note writes it.")


def _sentences(body: str) -> Iterator[str]:
    """The sentences of a body's prose lines (headings and blank lines aside), sentence
    by sentence, since an addition may follow a sentence on its line; a list item's
    marker is no part of its claim, which may move into a sentence."""
    for line in body.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        yield from (text for text in _SENTENCE_END.split(LIST_MARK.sub("", line.strip()))
                    if text)


def _check_kept(before: str, after: str, action: Action) -> None:
    """REFINE and CORROBORATE only add: every sentence of the old body is still there as
    written (whitespace aside, anywhere), and not struck through. Changing what a node
    says ("Never" to "Always") is a CORRECT, which keeps the old claim visible."""
    _, old_body, _ = split_frontmatter(before)
    _, new_body, _ = split_frontmatter(after)
    flat = " ".join(new_body.split())
    unstruck = _unstruck(flat)
    for text in _sentences(old_body):
        sentence = " ".join(text.split())
        if sentence in flat and _unstruck(sentence) in unstruck:
            continue
        raise GuardRefusal(
            Refusal.PROSE_CHANGED,
            f"{action} only adds to a node, but its sentence {sentence[:80]!r} was changed, "
            "removed or struck through. Keep every sentence as it was and add the new text "
            "beside it; if the source shows the sentence is wrong, answer CORRECT: keep it "
            "visible (~~old claim~~) with a 'Corrected: ... per [[source]]' sentence.")


def _unstruck(text: str) -> str:
    """``text`` with its struck-through spans blanked out (their length kept)."""
    return _STRIKE.sub(lambda m: "\0" * len(m.group(0)), text)


def _check_correction(before: str, after: str, sources: list[str]) -> None:
    """CORRECT keeps the superseded text visible, marked, with the correcting source."""
    _, old_body, _ = split_frontmatter(before)
    _, new_body, _ = split_frontmatter(after)
    visible = _plain(new_body)
    for text in _sentences(old_body):
        if _plain(text) not in visible:
            raise GuardRefusal(
                Refusal.CORRECTION_LOST,
                f"CORRECT keeps the superseded statement visible: {text[:80]!r} is gone."
                " Mark it as corrected (e.g. ~~old claim~~) instead of deleting it.")
    marked = [ln for ln in new_body.split("\n")
              if re.search(r"\bcorrect", ln, re.IGNORECASE)
              and any(f"[[{s}" in ln for s in sources)]
    if not marked:
        raise GuardRefusal(Refusal.CORRECTION_UNMARKED,
                           "CORRECT needs a line that says what was corrected and cites the "
                           "correcting source, e.g. 'Corrected: … per [[daily/…]].'")


def _plain(text: str) -> str:
    return " ".join(_STRIKE.sub(r"\1", text).split())
