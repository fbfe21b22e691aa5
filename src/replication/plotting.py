"""One plotting style and one figure-saving function for every figure of the project."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless and deterministic on every machine

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from .figure_checks import figure_problems  # noqa: E402
from .io import atomic_path, write_csv  # noqa: E402
from .paths import figure_paths  # noqa: E402  (part of this module's interface)

PNG_DPI = 150

# Volatile metadata (dates, software strings) is dropped so the same data gives the same bytes.
_PDF_METADATA = {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}
_PNG_METADATA = {"Software": None}


def apply_style() -> None:
    """The project's plotting style: seaborn's white grid, paper context, fixed fonts."""
    sns.set_theme(context="paper", style="whitegrid", palette="deep", font="DejaVu Sans")
    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": PNG_DPI,
            # No "tight" box: a figure's pixel size is its size times the dpi, whatever its text.
            "savefig.bbox": "standard",
            "axes.titlesize": 10,
            "axes.labelsize": 9,
            "legend.fontsize": 7,
            "xtick.labelsize": 8,
            "ytick.labelsize": 8,
            "pdf.fonttype": 42,
            "svg.hashsalt": "replication",
            "image.cmap": "viridis",
        }
    )


def save_figure(fig: plt.Figure, pdf_path: str | os.PathLike, data: pd.DataFrame | None = None) -> dict[str, Path]:
    """Write ``fig`` as PDF and PNG (fixed dpi, no volatile metadata) and ``data`` as CSV.

    Every figure of the project goes through this function, so that each has its tidy data
    next to it and reruns on the same data are byte-identical. The PNG is exactly the figure's
    size times ``PNG_DPI`` pixels (no tight box), so a longer title or label never changes the
    image's size and an image diff always compares like with like.

    A figure that would not read at a glance is an error naming the figure, the axes and the
    problem (``figure_checks.figure_problems``): an axis or colour bar without labelled ticks, a
    legend entry that shows nothing, text over tick labels or cut off at the canvas's edge. Text
    out of place gets matplotlib's tight layout once before that verdict.
    """
    problems = figure_problems(fig)
    if any(problem.startswith(("canvas:", "overlap:")) for problem in problems):
        fig.tight_layout()  # a figure laid out by hand, or not at all: matplotlib's layout, once
        problems = figure_problems(fig)
    if problems:
        plt.close(fig)
        raise ValueError(f"{pdf_path}: {'; '.join(problems)}")
    paths = figure_paths(pdf_path)
    with atomic_path(paths["pdf"]) as tmp:
        fig.savefig(tmp, format="pdf", metadata=_PDF_METADATA)
    with atomic_path(paths["png"]) as tmp:
        fig.savefig(tmp, format="png", dpi=PNG_DPI, metadata=_PNG_METADATA)
    if data is not None:
        write_csv(data, paths["csv"])
    plt.close(fig)
    return paths
