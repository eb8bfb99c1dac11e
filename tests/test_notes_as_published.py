"""Notes as people keep them (issue 24): pages whose title lives in frontmatter, day notes
in Chinese and German, pages saved twice, and the words of any script. The pages in
tests/fixtures/pages are kept as published (see NOTICE there); whole runs use real vaults
in tmp_path with the real state, index and offline integrator.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_offline_extract import extract
from tests.test_offline_runs import dream
from tests.vaults import vault_with
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import count_words, language_of, subject_words, tokens
from vaultlink.markdown.sections import bare_link_lines
from vaultlink.pipeline.extract.prompt import extract_prompt, language_hint
from vaultlink.prose.sentences import split_sentences
from vaultlink.prose.subject_names import GENERIC, is_event, name_flaw
from vaultlink.prose.units import is_slug, slugify
from vaultlink.prose.wording import WORDINGS
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

PAGES = Path(__file__).parent / "fixtures" / "pages"


def page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "title", "description"), [
    ("npm-ci.md", "npm-ci", "Clean install a project"),
    ("npm-install.md", "npm-install", "Install a package"),
    ("npm-audit.md", "npm-audit", "Run a security audit"),
    ("webclipper-bases-syntax.md", "Bases syntax",
     "Bases use YAML to define views, filters and formulas over the notes of a vault."),
    ("hugo-page.md", "Image processing",
     "Resize, crop, rotate and filter images in a Hugo project."),
    ("docusaurus-page.md", "Deployment",
     "Build a Docusaurus site into static files and serve them from any host."),
])
def test_a_page_titled_in_frontmatter_gives_one_unit_named_by_that_title(
        name: str, title: str, description: str) -> None:
    units, _ = extract(f"resource/Clippings/{name}", page(name))
    assert [u.title.lower() for u in units] == [title.lower()]
    assert units[0].name == slugify(title)
    assert units[0].description == description
    assert "Synopsis" not in units[0].title and "Description" not in units[0].title


def test_pages_that_share_only_generic_headings_stay_apart(tmp_path: Path) -> None:
    root = vault_with(tmp_path, {f"resource/{n}": page(n) for n in
                                 ("npm-ci.md", "npm-install.md", "npm-audit.md")})
    run = dream(root)
    # each page's own file name is the owner's: its node keeps the page's name in a
    # file of its own
    assert sorted((r.action, r.target) for r in run.report.results) == [
        ("CREATE", "digest/wiki/npm-audit-2.md"),
        ("CREATE", "digest/wiki/npm-ci-2.md"),
        ("CREATE", "digest/wiki/npm-install-2.md")]
    assert Vault(root).read_note("digest/wiki/npm-ci-2.md").frontmatter["name"] == "npm-ci"


@pytest.mark.parametrize(("name", "names"), [
    ("zh-day.md", ["搜索索引", "部署规则"]),
    ("de-day.md", ["Suchindex gesprochen", "Freitags nachmittags"]),
])
def test_a_day_note_with_two_decisions_gives_two_units_named_in_its_language(
        name: str, names: list[str]) -> None:
    units, ex = extract("daily/2026-12-01.md", page(name))
    assert [u.title for u in units] == names
    assert not ex.passed
    assert all(name_flaw(u.title) == "" and not is_event(u.title) for u in units)


def test_a_chinese_page_runs_to_the_end_and_its_node_reads_in_chinese(tmp_path: Path) -> None:
    root = vault_with(tmp_path, {"resource/zh/fetch.md": page("zh-fetch.md"),
                                 "resource/zh/promise.md": page("zh-promise.md"),
                                 "daily/2026-12-01.md": page("zh-day.md")})
    run = dream(root)
    assert run.report.failed_paths == set() and len(run.report.results) == 4
    node = (root / "digest" / "wiki" / "搜索索引.md").read_text(encoding="utf-8")
    assert "- 搜索索引：摘自[[daily/2026-12-01.md|2026-12-01 的笔记]]的记录。" in node
    assert "问题。我们决定" in node  # sentences joined as Chinese joins them
    fetch = (root / "digest" / "wiki" / "使用-fetch.md").read_text(encoding="utf-8")
    assert "{{" not in fetch and "全局 fetch() 方法" in fetch  # MDN's macros read as words


def test_a_page_saved_again_under_another_name_corroborates_its_node(tmp_path: Path) -> None:
    originals = {f"resource/docs/{n}": page(n) for n in
                 ("npm-ci.md", "npm-install.md", "npm-audit.md", "hugo-page.md",
                  "webclipper-bases-syntax.md")}
    root = vault_with(tmp_path, originals)
    dream(root)
    nodes = sorted(p.name for p in (root / "digest" / "wiki").glob("*.md"))
    for i, (path, text) in enumerate(originals.items()):  # ten copies, a line added to each
        for n, extra in enumerate(("Copied again for the team wiki.", "Saved for later.")):
            copy = root / "resource" / f"copies-{n}" / f"copy {i} of {path.rsplit('/', 1)[-1]}"
            copy.parent.mkdir(exist_ok=True)
            head, body, _ = split_frontmatter(text)  # at the end, or atop the body
            copy.write_text(text + f"\n{extra}\n" if n == 0 else f"{head}\n{extra}\n\n{body}",
                            encoding="utf-8")
    # five units a run (max_units)
    results = dream(root).report.results + dream(root).report.results
    assert sorted(r.action for r in results) == ["CORROBORATE"] * 10
    assert sorted(p.name for p in (root / "digest" / "wiki").glob("*.md")) == nodes
    ci = (root / "digest" / "wiki" / "npm-ci-2.md").read_text(encoding="utf-8")
    assert "Copied again" not in ci and "Saved for later" not in ci
    assert ("- npm-ci: confirmed again by "
            "[[resource/copies-0/copy 0 of npm-ci.md|") in ci
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        assert {e.integrator for e in state.journal(10) if e.action == "CORROBORATE"} == {
            "repeat"}
    finally:
        state.close()


def test_words_are_read_in_any_script() -> None:
    assert count_words("今天和团队讨论了搜索索引的问题") == 8  # 15 characters, two a word
    assert count_words("Heute haben wir") == 3
    assert tokens("搜索索引 Über") == ["搜索", "索索", "索引", "über"]
    assert subject_words("The k = 20 rule 搜索") == ["20", "rule", "搜索"]
    assert [language_of(t) for t in (
        "Heute haben wir mit dem Team über den Suchindex gesprochen.",
        "今天和团队讨论了搜索索引", "今日はチームと検索インデックスについて話した",
        "오늘 팀과 검색 인덱스에 대해 이야기했다", "Сегодня мы обсудили поисковый индекс",
        "The backup job copies the vault to the NAS every night.")] == [
        "de", "zh", "ja", "ko", "ru", "en"]
    assert split_sentences("我们决定每周重建！真的吗？「好。」然后 OK。") == [
        "我们决定每周重建！", "真的吗？", "「好。」然后 OK。"]
    assert split_sentences("**没有计划移除 class。** 你可以同时使用。好的。") == [
        "**没有计划移除 class。** 你可以同时使用。", "好的。"]  # no split inside bold
    assert split_sentences("Das ist gut. Über alles. Это тест. это нет.") == [
        "Das ist gut.", "Über alles.", "Это тест. это нет."]
    # dotted abbreviations of any language end no sentence; a lone capital still does
    assert split_sentences("QA iterativo, p.ej. Con datos. Das gilt z.B. Für alle. "
                           "Это т.е. Пример. Es ist ca. Mitte Mai. Plan B. Then go.") == [
        "QA iterativo, p.ej. Con datos.", "Das gilt z.B. Für alle.", "Это т.е. Пример.",
        "Es ist ca. Mitte Mai.", "Plan B.", "Then go."]
    # a sentence may open on inline code (yoshixi's "... Type Inference. `.hs` [[File
    # Extension]].": both were one sentence, and one description)
    assert split_sentences("A lazy language. `.hs` is its extension. Use `ghc`. Done.") == [
        "A lazy language.", "`.hs` is its extension.", "Use `ghc`.", "Done."]
    # ... or on math (yoshixi's Program Correctness: "... a desired result. $$\text{if
    # precondition ...}$$" was one sentence ending in "$$", and no description)
    assert split_sentences("It returns a desired result. $$x > 0$$ It costs $5. Done.") == [
        "It returns a desired result.", "$$x > 0$$ It costs $5.", "Done."]


def test_slugs_keep_the_notes_letters() -> None:
    assert [slugify(t) for t in ("Übersicht", "使用 Fetch", "Café au lait", "Привет, мир",
                                 "हिन्दी भाषा", "נתונים עבריים", "a/b:c?")] == [
        "übersicht", "使用-fetch", "café-au-lait", "привет-мир", "हिन्दी-भाषा",
        "נתונים-עבריים", "a-b-c"]
    assert all(is_slug(slugify(t)) for t in ("Übersicht", "使用 Fetch", "हिन्दी"))
    assert not is_slug("Übersicht") and not is_slug("a b")


def test_headings_that_name_a_part_of_a_page_name_nothing_in_any_language() -> None:
    for heading in ("Synopsis", "See also", "Beschreibung", "Siehe auch", "Voir aussi",
                    "描述", "示例", "参见", "構文", "関連情報", "예제", "Описание"):
        assert name_flaw(heading) == "generic", heading
    assert {"synopsis", "描述", "構文"} <= GENERIC
    for title in ("Montag", "周一", "Monday 2026-06-20", "2026年12月1日 星期一"):
        assert is_event(title), title


def test_a_chinese_sources_line_is_a_sentence_not_a_bare_link() -> None:
    body = ("正文。\n\n## Sources\n\n"
            "- 搜索索引：摘自[[daily/2026-12-01.md|2026-12-01 的笔记]]的记录。\n"
            "- [[daily/2026-12-02.md]]\n")
    assert [n for n, _ in bare_link_lines(body)] == [6]


@pytest.mark.parametrize("language", sorted(WORDINGS))
def test_every_sources_line_the_offline_writer_words_passes_the_guard(language: str) -> None:
    """The guard refused vaultlink's own Chinese line ("事务：摘自[[...]]。", two words
    by its count): each wording says three words around its links with a one-word label."""
    label = {"zh": "锁", "ja": "鍵", "ko": "백업", "ru": "Бэкап"}.get(language, "Backup")
    words = WORDINGS[language]
    for line in (words.taken, words.confirmed, words.corrected):
        text = line.format(what=label, links="[[daily/2022-09-09.md|2022-09-09]]")
        assert bare_link_lines(f"Text.\n\n## Sources\n\n- {text}\n") == [], text


def test_the_model_is_asked_for_units_in_the_notes_language() -> None:
    assert language_hint(page("zh-day.md")) == (
        "\n\n(The note is in Chinese: write the units in Chinese.)")
    assert "German" in language_hint(page("de-day.md"))
    assert language_hint(page("npm-ci.md")) == ""


@pytest.mark.parametrize("language", ["en", "zh", "ja", "ko", "de", "fr", "es", "ru"])
def test_the_extract_example_is_in_the_notes_language(language: str) -> None:
    """Small models copy the example's language (and the 0.5B its very units): the
    prompt for a note shows units written in that note's language, with names that are
    already the slugs vaultlink keeps."""
    system = extract_prompt(language)
    assert "{example}" not in system
    answer = system.split("Answer: ", 1)[1].split("\n\nAnswer with JSON", 1)[0]
    units = json.loads(answer.replace("\n", " "))["units"]  # the English one is wrapped
    assert language_of(" ".join(u["summary"] for u in units)) == language
    for unit in units:
        assert slugify(unit["name"]) == unit["name"].lower(), unit


def test_a_language_without_an_example_gets_the_english_one() -> None:
    assert extract_prompt("nl") == extract_prompt("en")
    assert "deploy-day-tuesday" in extract_prompt("en")


def test_an_html_comment_is_never_quoted_and_never_hides_the_sources(tmp_path: Path) -> None:
    text = ("---\ntitle: Using the State Hook\n---\n\nHooks let you use state without "
            "writing a class.\n\n<!--\n  I'm not proud of this line markup.\n-->\n\n"
            "The state hook returns the current value and a function that updates it.\n")
    units, _ = extract("resource/react/hooks-state.md", text)
    assert len(units) == 1 and "<!--" not in units[0].summary
    assert "returns the current value" in units[0].summary
    root = vault_with(tmp_path, {"resource/react/hooks-state.md": text})
    run = dream(root)
    assert [r.action for r in run.report.results] == ["CREATE"]


def test_a_generic_page_title_is_qualified_by_the_name_its_page_keeps_naming() -> None:
    text = ("---\ntitle: Erste Schritte\n---\n\nDiese Seite gibt einen Überblick über React "
            "und die Dokumentation. Mit React baust du Oberflächen. Lerne React in kleinen "
            "Schritten, denn React ist eine Bibliothek.\n")
    units, _ = extract("resource/de/getting-started.md", text)
    assert [u.title for u in units] == ["React Erste Schritte"]


def test_a_note_that_adds_new_material_to_a_copied_page_is_read_as_usual(
        tmp_path: Path) -> None:
    text = page("hugo-page.md")
    root = vault_with(tmp_path, {"resource/hugo/image-processing.md": text})
    dream(root)
    new = ("Image processing also has a Fit method. It scales an image down to fit the "
           "given width and height, keeping the aspect ratio, and it never enlarges an image "
           "that is already smaller than the box. We use it for every thumbnail in the "
           "gallery section, with the quality set to seventy-five for WebP output.")
    vault_with(root, {"resource/hugo/image-processing-notes.md": f"{text}\n{new}\n"})
    run = dream(root)  # 6 of its 7 paragraphs are the page's, but 60 words are new
    assert run.report.results and all(r.unit.corroborates == "" for r in run.report.results)
    body = "\n".join(p.read_text(encoding="utf-8")
                     for p in (root / "digest").rglob("*.md"))
    assert "never enlarges an image" in body or any(
        p.excerpt.startswith("Image processing also has a Fit method")
        for p in run.extraction.passed_over)  # quoted, or reported with its reason: never lost
