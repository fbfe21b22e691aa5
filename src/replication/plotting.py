"""One plotting style and one figure-saving function for every figure of the project."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless and deterministic on every machine

import matplotlib.collections  # noqa: E402
import matplotlib.lines  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

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


def legend_entries_off_axes(fig: plt.Figure) -> list[str]:
    """Legend entries (of each axes' legend) none of whose plotted points lies inside the axes: a
    legend would list them and the figure show nothing. Lines and scatter points of 2-D axes are
    checked, in whatever coordinates they were drawn (data, axes or blended, any scale)."""
    off = []
    for ax in fig.axes:
        # 3-D axes project their data with the view: their legends are not checked here.
        if ax.get_legend() is None or ax.name != "rectilinear":
            continue
        to_axes = ax.transAxes.inverted()
        for artist, label in zip(*ax.get_legend_handles_labels()):
            if isinstance(artist, matplotlib.lines.Line2D):
                points, transform = artist.get_xydata(), artist.get_transform()
            elif isinstance(artist, matplotlib.collections.PathCollection):
                points, transform = artist.get_offsets(), artist.get_offset_transform()
            else:
                continue
            points = np.asarray(points, dtype=float).reshape(-1, 2)
            points = points[np.isfinite(points).all(axis=1)]
            inside = False
            if len(points):
                u, v = to_axes.transform(transform.transform(points)).T
                inside = bool(np.any((u >= -1e-9) & (u <= 1 + 1e-9) & (v >= -1e-9) & (v <= 1 + 1e-9)))
            if not inside:
                off.append(f"{ax.get_title() or 'axes'}: {label!r}")
    return off


def content_outside_canvas(fig: plt.Figure, tolerance_inches: float = 0.02) -> list[str]:
    """The sides of the canvas that the drawn content (text, legends, axes) crosses: with a fixed
    canvas such content would be cut off, so the figure's layout must make room for it."""
    fig.canvas.draw()
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    width, height = fig.get_size_inches()
    sides = {
        "left": -drawn.x0,
        "bottom": -drawn.y0,
        "right": drawn.x1 - width,
        "top": drawn.y1 - height,
    }
    return [f"{side} by {excess:.2f} in" for side, excess in sides.items() if excess > tolerance_inches]


def save_figure(fig: plt.Figure, pdf_path: str | os.PathLike, data: pd.DataFrame | None = None) -> dict[str, Path]:
    """Write ``fig`` as PDF and PNG (fixed dpi, no volatile metadata) and ``data`` as CSV.

    Every figure of the project goes through this function, so that each has its tidy data
    next to it and reruns on the same data are byte-identical. The PNG is exactly the figure's
    size times ``PNG_DPI`` pixels (no tight box), so a longer title or label never changes the
    image's size and an image diff always compares like with like. Content that would be cut
    off at the canvas's edge gets matplotlib's tight layout once and is an error if it still
    would be, as is a legend entry whose data lies wholly outside its axes (the figure would
    list a curve it does not show).
    """
    problems = []
    off = legend_entries_off_axes(fig)
    if off:
        problems.append(f"legend entries with no data inside their axes: {'; '.join(off)}")
    outside = content_outside_canvas(fig)
    if outside:  # a figure laid out by hand, or not at all: matplotlib's tight layout, once
        fig.tight_layout()
        outside = content_outside_canvas(fig)
    if outside:
        problems.append(f"content crosses the canvas ({', '.join(outside)}): make room in the layout")
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
