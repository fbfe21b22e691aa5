"""Tidy figure data against its reference: per-column tolerances and margins."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .deviation import allowed, column_tolerance, deviation, largest_floor, margins, tolerance_reason

DATA_COLUMNS = [
    "column",
    "atol",
    "rtol",
    "envelope",
    "max_abs",
    "max_rel",
    "deviation",
    "tolerance",
    "margin",
    "n_outside",
    "reason",
]


@dataclass
class DataResult:
    passed: bool
    message: str
    max_abs: float = np.nan
    max_rel: float = np.nan
    worst_column: str = ""
    columns: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DATA_COLUMNS))


def compare_data(
    actual: str | os.PathLike,
    expected: str | os.PathLike,
    settings: dict,
    envelope: dict[str, float] | None = None,
    k: float = 0.0,
) -> DataResult:
    """Compare two tidy CSVs: same columns and rows; numbers within
    ``|a - e| <= k * envelope[column] + atol + rtol |e|``; labels equal as text.

    Per column: the largest deviation, the tolerance at that value and their ratio, the margin
    (<= 1 passes), with the reason the tolerance has its value.
    """
    envelope = envelope or {}
    got, ref = pd.read_csv(actual), pd.read_csv(expected)
    if list(got.columns) != list(ref.columns):
        only_ref = [c for c in ref.columns if c not in got.columns]
        only_got = [c for c in got.columns if c not in ref.columns]
        return DataResult(False, f"columns differ: reference only {only_ref}, regenerated only {only_got}")
    if len(got) != len(ref):
        return DataResult(False, f"{len(got)} rows, reference has {len(ref)}")
    rows = []
    for column in ref.columns:
        tol = column_tolerance(settings, column)
        spread = float(envelope.get(column, 0.0))
        a, e = got[column], ref[column]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(e):
            measured = deviation(a, e)
            error, relative = measured.absolute, measured.relative
            limit = allowed(e, tol, spread, k)
            ratio = margins(measured, limit)
            bad = ratio > 1.0
            worst = int(np.argmax(ratio)) if len(ratio) else 0
            margin = float(ratio.max(initial=0.0))
            deviation_at_worst = float(error[worst]) if len(error) else 0.0
            tolerance = float(limit[worst]) if len(limit) else tol.atol
            max_abs, max_rel = float(error.max(initial=0.0)), float(relative.max(initial=0.0))
            reason = tolerance_reason(k, spread, largest_floor(e, tol), tol.text, column in envelope)
        else:  # labels, categories: equal as text
            bad = (a.fillna("").astype(str) != e.fillna("").astype(str)).to_numpy(bool)
            max_abs = max_rel = deviation_at_worst = margin = np.inf if bad.any() else 0.0
            tolerance, reason = 0.0, "labels: equal as text"
        rows.append(
            {
                "column": column,
                "atol": tol.atol,
                "rtol": tol.rtol,
                "envelope": spread,
                "max_abs": max_abs,
                "max_rel": max_rel,
                "deviation": deviation_at_worst,
                "tolerance": tolerance,
                "margin": margin,
                "n_outside": int(bad.sum()),
                "reason": reason,
            }
        )
    columns = pd.DataFrame(rows, columns=DATA_COLUMNS)
    failing = columns[columns.n_outside > 0]
    worst = columns.loc[columns.margin.idxmax(), "column"] if (columns.margin > 0).any() else ""
    if len(failing):
        message = "data outside tolerance: " + ", ".join(
            f"{r.column} ({r.n_outside} values, max |d| {r.max_abs:.3g}, max rel {r.max_rel:.3g}, "
            f"margin {r.margin:.3g})"
            for r in failing.itertuples()
        )
    else:
        message = "data within tolerance"
    return DataResult(
        failing.empty, message, float(columns.max_abs.max()), float(columns.max_rel.max()), worst, columns
    )
