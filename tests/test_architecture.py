"""The package's shape, read from its source with ``ast``: imports point down the data
flow (markdown -> vault -> index, prose; llm -> pipeline -> daemon -> mcp -> cli), no module imports
itself back through others, and nothing new lands loose under ``vaultlink/``.

Each rule has a test that feeds it a made-up graph, so a rule that stopped checking
anything would fail here too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "vaultlink"

# A package may import the packages of a lower rank, never one of its own rank or above.
RANKS = {
    "errors": 0,
    "options": 1, "__init__": 1,  # the root package holds the version and the error tree
    "markdown": 2,
    "vault": 3, "llm": 3,
    "index": 4, "prose": 4,
    "pipeline": 5,
    "daemon": 6,
    "mcp": 7,
    "cli": 8,
    "__main__": 9,
}
TOP_LEVEL_MODULES = {"__init__", "__main__", "errors", "options"}
MAX_PACKAGES = 9
MAX_LEVELS = 9
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
OFFLINE = "vaultlink.pipeline.offline"


def module_name(path: Path) -> str:
    """``vaultlink/pipeline/offline/__init__.py`` -> ``vaultlink.pipeline.offline``."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imported(node: ast.AST, known: set[str]) -> Iterable[str]:
    """The vaultlink modules one import statement names (a name that is a submodule counts
    as that submodule, as ``from vaultlink.pipeline import pipeline`` does)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith("vaultlink"):
                yield alias.name
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        if not node.module.startswith("vaultlink"):
            return
        for alias in node.names:
            sub = f"{node.module}.{alias.name}"
            yield sub if sub in known else node.module


Graph = dict[str, set[str]]


def read_imports(root: Path = ROOT) -> tuple[Graph, Graph, list[tuple[str, int, str]]]:
    """Three readings of the package's imports:

    - every import, wherever it stands (in a function, under ``TYPE_CHECKING``): the
      graph cycles and layers are judged on, since a deferred import is still a
      dependency;
    - the imports that run when the module loads (its top-level statements): the chain
      Python walks at start-up, whose length ``MAX_LEVELS`` bounds;
    - the imports made inside functions, as (module, line, source line).
    """
    files = {module_name(p): p for p in root.rglob("*.py")}
    known = set(files)
    every: Graph = {}
    at_load: Graph = {}
    local: list[tuple[str, int, str]] = []
    for name, path in files.items():
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = source.splitlines()
        every[name] = {t for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                       for t in _imported(node, known) if t != name and t in known}
        at_load[name] = {t for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
                         for t in _imported(node, known) if t != name and t in known}
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(func):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        local.append((name, node.lineno, lines[node.lineno - 1]))
    return every, at_load, local


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def layer(module: str) -> str:
    """The package (or top-level module) a module belongs to:
    ``vaultlink.pipeline.integrate.tools`` -> ``pipeline``; ``vaultlink`` itself ->
    ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports from one package into another of the same or a higher rank."""
    bad = []
    for src, targets in graph.items():
        for dst in targets:
            a, b = layer(src), layer(dst)
            if a != b and RANKS.get(b, 99) >= RANKS.get(a, -1):
                bad.append(f"{src} -> {dst}")
    return sorted(bad)


def levels(graph: Mapping[str, set[str]]) -> int:
    """The longest chain of imports, counted in modules (an acyclic graph)."""
    memo: dict[str, int] = {}

    def depth(v: str) -> int:
        if v not in memo:
            memo[v] = 0  # guards against a cycle; the cycle test reports those
            memo[v] = 1 + max((depth(w) for w in graph.get(v, ())), default=0)
        return memo[v]

    return max((depth(v) for v in graph), default=0)


Imports = tuple[Graph, Graph, list[tuple[str, int, str]]]


@pytest.fixture(scope="module")
def imports() -> Imports:
    return read_imports()


def test_no_import_cycles(imports: Imports) -> None:
    assert cycles(imports[0]) == []


def test_imports_point_down_the_layers(
        imports: Imports) -> None:
    assert upward_imports(imports[0]) == []


def test_markdown_imports_nothing_of_vaultlink_but_errors(
        imports: Imports) -> None:
    graph = imports[0]
    outside = {t for m, ts in graph.items() if layer(m) == "markdown" for t in ts
               if layer(t) not in {"markdown", "errors"}}
    assert outside == set()


def test_import_chains_stay_short(
        imports: Imports) -> None:
    assert levels(imports[1]) <= MAX_LEVELS


def test_nothing_loose_under_vaultlink() -> None:
    loose = {p.stem for p in ROOT.glob("*.py")} - TOP_LEVEL_MODULES
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert loose == set()
    assert packages <= set(RANKS), f"a package with no rank: {packages - set(RANKS)}"
    assert len(packages) <= MAX_PACKAGES


def test_function_local_imports_say_why(imports: Imports) -> None:
    """An import inside a function is there for start-up time; it carries the measured
    reason as a comment, on its line or on the comment just above its group of imports."""
    unexplained = []
    for module, line, text in imports[2]:
        path = ROOT.parent.joinpath(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        lines = path.read_text(encoding="utf-8").splitlines()
        i = line - 1
        while "#" not in lines[i] and lines[i - 1].strip().startswith(("import ", "from ")):
            i -= 1  # up the group of imports this one belongs to
        if "#" not in lines[i] and not lines[i - 1].strip().startswith("#"):
            unexplained.append(f"{module}:{line}: {text.strip()}")
    assert unexplained == []


def sizes(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """Modules over ``MAX_MODULE_LINES`` and functions over ``MAX_FUNCTION_LINES``: a file
    a reader can hold, a function that does one thing."""
    modules, functions = [], []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        if len(source.splitlines()) > MAX_MODULE_LINES:
            modules.append(name)
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES):
                functions.append(f"{name}.{node.name}")
    return modules, functions


def test_modules_and_functions_stay_small() -> None:
    assert sizes() == ([], [])


def test_only_the_composition_root_imports_the_offline_integrator(imports: Imports) -> None:
    """``pipeline/offline/`` is what is offline only; what both integrators use lives in
    ``prose/``, so only the parts' builder may name it."""
    importers = {m for m, ts in imports[0].items() for t in ts
                 if t.startswith(OFFLINE) and not m.startswith(OFFLINE)}
    assert importers <= {"vaultlink.pipeline.compose"}


