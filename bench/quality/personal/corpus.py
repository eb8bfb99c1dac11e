"""The personal vaults: which repository, which commit, which notes, mapped where.

Each vault is a public repository by its own owner, under a licence that allows copying
(recorded per vault). The notes are never committed here: ``vaults.json`` lists, for each
vault, every file taken (its path in the repository at the pinned commit, its git blob id,
and where it lands in vaultlink's layout), and ``--build`` writes them byte for byte from a
snapshot of the repository (``fetch github:OWNER/NAME`` puts one under
``/work/.mirror/OWNER+NAME/repo``), checking each blob id, into ``vaults/<name>/vault/``
beside ``SOURCE.md`` and the repository's licence file. Nothing is cleaned or rewritten.

The layout: the owner's day notes go to ``daily/`` (their folder mapped, names kept), every
other note to ``resource/`` under its own relative path, so ``[[name]]`` resolves as in the
owner's vault (by basename, any folder); ``.obsidian`` settings that say how notes are kept
(daily notes, templates, Periodic Notes, Templater) and the template files stay at their
own paths, outside the folders vaultlink reads, as they sit in the owner's vault.

``python -m bench.quality.personal.corpus --select`` chose the files (run once, by hand,
with the snapshots on the machine): the most recent 60 day notes, then the notes they
link to, breadth first, up to 100 notes; a vault without day notes starts from its
top-level notes. Attachments a chosen note embeds or links are kept when under 200 KB.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "vaults.json"
VAULTS = HERE / "vaults"
MIRRORS = Path("/work/.mirror")
MAX_NOTES = 100
MAX_DAYS = 60
MAX_ATTACHMENT = 200_000
SETTINGS = (".obsidian/daily-notes.json", ".obsidian/templates.json",
            ".obsidian/plugins/periodic-notes/data.json",
            ".obsidian/plugins/templater-obsidian/data.json")
LINK = re.compile(r"!?\[\[([^\[\]\n|#]+)(?:[#|][^\[\]\n]*)?\]\]")
MDLINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")


@dataclass
class Spec:
    """How one repository becomes a vault."""

    name: str
    repo: str
    kind: str
    licence: str  # SPDX id
    licence_file: str  # path in the repository
    licence_note: str  # who grants it, and any caveat
    root: str = ""  # the vault inside the repository ("content" for Quartz gardens)
    daily: list[str] = field(default_factory=list)  # day-note folders, under root
    include: list[str] = field(default_factory=list)  # other notes only from these folders
    exclude: list[str] = field(default_factory=list)  # never from these
    start: list[str] = field(default_factory=list)  # where to start without day notes
    commit: str = ""  # a pinned commit, when the snapshot's newest has lost the day notes


SPECS = [
    Spec("kha-dinh", "kha-dinh/my-obsidian",
         "templated journal: day notes from Templates/Daily (Todo, Day Planner) beside a "
         "security researcher's paper and concept notes",
         "MIT", "LICENSE", "MIT, Copyright (c) 2022 khadinh (the vault's owner)",
         daily=["Daily"], exclude=["Templates"]),
    Spec("bramses", "bramses/bramses-highly-opinionated-vault-2023",
         "dataview-heavy vault: ```dataview blocks, Periodic Notes and Templater settings, "
         "`<< [[prev]] | [[next]] >>` day navigation, PARA folders, capture notes named by "
         "timestamp",
         "MIT", "LICENSE", "MIT, Copyright (c) 2022 Bram Adams (the vault's owner)",
         daily=["Calendar/Daily"], exclude=["Templates", "_scripts"]),
    Spec("11ze", "11ze/notes",
         "CJK vault: a Chinese developer's notes, code-heavy (shell, SQL, config), and "
         "course notes on MySQL and Redis; no day notes",
         "MIT", "LICENSE", "MIT, Copyright (c) 2023 11ze (the vault's owner)",
         exclude=["static", "scripts"], start=[""]),
    Spec("pedyc", "ped-Yc/dg.pedyc",
         "CJK vault with day notes: a Chinese PARA vault (Templater, dataview) whose "
         "diary holds day and week notes",
         "MIT", "LICENSE.txt",
         "MIT file of the Quartz site the vault is published with (Copyright (c) 2021 "
         "jackyzha0), the only licence in the repository and so the repository's licence; "
         "the owner states no other. Clipped articles (SimpRead/, Follow/) are left out: "
         "not the owner's text",
         root="content", daily=["PKM/20-AREAS/Diary"], include=["PKM"],
         exclude=["SimpRead", "Follow", ".trash"]),
    Spec("oignon", "oignonasappy/garden",
         "Japanese vault: a Japanese owner's day notes and notes (cool / fine / whatever "
         "folders)",
         "MIT", "LICENSE.txt",
         "MIT file of the Quartz site the vault is published with (Copyright (c) 2021 "
         "jackyzha0), the repository's only licence. The archive of AI conversations "
         "(20_ai-conversation-archive/) is left out: a model's text, not the owner's",
         root="content", daily=["03_daily"],
         exclude=["20_ai-conversation-archive", "tags", ".trash"]),
    Spec("yoshixi", "digitalyoshixi/zettelkasten",
         "day notes from a Daily Template (Todo, Thoughts) that link a large Zettelkasten "
         "of concept notes by name (programming, maths, security)",
         "MIT", "LICENSE.txt",
         "MIT file of the Quartz site the vault is published with (Copyright (c) 2021 "
         "jackyzha0), the repository's only licence",
         root="content", daily=["Daily"]),
    Spec("pietraferreira", "pietraferreira/quartz",
         "English work-and-study log (Quartz v3 garden): a compiler-engineering intern's and "
         "student's day notes that mix meeting notes, lecture notes and debugging logs, with "
         "date-slug meeting notes (2022-05-03-relocation-prototype-meeting) and undated "
         "topic notes kept in the day-note folder, beside general and university notes",
         "MIT", "LICENSE.txt",
         "MIT file of the Quartz site the vault is published with (Copyright (c) 2021 "
         "jackyzha0), the repository's only licence. Pinned at a 2023-02-23 commit of the "
         "hugo branch, the last with the day notes (later commits removed most of them). "
         "The owner's notes/private/ folder (one empty hub note) is left out, as its name "
         "asks",
         root="content", daily=["notes/daily"], exclude=["templates", "private"],
         commit="5bc96944985ee197e8ec7a9ca81dae85396678b5"),
    Spec("gorwast", "Gorwast/Garden",
         "Spanish diary (Quartz v4 garden): a Mexican owner's day notes in "
         "Diario/<year>/<month>/, each a quoted motto, then prose about his day, reading "
         "(Sanderson's Mistborn, Elantris), weight loss, cooking, music and feelings, closed by "
         "a block of his weight and BMI and a kaomoji; beside reading notes on books (chapter "
         "notes, characters), games, art and reflections (Meditaciones/); no Obsidian settings "
         "or day template in the repository",
         "MIT", "LICENSE.txt",
         "MIT file of the Quartz site the vault is published with (Copyright (c) 2021 "
         "jackyzha0), the repository's only licence; the owner states no other. His "
         "template.md (a draft list of callout names, used by no note) is left out",
         root="content", daily=["Diario"], exclude=["template.md"]),
]


def mirror(repo: str) -> Path:
    return MIRRORS / repo.replace("/", "+") / "repo"


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-c", "core.quotepath=off", "--git-dir", str(mirror(repo)),
                           *args], check=True, capture_output=True).stdout


def tree(repo: str, commit: str) -> dict[str, tuple[str, int]]:
    """path -> (blob id, size) at ``commit``."""
    out = git(repo, "ls-tree", "-r", "-l", "-z", commit).decode()
    files = {}
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        _mode, kind, sha, size = meta.split()
        if kind == "blob" and size.isdigit():  # a blob the snapshot lacks reads "BAD"
            files[path] = (sha, int(size))
    return files


def _under(path: str, folders: list[str]) -> bool:
    return any(f == "" or path == f or path.startswith(f + "/") for f in folders)


def _targets(text: str) -> list[str]:
    out = [m.group(1).strip() for m in LINK.finditer(text)]
    out += [m.group(1) for m in MDLINK.finditer(text) if "://" not in m.group(1)]
    return [t for t in out if t]


class Names:
    """Obsidian's resolution over the repository's files: exact path, else basename
    (without .md), case-insensitive; the shortest path wins a tie, as Obsidian's does."""

    def __init__(self, paths: list[str]) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.paths = {p.lower(): p for p in paths}
        for p in paths:
            base = PurePosixPath(p).name.lower()
            self.by_name.setdefault(base, []).append(p)
            if base.endswith(".md"):
                self.by_name.setdefault(base[:-3], []).append(p)

    def resolve(self, target: str) -> str | None:
        from urllib.parse import unquote
        t = unquote(target).strip().lstrip("./").lower()
        for cand in (t, t + ".md"):
            if cand in self.paths:
                return self.paths[cand]
        hits = self.by_name.get(PurePosixPath(t).name, [])
        hits = [h for h in hits if h.lower().endswith(t) or h.lower().endswith(t + ".md")]
        return min(hits, key=lambda h: (h.count("/"), h)) if hits else None


