"""A note that repeats one already integrated: the same page clipped twice, under another
file name, with a line or two added ("Copied again for the team wiki.").

Such a note says nothing new: it corroborates the nodes that hold its twin, found by its
content (the nodes nearest its text, and the notes they cite), never by its file name.
Extracting it again would make a second node named after the file, or a REFINE that adds
the copy's own boilerplate. Both integrators take the same path: extract gives one
corroborating unit per node that cites the twin, and integrate adds the note to that
node's Sources without a model call.
"""

from __future__ import annotations

import hashlib
import logging

from vaultlink.errors import IndexServerUnavailable, VaultlinkError
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import count_words
from vaultlink.markdown.sections import cited_sources
from vaultlink.pipeline.context import DreamContext, SourceNote
from vaultlink.pipeline.extract.template import NO_TEMPLATE, DayTemplate
from vaultlink.prose.units import Unit, slugify

log = logging.getLogger(__name__)

REPEAT_SHARE = 0.8  # share of a note's paragraphs its twin must hold word for word
MIN_PARAGRAPHS = 3  # a note shorter than this is too little to call a copy
MAX_ADDED_WORDS = 40  # what a copy may add ("Copied again for the team wiki.")
NEAREST = 5         # nodes whose sources are compared with the note
QUERY_CHARS = 300  # its opening: enough to find the node, cheap to embed


def fingerprint(text: str) -> str:
    """A section's or paragraph's identity across edits: a whitespace-insensitive hash."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


def paragraphs_by_print(text: str) -> dict[str, str]:
    """A note's paragraphs (frontmatter left out) by their fingerprint."""
    _, body, _ = split_frontmatter(text)
    return {fingerprint(para): para for para in body.split("\n\n") if para.strip()}


def twin_of(ctx: DreamContext, note: SourceNote, checkpointed: set[str],
            template: DayTemplate = NO_TEMPLATE
            ) -> tuple[str, list[tuple[str, str, str]]] | None:
    """The integrated note that ``note`` repeats, and the nodes citing it as (path, name,
    bucket); None when it repeats none. Reads only the few nodes nearest its text and
    the notes they cite. Both are judged on what their owner wrote: ``note.text`` is
    that already (``extract.source_note``), the twin's is read through ``template``, so
    two days made from one template with different entries are no copies."""
    paragraphs = paragraphs_by_print(note.text)
    mine = set(paragraphs)
    if len(mine) < MIN_PARAGRAPHS:
        return None
    body = split_frontmatter(note.text)[1].strip()
    try:
        hits = list(ctx.index.node_search(body[:QUERY_CHARS] or note.path, NEAREST))
        holders: dict[str, list[tuple[str, str, str]]] = {}
        for hit in hits:
            text = ctx.vault.read_note(hit.path).text
            for source in cited_sources(text):
                if source != note.path and source in checkpointed:
                    holders.setdefault(source, []).append(
                        (hit.path, hit.name, hit.path.split("/")[-2]))
        for source, nodes in holders.items():
            theirs = set(paragraphs_by_print(
                template.owner_text(source, ctx.vault.read_note(source).text)))
            added = sum(count_words(paragraphs[p]) for p in mine - theirs)
            # a line or two added, never new material: that is extracted as usual
            if len(mine & theirs) >= REPEAT_SHARE * len(mine) and added <= MAX_ADDED_WORDS:
                return source, nodes
    except IndexServerUnavailable:
        raise  # the index's server is down: the run stops, the note waits
    except VaultlinkError as exc:  # no twin found is the safe answer: extract as usual
        log.info("looking for a twin of %s: %s", note.path, exc)
    return None


def repeat_units(note: SourceNote, twin: str, nodes: list[tuple[str, str, str]]) -> list[Unit]:
    """One unit per node that holds the twin: it adds ``note`` to that node's Sources."""
    return [Unit(slugify(path.rsplit("/", 1)[-1].removesuffix(".md")), bucket,
                 f"The same text as {twin}.", [note.path], title=name, corroborates=path,
                 repeats=twin)
            for path, name, bucket in nodes]
