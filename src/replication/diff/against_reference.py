"""The diff against a reference set (``make diff``): every registered figure against its reference,
one summary row per compared quantity, and the verdict of each figure."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import write_csv, write_text
from ..paths import FIGURES_ROOT, figure_key, figure_paths
from ..provenance import read_provenance
from .data import DataResult, compare_data
from .deviation import image_tolerance, margin, tolerance_reason
from .envelopes import IMAGE_COLUMN, figure_envelope, read_envelope
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


@dataclass(frozen=True)
class _Tolerances:
    """What a regenerated figure is held to: the image's RMS floor, the data floors, the reference
    set's envelopes and their factor k."""

    image_rms: float
    data: dict
    envelopes: dict
    k: float


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
    ``out_dir/images``. ``provenance`` (the regenerated tree's) is shown beside the reference's.
    """
    reference_dir, out_dir = Path(reference_dir), Path(out_dir)
    check_reference_set(reference_dir)
    tolerances = _Tolerances(image_tolerance, data_settings, read_envelope(reference_dir), float(envelope_factor))
    records = {figure_key(r["path"]): r for r in figures}
    rows = []
    details = {}
    for key in sorted(set(records) | set(reference_keys(reference_dir))):
        record = records.get(key, {"path": str(FIGURES_ROOT / key) + ".pdf", "paper": "", "figure": ""})
        paths = figure_paths(record["path"])
        base = {"key": key, "paper": record["paper"], "figure": record["figure"]}
        missing = _missing(key, records, paths["png"], reference_dir / f"{key}.png")
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
        figure_rows, details[key] = _figure_rows(base, paths, reference_dir, out_dir / "images", tolerances)
        rows += figure_rows
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    summary["passed"] = summary["passed"].astype(bool)
    _write_report(summary, details, records, reference_dir, out_dir, external_dir, tolerances.k, provenance)
    return summary


def _missing(key: str, records: dict, png: Path, ref_png: Path) -> tuple[str, str] | None:
    """(status, message) of a figure that cannot be compared: no longer registered, not produced,
    or without a reference; None when both images are there."""
    if key not in records:
        return ("missing figure", f"the reference set has {key}, the pipeline no longer registers it")
    if not png.exists():
        return ("missing figure", f"not produced: {png}")
    if not ref_png.exists():
        return ("missing reference", f"no reference {ref_png}: run `make bless` if the figure is new")
    return None


def _figure_rows(
    base: dict, paths: dict, reference_dir: Path, images: Path, tolerances: _Tolerances
) -> tuple[list[dict], pd.DataFrame]:
    """One figure against its reference: its rows (the image, then every data column, or one "data"
    row when the data could not be compared) and the per-column comparison of its data."""
    key = base["key"]
    ref_png, ref_csv = reference_dir / f"{key}.png", reference_dir / f"{key}.csv"
    k, envelopes = tolerances.k, tolerances.envelopes
    columns_envelope = figure_envelope(envelopes, key)
    image_envelope = columns_envelope.pop(IMAGE_COLUMN, 0.0)
    tolerance = image_tolerance(tolerances.image_rms, image_envelope, k)
    image = compare_image(paths["png"], ref_png, tolerance, images / key)
    if ref_csv.exists() and paths["csv"].exists():
        data = compare_data(paths["csv"], ref_csv, tolerances.data, columns_envelope, k)
    else:
        data = DataResult(False, f"data missing: {ref_csv if not ref_csv.exists() else paths['csv']}")
    passed = image.passed and data.passed
    message = f"{image.message}; {data.message}"
    base = {**base, "status": "pass" if passed else "fail", "passed": passed, "message": message}
    rows = [
        _quantity_row(
            base,
            "image rms",
            image.rms,
            tolerance,
            margin(image.rms, tolerance),
            tolerance_reason(
                k,
                image_envelope,
                tolerances.image_rms,
                f"diff.image_rms {tolerances.image_rms:g}",
                (key, IMAGE_COLUMN) in envelopes,
            ),
        )
    ]
    if data.columns.empty:
        rows.append(_quantity_row(base, "data", np.nan, np.nan, np.inf, data.message))
    for column in data.columns.itertuples():
        rows.append(
            _quantity_row(base, column.column, column.deviation, column.tolerance, column.margin, column.reason)
        )
    return rows, data.columns


def _write_report(
    summary: pd.DataFrame,
    details: dict,
    records: dict,
    reference_dir: Path,
    out_dir: Path,
    external_dir: str | os.PathLike | None,
    k: float,
    provenance: str | os.PathLike | None,
) -> None:
    """``summary.csv`` and ``report.html`` (with the external panels, when asked for) into ``out_dir``."""
    external = _external_panels(records, external_dir, out_dir / "images") if external_dir else []
    provenances = (
        read_provenance(reference_dir / "provenance.json"),
        read_provenance(provenance) if provenance else {},
    )
    write_csv(summary, out_dir / "summary.csv")
    write_text(
        report_html(summary, verdicts_against_reference(summary), details, external, reference_dir, k, provenances),
        out_dir / "report.html",
    )


def verdicts_against_reference(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per figure of a ``diff_figures`` summary: status, passed, message, the worst margin and
    its quantity."""
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
        panels.append({"key": key, "sources": matches})  # the report shows images/external/<key>.png
    return panels
