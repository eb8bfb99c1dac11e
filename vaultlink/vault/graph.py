"""The link graph of a vault: outlinks, backlinks, broken links, and the digest check.

Built in one pass over the vault's notes (a ``ParseCache`` lets a long-lived caller
re-read only what changed). Edges are (source note, target path, anchor); aliases are
display text only, frontmatter and code hold no links.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from vaultlink.errors import NoteUnreadable, VaultError, VaultlinkError
from vaultlink.markdown.links import LinkResolver, Wikilink, find_wikilinks, parse_link_body
from vaultlink.markdown.sections import bare_link_lines, sources_links
from vaultlink.vault.names import shadowing_nodes
from vaultlink.vault.notes import Vault

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Edge:
    """A resolved or broken link from ``source`` (line ``line``) to ``target``."""

    source: str
    target: str | None
    anchor: str
    line: int
    raw: str
    reason: str = ""


@dataclass(frozen=True)
class Problem:
    """Something ``vaultlink check`` reports: ``error`` in digest/, ``warning`` elsewhere."""

    level: str
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.level}: {where}: {self.message}"


@dataclass
class LinkGraph:
    """Outlinks and backlinks of every readable note, plus the notes that could not be read."""

    outlinks: dict[str, list[Edge]] = field(default_factory=dict)
    backlinks: dict[str, list[Edge]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    meta: dict[str, dict[str, object]] = field(default_factory=dict)
    resolver: LinkResolver = field(default_factory=lambda: LinkResolver(()))

    def broken(self) -> list[Edge]:
        """Every link whose target does not resolve."""
        return [e for edges in self.outlinks.values() for e in edges if e.target is None]


@dataclass(frozen=True)
class _Parsed:
    key: tuple[int, int, int]  # size, mtime_ns, inode when read
    text: str
    meta: dict[str, object]
    links: tuple[Wikilink, ...]
    unreadable: str = ""


class ParseCache:
    """Parsed notes by path, reused while a file's size, mtime and inode are unchanged.

    A long-lived holder (the daemon's API) passes one to every ``build_graph``, so a
    rebuild after an edit re-reads and re-parses the notes that changed, not the vault.
    Links are resolved afresh on every build: a new or deleted file can change where
    an unchanged note's link points.
    """

    def __init__(self) -> None:
        self._by_path: dict[str, _Parsed] = {}
        self.reads = 0  # notes read and parsed so far (what the cache saves is visible)

    def get(self, vault: Vault, rel: str) -> _Parsed:
        """The parse of ``rel`` as it is on disk now."""
        try:
            st = os.stat(vault.root / rel)
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            key = (-1, -1, -1)  # vanished since the walk: read_note reports it
        cached = self._by_path.get(rel)
        if cached is not None and cached.key == key:
            return cached
        parsed = _parse(vault, rel, key)
        self.reads += 1
        self._by_path[rel] = parsed
        return parsed

    def keep_only(self, paths: set[str]) -> None:
        """Forget notes that are gone."""
        for rel in [p for p in self._by_path if p not in paths]:
            del self._by_path[rel]


def _parse(vault: Vault, rel: str, key: tuple[int, int, int]) -> _Parsed:
    try:
        note = vault.read_note(rel)
    except NoteUnreadable as exc:
        return _Parsed(key, "", {}, (), exc.reason)
    except VaultError as exc:
        return _Parsed(key, "", {}, (), str(exc))
    return _Parsed(key, note.text, note.frontmatter, tuple(find_wikilinks(note.text)))


def build_graph(vault: Vault, resolver: LinkResolver | None = None,
                cache: ParseCache | None = None) -> LinkGraph:
    """Parse every ``.md`` note in the vault and collect its edges (unchanged notes
    come from ``cache`` when one is given)."""
    files = list(vault.iter_files())
    resolver = resolver or LinkResolver(files)
    cache = cache if cache is not None else ParseCache()
    graph = LinkGraph(resolver=resolver)
    notes = [rel for rel in files if rel.endswith(".md")]
    cache.keep_only(set(notes))
    for rel in notes:
        parsed = cache.get(vault, rel)
        if parsed.unreadable:
            graph.unreadable[rel] = parsed.unreadable
            continue
        graph.texts[rel] = parsed.text
        graph.meta[rel] = parsed.meta
        edges = [_edge(rel, link, resolver) for link in parsed.links]
        graph.outlinks[rel] = edges
        for edge in edges:
            if edge.target is not None and edge.target != rel:
                graph.backlinks.setdefault(edge.target, []).append(edge)
    return graph


def _edge(source: str, link: Wikilink, resolver: LinkResolver) -> Edge:
    res = resolver.resolve(link.target, source)
    return Edge(source, res.path, link.anchor, link.line, link.raw, res.reason)


def check_vault(vault: Vault, graph: LinkGraph | None = None) -> list[Problem]:
    """Problems of the vault: errors for ``digest/``, warnings for the user's notes.

    Digest errors: broken links, a node with no source link, bare link lines under
    ``## Sources``, an unreadable node, a node without ``name`` or ``description``.
    User-note warnings: broken links and unreadable notes.
    """
    graph = graph or build_graph(vault)
    problems: list[Problem] = []
    digest_prefix = vault.digest + "/"
    for rel, reason in sorted(graph.unreadable.items()):
        level = "error" if rel.startswith(digest_prefix) else "warning"
        problems.append(Problem(level, rel, 0, f"unreadable: {reason}"))
    for rel, edges in sorted(graph.outlinks.items()):
        is_digest = rel.startswith(digest_prefix)
        level = "error" if is_digest else "warning"
        # vaultlink never removes a link it wrote, so the fix is the user's to choose
        fix = "; restore the note it names, or edit the link" if is_digest else ""
        for edge in edges:
            if edge.target is None:
                problems.append(Problem(level, rel, edge.line,
                                        f"broken link {edge.raw}: {edge.reason}{fix}"))
        if not is_digest or _is_topics(rel, vault):
            continue
        body = graph.texts[rel]  # full text, so line numbers are the file's
        for key in ("name", "description"):
            if not graph.meta[rel].get(key):
                problems.append(Problem("error", rel, 0, f"frontmatter has no {key!r}"))
        sources = [s for s in sources_links(body)
                   if _is_source(graph.resolver.resolve(s.target, rel).path, vault)]
        if not sources:
            problems.append(Problem("error", rel, 0,
                                    "no source link: add a sentence citing a daily/ or "
                                    "resource/ note under ## Sources"))
        for line, text in bare_link_lines(body):
            problems.append(Problem("error", rel, line,
                                    f"bare link line under ## Sources: {text.strip()!r}; "
                                    "say what the source supports"))
    for rel, who in sorted(shadowing_nodes(vault, vault.iter_files(), graph.meta).items()):
        stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
        problems.append(Problem("error", rel, 0, f"shadows {who}: Obsidian resolves "
                                f"[[{stem}]] by file name in any folder, without case, so "
                                "your links to it are ambiguous; `vaultlink rename-shadowing` "
                                "gives the node a qualified name"))
    return problems


def _is_topics(rel: str, vault: Vault) -> bool:
    # Topic pages are day summaries, not memory nodes: they cite notes in prose, not Sources.
    return rel.startswith(f"{vault.digest}/topics/")


def _is_source(target: str | None, vault: Vault) -> bool:
    return target is not None and target.split("/", 1)[0] in (vault.daily, vault.resource)


def resolve_note(v: Vault, given: str, gone_ok: bool = False,
                 resolver: LinkResolver | None = None) -> str:
    """The vault path a user means by a note argument: a vault path, an absolute path
    inside the vault, or a name as written in a link (``hybrid-search``,
    ``[[hybrid-search|alias]]``), resolved the way Obsidian resolves links. With
    ``gone_ok``, a vault path that no longer exists is taken as given (the journal
    remembers deleted notes). ``resolver``: one already built over the vault's files."""
    text = given.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = parse_link_body(text[2:-2])[0]
    elif Path(text).is_absolute():
        inside = _vault_path_of(v, Path(text))
        if inside is None and Path(text).exists():
            raise VaultlinkError(f"{given} is not inside the vault {v.root}")
        text = inside or text.lstrip("/")  # else a vault-root path, as in [[/daily/x]]
    res = (resolver or LinkResolver(v.iter_files())).resolve(text)
    if res.path is not None:
        return res.path
    if gone_ok and "/" in text:
        return v.rel(text if text.endswith(".md") else text + ".md")
    raise VaultlinkError(f"{given}: {res.reason}")


def _vault_path_of(v: Vault, path: Path) -> str | None:
    """The vault path of an absolute path inside the vault, also through a symlinked root."""
    try:
        return v.relative_of(path)
    except ValueError:
        pass
    try:
        return path.resolve().relative_to(v.root.resolve()).as_posix()
    except ValueError:
        return None
