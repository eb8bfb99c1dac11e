"""``vaultlink dream`` with a real local model on notes that are not in English.

Run from the repository root (llama-cpp-python installed, see requirements.txt)::

    python -m bench.realmodel.languages [--model qwen2.5-coder-0.5b] [--page zh-hans/faq-build]
        [--max-units 30] [--host URL] [--out bench/results] [--keep DIR] [--tag NAME]

The vault: the Chinese and German day notes of tests/fixtures/pages (zh-day.md, de-day.md)
as daily/2026-12-01.md and daily/2026-12-02.md, and a few pages of bench/quality/langdocs
(React's documentation as its translators published it) copied byte for byte as
resource/<language>/<page>.md. ``vaultlink init`` picks the embedder from the notes, as it
does for a new user; then one ``vaultlink dream --llm ollama --json`` with only
``--ollama-host``, ``--model`` and ``--max-units``. The server writes a transcript of
every chat, so the report shows every unit the model gave for a note (those vaultlink
kept and those it dropped), whether its name and summary are in the note's language,
what each kept unit became (CREATE, REFINE, ...), the seconds of every model call, the
failures and ``vaultlink check``. It writes ``<out>/realmodel-languages-<model>[-tag].json``
and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

from bench.realmodel.fetch_model import CACHE_ENV, DEFAULT_CACHE, MODELS, fetch
from bench.realmodel.measure import journal_of, node_quality, outside_digest_changed, snapshot
from bench.realmodel.run import Load
from bench.realmodel.smoke import REPO, free_port, wait_up
from vaultlink.markdown.frontmatter import split_frontmatter
from vaultlink.markdown.language import language_of

DAY_NOTES = {"daily/2026-12-01.md": "tests/fixtures/pages/zh-day.md",
             "daily/2026-12-02.md": "tests/fixtures/pages/de-day.md"}
LANGDOCS = REPO / "bench" / "quality" / "langdocs"
PAGES = ["zh-hans/faq-internals", "zh-hans/faq-styling", "de/faq-internals",
         "de/faq-styling", "ja/faq-internals", "ja/faq-styling"]


def make_vault(dest: Path, pages: list[str]) -> Path:
    """The day notes and the langdocs pages, as they are, in a new vault at ``dest``."""
    for rel, src in DAY_NOTES.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / src, dest / rel)
    for page in pages:
        target = dest / "resource" / f"{page}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(LANGDOCS / f"{page}.md", target)
    (dest / "digest").mkdir(exist_ok=True)
    return dest


def in_language(text: str, lang: str) -> str:
    """Whether ``text`` (a unit's name or summary) is written in ``lang``: "yes", "mixed"
    (some of its words are, most are not) or "no".

    By script for Chinese and Japanese: their characters against the Latin letters (about
    three letters a character), since terms such as "Virtual DOM" stay Latin in both. For
    languages written with spaces, py3langid limited to the languages vaultlink has words
    for, without the product's confidence floor (a unit's name is two or three words); a
    kebab-case name is read as its words."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "no"
    han = sum("CJK" in unicodedata.name(c, "") for c in letters)
    kana = sum(unicodedata.name(c, "").startswith(("HIRAGANA", "KATAKANA")) for c in letters)
    latin = len(letters) - han - kana
    if lang in ("zh", "ja"):
        own = han if lang == "zh" else han + kana
        if own == 0 or (lang == "zh" and kana):
            return "no"
        return "yes" if own * 3 >= latin else "mixed"
    if han or kana:
        return "no"
    return "yes" if _identifier().classify(text.replace("-", " "))[0] == lang else "no"


@lru_cache(maxsize=1)
def _identifier():  # type: ignore[no-untyped-def]
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    # the languages a name or summary can be judged in here (a short one is ambiguous)
    identifier.set_languages(["en", "de", "fr", "es", "ru", "zh", "ja", "ko"])
    return identifier


