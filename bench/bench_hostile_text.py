"""How the readers of note text grow with hostile text: seconds per size, and the
growth when the text grows fourfold (about 4 when linear, 16 when quadratic).

A note is untrusted input up to ``vault.max_note_bytes`` (2 MB): one shape that makes
a reader scan the rest of the text from every position (``[a](`` repeated with no
close, ``a. `` after ``a. ``, 50,000 ``Term: text`` paragraphs) stalls a run for hours.

    python -m bench.bench_hostile_text [--reps 5000,20000,80000] [--slowest 12]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from vaultlink.index.words import words_of
from vaultlink.markdown.obsidian import besides_links, content_text
from vaultlink.markdown.sections import chunk_note
from vaultlink.pipeline.context import SourceNote
from vaultlink.pipeline.extract.extractor import tasks_apart
from vaultlink.pipeline.offline.extract import OfflineExtractor
from vaultlink.prose.blocks import parse_blocks
from vaultlink.prose.sentences import split_sentences

# Shapes on one line, and shapes of a line repeated (each with its newline).
INLINE = ["[a](", "![a](", "![", "![[", "[[", "[a](x \"", "[^", "[^a", "[[a|", "[[a#",
          "(a:: ", "> [!", "a. ", "`", "{{", "<a ", "http://", "**", "~~", "==",
          "{: ", "{#", "( [[a", "x ([[a]]) "]
# A run of spaces inside one line ("{}" is the run): each pattern that begins or ends with
# "\s*" around a title was tried again at every space of it (2,000 spaces: 10 s).
RUNS = ["# a{}b\n", "> [!note] a{}b\n", "a{}#tag #b\n", "a{}{: .x}\n", "a{}([[a|a]])\n",
        "- [ ] a{}b\n"]
LINES = ["A: hi there\n", "- [ ] a\n", "- [x] 12:30 a\n", "# a\n", "> a\n", "| a | b |\n",
         "1. a\n", "a:: b\n", "[[a]]\n", "- [[a]]\n", "a\n\n", "a: b\n\n", "Term:\n\n"]


def _offline(text: str) -> object:
    note = SourceNote("daily/2024-01-01.md", "2024-01-01", [("2024-01-01", text, True)], text)
    return OfflineExtractor().extract([note])


READERS: dict[str, Callable[[str], object]] = {
    "parse_blocks": parse_blocks, "content_text": content_text,
    "besides_links": besides_links, "split_sentences": split_sentences,
    "chunk_note": lambda t: chunk_note(t, "x"), "words_of": words_of,
    "tasks_apart": tasks_apart, "offline extract": _offline,
}


def seconds(reader: Callable[[str], object], text: str) -> float:
    began = time.perf_counter()
    reader(text)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", default="5000,20000,80000",
                        help="repetitions of each shape, smallest first (default %(default)s)")
    parser.add_argument("--slowest", type=int, default=12, help="rows printed (default 12)")
    args = parser.parse_args()
    reps = [int(r) for r in args.reps.split(",")]
    _offline("warm up: the extractor's word lists load once.\n")
    rows = []  # (shape, size index, bytes, reader, seconds)
    shapes = [(s, k, r) for s in INLINE for k, r in enumerate(reps)]
    shapes += [(s, k, r // 4) for s in LINES for k, r in enumerate(reps)]
    shapes += [(s, k, r * 4) for s in RUNS for k, r in enumerate(reps)]
    for i, (shape, k, n) in enumerate(shapes, start=1):
        text = shape.replace("{}", " " * n, 1) if shape in RUNS else shape * n
        print(f"\r{i}/{len(shapes)} {shape!r:>18} x {n:<7}", end="", flush=True)
        for name, reader in READERS.items():
            rows.append((shape, k, len(text.encode()), name, seconds(reader, text)))
    print()
    biggest = max(r[2] for r in rows)
    last = [r for r in rows if r[1] == len(reps) - 1]
    before = {(r[0], r[3]): r[4] for r in rows if r[1] == len(reps) - 2}
    print(f"{'shape':>18} {'reader':>16} {'bytes':>9} {'seconds':>8} {'x4 size':>8}")
    for shape, _, size, name, secs in sorted(last, key=lambda r: -r[4])[:args.slowest]:
        was = before.get((shape, name), 0.0)
        ratio = secs / was if was > 1e-3 else float("nan")
        print(f"{shape!r:>18} {name:>16} {size:>9,} {secs:>8.3f} {ratio:>8.1f}")
    total = sum(r[4] for r in last)
    print(f"largest text {biggest:,} bytes; all readers on all shapes at the largest size: "
          f"{total:.1f} s")


if __name__ == "__main__":
    main()
