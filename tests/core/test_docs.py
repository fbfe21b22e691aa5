"""The documentation's module lists are the modules on disk, both ways: docs/core.md's table of the
core, the Local to Global layout page and package docstring, the API reference pages (docs/api/).
A module added, renamed or removed without its line fails here. Paths the pages name exist."""

import ast
import glob
import re
from pathlib import Path

import pytest
import yaml

from helpers import ROOT
from replication.registry import papers

SRC = ROOT / "src" / "replication"
PAPERS = SRC / "papers"
DOCS = ROOT / "docs"


def module_files(package: Path) -> list[Path]:
    """Every module file of ``package`` (a folder with ``__init__.py``) and of its subpackages,
    relative to it; folders without ``__init__.py`` (a paper's rule ``scripts/``) hold no modules."""
    files = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        folders = [package.joinpath(*relative.parts[:depth]) for depth in range(len(relative.parts))]
        if all((folder / "__init__.py").is_file() for folder in folders):
            files.append(relative)
    return files


def module_names(package: Path, name: str) -> list[str]:
    """Dotted names of ``module_files(package)``: ``name.sub.module``; a package's ``__init__`` is the package."""
    names = []
    for relative in module_files(package):
        parts = relative.with_suffix("").parts
        names.append(".".join((name, *(parts[:-1] if parts[-1] == "__init__" else parts))))
    return names


def core_modules(src: Path = SRC) -> set[str]:
    """The core: every module of ``replication`` outside ``replication.papers``, named relative to
    ``replication`` (``claims``, ``diff``, ``diff.trees``)."""
    names = [name.removeprefix("replication.") for name in module_names(src, "replication")]
    return {name for name in names if name != "replication" and name.split(".")[0] != "papers"}


def test_module_discovery_follows_packages(tmp_path):
    """Modules in packages and subpackages count, a package by its own name; a folder without
    ``__init__.py`` and the papers do not."""
    for file in ("__init__.py", "a.py", "sub/__init__.py", "sub/b.py", "sub/scripts/run.py", "papers/__init__.py"):
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text("")
    (tmp_path / "papers" / "p.py").write_text("")
    assert core_modules(tmp_path) == {"a", "sub", "sub.b"}


# --- docs/core.md --------------------------------------------------------------------------------


def core_table(text: str) -> set[str]:
    """Every module the first column of docs/core.md's table under "## Modules" names in backticks."""
    section = text.split("## Modules", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, "docs/core.md: no module table under ## Modules"
    return {name for row in rows for name in re.findall(r"`([^`]+)`", row.split("|")[1])}


def test_core_page_lists_every_core_module():
    listed, found = core_table((DOCS / "core.md").read_text()), core_modules()
    assert sorted(found - listed) == [], "core modules missing from docs/core.md's table"
    assert sorted(listed - found) == [], "docs/core.md names modules that do not exist"


def test_core_page_check_sees_a_missing_row():
    text = (DOCS / "core.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `diff.seeds` |"))
    assert "diff.seeds" in core_modules() - core_table(text.replace(row + "\n", ""))
    assert core_table(text.replace(row, row.replace("diff.seeds", "diff.spread"))) - core_modules() == {"diff.spread"}


# --- The Local to Global layout page and package docstring ---------------------------------------


def layout_modules(text: str, package: str) -> set[str]:
    """The module files the layout page's tree of ``package/`` lists: ``markov.py``, ``phase/grid.py``."""
    block = text.split(f"```\n{package}/\n", 1)[1].split("```", 1)[0]
    listed, part = set(), ""
    for line in filter(str.strip, block.splitlines()):
        entry = line.split()[0].rstrip(",")
        depth = (len(line) - len(line.lstrip())) // 2
        if depth == 1 and entry.endswith("/"):
            part = entry
        elif depth == 1:
            part = ""
        if entry.endswith(".py") and "*" not in entry:
            listed.add(part + entry if depth == 2 else entry)
    return listed


def test_layout_page_lists_every_module_of_the_package():
    text = (DOCS / "local_to_global_layout.md").read_text()
    listed = layout_modules(text, "local_to_global")
    found = {path.as_posix() for path in module_files(PAPERS / "local_to_global")}
    assert sorted(found - listed) == [], "modules missing from docs/local_to_global_layout.md"
    assert sorted(listed - found) == [], "docs/local_to_global_layout.md lists modules that do not exist"
    assert "phase/grid.py" in listed and "plateau/hessian.py" in listed  # the parser sees the later parts


def test_layout_check_sees_a_missing_module():
    text = (DOCS / "local_to_global_layout.md").read_text()
    line = next(line for line in text.splitlines() if line.strip().startswith("spectrum.py"))
    assert "plateau/spectrum.py" not in layout_modules(text.replace(line + "\n", ""), "local_to_global")


