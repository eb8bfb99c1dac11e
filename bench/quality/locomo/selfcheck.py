"""``--self-check``: a two-session toy conversation, its notes, its turn map, and the R@k
arithmetic on rankings whose answers are known; prints each and fails loudly."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.quality.locomo.data import conversation, dia_ids
from bench.quality.locomo.measure import cited_sessions, ranked_sessions, score
from bench.quality.locomo.vault import note_paths, write_vault

TOY = {
    "speaker_a": "Ana", "speaker_b": "Ben",
    "session_1_date_time": "9:05 am on 3 March, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat named Miso!"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely.\nShow me?"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "Here she is.",
         "blip_caption": "a photo of a grey cat on a sofa"},
    ],
    "session_2_date_time": "7:40 pm on 3 March, 2023",
    "session_2": [
        {"speaker": "Ben", "dia_id": "D2:1", "text": "I ran the Lisbon half marathon."},
        {"speaker": "Ana", "dia_id": "D2:2", "text": "How did Miso like the new toy?"},
    ],
    "session_3_date_time": "1:00 pm on 9 March, 2023",  # a date and no turns: no note
    "qa": [
        {"question": "What is Ana's cat called?", "evidence": ["D1:1"], "category": 4},
        {"question": "What did Ana and Ben do?", "evidence": ["D1:1; D2:1"], "category": 1},
        {"question": "Unanswerable", "evidence": [], "category": 5},
    ],
}


def check(label: str, got: object, want: object) -> bool:
    ok = got == want
    print(f"  {'ok  ' if ok else 'FAIL'} {label}: {got!r}" + ("" if ok else f" (want {want!r})"))
    return ok


def main() -> int:
    good = True
    conv = conversation("99", TOY)
    print("toy conversation: 2 sessions on one day, 5 turns, 3 questions (one without evidence)")
    good &= check("questions kept / dropped", (len(conv.questions), conv.dropped),
                  (2, [(2, "no evidence")]))
    good &= check("evidence 'D1:1; D2:1' split", dia_ids(["D1:1; D2:1", "D:11:26"]),
                  ("D1:1", "D2:1", "D11:26"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        layout = write_vault(conv, root)
        good &= check("note paths (two sessions on 2023-03-03)", layout.note_of,
                      {1: "daily/2023-03-03/session-1.md", 2: "daily/2023-03-03/session-2.md"})
        text = (root / layout.note_of[1]).read_text("utf-8")
        print("  daily/2023-03-03/session-1.md:\n    " + text.replace("\n", "\n    ").rstrip())
        lines = text.splitlines()
        for dia, place in layout.turns.items():
            t = (root / place.path).read_text("utf-8").splitlines()[place.line - 1]
            print(f"  {dia} -> {place.path}:{place.line}-{place.end_line}  {t}")
        good &= check("D1:2 line", lines[layout.turns["D1:2"].line - 1], "Ben: Lovely. Show me?")
        good &= check("D1:3 line (photo)", lines[layout.turns["D1:3"].line - 1],
                      "Ana: Here she is. [shares a photo: a photo of a grey cat on a sofa]")
        good &= check("front matter", lines[:4],
                      ["---", "date: 2023-03-03", 'time: "09:05"', "---"])
        good &= check("turn at daily/2023-03-03/session-2.md line 8",
                      layout.turn_at("daily/2023-03-03/session-2.md", 8), "D2:2")
        good &= check("one session a day: daily/YYYY-MM-DD.md",
                      note_paths(conv.sessions[:1]), {1: "daily/2023-03-03.md"})
        node = ("---\nname: Miso\n---\nAna's cat [[daily/2023-03-03/session-1.md]] is Miso; "
                "[[daily/2023-03-03/session-1.md]] again.\n\n## Sources\n\n"
                "- Ben's run: taken from [[daily/2023-03-03/session-2|the note]].\n"
                "- The cat: taken from [[session-1]] and [[daily/2023-03-03/session-1.md]].\n")
        (root / "digest/personal").mkdir(parents=True)
        (root / "digest/personal/miso.md").write_text(node, "utf-8")
        good &= check("a node's Sources cite (in order)", cited_sessions(node, layout), [2, 1])

        def cites(path: str) -> list[int]:
            return cited_sessions((root / path).read_text("utf-8"), layout)
        good &= check("hits [node, session-1 note] -> sessions",
                      ranked_sessions(["digest/personal/miso.md", "daily/2023-03-03/session-1.md"],
                                      layout, cites), [2, 1])
    print("R@k arithmetic (all evidence sessions in the top k; any@k: one of them)")
    ranked = [3, 1, 4, 5, 6, 2, 7, 8, 9, 10, 11]
    good &= check("evidence {1,2}, ranked 3,1,4,5,6,2,...", score(ranked, {1, 2}),
                  {"R@5": 0.0, "any@5": 1.0, "R@10": 1.0, "any@10": 1.0})
    good &= check("evidence {1}", score(ranked, {1}),
                  {"R@5": 1.0, "any@5": 1.0, "R@10": 1.0, "any@10": 1.0})
    good &= check("evidence {11}", score(ranked, {11}),
                  {"R@5": 0.0, "any@5": 0.0, "R@10": 0.0, "any@10": 0.0})
    good &= check("evidence {2, 11}", score(ranked, {2, 11}),
                  {"R@5": 0.0, "any@5": 0.0, "R@10": 0.0, "any@10": 1.0})
    from bench.quality.locomo.measure import aggregate
    rows = [{"conv": "99", "category": c, "x": score(ranked, e)}
            for c, e in ((1, {1, 2}), (1, {1}), (4, {11}), (5, {2, 11}))]
    agg = aggregate(rows, "x", ["99"])
    good &= check("mean over category 1 (R@5, R@10)", (agg["1"]["R@5"], agg["1"]["R@10"]),
                  (0.5, 1.0))
    good &= check("1-4 (n, R@5, any@5)", (agg["1-4"]["n"], agg["1-4"]["R@5"], agg["1-4"]["any@5"]),
                  (3, 0.3333, 0.6667))
    good &= check("1-5 (n, R@10)", (agg["1-5"]["n"], agg["1-5"]["R@10"]), (4, 0.5))
    print("self-check " + ("passed" if good else "FAILED"))
    return 0 if good else 1
