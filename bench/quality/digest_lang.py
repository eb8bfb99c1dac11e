"""bench.quality.digest's language axis: one documentation set's pages, language by language.

    .venv/bin/python -m bench.quality.digest --corpus langdocs                  # en de ja zh-hans
    .venv/bin/python -m bench.quality.digest --corpus langdocs --language ko --keep /tmp/d

Each language's pages of ``langdocs`` (React's docs and their translations, as published:
front matter, no H1) go into a vault of their own as resource notes (their page links
turned into labels, kept as the truth), one page at a time, and the offline integrator
(``vaultlink dream --llm offline``, the configured steps) runs after each page until it
settles. A run that raises fails that page only: the failure (exception and where) is
recorded, the page is taken out of the vault, and the next page goes in, so one page
cannot stop the bench. Per language it reports:

* nodes per page: digest nodes (topic pages aside) over the pages fed;
* generic or heading-only names: a node name that, once the set's own product words
  (words of a fifth or more of the language's page titles, e.g. "React") and the
  language's function words are set aside, is made only of generic section words
  (GENERIC: Overview, Syntax, Examples, See also, ... and their German, Japanese,
  Chinese, Korean and Russian equals), or that is a heading found on 3 or more pages of
  the language (a recurring section heading names a part of pages, not a subject);
* pages of more than 200 words that gave nothing (no node cites them). Words: the
  page's prose (front matter and code blocks left out) as whitespace-separated tokens,
  except that Han characters and kana count half a word each (Chinese and Japanese are
  written without spaces; a word there is about two characters); Hangul, written with
  spaces, counts by tokens;
* nodes holding two pages that the set's links do not relate (a node citing two pages
  of which neither links to the other);
* names that are a page's file name (``hooks-intro.md`` -> "Hooks intro") rather than
  anything its text or front matter says, and, for languages with a script of their
  own (ja, zh-hans, ko, ru), names with no letter of that script;
* failed pages, with the error.
"""

from __future__ import annotations

import re
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from bench.quality.digest_measures import load_nodes
from bench.quality.digest_run import dream_once
from bench.quality.realdocs import Page, load_corpus, truth_pairs, unlink
from bench.quality.realdocs._build import corpora
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.vault.notes import Vault

DEFAULT_LANGUAGES = ("en", "de", "ja", "zh-hans")
LONG_PAGE = 200  # words
RECURRING = 3  # pages a heading must be on to count as a section heading
MAX_RUNS_PER_PAGE = 4

# Section words that name a part of a page, not its subject, and function words, per
# language. Phrases are matched whole, after lowercasing and hyphens as spaces.
GENERIC: dict[str, str] = {
    "en": """overview|introduction|intro|description|examples|example|usage|syntax|synopsis|
        notes|note|see also|summary|parameters|parameter|return value|returns|reference|api|
        options|configuration|installation|try it|motivation|caveats|limitations|
        troubleshooting|faq|background|details|general|basics|getting started|next steps|
        what's next|how it works|conclusion|recap|prerequisites|setup""",
    "de": """übersicht|überblick|einführung|einleitung|beschreibung|beispiele|beispiel|
        verwendung|benutzung|syntax|hinweise|hinweis|anmerkungen|siehe auch|zusammenfassung|
        parameter|rückgabewert|referenz|optionen|konfiguration|installation|motivation|
        einschränkungen|hintergrund|details|allgemeines|grundlagen|erste schritte|
        nächste schritte|wie geht es weiter|fazit|voraussetzungen""",
    "ja": """概要|はじめに|導入|説明|例|使用例|使用法|使い方|構文|注意|注意点|補足|関連項目|
        参照|まとめ|引数|戻り値|リファレンス|オプション|設定|インストール|動機|制限|背景|詳細|
        基本|次のステップ|前提条件|その他""",
    "zh-hans": """概述|概览|简介|介绍|描述|说明|示例|例子|用法|使用|语法|注意|注意事项|备注|
        另请参阅|参见|总结|小结|参数|返回值|参考|选项|配置|安装|动机|限制|背景|详情|基础|
        下一步|前提条件|其他""",
    "ko": """개요|소개|설명|예시|예제|사용법|구문|문법|참고|주의|요약|매개변수|반환값|참조|옵션|
        설정|설치|동기|제한|배경|기본|다음 단계|다음 단계로""",
    "ru": """обзор|введение|описание|примеры|пример|использование|синтаксис|примечания|
        примечание|см. также|смотрите также|итоги|резюме|параметры|возвращаемое значение|
        справочник|опции|настройки|установка|мотивация|ограничения|детали|основы|
        дальнейшие шаги|что дальше|заключение""",
}
FUNCTION_WORDS: dict[str, str] = {
    "en": "a an the of to in on for with and or about from by at",
    "de": "der die das den dem des ein eine einen mit und oder von zu zum zur für im in am auf",
    "ja": "の と に を は で が や",
    "zh-hans": "的 和 与 及 之",
    "ko": "및 의 와 과",
    "ru": "и с в на для о по к из от",
}

