"""How far regenerated numbers lie from reference numbers, and the tolerance they are held to: the
one rule of "is this deviation beyond noise", which ``make diff`` (``against_reference``) and
``make compare`` (``figure_changes``) both apply.

The envelopes (how far numerical noise alone moves a figure's data) and the diff (regenerated
against the references) measure deviations the same way, here. NaN against NaN and equal
infinities are no deviation; NaN against a number, or a number against an infinity, is an
unbounded one (inf, never the largest float). A value passes when
``|new - ref| <= k * envelope + atol + rtol |ref|``: the envelope is measured at blessing time,
``k`` is ``diff.envelope_factor`` and atol, rtol are the floors of ``diff.data``; an image passes
when its RMS difference is ``<= image_rms + k * envelope`` (``image_tolerance``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Deviation:
    same: np.ndarray  # equal values, NaN against NaN and equal infinities included
    absolute: np.ndarray  # |actual - expected|, inf where unbounded
    relative: np.ndarray  # absolute / |expected|, inf where expected is 0 (or unbounded) and they differ


def deviation(actual, expected) -> Deviation:
    """Value by value deviation of ``actual`` from ``expected`` (arrays of one shape, as floats)."""
    a, e = np.asarray(actual, float), np.asarray(expected, float)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    with np.errstate(invalid="ignore", divide="ignore"):
        absolute = np.nan_to_num(np.where(same, 0.0, np.abs(a - e)), nan=np.inf, posinf=np.inf)
        relative = np.nan_to_num(np.where(same, 0.0, absolute / np.abs(e)), nan=np.inf, posinf=np.inf)
    return Deviation(same, absolute, relative)


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float

    @property
    def text(self) -> str:
        return f"atol {self.atol:.3g} + rtol {self.rtol:.3g} |ref|"


def column_tolerance(settings: dict, column: str) -> Tolerance:
    """The floor of one data column: its own entry under ``columns``, else the defaults."""
    own = settings.get("columns", {}).get(column, {})
    return Tolerance(float(own.get("atol", settings["atol"])), float(own.get("rtol", settings["rtol"])))


def allowed(expected, tolerance: Tolerance, envelope: float, k: float) -> np.ndarray:
    """``k * envelope + atol + rtol |expected|`` per value; where ``expected`` is NaN or infinite,
    the floor atol alone (an infinite reference must not allow everything)."""
    finite = np.nan_to_num(np.asarray(expected, float), nan=0.0, posinf=0.0, neginf=0.0)
    return k * envelope + tolerance.atol + tolerance.rtol * np.abs(finite)


def margins(measured: Deviation, allowed: np.ndarray) -> np.ndarray:
    """Deviation / tolerance per value (<= 1 passes); a deviation without tolerance is unbounded."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(measured.same, 0.0, np.where(allowed > 0, measured.absolute / allowed, np.inf))


def image_tolerance(image_rms: float, envelope: float, k: float) -> float:
    """The largest RMS difference of an image within noise: the floor ``diff.image_rms`` plus k times
    the image's envelope (0 where none was measured)."""
    return image_rms + k * envelope


def largest_floor(expected, tolerance: Tolerance) -> float:
    """The floor at the largest reference value: what the envelope term is weighed against."""
    return tolerance.atol + tolerance.rtol * float(np.nanmax(np.abs(np.asarray(expected, float)), initial=0.0))


def margin(deviation: float, tolerance: float) -> float:
    """One deviation against its tolerance (<= 1 passes); an unmeasurable (NaN) one is unbounded."""
    if np.isnan(deviation):
        return np.inf
    if tolerance > 0:
        return deviation / tolerance
    return 0.0 if deviation == 0 else np.inf


def tolerance_reason(k: float, envelope: float, floor: float, floor_text: str, measured: bool) -> str:
    """Why a tolerance has its value: which term dominates, then the formula with its numbers."""
    if not measured:
        basis = "floor (no envelope measured)"
    else:
        basis = "envelope" if k * envelope > floor else "floor"
    return f"{basis}: {k:g} x envelope {envelope:.3g} + {floor_text}"
