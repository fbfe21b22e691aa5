"""Where outputs and references live: plain path arithmetic, cheap to import.

The workflow imports this while it parses, on every Snakemake call, so it must not pull in the
plotting stack (seaborn alone costs seconds, which would dominate a no-op rerun).
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The checkout that holds workflow/, config/ and the committed references: the one this package
    lies in (src/replication/), or, for an installed package, REPLICATION_ROOT (the workflow sets it
    to its own checkout) or else the current folder."""
    here = Path(__file__).resolve().parents[2]
    if (here / "workflow" / "Snakefile").is_file():
        return here
    return Path(os.environ.get("REPLICATION_ROOT") or os.getcwd()).resolve()


PROJECT_ROOT = project_root()
FIGURES_ROOT = Path("figures")


def figure_paths(pdf_path: str | os.PathLike) -> dict[str, Path]:
    """The three files of a figure: ``.pdf``, ``.png`` and the tidy data ``.csv`` beside them."""
    pdf_path = Path(pdf_path)
    return {suffix: pdf_path.with_suffix("." + suffix) for suffix in ("pdf", "png", "csv")}


def figure_key(path: str | os.PathLike) -> str:
    """``figures/<paper>/fig1.pdf`` -> ``<paper>/fig1`` (its place in a reference set)."""
    path = Path(path).with_suffix("")
    try:
        path = path.relative_to(FIGURES_ROOT)
    except ValueError:
        pass
    return path.as_posix()


def reference_set_dir(settings: dict, project_root: str | os.PathLike) -> Path:
    """``<reference_dir>/<reference_set>`` of the ``diff`` settings; a relative reference_dir is
    under the project root, because references travel with the code, not with a working directory."""
    return Path(project_root) / settings["reference_dir"] / settings["reference_set"]


def shown_path(path: str | os.PathLike) -> str:
    """How a message names a path: relative to the project root where it lies inside the checkout
    (the same on every machine; "." for the root itself), else absolute."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(PROJECT_ROOT.resolve()).as_posix()
    except ValueError:
        return str(resolved)


def shown_tree(path: str | os.PathLike) -> str:
    """How a message names a working folder: "the project root", "the tree variants/smoke", or,
    outside the checkout, "the tree <absolute path>"."""
    shown = shown_path(path)
    return "the project root" if shown == "." else f"the tree {shown}"


def manifest_reference_set(manifest: str) -> str:
    """The committed reference set that holds a manifest's figures and claims at the settings they
    were blessed at: ``config`` for ``figures/all``, the manifest's own name for the others."""
    return "config" if manifest == "all" else manifest


def files_under(folder: str | os.PathLike | None) -> list[str]:
    """Every file below ``folder`` (none when it is unset or absent), sorted."""
    return sorted(str(p) for p in Path(folder).rglob("*") if p.is_file()) if folder else []
