"""The langdocs corpus (``bench/quality/langdocs``): one documentation set in seven languages.

React's documentation of 2017-2023 (the site now at legacy.reactjs.org), English and
its community translations, each kept in its own repository with the same file names:
``content/docs/<page>.md``. Built with::

    python -m bench.quality.realdocs._build SRC --corpus langdocs

where ``SRC/<owner>+<name>/repo`` is a git directory of each repository below (the
layout the search tool's ``fetch`` writes; ``git clone --bare`` gives the same). Pages
are read with ``git show COMMIT:PATH`` and written byte for byte: front matter, HTML,
code and links exactly as published. Nothing of a page is changed, so a page's title
lives only in its front matter (``title:``), as the site shows it.

A page is taken when it exists in English and in every core language (CORE) and each
core translation is a translation: less than half of its prose (the characters of its
lines of 25 characters or more outside code blocks, tables, HTML and lists of links)
is in lines that also occur verbatim in the English page. The other languages take the
same pages where theirs pass the same test. Stdlib only.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bench.quality.realdocs import resolved_links
from bench.quality.realdocs.realdocs_sets import DocSet

ROOT = Path(__file__).resolve().parent.parent / "langdocs"

DOCS = "content/docs"
SITE_PREFIXES = ("/docs/",)  # "[Hooks](/docs/hooks-intro.html)" names content/docs/hooks-intro.md
LICENSE = "CC-BY-4.0"
LICENSE_FILE = "LICENSE-DOCS.md"
TRANSLATED_BELOW = 0.5  # share of prose found verbatim in the English page
MIN_LINE = 25  # characters: shorter lines (headings, labels) are often left as they are


@dataclass(frozen=True)
class LangSource:
    """One language's repository and the commit its pages are read at."""

    lang: str  # the set's name: the site's language code
    repo: str  # owner/name on GitHub
    commit: str  # the last state of content/docs on the repository's main line

    @property
    def git_dir_name(self) -> str:
        return self.repo.replace("/", "+")


LANGS = (
    # the last upstream commit that changed content/docs before the old site moved out
    LangSource("en", "reactjs/react.dev", "a9bcfaf2e6e9d918d331262bef8b98643fd0255f"),
    LangSource("de", "reactjs/de.react.dev", "7bf706fcfd128edf7faab3bfe1bf869283c59988"),
    LangSource("ja", "reactjs/ja.react.dev", "01f48f660295610aa9414c51b362bf1a65b9c1ac"),
    LangSource("zh-hans", "reactjs/zh-hans.react.dev",
               "f8ed432a957a3eca0f0ed15080bb32ed64d722d2"),
    LangSource("ko", "reactjs/ko.react.dev", "24146dbeab0775a3d9a0b35fa8a2290441f7be9c"),
    LangSource("ru", "reactjs/ru.react.dev", "e740176f05e85b715e30a6c0f542d02cfb111401"),
)
CORE = ("en", "de", "ja", "zh-hans")

# Each language as a set, for the tools that read a corpus's sets (``--check``).
SETS = tuple(DocSet(name=s.lang, package=s.repo, version=s.commit, license=LICENSE,
                    archive_root=s.git_dir_name, docs=DOCS, pages=(),
                    site_prefixes=SITE_PREFIXES, license_file=LICENSE_FILE) for s in LANGS)

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_TITLE = re.compile(r"^title:[ \t]*(.*?)[ \t]*$", re.M)
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


def prose_lines(text: str) -> list[str]:
    """Stripped lines of MIN_LINE characters or more outside code, tables, HTML and link lists."""
    out: list[str] = []
    fence = False
    for line in text.splitlines():
        s = line.strip()
        if _FENCE.match(s):
            fence = not fence
            continue
        if fence or len(s) < MIN_LINE or s.startswith(("|", "<")):
            continue
        if s.startswith(("[", "-", "*")) and "](" in s:
            continue
        out.append(s)
    return out


def untranslated_share(text: str, english: str) -> float:
    """The share of ``text``'s prose characters in lines that the English page also has."""
    lines = prose_lines(text)
    total = sum(len(s) for s in lines)
    if total == 0:
        return 1.0
    known = set(prose_lines(english))
    return sum(len(s) for s in lines if s in known) / total


