"""The day-note template: the frame every day note starts from, which is not its content.

Read as content, a bare template day gives units named after its headings, and two days
that share the frame look like copies. ``day_template`` finds it once per run, from
Obsidian's settings (Daily notes, Periodic Notes, Templater, Templates; read as
untrusted JSON within a size bound) and from the day notes themselves (a line that
recurs in 40% of them), cached by what it was computed from. ``DayTemplate.owner_text``
is a note as its owner wrote it, line for line. Where each setting lives and how
placeholders match: docs/pipeline.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from vaultlink.errors import VaultError
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.obsidian import content_text
from vaultlink.pipeline.extract.frame_headings import LEVEL, heading_key, keep_sorting_headings
from vaultlink.vault.notes import NoteInfo, Vault
from vaultlink.vault.paths import normalize_rel
from vaultlink.vault.readpolicy import is_hidden

log = logging.getLogger(__name__)

SETTINGS_BYTES = 64_000  # Obsidian writes a few hundred bytes per plugin
SHARE = 0.4          # a line in this share of the day notes is the template's
MIN_NOTES = 5        # ... of at least this many day notes
MIN_REPEATS = 3      # ... and in at least this many
SAMPLE = 60          # the latest day notes read to find it
MAX_LINE = 200       # a longer line is the owner's, however often it recurs
DAILY_NOTES = ".obsidian/daily-notes.json"
TEMPLATES = ".obsidian/templates.json"
TEMPLATER = ".obsidian/plugins/templater-obsidian/data.json"
PERIODIC = ".obsidian/plugins/periodic-notes/data.json"
_PLACEHOLDER = re.compile(r"<%[\s\S]*?%>|\{\{[^{}\n]*\}\}")
# ``<% name %>``, ``<% note.basename %>``: a variable a Templater script set (a random
# note to review, a quote fetched from the web), not one of Templater's ``tp.`` calls
_SCRIPT_VALUE = re.compile(r"<%[-_]?\s*(?!tp\.)[^\W\d][\w.]*\s*[-_]?%>")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_DAY_NAME = re.compile(r"(?:^|[\s_-])(?:daily|day|journal|diary|tagebuch|journal|日记|日記)",
                       re.IGNORECASE)
_DATE_WORDS = frozenset("""january february march april may june july august september
october november december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday
wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun st nd
rd th am pm w week cw kw""".split())
_CACHE: dict[tuple[str, str], DayTemplate] = {}
_CACHED = 16


def _norm(line: str) -> str:
    return " ".join(line.split())


@dataclass(frozen=True)
class DayTemplate:
    """The lines of a vault's day-note frame and where they were found."""

    folder: str = "daily"
    lines: frozenset[str] = frozenset()  # whole lines, whitespace-normalised
    patterns: tuple[re.Pattern[str], ...] = ()  # lines with placeholders
    source: str = ""  # "Templates/Daily.md", "12 of 30 day notes", or both
    key: str = ""

    def __bool__(self) -> bool:
        return bool(self.lines or self.patterns)

    @cached_property
    def headings(self) -> frozenset[str]:
        """The frame's headings by their words (``heading_key``)."""
        return frozenset(heading_key(t) for t in self.lines if t.startswith("#")) - {""}

    def is_frame(self, line: str, stem: str) -> bool:
        """Whether a line of a day note is the template's (``stem``: the note's name)."""
        norm = _norm(line)
        if not norm:
            return False
        if norm in self.lines:
            return True
        if heading_key(norm) in self.headings:
            return True  # the frame's heading at another level or behind another icon
        for pattern in self.patterns:
            m = pattern.fullmatch(norm)
            if m and all(_stands_for_date(g or "", stem) for g in m.groups()):
                return True
        return False

    def frame_text(self, path: str, text: str) -> str:
        """A day note's text with the template's lines blank, line for line (front
        matter and the note's own fenced code as written); other notes as they are.
        An owner's heading with nothing under it before a heading of the frame goes
        too: what the owner wrote under the frame's heading is not its ("## Task",
        left empty, took the list below the frame's "## Day Planner" for its own)."""
        if not self or not path.startswith(f"{self.folder}/"):
            return text
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        _, _, skip = split_frontmatter(text)
        lines = text.split("\n")
        written = list(lines)
        fence = ""
        last = -1  # the last line left that is not blank
        for i in range(skip, len(lines)):
            m = _FENCE.match(lines[i])
            if fence:
                if lines[i].strip().startswith(fence) and not lines[i].strip().strip(fence[0]):
                    fence = ""
            elif m:
                fence = m.group(1)
            elif self.is_frame(lines[i], stem) or (
                    i > skip and lazy_quote(written[i - 1], lines[i])
                    and self.is_frame("> " + lines[i], stem)):
                if last >= 0 and _closes(lines[i], lines[last]):
                    lines[last] = ""  # the owner's heading above, with nothing under it
                lines[i] = ""
            if lines[i].strip():
                last = i
        return "\n".join(lines)

    def owner_text(self, path: str, text: str) -> str:
        """What the owner wrote: the template's lines blank (day notes), then what
        Obsidian shows as machinery (fields, queries, comments ...) left out; embeds
        stay, for the reader to pass over with its reason (the model's prompt and the
        search index cut them). The frame's headings that only sort what the owner
        wrote under them come back (``frame_headings``)."""
        framed = self.frame_text(path, text)
        owner = content_text(framed, keep_embeds=True)
        lines, written = owner.split("\n"), text.split("\n")
        if framed == text or len(lines) != len(written):
            return owner
        keep_sorting_headings(lines, written)
        return "\n".join(lines)


