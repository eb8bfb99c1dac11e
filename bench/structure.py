"""How the package is laid out, in numbers: the before/after figures of a restructuring.

Prints lines per package, the largest modules and functions, the longest chain of
imports inside the package (import levels), and the route of one unit through
integration: the offline dream of sample_vault in a scratch copy, traced from the first
``integrate_unit`` call to its return, counting the package's modules entered and the
returns to a module the unit had already left.

    python -m bench.structure            # from the repository root
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import itertools
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

# The route is the stage's own modules called within DEPTH frames of integrate_unit:
# the steps a reader follows, not every helper a loop calls.
STAGE = ("vaultlink.pipeline", "vaultlink.pipeline", "vaultlink.prose")
DEPTH = 3
ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vaultlink"


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def lines_per_package(mods: dict[str, Path]) -> Counter[str]:
    out: Counter[str] = Counter()
    for name, path in mods.items():
        parts = name.split(".")
        package = parts[1] if len(parts) > 2 or (path.name == "__init__.py" and len(parts) > 1) \
            else "(top)"
        out[package] += len(path.read_text(encoding="utf-8").splitlines())
    return out


def functions(mods: dict[str, Path]) -> list[tuple[int, str]]:
    out = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                out.append((length, f"{name}.{node.name}"))
    return sorted(out, reverse=True)


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of other package modules (module-level and local alike)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")[: len(name.split(".")) - node.level + is_package]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in mods and target != name:
                    graph[name].add(target)
    return graph


def levels(graph: dict[str, set[str]], mods: dict[str, Path]) -> int:
    """The longest import chain (modules on it), cycles cut where they close."""
    memo: dict[str, int] = {}

    def depth(name: str, seen: frozenset[str]) -> int:
        if name in memo:
            return memo[name]
        below = [depth(t, seen | {name}) for t in graph.get(name, ()) if t not in seen]
        memo[name] = 1 + max(below, default=0)
        return memo[name]

    return max(depth(name, frozenset()) for name in mods)


def route() -> tuple[list[str], int]:
    """The package modules one unit passes through in ``integrate_unit`` (offline dream
    of sample_vault), consecutive repeats folded, and the returns to a module left."""
    from vaultlink.cli import main as cli

    integrate = _integrate_module()
    trail: list[str] = []
    state: dict[str, Any] = {"on": False, "done": False, "frame": None}

    def depth(frame: FrameType) -> int:
        n = 0
        f: FrameType | None = frame
        while f is not None and f is not state["frame"]:
            n, f = n + 1, f.f_back
        return n

    def profile(frame: FrameType, event: str, arg: object) -> None:
        module = frame.f_globals.get("__name__", "")
        if state["done"]:
            return
        if (not state["on"] and event == "call" and frame.f_code.co_name == "integrate_unit"
                and module == integrate):
            state["on"], state["frame"] = True, frame
        if not state["on"] or event != "call":
            return
        if module.startswith(STAGE) and depth(frame) <= DEPTH and trail[-1:] != [module]:
            trail.append(module)

    def unprofile(frame: FrameType, event: str, arg: object) -> None:
        profile(frame, event, arg)
        if event == "return" and frame is state["frame"]:
            state["done"] = True

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(ROOT / "sample_vault", vault)
        sys.setprofile(unprofile)
        try:
            _run(cli, ["dream", "--vault", str(vault), "--llm", "offline", "--json"])
        finally:
            sys.setprofile(None)
    left: set[str] = set()
    returns = 0
    for before, now in itertools.pairwise(trail):
        left.add(before)
        returns += now in left
    return trail, returns


def _run(cli: Any, args: list[str]) -> None:
    """Run the command line in-process, its JSON report swallowed."""
    argv, sys.argv = sys.argv, ["vaultlink", *args]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli()
        except SystemExit:
            pass
        finally:
            sys.argv = argv


def _integrate_module() -> str:
    for name in ("vaultlink.pipeline.integrate.run", "vaultlink.pipeline.integrate",
                 "vaultlink.pipeline.integrate.step"):
        if name.replace(".", "/") + ".py" in {str(p.relative_to(ROOT).with_suffix(".py"))
                                              for p in PACKAGE.rglob("*.py")}:
            return name
    raise SystemExit("no integrate module found")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--top", type=int, default=10, help="how many modules and functions")
    p.add_argument("--no-route", action="store_true", help="skip the traced dream")
    args = p.parse_args(argv)
    mods = modules()
    sizes = lines_per_package(mods)
    print(f"lines: {sum(sizes.values())} in {len(mods)} modules")
    for package, n in sizes.most_common():
        print(f"  {package:12} {n:6}")
    print(f"largest modules (over 400 lines: "
          f"{sum(len(p.read_text().splitlines()) > 400 for p in mods.values())}):")
    by_size = sorted(((len(p.read_text().splitlines()), n) for n, p in mods.items()),
                     reverse=True)
    for n, name in by_size[: args.top]:
        print(f"  {n:5}  {name}")
    funcs = functions(mods)
    print(f"largest functions (over 60 lines: {sum(n > 60 for n, _ in funcs)}):")
    for n, name in funcs[: args.top]:
        print(f"  {n:5}  {name}")
    graph = imports(mods)
    print(f"import levels (longest chain of package imports): {levels(graph, mods)}")
    if not args.no_route:
        trail, returns = route()
        counts = Counter(trail)
        print(f"route of one unit through integrate_unit: {len(trail)} module entries, "
              f"{len(counts)} modules, {returns} returns to a module already left")
        for name, n in counts.most_common(5):
            print(f"  {n:3}x {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