# The rules themselves, on made-up graphs: each must catch what it is for.

def test_a_cycle_is_found() -> None:
    graph = {"vaultlink.a.x": {"vaultlink.a.y"}, "vaultlink.a.y": {"vaultlink.a.z"},
             "vaultlink.a.z": {"vaultlink.a.x"}, "vaultlink.a.w": set()}
    assert cycles(graph) == [["vaultlink.a.x", "vaultlink.a.y", "vaultlink.a.z"]]


def test_an_upward_or_sideways_import_is_found() -> None:
    graph = {"vaultlink.vault.notes": {"vaultlink.pipeline.integrate.guard",
                                       "vaultlink.markdown.links"},
             "vaultlink.llm.ollama": {"vaultlink.vault.notes"}}
    assert upward_imports(graph) == ["vaultlink.llm.ollama -> vaultlink.vault.notes",
                                     "vaultlink.vault.notes -> vaultlink.pipeline.integrate.guard"]


def test_levels_count_the_longest_chain() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}
    assert levels(graph) == 3


def test_reading_a_tree_finds_its_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "vaultlink"
    (pkg / "pipeline").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "pipeline" / "__init__.py").write_text("from vaultlink.pipeline import steps\n")
    (pkg / "pipeline" / "steps.py").write_text(
        "import os\n\ndef f():\n    from vaultlink.pipeline import other\n")
    (pkg / "pipeline" / "other.py").write_text("from vaultlink.pipeline.steps import f\n")
    global ROOT
    saved, ROOT = ROOT, pkg
    try:
        graph, at_load, local = read_imports(pkg)
    finally:
        ROOT = saved
    assert graph["vaultlink.pipeline"] == {"vaultlink.pipeline.steps"}
    assert graph["vaultlink.pipeline.steps"] == {"vaultlink.pipeline.other"}
    assert cycles(graph) == [["vaultlink.pipeline.other", "vaultlink.pipeline.steps"]]
    assert at_load["vaultlink.pipeline.steps"] == set()  # its one import waits for f()
    assert [(m, n) for m, n, _ in local] == [("vaultlink.pipeline.steps", 4)]


def test_sizes_finds_a_long_module_and_a_long_function(tmp_path: Path) -> None:
    pkg = tmp_path / "vaultlink"
    pkg.mkdir()
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES))
    (pkg / "long.py").write_text(f"def f():\n{body}\n" + "\n" * MAX_MODULE_LINES)
    (pkg / "short.py").write_text("def g():\n    return 1\n")
    assert sizes(pkg) == (["vaultlink.long"], ["vaultlink.long.f"])
