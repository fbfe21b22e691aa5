"""Where outputs and references live: plain path arithmetic, cheap to import.

The workflow imports this while it parses, on every Snakemake call, so it must not pull in the
plotting stack (seaborn alone costs seconds, which would dominate a no-op rerun).
"""

from __future__ import annotations

import os
from pathlib import Path

# The checkout (or installed tree) that holds workflow/, config/ and the committed references.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
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


def files_under(folder: str | os.PathLike | None) -> list[str]:
    """Every file below ``folder`` (none when it is unset or absent), sorted."""
    return sorted(str(p) for p in Path(folder).rglob("*") if p.is_file()) if folder else []
