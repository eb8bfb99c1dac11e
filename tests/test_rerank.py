"""``index.reranker``: the first notes a search found, read again by a cross-encoder
(issue 39, item 2). The fusion rule is pinned with a scripted reranker; the model itself
is the real one from the installed package."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.vaults import write_note
from vaultlink.cli.settings import load_settings
from vaultlink.errors import ConfigError, EmbeddingError
from vaultlink.index.recall import Indexes
from vaultlink.index.rerank import (
    DEPTH,
    MAX_PARAGRAPHS,
    CrossEncoder,
    make_reranker,
    model_root,
    reranked,
)
from vaultlink.vault.notes import Vault


class Scripted:
    """A reranker that likes the passages holding ``word`` and records what it read."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.read: list[str] = []

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        self.read += passages
        return [5.0 if self.word in p else -5.0 for p in passages]


NOTES = [f"note {i}\n\nSmall talk about the weather, day {i}." for i in range(14)]
NOTES[7] = "note 7\n\nMelanie: I just started learning the clarinet!"


def test_a_note_whose_paragraph_answers_rises_into_the_first_five() -> None:
    """Eighth by the search's own order, first by the reranker's: fused, it is among
    the first five, and the notes it passed keep their order."""
    order = reranked("What instruments does Melanie play?", NOTES, lambda t: t,
                     Scripted("clarinet"))
    assert order.index(NOTES[7]) < 5
    rest = [n for n in order if n is not NOTES[7]]
    assert rest == [n for n in NOTES if n is not NOTES[7]]


def test_only_the_first_notes_are_read_and_recall_at_ten_is_kept() -> None:
    """Notes past ``DEPTH`` are not read and stay behind the ones that were; a note
    reads at most ``MAX_PARAGRAPHS`` paragraphs."""
    long_note = "\n\n".join(f"paragraph {i}" for i in range(40))
    notes = [long_note, *NOTES]
    scripted = Scripted("note 12")  # past the depth: never read, never lifted
    order = reranked("Which note is twelve?", notes, lambda t: t, scripted)
    assert set(order[:DEPTH]) == set(notes[:DEPTH])
    assert not any("note 12" in p for p in scripted.read)
    assert sum(p.startswith("paragraph") for p in scripted.read) == MAX_PARAGRAPHS


@pytest.mark.parametrize("query", ["メラニーはどんな楽器を弾きますか？",
                                   "¿Qué instrumentos toca Melanie en la orquesta?",
                                   "ما هي الآلات التي تعزفها ميلاني؟"])
def test_a_query_not_in_english_keeps_its_order(query: str) -> None:
    """The model reads English only: another language's query is not reordered by it."""
    scripted = Scripted("clarinet")
    assert reranked(query, NOTES, lambda t: t, scripted) == NOTES
    assert scripted.read == []


def test_search_reads_its_first_notes_again_when_a_reranker_is_set(
        vault: Vault, indexes: Indexes) -> None:
    """Through ``ChunkIndex.search``: the reranker sees the found notes' paragraphs, and
    the note it favours moves up; without one, the search's own order."""
    for day, where in (("01", "park"), ("02", "garden"), ("03", "yard")):
        write_note(vault.root, f"daily/2023-05-{day}.md", f"Melanie: The weather was lovely, "
                   f"we played in the {where}.\n\nCaroline: Playing outside is the best.\n")
    write_note(vault.root, "daily/2023-05-09.md", "Melanie: I started the clarinet lessons "
               "this week.\n\nCaroline: How fun!\n")
    indexes.chunks.sync()
    question = "What did Melanie play in the park, the garden or the yard?"
    before = [h.path for h in indexes.chunks.search(question, 5)]
    scripted = Scripted("clarinet")
    indexes.chunks.reranker = scripted
    after = [h.path for h in indexes.chunks.search(question, 5)]
    assert after.index("daily/2023-05-09.md") < before.index("daily/2023-05-09.md")
    assert "Caroline: How fun!" in scripted.read


def test_the_packaged_cross_encoder_reads_meaning_not_words() -> None:
    """The real model, from the installed package: the clarinet answers a question that
    says "instruments", and a turn about the same person camping does not."""
    reranker = make_reranker("ms-marco-minilm-l12")
    assert isinstance(reranker, CrossEncoder)
    clarinet, camping = reranker.scores("What instruments does Melanie play?", [
        "Melanie: I just started learning the clarinet, it is so fun!",
        "Melanie: We went camping with the kids at the beach last weekend."])
    assert clarinet > 0 > camping
    assert reranker.scores("anything", []) == []


def test_a_model_file_that_is_not_the_measured_one_is_refused(tmp_path: Path) -> None:
    """Another file in the model's place is an error that says how to reinstall."""
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(EmbeddingError, match="pip install 'vaultlink\\[rerank\\]'"):
        CrossEncoder(tmp_path).scores("q", ["p"])
    assert model_root().joinpath("model.onnx").is_file()


def test_the_setting_names_a_known_reranker(tmp_path: Path) -> None:
    """``index.reranker`` is off by default and takes only the names it knows."""
    assert load_settings(tmp_path, environ={}).pipeline().reranker == "none"
    on = load_settings(tmp_path, environ={"VAULTLINK_INDEX__RERANKER": "ms-marco-minilm-l12"})
    assert on.pipeline().reranker == "ms-marco-minilm-l12"
    assert make_reranker("none") is None
    with pytest.raises(ConfigError, match="ms-marco-minilm-l12"):
        load_settings(tmp_path, environ={"VAULTLINK_INDEX__RERANKER": "bge-reranker"})
    with pytest.raises(ConfigError, match="ms-marco-minilm-l12"):
        make_reranker("bge-reranker")