def front_matter_title(text: str) -> str:
    """The ``title:`` of the page's front matter, unquoted ("" when it has none)."""
    m = _FRONT.match(text)
    t = _TITLE.search(m.group(1)) if m else None
    if t is None:
        return ""
    value = t.group(1)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value


class Repo:
    """A git directory read with ``git show`` and ``git ls-tree``."""

    def __init__(self, src: Path, source: LangSource) -> None:
        self.git_dir = src / source.git_dir_name / "repo"
        if not self.git_dir.is_dir():
            raise SystemExit(f"{self.git_dir}: no git directory of {source.repo}")
        self.commit = source.commit

    def _git(self, *args: str) -> bytes:
        return subprocess.run(["git", "--git-dir", str(self.git_dir), *args],
                              check=True, capture_output=True).stdout

    def pages(self) -> list[str]:
        """Paths relative to DOCS of the ``.md`` files at the commit, sorted."""
        names = self._git("ls-tree", "-r", "--name-only", "-z", self.commit, DOCS + "/")
        return sorted(n.decode("utf-8").removeprefix(DOCS + "/")
                      for n in names.split(b"\0") if n.endswith(b".md"))

    def read(self, rel: str) -> bytes:
        """A page's bytes at the commit (``rel`` relative to DOCS)."""
        return self._git("show", f"{self.commit}:{DOCS}/{rel}")

    def read_root(self, path: str) -> bytes:
        """A file's bytes at the commit, ``path`` relative to the repository's root."""
        return self._git("show", f"{self.commit}:{path}")


def select(texts: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """Each language's taken pages (relative paths), by the rule in the module docstring."""
    en = texts["en"]
    core = [rel for rel in sorted(en)
            if all(rel in texts[lang] and untranslated_share(texts[lang][rel], en[rel])
                   < TRANSLATED_BELOW for lang in CORE if lang != "en")]
    out = {"en": core}
    for src in LANGS:
        if src.lang == "en":
            continue
        have = texts[src.lang]
        out[src.lang] = [rel for rel in core if rel in have
                         and untranslated_share(have[rel], en[rel]) < TRANSLATED_BELOW]
    return out


def build(src: Path, dest: Path | None = None) -> list[dict[str, object]]:
    """Write the pages, licences and MANIFEST.json under ``dest`` (ROOT by default)."""
    dest = ROOT if dest is None else dest
    repos = {s.lang: Repo(src, s) for s in LANGS}
    raw = {lang: {rel: r.read(rel) for rel in r.pages()} for lang, r in repos.items()}
    texts = {lang: {rel: b.decode("utf-8") for rel, b in pages.items()}
             for lang, pages in raw.items()}
    chosen = select(texts)
    manifest: list[dict[str, object]] = []
    (dest / "licenses").mkdir(parents=True, exist_ok=True)
    for s in LANGS:
        rels = chosen[s.lang]
        to_corpus = {rel: f"{s.lang}/{rel}" for rel in rels}
        out_dir = dest / s.lang
        if out_dir.exists():
            for old in out_dir.glob("*.md"):
                old.unlink()
        out_dir.mkdir(parents=True, exist_ok=True)
        for rel in rels:
            data, text = raw[s.lang][rel], texts[s.lang][rel]
            (dest / to_corpus[rel]).write_bytes(data)
            manifest.append({
                "set": s.lang,
                "language": s.lang,
                "path": to_corpus[rel],
                "original_path": rel,
                "package": s.repo,
                "version": s.commit,
                "license": LICENSE,
                "source": f"{s.repo}@{s.commit[:12]}: {DOCS}/{rel}",
                "title": front_matter_title(text) or rel.removesuffix(".md"),
                "words": len(text.split()),
                "chars": len(text),
                "links": resolved_links(text, rel, to_corpus, SITE_PREFIXES),
            })
        # the repository's own licence of its docs
        licence = repos[s.lang].read_root(LICENSE_FILE)
        (dest / "licenses" / f"{s.lang}-{LICENSE_FILE}").write_bytes(licence)
    (dest / "MANIFEST.json").write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest
