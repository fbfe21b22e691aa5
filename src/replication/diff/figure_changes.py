"""The figures of two trees side by side (``make compare``): per figure and compared quantity (its
image and every data column) how far B moved from A, in multiples of the figure's numerical-noise
envelope and beside the seeds' spread, the panels drawn, and the verdict of each figure.

"Moved" is the rule of ``make diff`` (``compare_data``, ``compare_image``: ``|b - a| <= k x envelope
+ atol + rtol |a|``, images by RMS against ``image_rms + k x envelope``), with A in the place of the
reference: a change the diff would pass is "within noise", never "moved".
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .data import compare_data
from .deviation import image_tolerance
from .images import ImageResult, compare_image, highlighted_difference, padded, read_rgb, save_png, side_by_side
from .seeds import figure_seed_spread
from .trees import Tree

FIGURE_CHANGE_COLUMNS = [
    "key",
    "status",
    "quantity",
    "deviation",
    "tolerance",
    "margin",
    "envelope",
    "x_envelope",
    "seed_noise",
    "seed_column",
    "disjoint_share",
    "seed_range_a",
    "message",
]
VERDICT_COLUMNS = ["key", "status", "worst", "margin", "x_envelope", "seed_noise", "seed_column", "seed_range_a"]
# A figure whose data has one of these columns is a line figure: B's curves are drawn over A's.
LINE_X = ("step", "iteration", "t", "time", "epoch")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def compare_images_padded(a: Path, b: Path, tolerance: float, out_prefix: Path) -> tuple[ImageResult, float]:
    """RMS of B against A on a common canvas (``compare_image``'s rule); writes ``<out_prefix>.png``
    (A | B) and ``<out_prefix>-diff.png`` (B faded, where it differs from A in red); returns the
    result and the share of pixels that differ."""
    pa, pb = padded([read_rgb(a), read_rgb(b)])
    with tempfile.TemporaryDirectory() as scratch:
        save_png(pa, Path(scratch) / "a.png")
        save_png(pb, Path(scratch) / "b.png")
        result = compare_image(Path(scratch) / "b.png", Path(scratch) / "a.png", tolerance, Path(scratch) / "panel")
    highlighted, share = highlighted_difference(pa, pb)
    save_png(side_by_side([pa, pb]), out_prefix.with_name(out_prefix.name + ".png"))
    save_png(highlighted, out_prefix.with_name(out_prefix.name + "-diff.png"))
    return result, share


def line_overlay(a_csv: Path, b_csv: Path, a_label: str, b_label: str, target: Path) -> bool:
    """B's curves (dashed) over A's (solid), one axes per measured column; False if not a line figure."""
    a, b = pd.read_csv(a_csv), pd.read_csv(b_csv)
    x = next((c for c in LINE_X if c in a.columns and c in b.columns), None)
    if x is None:
        return False
    from ..plotting import apply_style, plt

    # Measured values are floats; labels and integers (init, seed, chain) say which curve a row is on.
    numeric = [c for c in a.columns if c != x and pd.api.types.is_float_dtype(a[c]) and c in b.columns]
    groups = [c for c in a.columns if c not in numeric and c != x and c in b.columns]
    if not numeric:
        return False
    apply_style()
    fig, axes = plt.subplots(1, len(numeric), figsize=(4.2 * len(numeric), 3.2), squeeze=False)
    for axis, column in zip(axes[0], numeric):
        for frame, style, label in ((a, "-", a_label), (b, "--", b_label)):
            for index, (_, curve) in enumerate(frame.groupby(groups, sort=True) if groups else [("", frame)]):
                curve = curve.sort_values(x)
                axis.plot(
                    curve[x], curve[column], style, color=f"C{index % 10}", lw=1, label=label if index == 0 else None
                )
        axis.set_title(column)
        axis.set_xlabel(x)
    axes[0][0].legend(title=f"solid: {a_label}, dashed: {b_label}" if groups else None)
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return True


def compare_figures(a: Tree, b: Tree, out_dir: Path, settings: dict, envelopes: dict) -> tuple[pd.DataFrame, dict]:
    """One row per figure and compared quantity (its image and every data column); the panels drawn."""
    from .envelopes import IMAGE_COLUMN

    k = float(settings["envelope_factor"])
    rows, panels = [], {}
    a_keys, b_keys = set(a.keys()), set(b.keys())
    for key in sorted(a_keys | b_keys):
        if key not in a_keys or key not in b_keys:
            only = a.label if key in a_keys else b.label
            rows.append({"key": key, "status": "only in " + only, "message": f"{key} is only in {only}"})
            continue
        a_png, b_png, a_csv, b_csv = a.file(key, "png"), b.file(key, "png"), a.file(key, "csv"), b.file(key, "csv")
        if sha256(a_png) == sha256(b_png) and sha256(a_csv) == sha256(b_csv):
            rows.append({"key": key, "status": "identical", "message": "image and data byte-identical"})
            continue
        envelope = {column: value for (k_, column), value in envelopes.items() if k_ == key}
        image_envelope = envelope.pop(IMAGE_COLUMN, 0.0)
        image_allowed = image_tolerance(settings["image_rms"], image_envelope, k)
        prefix = out_dir / "images" / key
        image, changed_share = compare_images_padded(a_png, b_png, image_allowed, prefix)
        overlay = prefix.with_name(prefix.name + "-overlay.png")
        is_line = a_csv.exists() and b_csv.exists() and line_overlay(a_csv, b_csv, a.label, b.label, overlay)
        panels[key] = {"overlay": is_line, "changed_share": changed_share}
        quantities = [
            {
                "quantity": "image rms",
                "deviation": image.rms,
                "tolerance": image_allowed,
                "envelope": image_envelope,
                "passed": image.passed,
            }
        ]
        message = image.message
        if a_csv.exists() and b_csv.exists():
            data = compare_data(b_csv, a_csv, settings["data"], envelope, k)
            message += "; " + data.message
            for column in data.columns.itertuples():
                quantities.append(
                    {
                        "quantity": column.column,
                        "deviation": column.deviation,
                        "tolerance": column.tolerance,
                        "envelope": column.envelope,
                        "passed": column.n_outside == 0,
                    }
                )
            if data.columns.empty:  # columns or rows differ: the data moved as a whole
                quantities.append(
                    {"quantity": "data", "deviation": np.inf, "tolerance": np.nan, "envelope": np.nan, "passed": False}
                )
        moved = not all(q["passed"] for q in quantities)
        # Training noise beside numerical noise: how far the seeds of each side already spread.
        seeds = figure_seed_spread(a_csv, b_csv)
        for q in quantities:
            deviation, tolerance, spread = q["deviation"], q["tolerance"], q["envelope"]
            rows.append(
                {
                    "key": key,
                    "status": "moved" if moved else "within noise",
                    "quantity": q["quantity"],
                    "deviation": deviation,
                    "tolerance": tolerance,
                    "margin": _ratio(deviation, tolerance),
                    "envelope": spread,
                    "x_envelope": _ratio(deviation, spread),
                    **seeds,
                    "message": message,
                }
            )
    return pd.DataFrame(rows, columns=FIGURE_CHANGE_COLUMNS), panels


def _ratio(deviation: float, scale: float) -> float:
    if deviation is None or np.isnan(deviation) or scale is None or np.isnan(scale):
        return np.nan
    if deviation == 0:
        return 0.0
    return deviation / scale if scale > 0 else np.inf


def verdicts_between_trees(figures: pd.DataFrame) -> pd.DataFrame:
    """One row per figure of ``compare_figures``: status, the quantity that moved most, as a multiple of
    its envelope."""
    rows = []
    for key, group in figures.groupby("key", sort=True):
        measured = group.margin.notna()
        worst = group.loc[group.margin.idxmax()] if measured.any() else group.iloc[0]
        rows.append(
            {
                "key": key,
                "status": group.status.iloc[0],
                "worst": worst.quantity if measured.any() else "",
                "margin": float(worst.margin) if measured.any() else np.nan,
                "x_envelope": float(worst.x_envelope) if measured.any() else np.nan,
                **{column: group[column].iloc[0] for column in ("seed_noise", "seed_column", "seed_range_a")},
                "message": group.message.iloc[0],
            }
        )
    return pd.DataFrame(rows, columns=[*VERDICT_COLUMNS, "message"])