def select(spec: Spec) -> dict:
    """Choose the files of one vault and where each goes."""
    commit = spec.commit or git(spec.repo, "rev-parse", "HEAD").decode().strip()
    files = tree(spec.repo, commit)
    root = spec.root + "/" if spec.root else ""
    rel = {p[len(root):]: p for p in files if p.startswith(root)}
    notes = [p for p in rel if p.endswith(".md") and not p.startswith(".")
             and not _under(p, spec.exclude)]
    days = sorted((p for p in notes if _under(p, spec.daily)), reverse=True)[:MAX_DAYS]
    others = [p for p in notes if not _under(p, spec.daily)
              and (not spec.include or _under(p, spec.include))]
    names = Names(list(rel))

    def text(p: str) -> str:
        return git(spec.repo, "cat-file", "blob", files[rel[p]][0]).decode("utf-8", "replace")

    chosen: list[str] = list(days)
    queue = list(days)
    if not queue:
        queue = sorted(p for p in others if "/" not in p) if "" in spec.start else []
    seen = set(chosen)
    linked: Counter[str] = Counter()
    attachments: set[str] = set()
    while queue and len(chosen) < MAX_NOTES:
        p = queue.pop(0)
        if p not in seen:
            seen.add(p)
            chosen.append(p)
        for t in _targets(text(p)):
            hit = names.resolve(t)
            if hit is None:
                continue
            if not hit.endswith(".md"):
                if files[rel[hit]][1] < MAX_ATTACHMENT and not hit.startswith("."):
                    attachments.add(hit)
                continue
            linked[hit] += 1
            if hit in others and hit not in seen and hit not in queue:
                queue.append(hit)
    rest = sorted((p for p in others if p not in seen), key=lambda p: (-linked[p], p))
    chosen += rest[:MAX_NOTES - len(chosen)]
    chosen = chosen[:MAX_NOTES]
    # the attachments of the notes kept only
    keep_att: set[str] = set()
    for p in chosen:
        for t in _targets(text(p)):
            hit = names.resolve(t)
            if hit in attachments:
                keep_att.add(hit)
    # how the owner keeps notes: settings and templates
    settings = [s for s in SETTINGS if s in rel]
    templates: set[str] = set()
    for s in settings:
        try:
            data = json.loads(text(s))
        except ValueError:
            continue
        refs = [data.get("template", ""), data.get("folder", "") if "templates" in s else "",
                data.get("templates_folder", "")]
        for period in ("daily", "weekly"):
            if isinstance(data.get(period), dict):
                refs.append(data[period].get("template", ""))
        for ref in filter(None, refs):
            ref = ref.strip("/")
            for p in rel:
                if p.endswith(".md") and (p in (ref, ref + ".md") or p.startswith(ref + "/")):
                    templates.add(p)
    entries = []
    for p in sorted(set(chosen)):
        dest = ("daily/" + _below(p, spec.daily)) if _under(p, spec.daily) else "resource/" + p
        entries.append({"src": rel[p], "dest": dest, "blob": files[rel[p]][0], "kind": "note"})
    for p in sorted(keep_att):
        entries.append({"src": rel[p], "dest": "resource/" + p, "blob": files[rel[p]][0],
                        "kind": "attachment"})
    for p in sorted(set(settings) | (templates - set(chosen))):
        entries.append({"src": rel[p], "dest": p, "blob": files[rel[p]][0],
                        "kind": "setting" if p.startswith(".obsidian/") else "template"})
    return {"name": spec.name, "repo": spec.repo, "commit": commit, "kind": spec.kind,
            "licence": spec.licence, "licence_file": spec.licence_file,
            "licence_blob": files[spec.licence_file][0], "licence_note": spec.licence_note,
            "root": spec.root, "daily": spec.daily, "files": entries}


