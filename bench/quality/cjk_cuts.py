"""realrecall with each way of cutting CJK text for keyword search, to compare them.

    .venv/bin/python -m bench.quality.cjk_cuts --cut none -- --corpus langdocs
    .venv/bin/python -m bench.quality.cjk_cuts --cut segment:ja -- --corpus langdocs
    .venv/bin/python -m bench.quality.cjk_cuts --load    # each segmenter's load time

The product cuts a run of CJK letters into overlapping pairs, and a run with kana into
UniDic's words less particles and auxiliaries (``vaultlink.index.words``); this sets
another cut with ``words.use_cjk_cut`` (the index text, the query, the subject phrase
and the name table all go through it), and runs realrecall's main with the arguments
after ``--``:

* ``none``: the run as one word, what FTS5's unicode61 tokenizer does (before the change);
* ``product``: the product's cut;
* ``bigram``: pairs for every run (the product's cut before Japanese got UniDic);
* ``bigram-script``: pairs within each stretch of one script (kanji, hiragana, katakana),
  none across them;
* ``trigram``: the cut of FTS5's ``trigram`` tokenizer, on CJK runs only (a run of one or
  two characters stays whole, as a query term that short finds nothing with trigram;
  the tokenizer on the whole table would also drop stemming and word bounds in English);
* ``segment``: a segmenter per script: kana in the run, SudachiPy (mode A, core
  dictionary); Hangul, kiwipiepy; Han alone, rjieba (jieba's ``cut_for_search``);
* ``segment:ja`` / ``segment:zh``: Han alone goes to SudachiPy / rjieba as well, that is the
  language known beforehand (a vault of one language), the best case for segmenting;
* ``fugashi``: ``segment:ja`` with fugashi and unidic-lite in place of SudachiPy;
* ``hybrid``: fugashi for runs with kana, pairs for the others (Han alone, Hangul), all
  of its words kept (the product also drops particles and auxiliaries).

fugashi and unidic-lite are dependencies of vaultlink; install the others to run these
(``pip install rjieba sudachipy sudachidict-core kiwipiepy``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from functools import cache
from typing import Any

from vaultlink.index import fusion, words

Cut = words.CjkCut


def _pairs(run: str) -> list[str]:
    return [run] if len(run) < 2 else [run[i:i + 2] for i in range(len(run) - 1)]


def _script(ch: str) -> str:
    if _is_kana(ch):
        return "hiragana" if "\u3040" <= ch <= "\u309f" else "katakana"
    return "hangul" if _is_hangul(ch) else "han"


def _pairs_by_script(run: str) -> list[str]:
    """Pairs within each stretch of one script: no pair spans a particle's edge (の索)."""
    out: list[str] = []
    start = 0
    for i in range(1, len(run) + 1):
        if i == len(run) or _script(run[i]) != _script(run[start]):
            out += _pairs(run[start:i])
            start = i
    return out


def _trigrams(run: str) -> list[str]:
    return [run] if len(run) < 3 else [run[i:i + 3] for i in range(len(run) - 2)]


@cache
def _sudachi() -> Any:
    from sudachipy import Dictionary, SplitMode

    tokenizer = Dictionary(dict="core").create()
    return lambda run: [m.surface() for m in tokenizer.tokenize(run, SplitMode.A)]


@cache
def _fugashi() -> Any:
    import fugashi

    tagger = fugashi.Tagger()
    return lambda run: [w.surface for w in tagger(run)]


@cache
def _jieba() -> Any:
    import rjieba

    return rjieba.cut_for_search


@cache
def _kiwi() -> Any:
    from kiwipiepy import Kiwi

    kiwi = Kiwi()
    return lambda run: [t.form for t in kiwi.tokenize(run)]


