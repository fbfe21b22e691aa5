"""Seed spread in a comparison: whether a change between two trees is larger than what the seeds of
one tree already disagree by.

Numerical noise (the envelopes) says whether a figure moved at all; it says nothing about training
noise. A change is *beyond seed spread* only where the seeds of each side agree among themselves and
the two sides' seed ranges do not overlap; where they overlap (or one side's seeds already disagree
on a verdict) it is *within seed spread*; with one run on a side the spread is unknown.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

BEYOND, WITHIN, UNKNOWN = "beyond seed spread", "within seed spread", "one run: seed spread unknown"
# A figure whose data has no per-seed values (deterministic, or drawn from one run or a mean).
NO_SEEDS = "no per-seed data: seed spread unknown"
SEED_COLUMN = "seed"
# The per-seed values a claim's reason lists: "per seed 0.722, 0.942" (also "per seed (smoothed) ...").
_PER_SEED = re.compile(r"per seed(?: \([^)]*\))?:? ((?:[-+]?\d[\d.eE+-]*(?:, )?)+)")


def seed_values(reason) -> list[float]:
    """The per-seed values a claim's reason lists after "per seed", else []."""
    match = _PER_SEED.search(str(reason)) if isinstance(reason, str) else None
    if match is None:
        return []
    return [float(value) for value in match.group(1).rstrip(", ").split(", ")]


def _range_text(values: list[float]) -> str:
    return f"{min(values):.4g}-{max(values):.4g}" if values else ""


def _holds_in(n_runs, fraction) -> str:
    if pd.isna(n_runs) or pd.isna(fraction) or int(n_runs) < 1:
        return ""
    return f"{round(float(fraction) * int(n_runs))}/{int(n_runs)}"


def _disjoint(a: list[float], b: list[float]) -> bool:
    return max(a) < min(b) or max(b) < min(a)


def claim_seed_verdict(a: dict, b: dict) -> str:
    """BEYOND, WITHIN or UNKNOWN for a claim whose verdict changed; ``a``, ``b``: its rows (``n_runs``,
    ``holds_fraction``, ``reason``) in the two trees."""
    runs = [a.get("n_runs"), b.get("n_runs")]
    if any(pd.isna(n) or int(n) <= 1 for n in runs):
        return UNKNOWN
    fractions = [a.get("holds_fraction"), b.get("holds_fraction")]
    if any(pd.isna(f) or 0.0 < float(f) < 1.0 for f in fractions):
        return WITHIN  # a side's seeds already disagree on the verdict
    values_a, values_b = seed_values(a.get("reason")), seed_values(b.get("reason"))
    if values_a and values_b and not _disjoint(values_a, values_b):
        return WITHIN
    return BEYOND


def claim_seed_columns(a: dict, b: dict) -> dict:
    """The seed columns of a changed claim in ``make compare``: runs, holds in, per-seed range, verdict."""
    return {
        "holds_in_a": _holds_in(a.get("n_runs"), a.get("holds_fraction")),
        "seeds_a": _range_text(seed_values(a.get("reason"))),
        "holds_in_b": _holds_in(b.get("n_runs"), b.get("holds_fraction")),
        "seeds_b": _range_text(seed_values(b.get("reason"))),
        "seed_noise": claim_seed_verdict(a, b),
    }


def _is_label(frame: pd.DataFrame, column: str) -> bool:
    """Whether ``column`` says which point a row is on: not a float, or the same values for every
    seed (a grid coordinate such as ``signal_norm``); a measured value differs between seeds."""
    if not pd.api.types.is_float_dtype(frame[column]):
        return True
    per_seed = frame.groupby(SEED_COLUMN)[column].apply(lambda values: tuple(sorted(values.dropna())))
    return per_seed.nunique() == 1


def figure_seed_spread(a_csv: Path, b_csv: Path) -> dict:
    """Per measured column of a figure's tidy data with a ``seed`` column: at each point (the rows
    that share every other label), A's and B's ranges over seeds. Returns ``seed_noise`` (BEYOND
    when in some column the ranges are disjoint at more than half of the points, else WITHIN; UNKNOWN
    with one seed; NO_SEEDS without per-seed data), ``seed_column`` (the column disjoint at the most
    points), ``disjoint_share`` (that share) and ``seed_range_a`` (A's median range over seeds there)."""
    empty = {"seed_noise": NO_SEEDS, "seed_column": "", "disjoint_share": np.nan, "seed_range_a": np.nan}
    if not (Path(a_csv).exists() and Path(b_csv).exists()):
        return empty
    a, b = pd.read_csv(a_csv), pd.read_csv(b_csv)
    if SEED_COLUMN not in a.columns or SEED_COLUMN not in b.columns:
        return empty
    if min(a[SEED_COLUMN].nunique(), b[SEED_COLUMN].nunique()) < 2:
        return {**empty, "seed_noise": UNKNOWN}
    labels = [c for c in a.columns if c != SEED_COLUMN and c in b.columns and _is_label(a, c)]
    measured = [c for c in a.columns if c in b.columns and c not in labels and c != SEED_COLUMN]
    measured = [c for c in measured if pd.api.types.is_float_dtype(a[c]) and pd.api.types.is_float_dtype(b[c])]
    if not labels:  # one point: every row is a seed's value
        a, b, labels = a.assign(point=0), b.assign(point=0), ["point"]
    best = None
    for column in measured:
        ranges = [frame.groupby(labels, sort=True)[column].agg(["min", "max"]) for frame in (a, b)]
        joined = ranges[0].join(ranges[1], suffixes=("_a", "_b"), how="inner").dropna()
        if joined.empty:
            continue
        disjoint = (joined.max_a < joined.min_b) | (joined.max_b < joined.min_a)
        share = float(disjoint.mean())
        if best is None or share > best["disjoint_share"]:
            spread = float((joined.max_a - joined.min_a).median())
            best = {"seed_column": column, "disjoint_share": share, "seed_range_a": spread}
    if best is None:
        return empty
    return {**best, "seed_noise": BEYOND if best["disjoint_share"] > 0.5 else WITHIN}
