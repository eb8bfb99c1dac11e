"""The offline integrator's merges, listed and checked against hand labels (issue 40, item 2).

    python -m bench.quality.merges                     # six personal vaults, five doc sets
    python -m bench.quality.merges --corpus oignon     # one corpus (repeatable)
    python -m bench.quality.merges --keep /tmp/merges  # keep the dreamed vaults, to read them

A *merge*: a journal row updating a node with a unit whose note the node did not cite
before (its Sources, earlier rows). Dreamed offline with review off, every decision is
written; labels in ``merges_labels.json`` (docs/quality.md says how they were read).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from bench.quality.locomo.data import load as load_locomo
from bench.quality.locomo.vault import write_vault as write_locomo
from bench.quality.personal import corpus as personal
from bench.quality.personal.run import MAX_RUNS, Model, dream_once, dream_vault
from bench.quality.realdocs import ROOT as REALDOCS
from bench.quality.realdocs import load_corpus, write_as_vault
from vaultlink.markdown.links import find_wikilinks
from vaultlink.markdown.names import is_copy
from vaultlink.vault.actions import UPDATE_ACTIONS
from vaultlink.vault.journal import JournalEntry
from vaultlink.vault.state import State

HERE = Path(__file__).resolve().parent
LABELS = HERE / "merges_labels.json"
RESULTS = HERE / "results"
LINKDOCS = REALDOCS.parent / "linkdocs"
# documentation corpora: name -> (corpus root, the sets taken; none: every set)
DOCS: dict[str, tuple[Path, tuple[str, ...]]] = {
    "realdocs": (REALDOCS, ()),
    "linkdocs-npm": (LINKDOCS, ("npm",)),
    "linkdocs-serverless": (LINKDOCS, ("serverless",)),
    "linkdocs-pymdown": (LINKDOCS, ("pymdown-extensions",)),
    "linkdocs-undici": (LINKDOCS, ("undici",)),
}
# day-note corpora: the project's sample vault, and LoCoMo conversations as day notes
# (one session a note, bench/quality/locomo), built from the fetched snapshot
SAMPLE = HERE.parent.parent / "sample_vault"
LOCOMO = tuple(f"locomo-{c}" for c in ("26", "30", "41", "42", "43", "44", "47", "48", "49", "50"))
# A note saved again, as Obsidian's "Make a copy" names it ("<name> 1.md"), with one line
# added above its text: a repeat, the merge every integrator must make (issue 37). Taken
# of the documentation and personal corpora as `<corpus>-again`, after the corpus settled.
AGAIN = "-again"
AGAIN_LINE = "Clipped again for the team."
MAX_AGAIN = 10
FRONT = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.S)
SOURCES = re.compile(r"^## Sources\s*$", re.M)
WIKILINK = re.compile(r"!?\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
MARKUP = re.compile(r"[*_`]")


class Label(StrEnum):
    """A merge as read by hand."""

    SAME = "same-subject"  # right: the unit is about the node's subject
    DIFFERENT = "different-subject"  # wrong: two subjects in one node


@dataclass
class Offline(Model):
    """The offline integrator; review off by default: every decision written, none held."""

    review: str = "off"

    def overrides(self) -> dict[str, object]:
        return {**super().overrides(), "review.mode": self.review}


@dataclass
class Merge:
    """One update of a node with a unit from a note the node did not cite."""

    corpus: str
    target: str
    note: str  # the unit's note(s), ", "-joined
    action: str
    earlier: list[str]  # the notes the node cited before
    lines: str  # where the unit's text sits in its note ("3-9, 12"), "" when not found
    why: str  # the integrator's own journal note (similarity, what it added)
    label: str = ""
    reason: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.corpus, self.target, self.note, self.action)


@dataclass
class Found:
    """The merges of one corpus and what dreaming it took."""

    corpus: str
    merges: list[Merge] = field(default_factory=list)
    seconds: float = 0.0
    settled: bool = False
    held: int = 0  # proposals waiting for review (0 with review off)

    def counts(self) -> dict[str, int]:
        labelled = [m for m in self.merges if m.label]
        return {"merges": len(self.merges), "held": self.held, "labelled": len(labelled),
                "wrong": sum(m.label == Label.DIFFERENT for m in labelled)}


def cited(text: str | None) -> set[str]:
    """The notes a node's ``## Sources`` section links to (vault paths)."""
    if not text:
        return set()
    match = SOURCES.search(text)
    if match is None:
        return set()
    return {w.target if w.target.endswith(".md") else w.target + ".md"
            for w in find_wikilinks(text[match.end():])}


