"""What a replicated paper provides: the contract between the core and a paper package.

Each paper is a package ``replication.papers.<id>`` whose ``__init__`` defines ``PAPER``, a
:class:`Paper`. Beside it: ``rules/*.smk`` (its Snakemake rules, included by the workflow; in the
package or any of its subpackages, ``<part>/rules/*.smk``), ``schema.yaml`` (its config section;
``$defs`` there join the shared ones), ``report/`` (the captions of its figures, likewise in a
subpackage where its rules are) and, optionally, ``smoke.yaml`` (tiny settings of its section, used
when the config says ``settings: smoke``). Papers import this module; ``replication.registry`` finds them.
Cheap to import: the workflow imports it while it parses.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

PAPERS_PACKAGE = "replication.papers"


@dataclass(frozen=True)
class Figure:
    """One figure target: its PDF (the PNG and tidy CSV lie beside it), what it reproduces, its caption."""

    path: str
    figure: str
    # Its reStructuredText file: a path relative to the paper's package ("transformer/report/fig3.rst"),
    # or a bare file name, in the package's own report/ folder ("fig3.rst").
    caption: str
    # The manifest (figures/<manifest>) that lists it: "all" is the laptop set that `make figures`
    # builds and the references cover; another name is a set of its own with its own target.
    manifest: str = "all"


@dataclass(frozen=True)
class Table:
    """A table or text of the paper (Markdown or LaTeX), listed in its manifest like the figures."""

    path: str
    table: str
    manifest: str = "all"  # as Figure.manifest


@dataclass(frozen=True)
class RunCost:
    """How a part measures the cost of the run its reference set was blessed from (``make bless-manifest``
    runs it after the blessing): ``python -m <module> <arguments(run folder)> --write
    docs/measurements/<report>``, from the project root. The module prints its lines and, given
    ``--write``, writes them as the Markdown report the documentation includes."""

    module: str  # a benchmark module of the part, run with python -m
    report: str  # the file it writes under docs/measurements/
    # Its options for the finished run in a folder (files found there, e.g. /usr/bin/time -v reports, may add some).
    arguments: Callable[[Path], tuple[str, ...]] = field(compare=False)

    def command(self, run_dir: Path, python: str) -> list[str]:
        """The command line that measures the run in ``run_dir`` with the interpreter ``python``."""
        report = f"docs/measurements/{self.report}"
        return [python, "-m", self.module, *self.arguments(Path(run_dir)), "--write", report]


@dataclass(frozen=True)
class Part:
    """What one part of a paper makes, declared in the part's own package (``<paper>/<part>/__init__``)
    beside its rules, scripts and captions: its figures and tables (a bare caption name is a file of
    the part's ``report/``), its claims tables, and the manifest they all belong to. The paper gathers
    its parts' (``Paper.parts``), so adding a figure to a part touches that part's folder only. A part
    may also declare how the cost of its run is measured (``run_cost``, ``replication.run_cost``)."""

    package: str  # the subpackage's name in the paper's package ("phase")
    figures: tuple[Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    claims: tuple[str, ...] = ()  # its claims tables (replication.claims format), in the manifest's report
    manifest: str = "all"  # as Figure.manifest; its figures and tables take it
    # How its run's cost is measured once its manifest is blessed; None: not measured.
    run_cost: RunCost | None = None

    def __post_init__(self):
        def own(item):
            manifest = {"manifest": self.manifest} if item.manifest == "all" else {}
            caption = getattr(item, "caption", None)
            if caption is not None and Path(caption).parent == Path("."):
                manifest["caption"] = f"{self.package}/report/{caption}"
            return replace(item, **manifest)

        object.__setattr__(self, "figures", tuple(map(own, self.figures)))
        object.__setattr__(self, "tables", tuple(map(own, self.tables)))


# The ``spec`` of a claims-table row that reports no claim of the paper's spec: a claim beyond the paper.
BEYOND_THE_PAPER = "beyond the paper"


@dataclass(frozen=True)
class SpecClaim:
    """A claim of the paper's spec. A claims-table row reports it when the row's ``spec`` is its id."""

    id: str
    figure: str
    statement: str
    check: str  # the threshold the measurement is held to, in words

    @property
    def number(self) -> str:
        """The last number of its id: the spec's item number ("L2G-3" -> "3"), how a row may name it."""
        return re.findall(r"\d+", self.id)[-1]


@dataclass(frozen=True)
class Paper:
    id: str  # package name, config section and the folder of its results and figures
    name: str  # short name in figures/all and the claims tables
    title: str
    arxiv: str
    figures: tuple[Figure, ...]
    claims: tuple[SpecClaim, ...]
    tables: tuple[Table, ...] = ()
    # Its parts (subpackages with their own rules): their figures and tables follow the paper's own.
    parts: tuple[Part, ...] = ()
    # Constraints of the paper's settings that JSON schema cannot state: raises ConfigError.
    check_config: Callable[[dict], None] | None = field(default=None, compare=False)
    # Its settings, typed, from its validated config section: the workflow builds them once
    # (SETTINGS[<id>] in workflow/rules/common.smk) for every rule file of the paper to read.
    settings: Callable[[dict], object] | None = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "figures", (*self.figures, *(f for part in self.parts for f in part.figures)))
        object.__setattr__(self, "tables", (*self.tables, *(t for part in self.parts for t in part.tables)))

    @property
    def claim_tables(self) -> tuple[tuple[str, str], ...]:
        """(path, manifest) of the claims tables its parts declare (rule files register others themselves)."""
        return tuple((path, part.manifest) for part in self.parts for path in part.claims)

    def typed_settings(self, section: dict) -> object:
        """Its settings from its validated config section: ``settings(section)``, or the section itself."""
        return self.settings(section) if self.settings else section

    @property
    def package_dir(self) -> Path:
        return Path(importlib.import_module(f"{PAPERS_PACKAGE}.{self.id}").__file__).parent

    @property
    def rules_files(self) -> list[Path]:
        """Every ``rules/*.smk`` of the package and of its subpackages, by path (the workflow's include order)."""
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

    def caption_path(self, figure: Figure) -> Path:
        """The caption file of one of its figures (``Figure.caption`` resolved)."""
        caption = Path(figure.caption)
        return self.package_dir / (caption if caption.parent != Path(".") else Path("report") / caption)

    def caption(self, stem: str) -> str:
        """The caption file of figure ``stem``, as a path for Snakemake's ``report()``."""
        return str(self.caption_path(self.figure(stem)))

    def spec_claim(self, spec: str) -> SpecClaim | None:
        """The spec claim a claims-table row's ``spec`` names; None for ``BEYOND_THE_PAPER``.
        Any other value is one error naming the allowed ones."""
        if spec == BEYOND_THE_PAPER:
            return None
        for claim in self.claims:
            if claim.id == spec:
                return claim
        allowed = ", ".join([*(claim.id for claim in self.claims), repr(BEYOND_THE_PAPER)])
        raise ValueError(f"{self.name}: spec {spec!r} is no claim of its spec; allowed: {allowed}")

    @property
    def manifests(self) -> tuple[str, ...]:
        """The manifests its figures and tables belong to, "all" first."""
        return tuple(dict.fromkeys(["all", *(item.manifest for item in (*self.figures, *self.tables))]))