def _is_kana(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u31f0" <= ch <= "\u31ff" or "\uff66" <= ch <= "\uff9f"


def _is_hangul(ch: str) -> bool:
    return ("\uac00" <= ch <= "\ud7ff" or "\u1100" <= ch <= "\u11ff"
            or "\u3130" <= ch <= "\u318f" or "\uffa0" <= ch <= "\uffdc")


def segmenting(han: str, japanese: str = "sudachi") -> Cut:
    """A cut by a segmenter chosen from the run's script; ``han``: who cuts Han alone."""
    ja = _sudachi if japanese == "sudachi" else _fugashi

    def cut(run: str) -> list[str]:
        if any(_is_hangul(c) for c in run):
            seg = _kiwi()
        elif any(_is_kana(c) for c in run) or han == "ja":
            seg = ja()
        else:
            seg = _jieba()
        return [w.lower() for w in seg(run) if w.strip() and w[0].isalnum()] or [run]
    return cut


def japanese_only(japanese: str = "sudachi") -> Cut:
    """A segmenter for runs with kana (Japanese for sure), pairs for the others."""
    ja = _sudachi if japanese == "sudachi" else _fugashi

    def cut(run: str) -> list[str]:
        if any(_is_kana(c) for c in run):
            return [w.lower() for w in ja()(run) if w.strip() and w[0].isalnum()] or [run]
        return _pairs(run)
    return cut


CUTS: dict[str, Callable[[], Cut]] = {
    "none": lambda: (lambda run: [run]),
    "product": lambda: words.cjk_words,
    "bigram": lambda: _pairs,
    "trigram": lambda: _trigrams,
    "bigram-script": lambda: _pairs_by_script,
    "segment": lambda: segmenting("zh"),
    "segment:zh": lambda: segmenting("zh"),
    "segment:ja": lambda: segmenting("ja"),
    "fugashi": lambda: segmenting("ja", japanese="fugashi"),
    "hybrid": lambda: japanese_only("fugashi"),
}


def use_cut(name: str) -> None:
    """Make ``words`` cut CJK runs with ``name`` in this process."""
    words.use_cjk_cut(CUTS[name]())


def run_phrases(query: str) -> str | None:
    """Each CJK run of ``query`` of more than one word as a phrase (its words in a row),
    OR'ed; None when there is none."""
    phrases = []
    for run in words.cjk_runs(query):
        cut = words.words_of(run)
        if len(cut) > 1:
            phrases.append('"' + " ".join(cut) + '"')
    return " OR ".join(dict.fromkeys(phrases[:16])) or None


def use_run_phrases() -> None:
    """Make the keyword query of every term (the one the index asks when the weighty
    terms fill too few places) also ask for each CJK run of the query as a phrase: a node
    holding the run whole ranks higher."""
    fusion.use_every_term_extras(run_phrases)


_LOADERS = {"rjieba": _jieba, "sudachipy": _sudachi, "fugashi": _fugashi, "kiwipiepy": _kiwi}
_SAMPLE = {"rjieba": "我们在数据库里建立索引", "sudachipy": "データベースの索引を使う",
           "fugashi": "データベースの索引を使う", "kiwipiepy": "데이터베이스를 씁니다"}


def load_times() -> None:
    """Each segmenter's import, load and first cut, in a new process (three runs)."""
    for name in _LOADERS:
        for _ in range(3):
            subprocess.run([sys.executable, "-m", "bench.quality.cjk_cuts", "--load-one", name],
                           check=True)


def _load_one(name: str) -> None:
    start = time.perf_counter()
    cut = _LOADERS[name]()
    loaded = time.perf_counter()
    cut(_SAMPLE[name])
    done = time.perf_counter()
    print(f"{name}: load {loaded - start:.3f} s, first cut {done - loaded:.3f} s")


def main(argv: list[str] | None = None) -> int:
    """Run realrecall with one cut, or time the segmenters."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality.cjk_cuts",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cut", choices=sorted(CUTS), default="bigram")
    parser.add_argument("--run-phrases", action="store_true",
                        help="the keyword query also asks for each CJK run as a phrase")
    parser.add_argument("--load", action="store_true", help="time each segmenter's load")
    parser.add_argument("--load-one", choices=sorted(_LOADERS), help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs="*", help="realrecall's arguments, after --")
    args = parser.parse_args(argv)
    if args.load_one:
        _load_one(args.load_one)
        return 0
    if args.load:
        load_times()
        return 0
    use_cut(args.cut)
    if args.run_phrases:
        use_run_phrases()
    from bench.quality.realrecall import main as realrecall

    print(f"CJK cut: {args.cut}{', runs as phrases too' if args.run_phrases else ''}")
    return realrecall(args.rest)


if __name__ == "__main__":
    raise SystemExit(main())
