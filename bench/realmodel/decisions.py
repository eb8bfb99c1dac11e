"""Decision accuracy of a real model on the labelled set ``decisions.json`` (not in CI).

Run from the repository root, with a model server up (``bench.realmodel.server``, or
Ollama)::

    python -m bench.realmodel.decisions --host http://127.0.0.1:11435 \\
        --model qwen2.5-coder:1.5b --mode oneshot --mode tools [--case ID ...] \\
        [--out bench/results/decisions-1.5b.json]

For each case and mode: a fresh vault with sample_vault's digest and the case's source
note (plus, for a case with a ``digest``, that group's nodes and the notes they cite, from
``digests`` in the file; a source or note given as ``{"locomo": CONV, "dia": [...]}`` is
read from the LoCoMo snapshot at run time, since LoCoMo has no licence to copy it, and
one given as ``{"vault": NAME, "path": ..., "lines": [...]}`` from the personal vault
``bench.quality.personal`` builds, since fetched notes are not committed), the
unit integrated by ``integrate_unit`` exactly as a run would (shipped
settings, the real guard, tools and journal), then the action and target compared with
the label. A CREATE is right when the label is CREATE; an update when the action and
the target both match. A wrong merge is an update written where the label says CREATE or
names another node. Cases are split three ways: the first set (the one-shot rules were
set from it), ``heldout`` (written after those rules) and ``untuned`` (written after every
rule, issue 40; no rule was changed after looking at them). Prints one line per case and
a table per mode and split; ``--out`` writes
every figure as JSON (machine load included, as ``uptime`` shows it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vaultlink.cli.settings import load_settings
from vaultlink.options import Provider
from vaultlink.pipeline.compose import close_models, dream_context, open_parts
from vaultlink.pipeline.integrate.step import integrate_unit
from vaultlink.prose.units import Unit
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).with_name("decisions.json")
SOURCE = "daily/2026-06-22.md"


@dataclass
class Outcome:
    """One case in one mode."""

    case: str
    kind: str
    heldout: bool
    mode: str
    expected: str
    got: str
    right: bool
    status: str
    seconds: float
    model_seconds: float
    prompt_tokens: int
    answer_tokens: int
    calls: dict[str, int] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)
    check_errors: int = 0
    error: str = ""
    split: str = ""  # first | heldout | untuned
    wrong_merge: bool = False  # an update where the label says CREATE or another node
    unrelated: bool = False
    warnings: list[str] = field(default_factory=list)


DIGESTS: dict[str, Any] = json.loads(CASES.read_text()).get("digests", {})


def load_cases(ids: list[str] | None = None, splits: list[str] | None = None
               ) -> list[dict[str, Any]]:
    """The labelled cases, all or those named (or of the splits named)."""
    cases: list[dict[str, Any]] = json.loads(CASES.read_text())["cases"]
    return [c for c in cases if (not ids or c["id"] in ids)
            and (not splits or split_of(c) in splits)]


def split_of(case: dict[str, Any]) -> str:
    """Which part of the set a case belongs to (see the module's docstring)."""
    return "untuned" if case.get("untuned") else "heldout" if case.get("heldout") else "first"


_LOCOMO: dict[str, Any] = {}


def text_of(source: Any) -> str:
    """A note's text: as written in the file, or LoCoMo turns read from its snapshot
    (one paragraph a turn, "Speaker: text", as bench.quality.locomo writes a session)."""
    if isinstance(source, str):
        return source
    if "locomo" in source:
        if not _LOCOMO:
            from bench.quality.locomo import data
            _LOCOMO.update({c.conv: c for c in data.load()[0]})
        conv = _LOCOMO[str(source["locomo"])]
        turns = {t.dia_id: t for s in conv.sessions for t in s.turns}
        paras = [f"{turns[d].speaker}: {turns[d].text}" for d in source["dia"]]
        return "\n\n".join(paras) + "\n"
    if "vault" in source:
        return _vault_text(source)
    raise ValueError(f"unknown source {source!r}")


def _vault_text(source: dict[str, Any]) -> str:
    """Lines of a note of a personal vault (``lines``: 1-based, 0 a blank line; none:
    the whole note), read from the vault ``bench.quality.personal`` built from its
    snapshot: the owners' notes are not copied into this repository."""
    from bench.quality.personal import corpus

    path = corpus.VAULTS / source["vault"] / "vault" / source["path"]
    if not path.is_file():
        raise SystemExit(f"{path} is missing: build the personal vaults first "
                         "(python -m bench.quality.personal --build)")
    lines = path.read_text(encoding="utf-8").split("\n")
    if "lines" not in source:
        return "\n".join(lines)
    return "\n".join(lines[n - 1] if n else "" for n in source["lines"]) + "\n"


def case_vault(root: Path, case: dict[str, Any]) -> Path:
    """sample_vault (its notes, so the digest's links resolve) plus the case's note, and
    the case's digest group (its nodes and the notes they cite), if it names one."""
    shutil.copytree(REPO / "sample_vault", root, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".vaultlink", ".obsidian"))
    group = DIGESTS.get(case.get("digest", ""), {})
    for rel, text in {**group.get("notes", {}), **group.get("nodes", {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text_of(text), encoding="utf-8")
    (root / source_path(case)).parent.mkdir(parents=True, exist_ok=True)
    (root / source_path(case)).write_text(text_of(case["source"]), encoding="utf-8")
    return root


def source_path(case: dict[str, Any]) -> str:
    """Where the case's note lands in its vault."""
    return str(case.get("source_path") or SOURCE)


def run_case(case: dict[str, Any], mode: str, host: str, model: str,
             review: str = "uncertain") -> Outcome:
    """Integrate the case's unit once in ``mode`` (``review``: review.mode, the shipped
    default unless given); score the decision."""
    with tempfile.TemporaryDirectory(prefix="vaultlink-decision-") as tmp:
        root = case_vault(Path(tmp), case)
        settings = load_settings(root, environ={}).with_overrides(
            {"llm.provider": "ollama", "llm.host": host, "llm.model": model,
             "llm.integrate_mode": mode, "review.mode": review})
        options = settings.pipeline()
        parts = open_parts(Vault(root), options)
        started = time.monotonic()
        try:
            parts.index.sync()
            ctx = dream_context(parts, options, Provider.OLLAMA)
            try:
                run_id = parts.state.start_run(False, "ollama")
                unit = Unit.from_dict({**case["unit"], "paths": [source_path(case)]})
                result = integrate_unit(ctx, run_id, unit)
            finally:
                close_models(ctx)
        finally:
            parts.close()
        errors = [p for p in check_vault(Vault(root)) if p.level == "error"]
    expected = case["expected"]
    got_target = result.target if result.action != "CREATE" else ""
    right = (result.status == "integrated" and result.action == expected["action"]
             and (expected["action"] == "CREATE" or got_target == expected["target"]))
    usage = result.usage
    wrong_merge = (result.status == "integrated" and result.action != "CREATE"
                   and (expected["action"] == "CREATE" or got_target != expected["target"]))
    return Outcome(
        case["id"], case["kind"], bool(case.get("heldout")), mode,
        f"{expected['action']} {expected['target']}".strip(),
        f"{result.action} {got_target}".strip(), right, result.status,
        round(time.monotonic() - started, 1), round(usage.seconds, 1) if usage else 0.0,
        sum(usage.prompt_tokens) if usage else 0, usage.answer_tokens if usage else 0,
        dict(usage.calls) if usage else {}, list(usage.refusals) if usage else [],
        len(errors), result.error[:300], split_of(case), wrong_merge,
        case["kind"] == "unrelated", list(getattr(result, "warnings", []) or []))


def table(outcomes: list[Outcome]) -> list[str]:
    """A Markdown table: accuracy, seconds and tokens per unit, by mode."""
    lines = ["| mode | cases | right | wrong merges (of unrelated) | integrated | "
             "right of written | held for review | s/unit (median) | prompt tok/unit | "
             "answer tok/unit | refusals | check errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for mode in sorted({o.mode for o in outcomes}):
        lines.append(_row(mode, "all", [o for o in outcomes if o.mode == mode]))
        for split, label in (("first", "first set"), ("heldout", "held out"),
                             ("untuned", "untuned")):
            rows = [o for o in outcomes if o.mode == mode and (o.split or (
                "heldout" if o.heldout else "first")) == split]
            if rows:
                lines.append(_row(mode, label, rows))
    return lines


def _row(mode: str, which: str, rows: list[Outcome]) -> str:
    secs = sorted(o.seconds for o in rows)
    n = len(rows)
    merges = sum(o.wrong_merge for o in rows)
    unrelated = sum(o.wrong_merge for o in rows if o.unrelated)
    written = sum(o.status == "integrated" for o in rows)
    return (f"| {mode} | {which} ({n}) | {sum(o.right for o in rows)}/{n} | "
            f"{merges} ({unrelated}/{sum(o.unrelated for o in rows)}) | "
            f"{written}/{n} | {sum(o.right for o in rows if o.status == 'integrated')}/"
            f"{written} | {sum(o.status == 'held' for o in rows)}/{n} | {secs[n // 2]:.0f} | "
            f"{sum(o.prompt_tokens for o in rows) // n} | "
            f"{sum(o.answer_tokens for o in rows) // n} | "
            f"{sum(len(o.refusals) for o in rows)} | {sum(o.check_errors for o in rows)} |")


def main(argv: list[str] | None = None) -> int:
    """Run the labelled set in each mode; print and optionally save the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--mode", action="append", choices=["oneshot", "tools"])
    p.add_argument("--case", action="append", help="only these case ids")
    p.add_argument("--split", action="append", choices=["first", "heldout", "untuned"],
                   help="only the cases of these splits")
    p.add_argument("--review", default="uncertain", choices=["off", "uncertain", "all"],
                   help="review.mode for every case (default: the shipped uncertain)")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    outcomes: list[Outcome] = []
    load = [os.getloadavg()]
    for mode in args.mode or ["oneshot"]:
        for case in load_cases(args.case, args.split):
            o = run_case(case, mode, args.host, args.model, args.review)
            outcomes.append(o)
            print(f"{mode:8} {o.case:26} {'RIGHT' if o.right else 'wrong':5} "
                  f"want {o.expected:50} got {o.got or o.status:50} {o.seconds:6.0f} s "
                  f"{o.prompt_tokens}+{o.answer_tokens} tok {o.error[:80]}", flush=True)
            load.append(os.getloadavg())
    lines = table(outcomes)
    print("\n".join(lines))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({
            "model": args.model, "host": args.host, "cases": len(load_cases(args.case, args.split)),
            "loadavg_during": [round(sum(x[0] for x in load) / len(load), 2)],
            "table": lines, "outcomes": [asdict(o) for o in outcomes]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
