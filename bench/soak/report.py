"""The soak's figures, from what the bench saw and what the vault and its state hold
afterwards, and the Markdown report of them."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.realmodel.measure import journal_of
from bench.soak import probe
from vaultlink.pipeline.topics import day_of
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

DECISIONS = ("CREATE", "CORROBORATE", "REFINE", "CORRECT")


@dataclass
class Run:
    """What the bench wrote and when, and when it saw each version integrated."""

    quiet: float
    day_seconds: float
    started: float = 0.0
    expected: dict[str, bytes] = field(default_factory=dict)  # path -> last text written
    last_write: dict[str, float] = field(default_factory=dict)
    kind: dict[str, str] = field(default_factory=dict)
    settled_at: dict[str, float] = field(default_factory=dict)  # current version integrated
    latencies: list[tuple[str, str, float]] = field(default_factory=list)  # every version
    days: list[dict[str, Any]] = field(default_factory=list)
    edit: dict[str, Any] | None = None
    restart: dict[str, Any] | None = None

    def note_written(self, path: str, text: bytes, at: float, kind: str) -> None:
        """The bench wrote ``text`` to ``path``: a new version to wait for."""
        self.expected[path], self.last_write[path], self.kind[path] = text, at, kind
        self.settled_at.pop(path, None)

    def saw_settled(self, paths: set[str], now: float) -> None:
        """These notes' checkpoints hold their last text now."""
        for path in paths - set(self.settled_at):
            self.settled_at[path] = now
            self.latencies.append((path, self.kind[path], now - self.last_write[path]))

    def end_of_day(self, day: int, rss: float, cpu: float, load: str) -> None:
        """The daemon's figures at the end of a day."""
        self.days.append({"day": day + 1, "rss_mb": round(rss, 1), "daemon_cpu": round(cpu, 1),
                          "integrated": len(self.settled_at), "written": len(self.expected),
                          "load": load})


def _q(values: list[float], q: float) -> float | None:
    v = probe.pct(values, q)
    return None if v is None else round(v, 1)


def duplicates(root: Path) -> list[list[str]]:
    """Digest nodes sharing a name (normalised: NFKC, case-folded, spaces): duplicates."""
    vault, by_name = Vault(root), dict[str, list[str]]()
    for path in vault.iter_files(["digest"]):
        if not path.endswith(".md") or path.startswith("digest/topics/"):
            continue
        try:
            meta = vault.read_note(path).frontmatter
        except Exception:  # an unreadable node is check's business
            continue
        name = str(meta.get("name") or path.rsplit("/", 1)[-1].removesuffix(".md"))
        key = " ".join(unicodedata.normalize("NFKC", name).casefold().replace("-", " ").split())
        by_name.setdefault(key, []).append(path)
    return [sorted(ps) for ps in by_name.values() if len(ps) > 1]


def outside_digest(root: Path, expected: dict[str, bytes]) -> list[str]:
    """Files outside digest/ and .vaultlink/ that differ from what the bench wrote."""
    found = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}
    mine = {k: v for k, v in found.items()
            if not k.startswith(("digest/", ".vaultlink/"))}
    changed = [k for k, p in mine.items() if expected.get(k) != p.read_bytes()]
    return sorted(changed + [k for k in expected if k not in mine])


def left_over(root: Path, run: Run) -> list[dict[str, Any]]:
    """Notes whose last text is not integrated, each with what the state says of it."""
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        why: dict[str, str] = {}
        for u in state.unread_notes():
            why[u["path"]] = f"unreadable: {u['reason']}"
        for b in state.barren_notes():
            why.setdefault(b["path"], "barren: no unit worth keeping")
        for f in state.failures():
            for p in f["paths"]:
                why.setdefault(p, f"{'parked' if f['parked'] else 'failed'}: {f['error'][:160]}")
        queued = {i.path for i in state.queue()}
    finally:
        state.close()
    return [{"path": p, "why": why.get(p, "still queued" if p in queued else "unknown")}
            for p in sorted(set(run.expected) - set(run.settled_at))]


