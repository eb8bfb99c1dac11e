"""``--self-check``: every measure on a tiny vault made here, with a digest written by hand
so the right answer is known (a template, a template-only day, a date-named node, ...)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.quality.personal.measures import measure
from bench.quality.personal.run import snapshot
from vaultlink.pipeline.context import RunState, UnitResult
from vaultlink.prose.units import Unit

TEMPLATE = ("# {{date}}\n\n> [!quote] Quote of the day\n> {{quote}} — {{author}}\n\n"
            "## Journal\n\n## Gratitude\n\n```tasks\nnot done\n```\n")
# the template's quote as older days keep it: under the callout without a ">", which
# Obsidian shows inside it (lazy continuation): template output, no paragraph of the owner
QUOTED = ("> [!quote] Quote of the day\nThe best way out is always through, and we walked "
          "on through the dark woods without a map — Robert Frost\n")
REAL = ("We walked the whole ridge trail to the old fire lookout and counted eleven hawks "
        "riding the thermals above the valley.")
NODE = """---
name: {name}
description: {name}
---
{body}

## Sources

- {name}: taken from [[{src}|the note]].
"""


def _write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def self_check() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root, ".obsidian/daily-notes.json",
               '{"folder": "daily", "template": "Templates/Daily"}')
        _write(root, "Templates/Daily.md", TEMPLATE)
        _write(root, "daily/2022-08-04.md", TEMPLATE.replace("{{date}}", "2022-08-04"))
        _write(root, "daily/2022-08-05.md", TEMPLATE.replace("{{date}}", "2022-08-05").replace(
            "## Journal\n", f"## Journal\n\n{REAL} See [[2022-08-04]] and [[Hiking]].\n")
            .replace("> [!quote] Quote of the day\n> {{quote}} — {{author}}\n", QUOTED))
        _write(root, "resource/Hiking.md", "# Hiking\n\nRidge trails, lookouts and hawks.\n")
        before = snapshot(root)
        # the digest, by hand: each node is one case
        _write(root, "digest/wiki/2022-08-04.md", NODE.format(
            name="2022-08-04", body="A day.", src="daily/2022-08-04.md"))  # date name, shadows
        _write(root, "digest/wiki/gratitude.md", NODE.format(
            name="Gratitude", body="Gratitude is noted every day in the journal.",
            src="daily/2022-08-04.md"))  # template heading, template-only day, unbacked
        _write(root, "digest/wiki/ridge-trail.md", NODE.format(
            name="Ridge trail", body=REAL + " See [[digest/wiki/hiking.md|hiking]].",
            src="daily/2022-08-05.md"))  # backed, lands, one woven link
        _write(root, "digest/wiki/hiking.md", NODE.format(
            name="ridge trail", body="Ridge trails, lookouts and hawks.",
            src="resource/Hiking.md"))  # duplicate name; shadows Hiking.md (no case)
        run = RunState()
        run.report.results = [
            UnitResult(Unit("x", "wiki", "x", ["daily/2022-08-05.md"]), "failed",
                       error="no free slug"),
            UnitResult(Unit("hawks", "wiki", "h", ["daily/2022-08-05.md"]),
                       "integrated", action="REFINE", target="digest/wiki/hiking.md")]
        labels = {"check": {"links": {"digest/wiki/ridge-trail.md -> digest/wiki/hiking.md":
                                      {"label": "right", "reason": "the trail is a hike"}},
                            "merges": {"digest/wiki/hiking.md <- daily/2022-08-05.md":
                                       {"label": "different-subject", "reason": "test"}}}}
        rep = measure("check", root, before, [run], labels)
        f = rep.figures()
        # owner links changed: [[2022-08-04]], and [[Hiking]] (hiking.md shadows Hiking.md)
        expect = {"owner_links_changed": 2, "bad_names": 2, "duplicate_names": 1,
                  "template_only_cited": 1, "sources_unbacked": 2, "sources_lines": 4,
                  "day_paragraphs": 1, "landed": 1, "failed_units": 1, "link_precision": 1.0,
                  "wrong_merges": 1, "template_only_days": 1}
        print(f"template files: {rep.template_files}; template-only days: "
              f"{rep.template_only_days}")
        print(f"owner links changed: {rep.links_changed}")
        print(f"bad names: {rep.bad_names}")
        print(f"duplicates: {rep.duplicates}; template-only cited: {rep.template_only_cited}")
        print(f"unbacked: {rep.unbacked}")
        print(f"day paragraphs {rep.day_paragraphs}, landed {rep.landed}; failed {rep.failed}")
        print(f"woven {rep.woven}; merges {rep.merges}")
        bad = {k: (f[k], v) for k, v in expect.items() if f[k] != v}
        for k, v in expect.items():
            print(f"  {k:22} {f[k]!s:6} expected {v}")
        print("self-check:", "ok" if not bad else f"MISMATCH {bad}")
        return 1 if bad else 0
