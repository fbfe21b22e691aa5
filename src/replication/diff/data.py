"""Tidy figure data against its reference: per-column tolerances and margins."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def column_tolerance(settings: dict, column: str) -> Tolerance:
    """The floor of one data column: its own entry under ``columns``, else the defaults."""
    own = settings.get("columns", {}).get(column, {})
    return Tolerance(float(own.get("atol", settings["atol"])), float(own.get("rtol", settings["rtol"])))


def tolerance_reason(k: float, envelope: float, floor: float, floor_text: str, measured: bool) -> str:
    """Why a tolerance has its value: which term dominates, then the formula with its numbers."""
    if not measured:
        basis = "floor (no envelope measured)"
    else:
        basis = "envelope" if k * envelope > floor else "floor"
    return f"{basis}: {k:g} x envelope {envelope:.3g} + {floor_text}"


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
            a, e = a.to_numpy(float), e.to_numpy(float)
            same = (a == e) | (np.isnan(a) & np.isnan(e))  # equal infinities, NaN against NaN
            with np.errstate(invalid="ignore", divide="ignore"):
                # NaN against a number, a number against an infinity: unbounded (inf, not the largest float).
                error = np.nan_to_num(np.where(same, 0.0, np.abs(a - e)), nan=np.inf, posinf=np.inf)
                allowed = k * spread + tol.atol + tol.rtol * np.abs(np.nan_to_num(e, nan=0.0, posinf=0.0, neginf=0.0))
                ratio = np.where(same, 0.0, np.where(allowed > 0, error / allowed, np.inf))
                relative = np.nan_to_num(np.where(same, 0.0, error / np.abs(e)), nan=np.inf, posinf=np.inf)
            bad = ratio > 1.0
            worst = int(np.argmax(ratio)) if len(ratio) else 0
            margin = float(ratio.max(initial=0.0))
            deviation = float(error[worst]) if len(error) else 0.0
            tolerance = float(allowed[worst]) if len(allowed) else tol.atol
            max_abs, max_rel = float(error.max(initial=0.0)), float(relative.max(initial=0.0))
            floor = tol.atol + tol.rtol * float(np.nanmax(np.abs(e), initial=0.0))
            reason = tolerance_reason(
                k, spread, floor, f"atol {tol.atol:.3g} + rtol {tol.rtol:.3g} |ref|", column in envelope
            )
        else:  # labels, categories: equal as text
            bad = (a.fillna("").astype(str) != e.fillna("").astype(str)).to_numpy(bool)
            max_abs = max_rel = deviation = margin = np.inf if bad.any() else 0.0
            tolerance, reason = 0.0, "labels: equal as text"
        rows.append(
            {
                "column": column,
                "atol": tol.atol,
                "rtol": tol.rtol,
                "envelope": spread,
                "max_abs": max_abs,
                "max_rel": max_rel,
                "deviation": deviation,
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