def figures(run: Run, root: Path,
            alone: tuple[list[dict[str, Any]], list[dict[str, Any]]],
            inside: list[dict[str, Any]],
            poller: probe.Poller, sampler: probe.Sampler, check: subprocess.CompletedProcess[str],
            args: argparse.Namespace, model: str) -> dict[str, Any]:
    """Every figure of the report, as JSON-ready values."""
    lat = [s for _, _, s in run.latencies]
    after_settle = [max(0.0, s - run.quiet) for s in lat]
    journal = journal_of(root / ".vaultlink" / "state.sqlite")
    state = State(root / ".vaultlink" / "state.sqlite")
    try:
        failures = state.failures()
    finally:
        state.close()
    actions: dict[str, int] = {}
    for row in journal:
        actions[row["action"]] = actions.get(row["action"], 0) + 1
    units = sum(actions.get(a, 0) for a in DECISIONS)
    rate_alone, rate_inside = probe.token_rate(alone[0] + alone[1]), probe.token_rate(inside)
    before, after = probe.token_rate(alone[0]), probe.token_rate(alone[1])
    server_cpu = sampler.server_cpu - sampler.server_cpu0
    try:
        checked = json.loads(check.stdout)
    except ValueError:
        checked = {"errors": [check.stdout[-500:] or check.stderr[-500:]], "warnings": []}
    rss = [mb for _, mb in sampler.rss]
    day1 = run.days[0]["rss_mb"] if run.days else None
    status_s = [a["seconds"] for a in poller.answers]
    calls = probe.calls_summary(inside)
    # The old rule called the model for topics in every run, for every day it touched
    # (until the day had max_topics topics): at most one call per (run, day) of decisions.
    pairs = {(r["run_id"], day_of(list(r["unit"].get("paths", [])), dt.date.today()))
             for r in journal if r["action"] in DECISIONS}
    # The rule now: one call for a day once it holds topics.min_units (4) units.
    per_day: dict[dt.date, int] = {}
    for r in journal:
        if r["action"] in DECISIONS:
            day = day_of(list(r["unit"].get("paths", [])), dt.date.today())
            per_day[day] = per_day.get(day, 0) + 1
    return {
        "model": model, "days": args.days, "minutes_per_day": args.minutes_per_day,
        "pages_per_day": args.pages_per_day, "quiet_seconds": run.quiet,
        "notes_written": len(run.expected), "versions_integrated": len(lat),
        "latency_from_last_write": {"p50": _q(lat, 0.5), "p95": _q(lat, 0.95),
                                    "max": _q(lat, 1.0)},
        "latency_after_settling": {"p50": _q(after_settle, 0.5),
                                   "p95": _q(after_settle, 0.95)},
        "latency_by_note": [{"path": p, "kind": k, "seconds": round(s, 1)}
                            for p, k, s in run.latencies],
        "tokens_per_s": {"alone": rate_alone and round(rate_alone, 2),
                         "alone_before": before and round(before, 2),
                         "alone_after": after and round(after, 2),
                         "in_daemon": rate_inside and round(rate_inside, 2),
                         "ratio": round(rate_inside / rate_alone, 2)
                         if rate_alone and rate_inside else None},
        "calls": calls,
        "topics": {"calls": calls.get("topics", {}).get("calls", 0),
                   "old_rule_at_most": len(pairs), "days": len({d for _, d in pairs}),
                   "days_with_4_units": sum(1 for n in per_day.values() if n >= 4)},
        "cpu": {"daemon_s": round(sampler.daemon_cpu(), 1), "server_s": round(server_cpu, 1),
                "daemon_s_per_unit": round(sampler.daemon_cpu() / units, 1) if units else None,
                "server_s_per_unit": round(server_cpu / units, 1) if units else None},
        "rss_mb": {"end_of_day1": day1, "end": round(rss[-1], 1) if rss else None,
                   "max": round(max(rss), 1) if rss else None,
                   "end_vs_day1": round(rss[-1] / day1, 2) if rss and day1 else None,
                   # the restart starts a new process: each one's own course
                   "by_process": sampler.rss_by_process()},
        "per_day": run.days,
        "units": {"integrated": units, "actions": actions,
                  "failed_open": sum(1 for f in failures if not f["parked"]),
                  "parked": sum(1 for f in failures if f["parked"])},
        "left_over": left_over(root, run),
        "duplicates": duplicates(root),
        "check": {"errors": len(checked.get("errors", [])),
                  "warnings": len(checked.get("warnings", [])),
                  "error_lines": checked.get("errors", [])[:10]},
        "outside_digest_changed": outside_digest(root, run.expected),
        "edit": run.edit, "restart": run.restart,
        "status_polls": {"answers": len(poller.answers), "misses": poller.misses,
                         "p95_seconds": _q(status_s, 0.95)},
        "load_end": probe.load(), "cores": os.cpu_count(),
    }


