"""No note stops a run (issue 24, point 4): notes in many scripts and shapes, written by
hypothesis, go through a whole offline run on a real vault; every run completes and every
note is integrated or reported (with its reason) in the run, and in `vaultlink status`.

One note of each run is poisoned: the extractor is the real offline one behind a scripted
fault (as the adversarial fake models are scripted) that raises on it, standing for a bug
vaultlink has not met yet. Without per-note containment in extract, the run dies on it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultlink.cli.settings import load_settings
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.obsidian import content_text
from vaultlink.options import Provider
from vaultlink.pipeline.compose import dream_context, open_parts
from vaultlink.pipeline.context import Extractor, SourceNote
from vaultlink.pipeline.run import build_steps, run_dream
from vaultlink.prose.units import Unit
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

WORDS = {
    "zh": "搜索 索引 重建 部署 规则 每周 团队 讨论 问题 生产 环境 发布 审核",
    "ja": "検索 インデックス 再構築 デプロイ 毎週 チーム 問題 本番 環境 リリース",
    "ko": "검색 인덱스 재구축 배포 규칙 매주 팀 문제 운영 환경",
    "he": "חיפוש אינדקס בנייה פריסה כלל שבוע צוות בעיה",
    "ar": "بحث فهرس إعادة بناء نشر قاعدة أسبوع فريق مشكلة",
    "de": "Suchindex Neuaufbau Deployment Regel Woche Team Problem Produktion",
    "ru": "поиск индекс сборка развертывание правило неделя команда проблема",
    "en": "search index rebuild deploy rule week team problem production",
    "emoji": "🚀 ✅ 🔥 📦 🧪 🐛 💡 🎉",
    "marks": "e\u0301te\u0301 cafe\u0301 na\u0308ive Z\u0335a\u0336l\u0337g\u0338o",
}


def sentence(lang: str) -> st.SearchStrategy[str]:
    words = WORDS[lang].split()
    joiner = "" if lang in ("zh", "ja") else " "
    end = "。" if lang in ("zh", "ja") else "."
    return st.lists(st.sampled_from(words), min_size=1, max_size=30).map(
        lambda ws: joiner.join(ws) + end)


def prose(lang: str) -> st.SearchStrategy[str]:
    return st.lists(sentence(lang), min_size=1, max_size=6).map(" ".join)


SHAPES: list[st.SearchStrategy[str]] = [
    st.sampled_from(sorted(WORDS)).flatmap(
        lambda lang: st.tuples(prose(lang), prose(lang)).map(
            lambda ps: f"# {ps[0][:20]}\n\n{ps[0]}\n\n## {ps[1][:12]}\n\n{ps[1]}\n")),
    st.sampled_from(sorted(WORDS)).flatmap(
        lambda lang: prose(lang).map(lambda p: f"---\ntitle: {p[:15]!r}\n---\n\n{p}\n")),
    st.just("---\ntitle: Only front matter\ntags: [a, b]\n---\n"),
    st.just("| a | b |\n| --- | --- |\n| 1 | 2 |\n"),
    st.just("```python\nprint('only code')\n```\n"),
    st.just("- [[a]]\n- [[b|B]]\n- [c](https://example.com)\n"),
    st.sampled_from(["word", "词", "単語", "слово", "🚀", "\u0301"]),
    st.integers(1, 300).map(lambda n: "".join(f"{'#' * (1 + i % 6)} H{i}\n\n" for i in range(n))),
    st.text(min_size=0, max_size=400),
]


class Poisoned:
    """The real extractor, raising an unforeseen error on one note."""

    def __init__(self, inner: Extractor, poison: str) -> None:
        self.inner, self.poison = inner, poison
        self.passes_over, self.rules = inner.passes_over, inner.rules
        self.passed, self.usage = inner.passed, inner.usage

    def extract(self, notes: Sequence[SourceNote]) -> list[Unit]:
        if any(n.path == self.poison for n in notes):
            raise IndexError("list index out of range (a bug no test has met)")
        units = self.inner.extract(notes)
        self.passed = self.inner.passed
        return units


@pytest.mark.slow
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(st.one_of(SHAPES), min_size=2, max_size=6), data=st.data())
def test_every_run_completes_and_every_note_is_integrated_or_reported(
        tmp_path_factory: object, texts: list[str], data: st.DataObject) -> None:
    root: Path = tmp_path_factory.mktemp("vault")  # type: ignore[attr-defined]
    for folder in ("daily", "resource", "digest"):
        (root / folder).mkdir()
    paths = [f"daily/2026-12-0{1 + i % 7}/n{i}.md" if i % 2 else f"resource/n{i}.md"
             for i in range(len(texts))]
    for path, text in zip(paths, texts, strict=True):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    # a note with nothing past its frontmatter but headings and Obsidian's machinery
    # (an empty bullet, a query block) is read and checkpointed, never extracted
    blank = {p for p, t in zip(paths, texts, strict=True)
             if all(not ln.strip() or re.match(r"#{1,6}\s", ln)
                    for ln in content_text(split_frontmatter(t)[1]).split("\n"))}
    # a note with a NUL byte is a binary file: reported unreadable, never extracted
    binary = {p for p, t in zip(paths, texts, strict=True) if "\x00" in t}
    poison = data.draw(st.sampled_from(sorted(set(paths) - blank - binary) or [""]))
    options = load_settings(root, environ={}).with_overrides(
        {"llm.provider": "offline", "auto_dream.max_units": 500}).pipeline()
    parts = open_parts(Vault(root), options)
    try:
        parts.index.sync()
        ctx = dream_context(parts, options, Provider.OFFLINE)
        ctx = dataclasses.replace(ctx, extractor=Poisoned(ctx.extractor, poison))
        run = run_dream(ctx, build_steps(["dream_extract_step", "dream_integrate_step",
                                          "dream_topics_step", "dream_finish_step"]))
    finally:
        parts.close()
    if poison:
        assert "IndexError" in run.extraction.failed_notes[poison]
    assert blank <= set(run.extraction.changed)
    found = run.extraction
    reported = set(found.yields) | set(found.failed_notes) | set(run.report.skipped) | blank
    assert set(paths) <= reported
    failed_units = {p for u in run.report.failed_units for p in u.paths}
    for path, units in run.extraction.yields.items():  # a note that gave units: each unit decided
        if units:
            assert path in failed_units or any(path in r.unit.paths for r in run.report.results)
    state = State(root / ".vaultlink" / "state.sqlite")
    try:  # what `vaultlink status` shows: the poisoned note waits with its reason
        waiting = {p: f.error for f in state.open_failures() for p in f.paths}
        assert not poison or "IndexError" in waiting[poison]
    finally:
        state.close()
