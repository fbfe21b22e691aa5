"""The structure of the package: no import cycle among the modules of ``replication``, and the core
(every module outside ``replication.papers``) imports no paper.

The graph is read from the source with ``ast``: every ``import`` and ``from ... import`` statement,
at module level or inside a function (an import hidden in a function still closes a cycle when it
runs), relative ones resolved. Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first,
so a module also depends on the packages above what it imports, and ``from a import b`` on the
module ``a.b`` when there is one. The registry imports every paper package at run time
(``importlib``, the plug-in mechanism): for cycles that counts as an import of each paper by the
registry; for "the core imports no paper" it does not, since the core names none.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import ROOT

PACKAGE = "replication"
PAPERS = f"{PACKAGE}.papers"


def module_names(source_root: Path, package: str) -> dict[str, Path]:
    """``{dotted module name: file}`` of every module of ``package`` under ``source_root``."""
    names = {}
    for path in sorted((source_root / package).rglob("*.py")):
        parts = path.relative_to(source_root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imported_names(module: str, path: Path) -> set[str]:
    """Every dotted name ``module`` imports (anywhere in its source), relative imports resolved."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # from . import x in a package's __init__ means the package itself; in a module, its parent
                parts = module.split(".") if is_package else module.split(".")[:-1]
                base = parts[: len(parts) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module
            found.add(origin)
            found.update(f"{origin}.{alias.name}" for alias in node.names)  # submodules, when they are
    return found


def import_graph(source_root: Path, package: str = PACKAGE) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}``, with the packages each import runs first."""
    names = module_names(source_root, package)
    graph = {}
    for module, path in names.items():
        targets = set()
        for name in imported_names(module, path):
            parts = name.split(".")
            for end in range(1, len(parts) + 1):  # a.b.c runs a, a.b and a.b.c
                prefix = ".".join(parts[:end])
                if prefix in names and prefix != module and not module.startswith(prefix + "."):
                    targets.add(prefix)
        graph[module] = targets
    return graph


def with_discovered_papers(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` plus what ``replication.registry.papers()`` imports when it runs: every paper package."""
    found = {module for module in graph if module.startswith(PAPERS + ".") and module.count(".") == 2}
    return {**graph, "replication.registry": graph["replication.registry"] | found}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def core_imports_of_papers(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Core modules that import ``replication.papers`` or anything in it."""
    return {
        module: sorted(t for t in targets if t == PAPERS or t.startswith(PAPERS + "."))
        for module, targets in graph.items()
        if not (module == PAPERS or module.startswith(PAPERS + "."))
        and any(t == PAPERS or t.startswith(PAPERS + ".") for t in targets)
    }


def test_the_package_has_no_import_cycle():
    graph = with_discovered_papers(import_graph(ROOT / "src"))
    assert {"replication.config", "replication.diff.envelopes", "replication.diff.against_reference"} <= set(graph)
    assert {"replication.papers.local_to_global", "replication.papers.benign_overfitting"} <= graph[
        "replication.registry"
    ]
    assert cycles(graph) == []


def test_the_core_imports_no_paper():
    assert core_imports_of_papers(import_graph(ROOT / "src")) == {}


def test_papers_import_the_core_and_are_seen_doing_it():
    """The reader sees real edges: a paper's config checks import the error type, its training the
    perturbation hooks (a test that reads no edge would pass whatever the code)."""
    graph = import_graph(ROOT / "src")
    assert "replication.errors" in graph["replication.papers.local_to_global.config_checks"]
    assert "replication.perturbation" in graph["replication.papers.local_to_global.transformer.train"]
    assert "replication.diff.envelopes" in graph["replication.diff.against_reference"]
    assert "replication.diff.images" in graph["replication.diff.bless"]


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    "files, expected",
    [
        # a cycle hidden in a function, through a relative import
        (
            {"pkg/__init__.py": "", "pkg/a.py": "from .b import x\n", "pkg/b.py": "def f():\n    from . import a\n"},
            [["pkg.a", "pkg.b"]],
        ),
        # three modules, absolute imports
        (
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "import pkg.b\n",
                "pkg/b.py": "from pkg.c import y\n",
                "pkg/c.py": "from pkg import a\n",
            },
            [["pkg.a", "pkg.b", "pkg.c"]],
        ),
        # through a subpackage's __init__, which importing its module runs first
        (
            {
                "pkg/__init__.py": "",
                "pkg/low.py": "from .sub.leaf import z\n",
                "pkg/sub/__init__.py": "from .top import t\n",
                "pkg/sub/leaf.py": "",
                "pkg/sub/top.py": "from ..low import w\n",
            },
            [["pkg.low", "pkg.sub", "pkg.sub.top"]],
        ),
        # layered: no cycle; a package importing its own modules is no cycle either
        (
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "from .b import x\nimport os\n",
                "pkg/b.py": "import numpy\n",
                "pkg/sub/__init__.py": "from .leaf import z\n",
                "pkg/sub/leaf.py": "from ..b import x\n",
            },
            [],
        ),
    ],
    ids=["hidden-in-a-function", "three-modules", "through-a-package-init", "layered"],
)
def test_synthetic_graphs(tmp_path, files, expected):
    assert cycles(import_graph(write(tmp_path, files), "pkg")) == expected


def test_a_paper_importing_what_imports_the_registry_closes_a_cycle(tmp_path):
    """The registry imports the papers it finds; a paper's check that imports the config module
    (which imports the registry) makes a circle, however late the import."""
    root = write(
        tmp_path,
        {
            "replication/__init__.py": "",
            "replication/contract.py": "",
            "replication/registry.py": "from .contract import Paper\n",
            "replication/config.py": "from .registry import papers\n",
            "replication/papers/__init__.py": "",
            "replication/papers/some_paper/__init__.py": "from replication.contract import Paper\n",
            "replication/papers/some_paper/checks.py": "def check():\n    from replication.config import Error\n",
        },
    )
    graph = import_graph(root)
    assert cycles(graph) == []  # the registry's run-time import is not a statement
    graph = with_discovered_papers(graph)
    assert graph["replication.registry"] == {"replication.contract", "replication.papers.some_paper"}
    assert cycles(graph) == []  # the paper's package imports only the contract
    graph["replication.papers.some_paper"].add("replication.papers.some_paper.checks")
    assert cycles(graph) == [
        [
            "replication.config",
            "replication.papers.some_paper",
            "replication.papers.some_paper.checks",
            "replication.registry",
        ]
    ]


def test_a_core_module_importing_a_paper_is_found(tmp_path):
    root = write(
        tmp_path,
        {
            "replication/__init__.py": "",
            "replication/errors.py": "",
            "replication/config.py": "def check():\n    from .papers.some_paper.checks import rule\n",
            "replication/registry.py": "import importlib\nimportlib.import_module('replication.papers')\n",
            "replication/papers/__init__.py": "",
            "replication/papers/some_paper/__init__.py": "from replication.errors import ConfigError\n",
            "replication/papers/some_paper/checks.py": "from . import something\n",
        },
    )
    assert core_imports_of_papers(import_graph(root)) == {
        "replication.config": [
            "replication.papers",
            "replication.papers.some_paper",
            "replication.papers.some_paper.checks",
        ]
    }