def _below(path: str, folders: list[str]) -> str:
    for f in folders:
        if path.startswith(f + "/"):
            return path[len(f) + 1:]
    return path


def load_manifest() -> list[dict]:
    return json.loads(MANIFEST.read_text())["vaults"]


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def source_md(v: dict) -> str:
    kinds = Counter(e["kind"] for e in v["files"])
    days = sum(1 for e in v["files"] if e["dest"].startswith("daily/"))
    lines = [f"# {v['name']}: where these notes come from", "",
             f"- repository: https://github.com/{v['repo']}",
             f"- commit: `{v['commit']}`",
             f"- licence: {v['licence']} (`{v['licence_file']}` of the repository, copied "
             f"beside this file as `LICENSE`): {v['licence_note']}",
             f"- kind: {v['kind']}",
             f"- taken: {kinds['note']} notes ({days} day notes), {kinds['attachment']} "
             f"attachments, {kinds['template']} template files, {kinds['setting']} settings "
             "files; every file byte for byte (its git blob id checked)",
             f"- mapping: the vault is `{v['root'] or '.'}` of the repository; day-note "
             f"folder(s) {', '.join('`' + d + '/`' for d in v['daily']) or '(none)'} -> "
             "`daily/` (names kept); other notes and their attachments -> "
             "`resource/<their path>`; settings and templates at their own paths", "",
             "| source | in the vault |", "| --- | --- |"]
    lines += [f"| `{e['src']}` | `{e['dest']}` |" for e in v["files"]]
    return "\n".join(lines) + "\n"


