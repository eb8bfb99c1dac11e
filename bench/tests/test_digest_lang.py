"""The language axis of bench.quality.digest: how it counts words and judges names."""

from __future__ import annotations

from bench.quality.digest_lang import name_problem, norm, word_count


def test_cjk_characters_count_half_a_word_and_code_and_front_matter_not_at_all() -> None:
    page = ("---\ntitle: 标题\n---\n\n这是一个句子。\n\n```js\nconst a = 1;\n```\n\n"
            "Use React here.\n")
    # 这是一个句子 (6 Han characters) = 3 words, "。" is no word, "Use React here." = 3
    assert word_count(page) == 6
    assert word_count("Ein deutscher Satz mit fünf Wörtern.") == 6
    assert word_count("한국어 문장은 띄어 씁니다.") == 4  # Hangul is written with spaces


def test_generic_and_heading_only_names_in_several_languages() -> None:
    product = {"react", "npm"}
    assert name_problem("npm-synopsis", "en", product, set()) == "only generic words"
    assert name_problem("Description with npm", "en", product, set()) == "only generic words"
    assert name_problem("Siehe auch", "de", product, set()) == "only generic words"
    assert name_problem("構文", "ja", product, set()) == "only generic words"
    assert name_problem("React 示例", "zh-hans", product, set()) == "only generic words"
    assert name_problem("React", "en", product, set()) == "only the set's name"
    assert name_problem("Montag", "de", product, {norm("Montag")}) == (
        "a heading on several pages")
    # names that say a subject are sound, in any script
    assert name_problem("npm ci", "en", product, set()) == ""
    assert name_problem("Using the State Hook", "en", product, set()) == ""
    assert name_problem("フックの導入", "ja", product, set()) == ""
    assert name_problem("条件渲染", "zh-hans", product, set()) == ""
    assert name_problem("Введение в хуки", "ru", product, set()) == ""