def unit_lines(note: Path, summary: str) -> str:
    """The 1-based lines of ``note`` whose text the unit's summary carries, as ranges."""
    if not note.is_file():
        return ""
    flat = plain(summary)
    words = set(flat.split())
    hits = []
    for number, line in enumerate(note.read_text(encoding="utf-8").split("\n"), 1):
        text = plain(line.strip().lstrip("-+>#"))
        own = text.split()
        if len(text) >= 4 and (text in flat or (
                len(own) >= 4 and sum(w in words for w in own) >= 0.8 * len(own))):
            hits.append(number)
    return ranges(hits)


def plain(text: str) -> str:
    """Text without link brackets and emphasis marks, its spaces collapsed."""
    return " ".join(MARKUP.sub("", WIKILINK.sub(r"\1", text)).split())


def ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"``."""
    out: list[str] = []
    for n in numbers:
        if out and int(out[-1].rsplit("-", 1)[-1]) in (n - 1, n - 2):  # one line apart: a blank
            out[-1] = out[-1].split("-")[0] + f"-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def find_merges(name: str, root: Path) -> tuple[list[Merge], int]:
    """Every written update of a node with a unit from a note the node did not cite yet,
    and how many decisions wait for review."""
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        rows: list[JournalEntry] = list(reversed(state.journal(limit=1_000_000)))
        held = state.proposal_count()
    finally:
        state.close()
    before: dict[str, set[str]] = {}  # target -> the notes of earlier rows on it
    out = []
    for row in rows:
        if not row.target or row.undone_by is not None:
            continue
        notes = [str(p) for p in row.unit.get("paths", [])]
        earlier = (cited(row.before_text) | before.get(row.target, set())) - set(notes)
        if row.action in UPDATE_ACTIONS and earlier and row.before_text != row.after_text:
            lines = "; ".join(unit_lines(root / p, str(row.unit.get("summary", "")))
                              for p in notes)
            out.append(Merge(name, row.target, ", ".join(notes), row.action, sorted(earlier),
                             lines, row.note))
        before.setdefault(row.target, set()).update(notes)
    return out, held


def doc_source(name: str, dest: Path) -> Path:
    """Lay a documentation corpus out as a vault (pages under ``resource/<set>/``)."""
    root, sets = DOCS[name]
    pages = [p for p in load_corpus(root) if not sets or p.set in sets]
    source = dest / "sources" / name
    for folder in ("daily", "resource", "digest"):
        (source / folder).mkdir(parents=True, exist_ok=True)
    write_as_vault(pages, source)
    return source


def locomo_source(name: str, dest: Path) -> Path:
    """Lay a LoCoMo conversation out as day notes, one session a note."""
    wanted = name.removeprefix("locomo-")
    (conv,) = [c for c in load_locomo()[0] if c.conv == wanted]
    source = dest / "sources" / name
    for folder in ("daily", "resource", "digest"):
        (source / folder).mkdir(parents=True, exist_ok=True)
    write_locomo(conv, source)
    return source


