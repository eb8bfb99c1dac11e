"""Rebuild a corpus's pages and MANIFEST.json from the unpacked package archives.

    python -m bench.quality.realdocs._build SRC [--corpus realdocs|linkdocs]
        [--drop-link-host HOST ...]

SRC holds the archives unpacked side by side (``tar xf``; an npm tarball into a folder
named after it, as ``SRC/fastify-5.12.8/package/``), as each corpus's SOURCES.md lists
them. ``realdocs`` (the default) is the 70 hand-picked pages listed below; ``linkdocs``
is the larger corpus whose sets ``linkdocs_sets`` defines by rules. The only changes
made to a page are the ones in ``clean`` (front matter, mkdocs admonitions and content
tabs, mkdocstrings directives) and, for each ``--drop-link-host``, links to that web host
turned into their plain labels and any other mention of it (or a subdomain) written
``registry.example`` (the corpora were built with the hosts of the package registries'
own web pages, which this repository does not name). Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from urllib.parse import urlsplit

from bench.quality.realdocs import ROOT, langdocs_sets, linkdocs_sets, resolved_links, strip_links
from bench.quality.realdocs.realdocs_sets import MAX_WORDS, MIN_WORDS, SETS, DocSet

# ------------------------------------------------------------------ cleaning

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(?:.*\n)*?---[ \t]*\n\s*")
_ADMONITION = re.compile(
    r'^( *)(?:!!!|\?\?\?\+?)[ \t]+([\w-]+(?:[ \t]+[\w-]+)*)?[ \t]*(?:"([^"]*)")?[ \t]*$'
)
_TAB = re.compile(r'^( *)===\+?[ \t]+"([^"]*)"[ \t]*$')
_MKDOCSTRINGS = re.compile(r"^:::[ \t]+[\w.:-]+[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def _block(lines: list[str], i: int, indent: str = "") -> tuple[list[str], int]:
    """The block indented under line ``i`` (which is indented by ``indent``), de-indented,
    and the index of the line after it."""
    j = i + 1
    body: list[str] = []
    inner = indent + "    "
    while j < len(lines):
        line = lines[j].replace("\t", "    ", 1) if lines[j].startswith(indent + "\t") else lines[j]
        if line.strip() == "":
            body.append("")
        elif line.startswith(inner):
            body.append(line[len(inner) :])
        else:
            break
        j += 1
    while body and body[-1] == "":
        body.pop()
        j -= 1
    while body and body[0] == "":
        body.pop(0)
    return body, j


def _clean_lines(lines: list[str]) -> list[str]:
    out: list[str] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            i += 1
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            i += 1
            continue
        if (a := _ADMONITION.match(line)) is not None:
            indent = a.group(1)
            kind = (a.group(2) or "note").split()[0]
            title = a.group(3) if a.group(3) is not None else kind.capitalize()
            body, i = _block(lines, i, indent)
            quoted = [f"**{title}**", ""] if title else []
            quoted += _clean_lines(body)
            out.extend(f"{indent}> {q}" if q else f"{indent}>" for q in quoted)
            continue
        if (t := _TAB.match(line)) is not None:
            indent = t.group(1)
            body, i = _block(lines, i, indent)
            out.append(f"{indent}**{t.group(2)}**")
            out.append("")
            out.extend(f"{indent}{b}" if b else "" for b in _clean_lines(body))
            continue
        if _MKDOCSTRINGS.match(line):
            _, i = _block(lines, i)
            continue
        out.append(line)
        i += 1
    return out


def clean(text: str) -> str:
    """Plain Markdown: no YAML front matter, no mkdocs-only block syntax.

    ``!!! note "Title"`` admonitions (and ``???`` collapsibles) become blockquotes with
    the title in bold; ``=== "Tab"`` content tabs become a bold label followed by the
    tab's content; ``::: module.Object`` mkdocstrings directives go. Indented bodies
    of these blocks would otherwise render as code. Everything else is left as written.
    """
    text = text.replace("\r\n", "\n")
    text = _FRONT_MATTER.sub("", text, count=1)
    cleaned = "\n".join(_clean_lines(text.split("\n")))
    return cleaned.rstrip("\n") + "\n"


# ------------------------------------------------------------------ titles, slugs

_ATX = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^(=+|-+)[ \t]*$")
_HTML_H1 = re.compile(r"^<h1[^>]*>(.*?)</h1>\s*$", re.I)
_ATTRS = re.compile(r"[ \t]*\{[:#.][^}]*\}[ \t]*$")


def title_of(text: str, fallback: str, banner: str = "") -> str:
    """The first H1 (ATX, setext or HTML), else the first H2, else ``fallback``.

    An HTML ``<h1>`` whose text is ``banner`` (the site's name) is not a title.
    """
    found: dict[int, str] = {}
    fence: str | None = None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0]:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        level, heading = 0, ""
        if (a := _ATX.match(line)) is not None:
            level, heading = len(a.group(1)), a.group(2)
        elif (h := _HTML_H1.match(line)) is not None and h.group(1).strip() != banner:
            level, heading = 1, h.group(1)
        elif (
            i + 1 < len(lines)
            and line.strip()
            and not line.startswith(("    ", "\t", ">", "-", "*", "|", "<"))
            and (s := _SETEXT.match(lines[i + 1])) is not None
            and (i == 0 or lines[i - 1].strip() == "")
        ):
            level, heading = (1 if s.group(1)[0] == "=" else 2), line.strip()
        if level in (1, 2):
            found.setdefault(level, _ATTRS.sub("", heading).strip())
            if level == 1:
                break
    return found.get(1) or found.get(2) or fallback


def slug_of(original_path: str) -> str:
    stem = original_path.removesuffix(".md")
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") + ".md"


def words(text: str) -> int:
    return len(text.split())


# ------------------------------------------------------------------ build


def _on_hosts(hosts: Sequence[str]) -> re.Pattern[str] | None:
    if not hosts:
        return None
    alts = "|".join(re.escape(h.lower().strip(".")) for h in hosts)
    return re.compile(rf"^(?:[\w-]+\.)*(?:{alts})$")


MASK = "registry.example"


def drop_host_links(text: str, hosts: Sequence[str]) -> str:
    """Links (inline or by reference) to any of ``hosts`` or their subdomains become labels;
    any other mention of such a host name (in prose, code or an e-mail address) becomes
    ``registry.example``."""
    pattern = _on_hosts(hosts)
    if pattern is None:
        return text

    def goes(target: str) -> bool:
        host = urlsplit(target).hostname if "//" in target else None
        return host is not None and pattern.match(host) is not None

    return mask_hosts(strip_links(text, goes), hosts)


def mask_hosts(text: str, hosts: Sequence[str]) -> str:
    """Each mention of one of ``hosts`` or a subdomain of it becomes ``registry.example``."""
    if not hosts:
        return text
    alts = "|".join(re.escape(h.lower().strip(".")) for h in hosts)
    mention = re.compile(rf"(?<![\w.-])(?:[\w-]+\.)*(?:{alts})(?![\w-])", re.I)
    return mention.sub(MASK, text)


@dataclass(frozen=True)
class Corpus:
    root: Path
    sets: tuple[DocSet, ...]
    min_words: int
    max_words: int
    # a corpus read from git repositories rather than archives has its own builder
    builder: Callable[[Path, Path | None], list[dict[str, object]]] | None = None


def corpora() -> dict[str, Corpus]:
    """Each corpus by name: where it lives, its sets and its page-size bounds."""
    return {
        "realdocs": Corpus(ROOT, SETS, MIN_WORDS, MAX_WORDS),
        "linkdocs": Corpus(
            linkdocs_sets.ROOT,
            linkdocs_sets.SETS,
            linkdocs_sets.MIN_WORDS,
            linkdocs_sets.MAX_WORDS,
        ),
        "langdocs": Corpus(langdocs_sets.ROOT, langdocs_sets.SETS, 0, 10**9,
                           builder=langdocs_sets.build),
    }


def heading_from_front_matter(text: str) -> str:
    """``text`` with its front matter's title and description as an H1 and a lead line."""
    text = text.replace("\r\n", "\n")
    m = _FRONT_MATTER.match(text)
    if m is None:
        return text
    fields = dict(re.findall(r"^(title|description):[ \t]*(.+?)[ \t]*$", m.group(0), re.M))
    head = [f"# {fields['title']}"] if "title" in fields else []
    if "description" in fields:
        head.append(fields["description"].rstrip(".") + ".")
    return "\n\n".join(head) + "\n\n" + text[m.end():]


def selected(ds: DocSet, docs: Path, corpus: Corpus) -> dict[str, str]:
    """Original path -> cleaned text of the set's pages, in order."""
    if ds.pages:
        return {orig: clean((docs / orig).read_text(encoding="utf-8")) for orig in ds.pages}
    out: dict[str, str] = {}
    for f in sorted(docs.rglob("*.md"), key=lambda f: f.relative_to(docs).as_posix()):
        orig = f.relative_to(docs).as_posix()
        if not any(fnmatchcase(orig, g) for g in ds.include):
            continue
        if any(fnmatchcase(orig, g) for g in ds.exclude):
            continue
        raw = f.read_text(encoding="utf-8")
        text = clean(heading_from_front_matter(raw) if ds.front_matter_heading else raw)
        if corpus.min_words <= words(text) <= corpus.max_words:
            out[orig] = text
    return out


def build(
    src: Path,
    dest: Path | None = None,
    drop_link_hosts: Sequence[str] = (),
    corpus: str = "realdocs",
) -> list[dict[str, object]]:
    spec = corpora()[corpus]
    if spec.builder is not None:
        return spec.builder(src, dest)
    dest = spec.root if dest is None else dest
    manifest: list[dict[str, object]] = []
    for ds in spec.sets:
        docs = src / ds.docs_in_archive
        cleaned = selected(ds, docs, spec)
        to_corpus = {orig: f"{ds.name}/{slug_of(orig)}" for orig in cleaned}
        if len(set(to_corpus.values())) != len(to_corpus):
            raise SystemExit(f"{ds.name}: two pages share a slug")
        out_dir = dest / ds.name
        if out_dir.exists():
            for old in out_dir.glob("*.md"):
                old.unlink()
        out_dir.mkdir(parents=True, exist_ok=True)
        for orig, text in cleaned.items():
            text = drop_host_links(text, drop_link_hosts)
            n = words(text)
            if not spec.min_words <= n <= spec.max_words:
                raise SystemExit(f"{ds.name}/{orig}: {n} words")
            path = to_corpus[orig]
            (dest / path).write_text(text, encoding="utf-8")
            manifest.append(
                {
                    "set": ds.name,
                    "path": path,
                    "original_path": orig,
                    "package": ds.package,
                    "version": ds.version,
                    "license": ds.license,
                    "source": f"{ds.package} {ds.version}: {ds.docs_in_archive}/{orig}",
                    "title": title_of(text, Path(orig).stem.replace("-", " "), ds.banner),
                    "words": n,
                    "links": resolved_links(text, orig, to_corpus, ds.site_prefixes),
                }
            )
        if ds.license_file:
            lic = (src / ds.archive_root / ds.license_file).read_text(encoding="utf-8")
            lic = mask_hosts(lic, drop_link_hosts)
            (dest / "licenses").mkdir(exist_ok=True)
            (dest / "licenses" / f"{ds.package}-LICENSE.txt").write_text(lic, encoding="utf-8")
    (dest / "MANIFEST.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.realdocs._build")
    parser.add_argument("src", type=Path, help="folder with the unpacked archives")
    parser.add_argument("--corpus", choices=sorted(corpora()), default="realdocs")
    parser.add_argument("--drop-link-host", action="append", default=[], metavar="HOST")
    args = parser.parse_args(argv)
    manifest = build(args.src, drop_link_hosts=args.drop_link_host, corpus=args.corpus)
    print(f"{len(manifest)} pages written to {corpora()[args.corpus].root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