def build(only: str | None = None, dest: Path = VAULTS) -> list[Path]:
    """Write each vault from its snapshot, byte for byte; returns the vault roots."""
    roots = []
    for v in load_manifest():
        if only and v["name"] != only:
            continue
        root = dest / v["name"]
        vault = root / "vault"
        if not mirror(v["repo"]).exists():
            raise SystemExit(f"{v['name']}: no snapshot of {v['repo']} at {mirror(v['repo'])}; "
                             f"fetch github:{v['repo']} first")
        for e in v["files"]:
            data = git(v["repo"], "cat-file", "blob", e["blob"])
            if blob_id(data) != e["blob"]:
                raise SystemExit(f"{v['name']}: {e['src']} does not match its blob id")
            out = vault / e["dest"]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        for folder in ("daily", "resource", "digest"):
            (vault / folder).mkdir(parents=True, exist_ok=True)
        (root / "LICENSE").write_bytes(git(v["repo"], "cat-file", "blob", v["licence_blob"]))
        (root / "SOURCE.md").write_text(source_md(v))
        roots.append(vault)
    return roots


def main(argv: list[str]) -> int:
    if "--select" in argv:
        vaults = [select(s) for s in SPECS]
        MANIFEST.write_text(json.dumps({"vaults": vaults}, ensure_ascii=False, indent=1) + "\n")
        for v in vaults:
            print(v["name"], Counter(e["kind"] for e in v["files"]))
        return 0
    for r in build(argv[0] if argv else None):
        print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