def save_again(root: Path) -> list[str]:
    """Save up to ``MAX_AGAIN`` of a vault's pages (spread over their sorted list) again
    beside themselves as ``<name> 1.md``, ``AGAIN_LINE`` above their text; their paths."""
    found = sorted((root / "resource").rglob("*.md"))
    names = {p.as_posix() for p in found}
    pages = [p for p in found if not re.search(r"\d{4}-\d{2}-\d{2}", p.name)
             and not any(is_copy(p.as_posix(), n) for n in names)  # an owner's own copy
             and not p.with_name(f"{p.stem} 1.md").exists()]  # its copy's name is taken
    picked = pages[::max(1, len(pages) // MAX_AGAIN)][:MAX_AGAIN]
    out = []
    for page in picked:
        text = page.read_text(encoding="utf-8")
        front = FRONT.match(text)
        head, body = (text[:front.end()], text[front.end():]) if front else ("", text)
        copy = page.with_name(f"{page.stem} 1.md")
        copy.write_text(f"{head}{AGAIN_LINE}\n\n{body.lstrip()}", encoding="utf-8")
        out.append(copy.relative_to(root).as_posix())
    return out


def dream_corpus(name: str, work: Path, review: str = "off") -> Found:
    """Dream one corpus offline and list its merges (with review on: those written); a
    ``-again`` corpus is dreamed twice: as it is, then with some pages saved again."""
    again = name.endswith(AGAIN)
    name, label = name.removesuffix(AGAIN), name
    if name in DOCS:
        source = doc_source(name, work)
    elif name == "sample":
        source = SAMPLE
    elif name in LOCOMO:
        source = locomo_source(name, work)
    else:
        source = personal.VAULTS / name / "vault"
        if not source.is_dir():
            personal.build(name)
    started = time.monotonic()
    model = Offline(review=review)
    dreamed = dream_vault(label, source, work, model)
    copies: set[str] = set()
    if again:
        copies = set(save_again(dreamed.root))
        dreamed.settled = False
        for _ in range(MAX_RUNS):
            run = dream_once(dreamed.root, model)
            if not run.extraction.changed and not run.report.results:
                dreamed.settled = True
                break
    merges, held = find_merges(label, dreamed.root)
    if again:  # the corpus's own merges are counted under its name: the copies' only
        merges = [m for m in merges if copies & set(m.note.split(", "))]
    return Found(label, merges, time.monotonic() - started, dreamed.settled, held)


def load_labels() -> dict[tuple[str, str, str, str], dict[str, str]]:
    data = json.loads(LABELS.read_text()) if LABELS.exists() else {"merges": []}
    return {(m["corpus"], m["target"], m["note"], m["action"]): m for m in data["merges"]}


def apply_labels(found: list[Found]) -> list[tuple[str, str, str, str]]:
    """Label each merge from the file; returns the labels no merge matched (stale ones)."""
    labels = load_labels()
    used = set()
    for f in found:
        for m in f.merges:
            if m.key in labels:
                m.label = Label(labels[m.key]["label"]).value
                m.reason = labels[m.key]["reason"]
                used.add(m.key)
    dreamed = {f.corpus for f in found}
    return sorted(k for k in labels if k not in used and k[0] in dreamed)


def corpus_table(f: Found) -> list[str]:
    out = [f"\n## {f.corpus}: {len(f.merges)} merges ({f.seconds:.1f} s"
           f"{'' if f.settled else ', not settled'})", "",
           "| action | target | unit note (lines) | earlier notes | label |",
           "| --- | --- | --- | --- | --- |"]
    for m in f.merges:
        label = {"": "-", Label.SAME.value: "right", Label.DIFFERENT.value: "WRONG"}[m.label]
        out.append(f"| {m.action} | {m.target} | {m.note} ({short(m.lines)}) | "
                   f"{', '.join(m.earlier)} | {label} |")
    return out


def short(lines: str) -> str:
    """Line ranges as the table shows them: the first and last when there are many."""
    if len(lines) <= 24:
        return lines or "?"
    parts = lines.split(", ")
    return f"{parts[0]}, ..., {parts[-1]}"


def summary(found: list[Found]) -> list[str]:
    out = ["\n| corpus | merges | labelled | wrong | held for review | seconds |",
           "| --- | --- | --- | --- | --- | --- |"]
    for f in found:
        c = f.counts()
        out.append(f"| {f.corpus} | {c['merges']} | {c['labelled']} | {c['wrong']} | "
                   f"{c['held']} | {f.seconds:.1f} |")
    total = {k: sum(f.counts()[k] for f in found)
             for k in ("merges", "labelled", "wrong", "held")}
    out.append(f"| all | {total['merges']} | {total['labelled']} | {total['wrong']} | "
               f"{total['held']} | {sum(f.seconds for f in found):.1f} |")
    wrong = [m for f in found for m in f.merges if m.label == Label.DIFFERENT]
    out += [f"\nwrong merges ({len(wrong)}):"] + [
        f"- {m.corpus}: {m.target} <- {m.note} ({m.action}): {m.reason}" for m in wrong]
    return out


def commit() -> str:
    """The checkout's commit (``VAULTLINK_COMMIT`` when run from an exported copy)."""
    if os.environ.get("VAULTLINK_COMMIT"):
        return os.environ["VAULTLINK_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=HERE, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def dream_all(names: list[str], keep: Path | None, review: str) -> list[Found]:
    found = []
    with tempfile.TemporaryDirectory(prefix="vaultlink-merges-") as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for name in names:
            print(f"dreaming {name} offline ...", file=sys.stderr, flush=True)
            found.append(dream_corpus(name, work, review))
    return found


def reread(path: Path) -> list[Found]:
    """The corpora and merges of an earlier results JSON, their labels dropped."""
    data = json.loads(path.read_text())
    found = {name: Found(name, [], c["seconds"], c["settled"], c.get("held", 0))
             for name, c in data["corpora"].items()}
    for m in data["merges"]:
        found[m["corpus"]].merges.append(Merge(**{**m, "label": "", "reason": ""}))
    return list(found.values())


def report(found: list[Found]) -> None:
    """Label the merges, print each corpus's table, the summary and any stale label."""
    stale = apply_labels(found)
    for f in found:
        print("\n".join(corpus_table(f)))
    print("\n".join(summary(found)))
    if stale:
        print(f"\nlabels no merge matched ({len(stale)}): "
              + "; ".join(" | ".join(k) for k in stale))


def main(argv: list[str] | None = None) -> int:
    names = [v["name"] for v in personal.load_manifest()] + list(DOCS) + ["sample", *LOCOMO]
    names += [f"{n}{AGAIN}" for n in names if n in DOCS or n not in ("sample", *LOCOMO)]
    ap = argparse.ArgumentParser(prog="python -m bench.quality.merges", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", choices=names, help="only this corpus")
    ap.add_argument("--keep", type=Path, help="dream in this folder and keep the vaults")
    ap.add_argument("--out", type=Path, help="results JSON (default results/merges-<commit>)")
    ap.add_argument("--relabel", type=Path, help="no dream: label the merges of this results JSON")
    ap.add_argument("--review", choices=("off", "uncertain"), default="off",
                    help="review.mode: uncertain (the default config) counts what is written")
    args = ap.parse_args(argv)
    run = {"date": dt.date.today().isoformat(), "commit": commit(), "review": args.review}
    if args.relabel:  # the run's own date, commit and review mode
        run = {k: json.loads(args.relabel.read_text())[k] for k in run}
    found = (reread(args.relabel) if args.relabel
             else dream_all(args.corpus or names, args.keep, args.review))
    report(found)
    suffix = "" if run["review"] == "off" else f"-review-{run['review']}"
    out = args.out or RESULTS / f"merges-{run['commit']}{suffix}.json"
    payload = {**run, "corpora": {f.corpus: {**f.counts(), "seconds": round(f.seconds, 1),
                                      "settled": f.settled} for f in found},
               "merges": [asdict(m) for f in found for m in f.merges]}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    print(f"\nwritten {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