_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_TOKEN = re.compile(r"[^\W_]+(?:['’.][^\W_]+)*")
SCRIPT = {  # a letter of the language's own script
    "ja": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]"),
    "zh-hans": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]"),
    "ko": re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"),
    "ru": re.compile(r"[\u0400-\u04ff]"),
}


@dataclass
class PageFailure:
    """A page whose dream run raised."""

    page: str
    error: str  # "IndexError: list index out of range"
    where: str  # the innermost frame in vaultlink: "dream/offline/naming.py:123 qualified"


@dataclass
class LangDigest:
    """One language's figures."""

    language: str
    pages: int
    nodes: int = 0
    bad_names: list[tuple[str, str, str]] = field(default_factory=list)  # node, name, why
    silent_long: list[tuple[str, int]] = field(default_factory=list)  # page, words
    long_pages: int = 0
    unrelated: list[tuple[str, str, str]] = field(default_factory=list)  # node, page, page
    unrelated_nodes: int = 0
    multi_page_nodes: int = 0
    failures: list[PageFailure] = field(default_factory=list)
    file_names: list[tuple[str, str]] = field(default_factory=list)  # node, name
    other_script: list[tuple[str, str]] | None = None  # node, name (None: not measured)
    seconds: float = 0.0

    @property
    def nodes_per_page(self) -> float:
        return self.nodes / self.pages if self.pages else 0.0


def norm(text: str) -> str:
    """Lowercase, Markdown emphasis and code marks gone, hyphens and underscores as spaces."""
    text = re.sub(r"[`*_]+", " ", text).replace("-", " ")
    return " ".join(text.lower().split())


def prose(text: str) -> str:
    """The page without front matter and fenced code."""
    out, fence = [], False
    for line in split_frontmatter(text)[1].split("\n"):
        if _FENCE.match(line):
            fence = not fence
        elif not fence:
            out.append(line)
    return "\n".join(out)


def word_count(text: str) -> int:
    """Words of prose: tokens between spaces, Han characters and kana half a word each."""
    n = 0.0
    for token in prose(text).split():
        cjk = len(_CJK.findall(token))
        rest = _CJK.sub("", token)
        n += cjk / 2 + (1 if any(ch.isalnum() for ch in rest) else 0)
    return int(n)


def headings(text: str) -> list[str]:
    """The page's ATX headings, normalised."""
    return [norm(h) for h in _HEADING.findall(prose(text))]


def product_words(pages: list[Page]) -> set[str]:
    """Tokens of a fifth or more of the pages' titles: the set's own name words."""
    counts = Counter(t for p in pages for t in set(_TOKEN.findall(norm(p.title))))
    return {t for t, c in counts.items() if c * 5 >= len(pages)}


def name_problem(name: str, lang: str, product: set[str], recurring: set[str]) -> str:
    """Why ``name`` names a part of pages and not a subject, or ``""``."""
    n = norm(name)
    if n in recurring:
        return "a heading on several pages"
    rest = f" {n} "
    phrases = sorted(GENERIC.get(lang, "").replace("\n", "").split("|"), key=len, reverse=True)
    for ph in (p.strip() for p in phrases):
        # Han and kana are written without spaces: a phrase there is any run of its
        # characters; elsewhere it is whole words
        if ph:
            rest = rest.replace(ph, " ") if _CJK.search(ph) else rest.replace(f" {ph} ", " ")
    fillers = set(FUNCTION_WORDS.get(lang, "").split()) | product
    left = [t for t in _TOKEN.findall(rest) if t not in fillers]
    if not left and rest.strip() != n:
        return "only generic words"
    if not left:
        return "only the set's name"
    return ""


def feed(root: Path, staged: list[tuple[str, str]]) -> list[PageFailure]:
    """Put the pages into the vault one at a time, dreaming after each until it settles."""
    failures = []
    for rel, text in staged:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        try:
            for _ in range(MAX_RUNS_PER_PAGE):
                run = dream_once(root)
                if not run.extraction.changed and not run.report.results:
                    break
        except Exception as exc:  # a page's failure is a finding, not the end of the bench
            frames = [f for f in traceback.extract_tb(exc.__traceback__)
                      if "vaultlink" in Path(f.filename).parts]
            last = frames[-1] if frames else traceback.extract_tb(exc.__traceback__)[-1]
            where = Path(last.filename).as_posix().split("vaultlink/", 1)[-1]
            failures.append(PageFailure(rel, f"{type(exc).__name__}: {exc}"[:160],
                                        f"{where}:{last.lineno} {last.name}"))
            path.unlink()
    return failures


