"""LoCoMo as published: read from a snapshot of snap-research/locomo, never rewritten.

``--data`` may name the fetched snapshot's git directory (the default, read at the pinned
commit), ``locomo10.zip`` (per-conversation ``NN.json``, as at the pinned commit),
``locomo10.json`` (a list of samples with ``sample_id``, ``conversation`` and ``qa``, as
later versions of the repository publish it), one conversation's JSON, or a folder of them.
Everything is read in memory: no file of the data is written anywhere.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = "snap-research/locomo"
# "Added data and updated Readme", 2024-08-02
PINNED_COMMIT = "e76cdff4a04fce19090596d49862fe87a5c15aaa"
DATA_PATH = "data/locomo10.zip"
DATA_BLOB = "2cb424b0d9d2619fb70169824a6a05d44330a211"  # git blob id of data/locomo10.zip there
DEFAULT_MIRROR = Path("/work/.mirror/snap-research+locomo/repo")

TUNE = ("26", "30", "41", "42", "43")  # tune on these only
HELD_OUT = ("44", "47", "48", "49", "50")  # report apart, never tune on them
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
              5: "adversarial"}

_SESSION = re.compile(r"session_(\d+)")
_DIA = re.compile(r"D:?(\d+):(\d+)")  # "D1:3"; the data also has "D:11:26" once


@dataclass(frozen=True)
class Turn:
    dia_id: str  # "D1:3", as the data names it
    speaker: str
    text: str
    caption: str = ""  # blip_caption of a shared photo, if any


@dataclass
class Session:
    n: int
    date_time: str  # as in the data: "1:56 pm on 8 May, 2023"
    when: datetime
    turns: list[Turn] = field(default_factory=list)


@dataclass(frozen=True)
class Question:
    conv: str
    index: int  # position in the conversation's qa list
    question: str
    category: int
    evidence: tuple[str, ...]  # dia ids as normalised ("D8:6"), in the data's order
    answer: str


@dataclass
class Conversation:
    conv: str  # "26" for sample_id "conv-26"
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question]
    dropped: list[tuple[int, str]] = field(default_factory=list)  # qa index, why left out

    def session_of(self, dia_id: str) -> int:
        return int(_DIA.fullmatch(dia_id).group(1))  # type: ignore[union-attr]


def dia_ids(evidence: list[Any]) -> tuple[str, ...]:
    """The turn ids one evidence list names ("D8:6; D9:17" and "D9:1 D4:4" hold several)."""
    out: list[str] = []
    for item in evidence:
        for m in _DIA.finditer(str(item)):
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia not in out:
                out.append(dia)
    return tuple(out)


def parse_when(raw: str) -> datetime:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y")


def conversation(conv_id: str, sample: dict[str, Any]) -> Conversation:
    """One conversation from either published shape (``conversation`` nested or not)."""
    body = sample.get("conversation", sample)
    sessions = []
    for key, turns in body.items():
        m = _SESSION.fullmatch(key)
        if not m or not turns:
            continue  # sessions 20-35 of some conversations have a date and no turns
        n = int(m.group(1))
        raw = body[f"{key}_date_time"]
        s = Session(n, raw, parse_when(raw))
        for t in turns:
            s.turns.append(Turn(t["dia_id"], t["speaker"], t["text"],
                                str(t.get("blip_caption") or "")))
        sessions.append(s)
    sessions.sort(key=lambda s: s.n)
    conv = Conversation(conv_id, (body["speaker_a"], body["speaker_b"]), sessions, [])
    known = {t.dia_id for s in sessions for t in s.turns}
    for i, qa in enumerate(sample["qa"]):
        ev = dia_ids(qa.get("evidence") or [])
        if not ev:
            conv.dropped.append((i, "no evidence"))
            continue
        missing = [d for d in ev if d not in known]
        if missing:
            # A turn id the conversation lacks still names its session when the session exists.
            sessions_known = {s.n for s in sessions}
            if any(int(_DIA.fullmatch(d).group(1)) not in sessions_known  # type: ignore[union-attr]
                   for d in missing):
                conv.dropped.append((i, f"evidence in no session: {missing}"))
                continue
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        conv.questions.append(Question(conv_id, i, qa["question"], int(qa["category"]), ev,
                                       str(answer)))
    return conv


def _conv_id(name: str) -> str:
    return re.sub(r"\D", "", Path(name).stem.replace("conv-", "")) or name


def _from_json(name: str, data: Any) -> list[Conversation]:
    if isinstance(data, list):  # locomo10.json: [{"sample_id": "conv-26", ...}, ...]
        return [conversation(_conv_id(str(s["sample_id"])), s) for s in data]
    sid = data.get("sample_id")
    return [conversation(_conv_id(str(sid) if sid else name), data)]


def _from_zip(raw: bytes) -> list[Conversation]:
    out: list[Conversation] = []
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        for name in sorted(z.namelist()):
            if name.endswith(".json"):
                out += _from_json(name, json.loads(z.read(name)))
    return out


def load(data: Path | None = None) -> tuple[list[Conversation], dict[str, str]]:
    """Every conversation of the data, and where it was read from."""
    data = data or DEFAULT_MIRROR
    if (data / "HEAD").is_file() and (data / "objects").is_dir():  # a bare git dir: the snapshot
        def git(*args: str) -> bytes:
            return subprocess.run(["git", f"--git-dir={data}", *args], check=True,
                                  capture_output=True).stdout
        blob = git("rev-parse", f"{PINNED_COMMIT}:{DATA_PATH}").decode().strip()
        if blob != DATA_BLOB:
            raise SystemExit(f"{data}: {DATA_PATH} at {PINNED_COMMIT} is blob {blob}, "
                             f"expected {DATA_BLOB}")
        convs = _from_zip(git("cat-file", "blob", blob))
        source = {"repo": REPO, "commit": PINNED_COMMIT, "path": DATA_PATH, "blob": blob,
                  "read_from": str(data)}
    elif data.suffix == ".zip":
        convs = _from_zip(data.read_bytes())
        source = {"read_from": str(data)}
    elif data.is_dir():
        convs = [c for f in sorted(data.glob("*.json"))
                 for c in _from_json(f.name, json.loads(f.read_text("utf-8")))]
        source = {"read_from": str(data)}
    else:
        convs = _from_json(data.name, json.loads(data.read_text("utf-8")))
        source = {"read_from": str(data)}
    convs.sort(key=lambda c: int(c.conv) if c.conv.isdigit() else 0)
    return convs, source