def markdown(rep: dict[str, Any]) -> str:
    """The report as a page of bench/results."""
    lat, after, tok = rep["latency_from_last_write"], rep["latency_after_settling"], \
        rep["tokens_per_s"]
    cpu, rss, units = rep["cpu"], rep["rss_mb"], rep["units"]
    lines = [
        f"# Soak: {rep['model']}, {rep['days']} day(s) at {rep['minutes_per_day']:g} min a day",
        "", f"`vaultlink watch` beside `bench/realmodel/server.py` ({rep['cores']} cores); "
        f"{rep['notes_written']} notes ({rep['pages_per_day']} clipped pages a day), "
        f"watch.quiet_seconds {rep['quiet_seconds']:g}. The machine was shared: "
        f"{rep.get('load_alone', ['?'])[0]} when the server was timed alone before, "
        f"{rep.get('load_alone', ['?', '?'])[-1]} after, {rep['load_end']} at the end; "
        "per day below.", "",
        "| figure | value |", "| --- | --- |",
        f"| note written -> integrated, p50 / p95 / max | {lat['p50']} / {lat['p95']} / "
        f"{lat['max']} s |",
        f"| the same after settling (minus quiet time), p50 / p95 | {after['p50']} / "
        f"{after['p95']} s |",
        f"| model tokens/s alone (before, after) / in the daemon / ratio | {tok['alone']} "
        f"({tok['alone_before']}, {tok['alone_after']}) / {tok['in_daemon']} / "
        f"{tok['ratio']} |",
        f"| CPU s per unit: daemon / model server | {cpu['daemon_s_per_unit']} / "
        f"{cpu['server_s_per_unit']} (in all {cpu['daemon_s']} / {cpu['server_s']} s) |",
        f"| daemon RSS end of day 1 / end / max | {rss['end_of_day1']} / {rss['end']} / "
        f"{rss['max']} MB (ratio {rss['end_vs_day1']}; per process first/last/max: "
        + "; ".join(f"{r['first']}/{r['last']}/{r['max']}" for r in rss["by_process"])
        + ") |",
        f"| units integrated / failed / parked | {units['integrated']} / "
        f"{units['failed_open']} / {units['parked']} ({units['actions']}) |",
        f"| notes not integrated | {len(rep['left_over'])} |",
        f"| topics calls / days with 4+ units (the old rule: at most) | "
        f"{rep['topics']['calls']} / {rep['topics'].get('days_with_4_units', '?')} "
        f"({rep['topics']['old_rule_at_most']}) over {rep['topics']['days']} day(s) |",
        f"| duplicate nodes | {len(rep['duplicates'])} |",
        f"| `vaultlink check` errors / warnings | {rep['check']['errors']} / "
        f"{rep['check']['warnings']} |",
        f"| files changed outside digest/ | {len(rep['outside_digest_changed'])} |",
        f"| status polls answered / missed / p95 | {rep['status_polls']['answers']} / "
        f"{rep['status_polls']['misses']} / {rep['status_polls']['p95_seconds']} s |",
        "", "Model calls inside the daemon (prompt tokens the server read, and those it "
        "took from its prefix cache):", "",
        "| call | calls | median s | prompt tokens | from cache | evaluated |",
        "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for kind, c in rep["calls"].items():
        lines.append(f"| {kind} | {c['calls']} | {c['median_seconds']} | {c['prompt_tokens']} "
                     f"| {c['cached_tokens']} | {c['evaluated_tokens']} |")
    lines += ["", "Per day:", "", "| day | integrated / written | daemon RSS MB | daemon CPU s "
              "| load |", "| ---: | --- | ---: | ---: | --- |"]
    lines += [f"| {d['day']} | {d['integrated']} / {d['written']} | {d['rss_mb']} | "
              f"{d['daemon_cpu']} | {d['load']} |" for d in rep["per_day"]]
    lines += ["", f"Edit: {rep['edit']}.", "", f"Restart: {rep['restart']}.", ""]
    if rep["left_over"]:
        lines += ["Notes not integrated:", ""]
        lines += [f"- `{n['path']}`: {n['why']}" for n in rep["left_over"]] + [""]
    if rep["duplicates"]:
        lines += ["Duplicate nodes: " + "; ".join(", ".join(d) for d in rep["duplicates"]), ""]
    if rep["outside_digest_changed"]:
        lines += ["Changed outside digest/: " + ", ".join(rep["outside_digest_changed"]), ""]
    lines += [f"The vault: `{rep.get('work', '')}/vault`.", ""]
    return "\n".join(lines)
