"""Every registered figure against a reference set: one summary row per compared quantity."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..deviation import margin, tolerance_reason
from ..envelopes import IMAGE_COLUMN, figure_envelope, read_envelope
from ..io import write_csv, write_text
from ..paths import FIGURES_ROOT, figure_key, figure_paths
from ..provenance import read_provenance
from .data import DataResult, compare_data
from .images import compare_image, read_rgb, save_png, side_by_side
from .report import report_html

RASTER_SUFFIXES = (".png", ".jpg", ".jpeg")
SUMMARY_COLUMNS = [
    "key",
    "paper",
    "figure",
    "status",
    "passed",
    "quantity",
    "deviation",
    "tolerance",
    "margin",
    "reason",
    "message",
]


def reference_keys(reference_dir: str | os.PathLike) -> list[str]:
    reference_dir = Path(reference_dir)
    if not reference_dir.is_dir():
        return []
    return sorted(p.relative_to(reference_dir).with_suffix("").as_posix() for p in reference_dir.rglob("*.png"))


def check_reference_set(reference_dir: str | os.PathLike) -> None:
    """FileNotFoundError (one line) unless ``reference_dir`` holds a reference set's figures: without
    any, every figure would fail as unreferenced and the report would say nothing about the figures."""
    reference_dir = Path(reference_dir)
    if not reference_keys(reference_dir):
        raise FileNotFoundError(
            f"the reference set {reference_dir} holds no figures; "
            "write it with: make bless (diff.reference_set names the set)"
        )


def _normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9/]+", "_", text.lower())


def external_matches(key: str, external_dir: str | os.PathLike) -> list[Path]:
    """Raster images under ``external_dir`` for figure ``key``: ``<paper>/<figure>[_anything].png``.

    Paper folder names match with ``-`` or ``_`` (``my-paper`` = ``my_paper``).
    """
    external_dir = Path(external_dir)
    wanted = _normalise(key)
    found = []
    for path in sorted(external_dir.rglob("*")):
        if path.suffix.lower() not in RASTER_SUFFIXES:
            continue
        name = _normalise(path.relative_to(external_dir).with_suffix("").as_posix())
        if name == wanted or name.startswith(wanted + "_"):
            found.append(path)
    return found


def _quantity_row(base: dict, quantity: str, deviation: float, tolerance: float, margin: float, reason: str) -> dict:
    return {
        **base,
        "quantity": quantity,
        "deviation": deviation,
        "tolerance": tolerance,
        "margin": margin,
        "reason": reason,
    }


def diff_figures(
    figures: list[dict],
    reference_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    image_tolerance: float,
    data_settings: dict,
    external_dir: str | os.PathLike | None = None,
    envelope_factor: float = 0.0,
    provenance: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Compare every figure (registry records: path, paper, figure) with ``reference_dir``.

    Tolerances: image RMS <= ``image_tolerance + k * envelope``, data values within
    ``k * envelope + atol + rtol |ref|`` (k = ``envelope_factor``, envelopes from the reference
    set's ``envelope.csv``). A reference without a regenerated figure, or a figure without a
    reference, fails as missing. Writes ``out_dir/report.html``, ``summary.csv`` (one row per
    figure and compared quantity: the image and every data column, with deviation, tolerance,
    margin = deviation / tolerance and the reason; also returned) and the images under
    ``out_dir/images``. ``provenance`` (the regenerated run's) is shown beside the reference's.
    """
    reference_dir, out_dir = Path(reference_dir), Path(out_dir)
    check_reference_set(reference_dir)
    images = out_dir / "images"
    envelopes = read_envelope(reference_dir)
    k = float(envelope_factor)
    records = {figure_key(r["path"]): r for r in figures}
    rows = []
    details = {}
    for key in sorted(set(records) | set(reference_keys(reference_dir))):
        record = records.get(key, {"path": str(FIGURES_ROOT / key) + ".pdf", "paper": "", "figure": ""})
        paths = figure_paths(record["path"])
        ref_png, ref_csv = reference_dir / f"{key}.png", reference_dir / f"{key}.csv"
        base = {"key": key, "paper": record["paper"], "figure": record["figure"]}
        missing = None
        if key not in records:
            missing = ("missing figure", f"the reference set has {key}, the pipeline no longer registers it")
        elif not paths["png"].exists():
            missing = ("missing figure", f"not produced: {paths['png']}")
        elif not ref_png.exists():
            missing = ("missing reference", f"no reference {ref_png}: run `make bless` if the figure is new")
        if missing:
            rows.append(
                _quantity_row(
                    {**base, "status": missing[0], "passed": False, "message": missing[1]},
                    "",
                    np.nan,
                    np.nan,
                    np.nan,
                    missing[0],
                )
            )
            continue
        columns_envelope = figure_envelope(envelopes, key)
        image_envelope = columns_envelope.pop(IMAGE_COLUMN, 0.0)
        tolerance = image_tolerance + k * image_envelope
        image = compare_image(paths["png"], ref_png, tolerance, images / key)
        if ref_csv.exists() and paths["csv"].exists():
            data = compare_data(paths["csv"], ref_csv, data_settings, columns_envelope, k)
        else:
            data = DataResult(False, f"data missing: {ref_csv if not ref_csv.exists() else paths['csv']}")
        details[key] = data.columns
        passed = image.passed and data.passed
        base.update(status="pass" if passed else "fail", passed=passed, message=f"{image.message}; {data.message}")
        rows.append(
            _quantity_row(
                base,
                "image rms",
                image.rms,
                tolerance,
                margin(image.rms, tolerance),
                tolerance_reason(
                    k,
                    image_envelope,
                    image_tolerance,
                    f"diff.image_rms {image_tolerance:g}",
                    (key, IMAGE_COLUMN) in envelopes,
                ),
            )
        )
        if data.columns.empty:
            rows.append(_quantity_row(base, "data", np.nan, np.nan, np.inf, data.message))
        for column in data.columns.itertuples():
            rows.append(
                _quantity_row(base, column.column, column.deviation, column.tolerance, column.margin, column.reason)
            )
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    summary["passed"] = summary["passed"].astype(bool)
    external = _external_panels(records, external_dir, images) if external_dir else []
    provenances = (
        read_provenance(reference_dir / "provenance.json"),
        read_provenance(provenance) if provenance else {},
    )
    write_csv(summary, out_dir / "summary.csv")
    write_text(
        report_html(summary, figure_verdicts(summary), details, external, reference_dir, k, provenances),
        out_dir / "report.html",
    )
    return summary