def run_language(dest: Path, pages: list[Page], lang: str) -> LangDigest:
    """Feed one language's pages into a fresh vault and measure its digest."""
    started = time.monotonic()
    root = dest / lang
    for folder in ("daily", "resource", "digest"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    known = {p.original_path for p in pages}
    rel_of = {p.path: f"resource/{p.path}" for p in pages}
    staged = [(rel_of[p.path], unlink(p.text, p.original_path, known)) for p in pages]
    failures = feed(root, staged)
    res = LangDigest(lang, len(pages), failures=failures)
    nodes = load_nodes(Vault(root))
    res.nodes = len(nodes)
    product = product_words(pages)
    heads = Counter(h for p in pages for h in set(headings(p.text)))
    recurring = {h for h, c in heads.items() if c >= RECURRING}
    stems = {norm(Path(p.original_path).stem) for p in pages}
    script = SCRIPT.get(lang)
    res.other_script = [] if script else None
    for n in nodes.values():
        why = name_problem(n.name, lang, product, recurring)
        if why:
            res.bad_names.append((n.path, n.name, why))
        if norm(n.name) in stems:
            res.file_names.append((n.path, n.name))
        if script and res.other_script is not None and not script.search(n.name):
            res.other_script.append((n.path, n.name))
    cited = Counter(p for n in nodes.values() for p in n.cited)
    for p in pages:
        words = word_count(p.text)
        if words > LONG_PAGE:
            res.long_pages += 1
            if cited[rel_of[p.path]] == 0:
                res.silent_long.append((rel_of[p.path], words))
    truth = {frozenset(rel_of[x] for x in pair) for pair in truth_pairs(pages)}
    for n in nodes.values():
        own = sorted(c for c in n.cited if c.startswith("resource/"))
        res.multi_page_nodes += len(own) >= 2
        bad = [(a, b) for a, b in combinations(own, 2) if frozenset((a, b)) not in truth]
        res.unrelated += [(n.path, a, b) for a, b in bad]
        res.unrelated_nodes += bool(bad)
    res.seconds = time.monotonic() - started
    return res


def run_languages(dest: Path, corpus: str = "langdocs",
                  languages: tuple[str, ...] = DEFAULT_LANGUAGES) -> list[LangDigest]:
    """Each language of ``corpus`` in its own vault under ``dest``."""
    pages = load_corpus(corpora()[corpus].root)
    have = {p.set for p in pages}
    unknown = set(languages) - have
    if unknown:
        raise SystemExit(f"no such language in {corpus}: {', '.join(sorted(unknown))}")
    return [run_language(dest, [p for p in pages if p.set == lang], lang) for lang in languages]


def language_table(results: list[LangDigest]) -> str:
    """The per-language table, then what is behind each count."""
    head = ("| language | pages | nodes | nodes per page | generic or heading-only names "
            "| pages > 200 words that gave nothing | nodes holding two unrelated pages "
            "| nodes citing 2+ pages | names = file name | names not in the language's script "
            "| failed pages | seconds |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r.language} | {r.pages} | {r.nodes} | {r.nodes_per_page:.2f} "
                     f"| {len(r.bad_names)} | {len(r.silent_long)} of {r.long_pages} "
                     f"| {r.unrelated_nodes} | {r.multi_page_nodes} | {len(r.file_names)} "
                     f"| {'n/a' if r.other_script is None else len(r.other_script)} "
                     f"| {len(r.failures)} "
                     f"| {r.seconds:.0f} |")
    lines.append("Done when (issue 24): 0.8-2.5 nodes per page, 0 generic or heading-only "
                 "names, 0 long pages that give nothing, 0 nodes holding unrelated pages.")
    for r in results:
        lines += [f"  {r.language} fail  {f.page}: {f.error} at {f.where}" for f in r.failures]
        lines += [f"  {r.language} name  {p}: {n!r} ({why})" for p, n, why in r.bad_names]
        lines += [f"  {r.language} mixed {p}: {a} + {b}" for p, a, b in r.unrelated[:10]]
        if len(r.unrelated) > 10:
            lines.append(f"  {r.language} mixed ... and {len(r.unrelated) - 10} more pairs")
        lines += [f"  {r.language} none  {p} ({w} words)" for p, w in r.silent_long]
    return "\n".join(lines)