NO_TEMPLATE = DayTemplate()
def _closes(frame: str, above: str) -> bool:
    """Whether the frame's line is a heading that ends the section of the heading
    ``above`` it (of the same level or a deeper one)."""
    below, over = LEVEL.match(frame), LEVEL.match(above)
    return bool(below and over and len(over.group(1)) >= len(below.group(1)))


_BLOCK_START = re.compile(r"^\s{0,3}(?:#{1,6}\s|>|[-*+]\s|\d+[.)]\s|`{3}|~{3}|<)")


def lazy_quote(above: str, line: str) -> bool:
    """Whether ``line`` goes on with the quote or callout on the line above it without a
    ``>`` of its own (Markdown's lazy continuation: Obsidian shows it inside the callout).
    A template's script wrote the quote of the day so in older days."""
    return above.lstrip().startswith(">") and bool(line.strip()) \
        and not _BLOCK_START.match(line)


def _stands_for_date(value: str, stem: str) -> bool:
    """Whether a placeholder's value is a date (in words or digits) or the note's name:
    a placeholder that took the owner's words (a prompt, the cursor) is the owner's."""
    value = value.strip()
    if not value or value == stem or value.strip("[]") == stem:
        return True
    words = re.findall(r"[^\W\d_]+", value.lower())
    if all(w in _DATE_WORDS for w in words):
        return True
    return bool(re.search(r"\d", value)) and len(value.split()) <= 4


def template_of(text: str) -> tuple[frozenset[str], tuple[re.Pattern[str], ...]]:
    """The lines of a template note, as exact lines and as patterns for lines with
    placeholders. Blank lines, fence lines and lines only of placeholders are no frame
    (a lone ``<% tp.file.cursor() %>`` is where the owner writes)."""
    _, body, _ = split_frontmatter(text)
    body = re.sub(r"<%[*_-]?[^%]*?\n[\s\S]*?%>", "", body)  # a script over lines: no output
    exact: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    for raw in body.split("\n"):
        line = _norm(raw)
        if not line or _FENCE.match(line):
            continue
        parts = _PLACEHOLDER.split(line)
        if len(parts) == 1:
            exact.add(line)
            continue
        literal = "".join(parts)
        if not re.search(r"[^\W_]|[#>:\-*]", literal):
            continue
        # a script's variable is filled by the script (a quote of the day fetched from
        # the web): any value; a date, the title or a prompt is judged by its value
        holes = [r"\s*(?:.*?)\s*" if _SCRIPT_VALUE.fullmatch(m.group()) else r"\s*(.*?)\s*"
                 for m in _PLACEHOLDER.finditer(line)]
        regex = re.escape(parts[0].strip()) if parts[0].strip() else ""
        for hole, part in zip(holes, parts[1:], strict=True):
            regex += hole + (re.escape(part.strip()) if part.strip() else "")
        patterns.append(re.compile(regex))
    return frozenset(exact), tuple(patterns)


def recurring_lines(texts: Sequence[str]) -> frozenset[str]:
    """Lines that recur in ``SHARE`` of the day notes (and ``MIN_REPEATS`` of them), when
    there are ``MIN_NOTES``: the frame the owner fills in each day."""
    if len(texts) < MIN_NOTES:
        return frozenset()
    counts: Counter[str] = Counter()
    for text in texts:
        _, body, _ = split_frontmatter(text)
        seen: set[str] = set()
        fence = ""
        for raw in body.split("\n"):
            m = _FENCE.match(raw)
            if fence:
                if raw.strip().startswith(fence) and not raw.strip().strip(fence[0]):
                    fence = ""
                continue
            if m:
                fence = m.group(1)
                continue
            line = _norm(raw)
            if line and len(line) <= MAX_LINE:
                seen.add(line)
        counts.update(seen)
    least = max(MIN_REPEATS, SHARE * len(texts))
    return frozenset(line for line, n in counts.items() if n >= least)


def day_template(vault: Vault, days: Sequence[NoteInfo]) -> DayTemplate:
    """The day-note template of ``vault`` (see the module's docstring); ``days``: the
    day notes as a scan lists them (path and hash). Computed once per change of what it
    is made of, and cached."""
    settings = _settings(vault)
    found = _template_path(vault, settings)
    template_text, template_hash = "", ""
    if found:
        try:
            note = vault.read_note(found)
            template_text, template_hash = note.text, note.hash
        except VaultError as exc:
            log.info("day template %s not read: %s", found, exc)
            found = ""
    sample = sorted(days, key=lambda i: i.path)[-SAMPLE:]
    key = hashlib.sha256(json.dumps([vault.daily, sorted(settings.items()), found,
                                     template_hash, [(i.path, i.hash) for i in sample]],
                                    default=str).encode()).hexdigest()[:16]
    cached = _CACHE.get((str(vault.root), key))
    if cached is not None:
        return cached
    exact, patterns = template_of(template_text) if found else (frozenset(), ())
    texts = []
    if len(sample) >= MIN_NOTES:
        for info in sample:
            if info.path == found:
                continue
            try:
                texts.append(vault.read_note(info.path).text)
            except VaultError:
                continue
    recurring = recurring_lines(texts)
    sources = [found] if found else []
    if recurring - exact:
        sources.append(f"lines recurring in {len(texts)} day notes")
    template = DayTemplate(vault.daily, exact | recurring, patterns, " and ".join(sources), key)
    if template:
        log.info("day-note template: %s (%d lines)", template.source,
                 len(template.lines) + len(template.patterns))
    if len(_CACHE) >= _CACHED:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[(str(vault.root), key)] = template
    return template


def _settings(vault: Vault) -> dict[str, Any]:
    """The settings files that name a template, parsed (``{}`` for a missing, oversized
    or broken one), by their vault path."""
    out: dict[str, Any] = {}
    for rel in (DAILY_NOTES, PERIODIC, TEMPLATER, TEMPLATES):
        try:
            path = vault.abs(rel)
            if not path.is_file() or path.stat().st_size > SETTINGS_BYTES:
                continue
            data = json.loads(path.read_bytes()[:SETTINGS_BYTES].decode("utf-8"))
        except (OSError, ValueError, RecursionError, VaultError) as exc:
            log.info("%s not read: %s", rel, exc)
            continue
        if isinstance(data, dict):
            out[rel] = data
    return out


def _text(value: Any) -> str:
    return value.strip()[:500] if isinstance(value, str) else ""


def _template_path(vault: Vault, settings: dict[str, Any]) -> str:
    """The vault path of the day template the settings name ('' for none)."""
    daily = settings.get(DAILY_NOTES, {})
    periodic = settings.get(PERIODIC, {}).get("daily")
    named = [_text(daily.get("template"))]
    if isinstance(periodic, dict) and periodic.get("enabled", True) is not False:
        named.append(_text(periodic.get("template")))
    templater = settings.get(TEMPLATER, {})
    folders = templater.get("folder_templates")
    for entry in folders if isinstance(folders, list) else []:
        if isinstance(entry, dict) and _text(entry.get("folder")).strip("/") == vault.daily:
            named.append(_text(entry.get("template")))
    for name in named:
        path = _note_path(vault, name)
        if path:
            return path
    for folder in (_text(settings.get(TEMPLATES, {}).get("folder")),
                   _text(templater.get("templates_folder"))):
        path = _day_template_in(vault, folder)
        if path:
            return path
    return ""


def _note_path(vault: Vault, name: str) -> str:
    """A template named in the settings ("Templates/Daily", "/Templates/Daily.md") as a
    vault path of a Markdown note that exists and is no dot-path; '' otherwise."""
    if not name:
        return ""
    try:
        rel = normalize_rel(name.strip("/"))
    except VaultError:
        return ""
    rel = rel if rel.endswith(".md") else rel + ".md"
    return rel if not is_hidden(rel) and vault.exists(rel) else ""


def _day_template_in(vault: Vault, folder: str) -> str:
    """The one note of a templates folder named for days ("Daily", "Journal template")."""
    if not folder:
        return ""
    try:
        rel = normalize_rel(folder.strip("/"))
    except VaultError:
        return ""
    if is_hidden(rel):
        return ""
    try:
        names = [p for p in vault.iter_files([rel]) if p.endswith(".md")
                 and _DAY_NAME.search(p.rsplit("/", 1)[-1].removesuffix(".md"))]
    except (OSError, VaultError):
        return ""
    return names[0] if len(names) == 1 else ""