def figure_verdicts(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per figure of a summary: status, passed, message, the worst margin and its quantity."""
    rows = []
    for key, group in summary.groupby("key", sort=True):
        first, margins = group.iloc[0], group.margin
        measured = margins.notna().any()
        rows.append(
            {
                "key": key,
                "paper": first.paper,
                "figure": first.figure,
                "status": first.status,
                "passed": bool(first.passed),
                "margin": float(margins.max()) if measured else np.nan,
                "worst": group.loc[margins.idxmax(), "quantity"] if measured else "",
                "message": first.message,
            }
        )
    return pd.DataFrame(rows, columns=["key", "paper", "figure", "status", "passed", "margin", "worst", "message"])


def _external_panels(records: dict, external_dir: str | os.PathLike, images: Path) -> list[dict]:
    """Ours | the external image(s), one panel per figure that has any; no pass or fail."""
    panels = []
    for key, record in sorted(records.items()):
        png = figure_paths(record["path"])["png"]
        matches = external_matches(key, external_dir)
        if not matches or not png.exists():
            continue
        ours = read_rgb(png)
        target = images / "external" / f"{key}.png"
        save_png(side_by_side([ours] + [read_rgb(m) for m in matches], height=ours.shape[0]), target)
        panels.append({"key": key, "record": record, "image": target, "sources": matches})
    return panels