@pytest.mark.parametrize("paper", [paper.id for paper in papers()])
def test_package_docstring_names_every_part(paper):
    """A paper package's docstring names each of its subpackages (``landscape``, ``phase``, ...)."""
    package = PAPERS / paper
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    parts = [folder.name for folder in sorted(package.iterdir()) if (folder / "__init__.py").is_file()]
    assert [part for part in parts if f"``{part}``" not in docstring] == []


# --- The API reference ---------------------------------------------------------------------------


def rendered(page: Path) -> list[str]:
    """The objects an API page renders: its ``::: <name>`` lines."""
    return re.findall(r"^::: (\S+)$", page.read_text(), flags=re.M)


def api_pages() -> dict[Path, set[str]]:
    """Each API page and the modules it must render: the core's, and each paper's."""
    pages = {DOCS / "api" / "core.md": {f"replication.{name}" for name in core_modules()}}
    for paper in papers():
        pages[DOCS / "api" / f"{paper.id}.md"] = set(module_names(PAPERS / paper.id, f"replication.papers.{paper.id}"))
    return pages


def test_api_reference_renders_every_module():
    for page, modules in api_pages().items():
        shown = rendered(page)
        assert len(shown) == len(set(shown)), f"{page.name}: a module twice"
        assert sorted(modules - set(shown)) == [], f"modules missing from {page.relative_to(ROOT)}"
        assert sorted(set(shown) - modules) == [], f"{page.relative_to(ROOT)} renders modules that do not exist"


def test_api_pages_are_in_the_nav():
    def pages(entries):
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from pages(value) if isinstance(value, list) else [value]

    nav = set(pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]))
    assert {page.relative_to(DOCS).as_posix() for page in api_pages()} <= nav
    assert {page.relative_to(DOCS).as_posix() for page in (DOCS / "api").glob("*.md")} <= nav


# --- Paths the pages name ------------------------------------------------------------------------

NAMED_PATH = re.compile(r"`((?:tests|src|scripts|docs|workflow|config|profiles|requirements)/[^`\s]*)`")


def missing_paths(text: str) -> list[str]:
    """Paths of the checkout named in backticks that do not exist (globs allowed; ``<paper>``-style
    placeholders are not paths)."""
    named = {match.rstrip("/") for match in NAMED_PATH.findall(text) if not re.search(r"[<{]", match)}
    return sorted(path for path in named if not glob.glob(str(ROOT / path)))


def test_paths_the_pages_name_exist():
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    missing = {page.relative_to(ROOT).as_posix(): missing_paths(page.read_text()) for page in pages}
    assert {page: paths for page, paths in missing.items() if paths} == {}
    assert missing_paths("see `tests/test_gone.py` and `tests/core/`") == ["tests/test_gone.py"]


# --- No folder of the machine a page was written on ----------------------------------------------

# Absolute paths under the folders where checkouts and user files live (a system path such as
# /usr/bin/time or a scratch folder in /tmp is the same on every machine); and the checkout itself.
MACHINE_PATH = re.compile(
    r"(?<![\w.~/-])(?:/(?:home|Users|work|workspace|root|mnt|scratch|data|srv)/[\w.+=-]+|[A-Za-z]:\\+Users\\+)"
)
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$', flags=re.M)


def machine_paths(text: str) -> list[str]:
    """The absolute paths of a machine's own folders that ``text`` names."""
    found = MACHINE_PATH.findall(text)
    return found + ([str(ROOT)] if str(ROOT) in text else [])


def documentation_texts() -> dict[str, str]:
    """What the site shows, by source: the README, every page, the files pages include and what the
    build generates (the gallery, the claims reports the pages ask for)."""
    hooks = load_hooks()
    texts = {"README.md": (ROOT / "README.md").read_text()}
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        texts[page.relative_to(ROOT).as_posix()] = hooks.on_page_markdown(text, None, None, None)
        texts |= {included: (ROOT / included).read_text() for included in SNIPPET.findall(text)}
    texts["gallery.md (generated)"] = hooks.gallery.gallery_markdown(hooks.REPORT_PAGES)
    return texts


def load_hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_page_names_a_folder_of_the_machine_it_was_written_on():
    texts = documentation_texts()
    assert "docs/explore.md" in texts and "figures/reference/plateau/plateau_findings.md" in texts
    assert {source: machine_paths(text) for source, text in texts.items() if machine_paths(text)} == {}


def test_machine_path_check_sees_one():
    assert machine_paths("Invalid config: the tree /work/wt/variants/smoke holds") == ["/work/wt"]
    assert machine_paths("at /home/ana/replication and C:\\Users\\ana") == ["/home/ana", "C:\\Users\\"]
    assert str(ROOT) in machine_paths(f"cd {ROOT}")  # the checkout, wherever it lies
    assert machine_paths("/usr/bin/time -v, WORKDIR=/tmp/run, `/opt/wheels`, variants/smoke") == []
