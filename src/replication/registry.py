"""The papers found under ``replication.papers``, and the config schema merged from theirs.

A paper is a package there whose ``__init__`` defines ``PAPER`` (``replication.contract.Paper``).
The core reads papers only through that contract, so adding a folder adds a paper; they are
imported here at run time (``importlib``), so no core module imports a paper. Cheap to import:
the workflow imports it while it parses.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path

import yaml

from . import contract
from .contract import Paper


@cache
def papers() -> tuple[Paper, ...]:
    """Every paper package under ``replication.papers``, oldest arXiv id first (the reports' order)."""
    root = contract.PAPERS_PACKAGE  # read here, not bound at import: tests point it at fake papers
    package = importlib.import_module(root)
    found = []
    for module in pkgutil.iter_modules(package.__path__):
        if not module.ispkg:
            continue
        paper = getattr(importlib.import_module(f"{root}.{module.name}"), "PAPER", None)
        if not isinstance(paper, Paper):
            raise TypeError(f"{root}.{module.name} defines no PAPER (a replication.contract.Paper)")
        if paper.id != module.name:
            raise ValueError(f"{root}.{module.name}: PAPER.id is {paper.id!r}; it must be the package name")
        found.append(paper)
    return tuple(sorted(found, key=lambda p: (p.arxiv, p.id)))


def paper_named(name: str) -> Paper | None:
    """The paper a claims table's ``paper`` value means: its id, name or title, any case, ``-`` or
    ``_``, or the start of one of them, or a text that starts with one of them or holds its arXiv id
    ("MY-paper (2401.00001)"); None when no paper matches."""

    def norm(text):
        return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")

    wanted = norm(name)
    if not wanted:
        return None
    for paper in papers():
        for known in map(norm, (paper.id, paper.name, paper.title)):
            if known.startswith(wanted) or wanted.startswith(known):
                return paper
        if paper.arxiv.split("v")[0] in str(name):
            return paper
    return None


def config_schema(core_schema_path: str | Path) -> dict:
    """The core schema with every paper's section (``properties.<id>``) and ``$defs`` merged in."""
    schema = yaml.load(Path(core_schema_path).read_text(), Loader=yaml.CSafeLoader)  # libyaml: ~10x faster
    definitions = schema.setdefault("$defs", {})
    shared = schema["properties"]
    schema["properties"] = {}  # the papers' sections first, then the shared ones
    for paper in papers():
        fragment = yaml.load(paper.schema_path.read_text(), Loader=yaml.CSafeLoader)
        for name, definition in fragment.pop("$defs", {}).items():
            if name in definitions and definitions[name] != definition:
                raise ValueError(f"{paper.schema_path}: $defs/{name} differs from the shared definition")
            definitions[name] = definition
        if paper.id in shared:
            raise ValueError(f"{paper.schema_path}: config section {paper.id!r} is a shared section")
        schema["properties"][paper.id] = fragment
    schema["properties"].update(shared)
    return schema
