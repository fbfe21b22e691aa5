"""What a replicated paper provides, and the papers found under ``replication.papers``.

Each paper is a package ``replication.papers.<id>`` whose ``__init__`` defines ``PAPER``, a
:class:`Paper`. Beside it: ``rules/*.smk`` (its Snakemake rules, included by the workflow; also
``<subpackage>/rules/*.smk`` at any depth),
``schema.yaml`` (its config section; ``$defs`` there join the shared ones), ``report/`` (the
captions of its figures) and, optionally, ``smoke.yaml`` (tiny settings of its section, used when the
config says ``settings: smoke``). The core reads papers only through this contract, so adding a folder
adds a paper. Cheap to import: the workflow imports it while it parses.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

PAPERS_PACKAGE = "replication.papers"


@dataclass(frozen=True)
class Figure:
    """One figure target: its PDF (the PNG and tidy CSV lie beside it), what it reproduces, its caption."""

    path: str
    figure: str
    # reStructuredText: a file name under the paper's report/ folder, or a path relative to the
    # paper's package (``<subpackage>/report/<file>``).
    caption: str
    # The manifest (figures/<manifest>) that lists it: "all" is the laptop set that `make figures`
    # builds and the references cover; another name is a set of its own with its own target.
    manifest: str = "all"


@dataclass(frozen=True)
class Table:
    """A table of the paper (Markdown or LaTeX), listed in figures/all like the figures."""

    path: str
    table: str


@dataclass(frozen=True)
class SpecClaim:
    """A claim of the paper's spec. A claims-table row reports it when the first number of the
    row's ``Paper.claim_key`` column is the claim's number (the last number of its id)."""

    id: str
    figure: str
    statement: str
    check: str  # the threshold the measurement is held to, in words

    @property
    def number(self) -> str:
        return re.findall(r"\d+", self.id)[-1]


@dataclass(frozen=True)
class Paper:
    id: str  # package name, config section and the folder of its results and figures
    name: str  # short name in figures/all and the claims tables
    title: str
    arxiv: str
    rule_prefix: str  # every rule of the paper is named <rule_prefix>_<output stem>
    figures: tuple[Figure, ...]
    claims: tuple[SpecClaim, ...]
    tables: tuple[Table, ...] = ()
    claim_key: str = "claim_id"  # "claim_id" or "figure": how the paper's claims tables name a spec claim
    # Constraints of the paper's settings that JSON schema cannot state: raises ConfigError.
    check_config: Callable[[dict], None] | None = field(default=None, compare=False)

    @property
    def package_dir(self) -> Path:
        return Path(importlib.import_module(f"{PAPERS_PACKAGE}.{self.id}").__file__).parent

    @property
    def rules_files(self) -> list[Path]:
        """Every ``rules/*.smk`` in the package and its subpackages, sorted by path."""
        return sorted(self.package_dir.glob("**/rules/*.smk"))

    @property
    def schema_path(self) -> Path:
        return self.package_dir / "schema.yaml"

    @property
    def smoke_path(self) -> Path:
        """Its smoke settings (optional): a partial config section merged over its own."""
        return self.package_dir / "smoke.yaml"

    @property
    def results_dir(self) -> str:
        return f"results/{self.id}"

    @property
    def figures_dir(self) -> str:
        return f"figures/{self.id}"

    def figure(self, stem: str) -> Figure:
        """The registered figure ``figures/<id>/<stem>.pdf``."""
        path = f"{self.figures_dir}/{stem}.pdf"
        for figure in self.figures:
            if figure.path == path:
                return figure
        raise KeyError(f"{self.id}: no figure {path}; registered: {', '.join(f.path for f in self.figures)}")

    def caption(self, stem: str) -> str:
        """The caption file of figure ``stem``, as a path for Snakemake's ``report()``."""
        return str(self.caption_file(self.figure(stem)))

    def caption_file(self, figure: Figure) -> Path:
        """Where a figure's caption lies: under report/, or the package-relative path it names."""
        return self.package_dir / (figure.caption if "/" in figure.caption else Path("report") / figure.caption)

    @property
    def manifests(self) -> tuple[str, ...]:
        """The manifests its figures belong to, "all" first."""
        return tuple(dict.fromkeys(["all", *(figure.manifest for figure in self.figures)]))


@cache
def papers() -> tuple[Paper, ...]:
    """Every paper package under ``replication.papers``, oldest arXiv id first (the reports' order)."""
    package = importlib.import_module(PAPERS_PACKAGE)
    found = []
    for module in pkgutil.iter_modules(package.__path__):
        if not module.ispkg:
            continue
        paper = getattr(importlib.import_module(f"{PAPERS_PACKAGE}.{module.name}"), "PAPER", None)
        if not isinstance(paper, Paper):
            raise TypeError(f"{PAPERS_PACKAGE}.{module.name} defines no PAPER (a replication.registry.Paper)")
        if paper.id != module.name:
            raise ValueError(f"{PAPERS_PACKAGE}.{module.name}: PAPER.id is {paper.id!r}; it must be the package name")
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
    schema = yaml.safe_load(Path(core_schema_path).read_text())
    definitions = schema.setdefault("$defs", {})
    shared = schema["properties"]
    schema["properties"] = {}  # the papers' sections first, then the shared ones
    for paper in papers():
        fragment = yaml.safe_load(paper.schema_path.read_text())
        for name, definition in fragment.pop("$defs", {}).items():
            if name in definitions and definitions[name] != definition:
                raise ValueError(f"{paper.schema_path}: $defs/{name} differs from the shared definition")
            definitions[name] = definition
        if paper.id in shared:
            raise ValueError(f"{paper.schema_path}: config section {paper.id!r} is a shared section")
        schema["properties"][paper.id] = fragment
    schema["properties"].update(shared)
    return schema