def extract_calls(transcript: list[dict[str, Any]], path: str) -> list[dict[str, Any]]:
    """The extract chats of one note: their user message starts with ``Note <path>``."""
    return [t for t in transcript if t["messages"] >= 2
            and str(t["last"]).startswith(f"Note {path}\n")]


def given_units(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every unit the model's answers held (repair turns included), as it wrote them."""
    units: list[dict[str, Any]] = []
    for call in calls:
        try:
            data = json.loads(call["answer"])
        except ValueError:
            continue
        raw = data.get("units", []) if isinstance(data, dict) else data
        units.extend(u for u in raw if isinstance(u, dict))
    return units


def per_note(root: Path, run: dict[str, Any], transcript: list[dict[str, Any]],
             paths: list[str]) -> list[dict[str, Any]]:
    """For each note: its language, the units given, kept and dropped, their decisions."""
    notes = []
    for path in paths:
        _, body, _ = split_frontmatter((root / path).read_text(encoding="utf-8"))
        lang = language_of(body)
        calls = extract_calls(transcript, path)
        results = [r for r in run.get("results", []) if path in r["unit"].get("paths", [])]
        units = []
        for u in given_units(calls):
            name, summary = str(u.get("name", "")), str(u.get("summary", ""))
            decided = _decided(name, summary, results)
            units.append({
                "name": name, "bucket": u.get("bucket"), "summary": summary,
                "name_in_language": in_language(name, lang),
                "summary_in_language": in_language(summary, lang),
                "kept": bool(decided),
                "decisions": [{"action": r["action"], "target": r["target"],
                               "status": r["status"], "error": r["error"][:200],
                               "model_seconds": r.get("model_seconds")} for r in decided]})
        extract = run.get("extract", {}).get(path, {})
        notes.append({"path": path, "language": lang, "extract_calls": len(calls),
                      "extract_seconds": [c["seconds"] for c in calls],
                      "extract_tokens": [[c["prompt_tokens"], c["answer_tokens"]]
                                         for c in calls],
                      "hint_sent": any("(The note is in" in str(c["last"]) for c in calls),
                      "extract_usage": extract, "units": units,
                      "failed": [f for f in run.get("failed_notes", []) if f["path"] == path],
                      "passed_over": [p for p in run.get("passed_over", [])
                                      if p.get("path") == path]})
    return notes


def rescore(report: dict[str, Any], root: Path) -> dict[str, Any]:
    """``report`` with each given unit's ``kept`` and decisions read again from the journal
    of its vault (kept with ``--keep``): for a report written before a matching fix."""
    journal = journal_of(root / ".vaultlink" / "state.sqlite")
    for note in report["notes"]:
        results = [{"unit": j["unit"], "action": j["action"], "target": j["target"] or "",
                    "status": "failed" if j["action"] == "FAILED" else "integrated",
                    "error": "", "model_seconds": j.get("model_seconds")}
                   for j in journal if note["path"] in j["unit"].get("paths", [])]
        for u in note["units"]:
            decided = _decided(u["name"], u["summary"], results)
            u["kept"] = bool(decided)
            u["decisions"] = [{k: r[k] for k in ("action", "target", "status", "error",
                                                 "model_seconds")} for r in decided]
    return report


def _decided(name: str, summary: str, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results of the unit the model gave as ``name``: by name (vaultlink lower-cases
    and numbers names: 虚拟DOM -> 虚拟dom, menu -> menu-2), else by its summary."""
    names = {n.casefold() for n in (name, *_numbered(name))}
    by_name = [r for r in results if r["unit"]["name"].casefold() in names]
    return by_name or [r for r in results if r["unit"].get("summary") == summary]


def _numbered(name: str) -> list[str]:
    # a second unit of the same name in one note is renamed name-2, name-3
    return [f"{name}-{n}" for n in range(2, 6)]


def calls_table(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every model call: which prompt, tokens in and out, seconds."""
    return [{"kind": _kind(t), "prompt_tokens": t["prompt_tokens"],
             "cached_tokens": t["cached_tokens"], "answer_tokens": t["answer_tokens"],
             "seconds": t["seconds"], "done_reason": t["done_reason"]} for t in transcript]


def _kind(t: dict[str, Any]) -> str:
    head = t["system_head"].lower()
    return ("extract" if "worth remembering" in head else "integrate" if "integrate" in head
            else "integrate (one-shot)" if "you file one" in head
            else "topics" if "topics" in head else head[:30])


def run_bench(args: argparse.Namespace) -> dict[str, Any]:
    """Serve the model, build and dream the vault, gather the report."""
    spec = MODELS[args.model]
    with tempfile.TemporaryDirectory(prefix="vaultlink-real-lang-") as tmp:
        transcript_path = Path(tmp) / "transcript.jsonl"
        server = None
        host = args.host
        log = open(Path(tmp) / "server.log", "w+b")  # noqa: SIM115 - read after the run
        if host is None:
            path = fetch(args.model, Path(os.environ.get(CACHE_ENV, DEFAULT_CACHE)).expanduser())
            host = f"http://127.0.0.1:{free_port()}"
            server = subprocess.Popen(
                [sys.executable, "-m", "bench.realmodel.server", "--model", str(path),
                 "--port", host.rsplit(":", 1)[1], "--threads", str(args.threads),
                 "--transcript", str(transcript_path)],
                cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
            wait_up(host, server)
        try:
            root = make_vault(Path(tmp) / "vault", args.page or PAGES)
            before = snapshot(root)
            env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTLINK_")}
            vl = [sys.executable, "-m", "vaultlink"]
            init = subprocess.run([*vl, "init", "--vault", str(root)], capture_output=True,
                                  text=True, env=env, cwd=REPO)
            with Load() as load:
                t0 = _now()
                proc = subprocess.run(
                    [*vl, "dream", "--vault", str(root), "--llm", "ollama", "--ollama-host",
                     host, "--model", spec.ollama_name, "--max-units", str(args.max_units),
                     "--json"], capture_output=True, text=True, env=env, cwd=REPO)
                wall = _now() - t0
            try:
                run = json.loads(proc.stdout)
            except ValueError:
                run = {"error": proc.stdout[-2000:]}
            check = subprocess.run([*vl, "check", "--vault", str(root), "--json"],
                                   capture_output=True, text=True, env=env, cwd=REPO)
            transcript = [json.loads(line) for line in
                          transcript_path.read_text(encoding="utf-8").splitlines()
                          ] if transcript_path.exists() else []
            sources = sorted([*DAY_NOTES, *(f"resource/{p}.md" for p in args.page or PAGES)])
            touched = sorted({r["target"] for r in run.get("results", []) if r["target"]})
            nodes = {rel: (root / rel).read_text(encoding="utf-8")
                     for rel in sorted(p.relative_to(root).as_posix()
                                       for p in (root / "digest").rglob("*.md"))}
            quality = node_quality(root, touched)
            quality["outside_digest_changed"] = outside_digest_changed(before, snapshot(root))
            if args.keep:
                shutil.copytree(root, args.keep, dirs_exist_ok=True)
            return {
                "model": spec.ollama_name, "tag": args.tag, "exit_code": proc.returncode,
                "wall_seconds": round(wall, 1), "load": load.figures(),
                "init": init.stdout.strip()[-400:], "counts": run.get("counts"),
                "notes": per_note(root, run, transcript, sources),
                "calls": calls_table(transcript), "quality": quality,
                "check": _json_or_text(check.stdout), "check_exit": check.returncode,
                "nodes": nodes, "warnings": run.get("warnings", []),
                "stderr_tail": proc.stderr[-1500:] if proc.returncode not in (0, 4) else "",
            }
        finally:
            if server is not None:
                server.terminate()
                server.wait(30)
            log.close()


def _now() -> float:
    import time
    return time.monotonic()


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text[-1500:]


def markdown(rep: dict[str, Any]) -> str:
    """The report's tables: one row per unit the model gave, then calls and quality."""
    ld = rep["load"]
    out = [f"## languages with {rep['model']}" + (f" ({rep['tag']})" if rep["tag"] else ""),
           "", f"exit {rep['exit_code']}, wall {rep['wall_seconds']:.0f} s, load mean "
           f"{ld['mean']} max {ld['max']} on {ld['cores']} cores; counts {rep['counts']}", "",
           "| note | lang | unit name | bucket | summary | name in lang | summary in lang | "
           "kept | decision |", "|---|---|---|---|---|---|---|---|---|"]
    for n in rep["notes"]:
        if not n["units"]:
            why = "; ".join(f["error"][:120] for f in n["failed"]) or "no units"
            out.append(f"| {n['path']} | {n['language']} | ({why}) | | | | | | |")
        for u in n["units"]:
            dec = ", ".join(f"{d['action'] or d['status']} {d['target']}".strip()
                            for d in u["decisions"]) or "-"
            summary = u["summary"].replace("|", "\\|").replace("\n", " ")
            out.append(f"| {n['path']} | {n['language']} | `{u['name']}` | {u['bucket']} | "
                       f"{summary} | {_mark(u['name_in_language'])} | "
                       f"{_mark(u['summary_in_language'])} | {_yn(u['kept'])} | {dec} |")
    units = [u for n in rep["notes"] for u in n["units"]]
    out += ["", f"Units given: {len(units)}; name in the note's language: "
            f"{_count(units, 'name_in_language')}; summary in the note's language: "
            f"{_count(units, 'summary_in_language')}; kept: "
            f"{sum(u['kept'] for u in units)}.", ""]
    out += ["| kind | calls | seconds (mean / max) | prompt tok (mean) | answer tok (mean) |",
            "|---|---|---|---|---|"]
    for kind in sorted({c["kind"] for c in rep["calls"]}):
        cs = [c for c in rep["calls"] if c["kind"] == kind]
        out.append(f"| {kind} | {len(cs)} | {_mean([c['seconds'] for c in cs])} / "
                   f"{max(c['seconds'] for c in cs)} | {_mean([c['prompt_tokens'] for c in cs])}"
                   f" | {_mean([c['answer_tokens'] for c in cs])} |")
    q = rep["quality"]
    out += ["", f"Digest: {len(rep['nodes'])} files; `vaultlink check` exit "
            f"{rep['check_exit']}, {q['check_errors']} errors; {q['broken_links']} broken links; "
            f"{q['nodes_without_sources']} nodes without sources; "
            f"{len(q['outside_digest_changed'])} files outside digest/ changed. "
            f"Failed notes: {sum(len(n['failed']) for n in rep['notes'])}."]
    return "\n".join(out) + "\n"


def _mark(verdict: str) -> str:
    return verdict if verdict == "yes" else f"**{verdict}**"


def _count(units: list[dict[str, Any]], key: str) -> str:
    yes = sum(u[key] == "yes" for u in units)
    mixed = sum(u[key] == "mixed" for u in units)
    return f"{yes} (+{mixed} mixed)"


def _yn(b: bool) -> str:
    return "yes" if b else "**no**"


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 1) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    p.add_argument("--page", action="append", help=f"langdocs page (default: {PAGES})")
    p.add_argument("--max-units", type=int, default=30)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--host", help="use this server instead of starting one (no transcript)")
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    p.add_argument("--keep", type=Path, help="copy the vault there afterwards, to read")
    p.add_argument("--tag", default="", help="suffix of the report's file name")
    p.add_argument("--rescore", type=Path, metavar="VAULT",
                   help="read the report of --tag again with this kept vault's journal")
    args = p.parse_args(argv)
    stem = f"realmodel-languages-{args.model}" + (f"-{args.tag}" if args.tag else "")
    if args.rescore:
        rep = rescore(json.loads((args.out / f"{stem}.json").read_text(encoding="utf-8")),
                      args.rescore)
    else:
        rep = run_bench(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(rep, indent=1, ensure_ascii=False) + "\n",
                                           encoding="utf-8")
    (args.out / f"{stem}.md").write_text(markdown(rep), encoding="utf-8")
    print(markdown(rep), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
