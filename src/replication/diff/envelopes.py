"""Numerical-noise envelopes of the figures, measured at blessing time (the CESM-ECT idea).

Members are reruns of the pipeline (``diff.ensemble``): with ``REPLICATION_PERTURBATION=<member>``
(see ``replication.perturbation``), initial parameters and inputs moved in their last bits, or under
another CPU's kernels (``replication.kernels``), nothing else. The envelope of a figure's data
column is the largest ``|member - base|`` over members and rows; that of its image the largest image
RMS between a member's PNG and the base's. A reference set keeps them in ``envelope.csv``; ``make
diff`` accepts ``|new - ref| <= k * envelope + atol + rtol |ref|`` (``diff.envelope_factor`` is k;
see ``replication.diff.deviation``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import write_csv
from ..manifest import manifest_figures
from ..paths import figure_key, figure_paths
from .deviation import deviation

ENVELOPE_FILE = "envelope.csv"
IMAGE_COLUMN = "<image rms>"
ENVELOPE_COLUMNS = ["key", "column", "envelope", "envelope_rel", "members"]

ImageRms = Callable[[str | os.PathLike, str | os.PathLike], float]  # (actual PNG, expected PNG) -> RMS


def column_spread(base: pd.DataFrame, member: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per numeric column: largest |member - base| and largest |member - base| / |base|."""
    if list(base.columns) != list(member.columns) or len(base) != len(member):
        raise ValueError(
            f"a perturbed member changed the shape of the data: columns {list(member.columns)}, "
            f"{len(member)} rows; base {list(base.columns)}, {len(base)} rows"
        )
    spread = {}
    for column in base.columns:
        b, m = base[column], member[column]
        if not (pd.api.types.is_numeric_dtype(b) and pd.api.types.is_numeric_dtype(m)):
            continue
        moved = deviation(m, b)
        spread[column] = (float(moved.absolute.max(initial=0.0)), float(moved.relative.max(initial=0.0)))
    return spread


def measure_envelope(base: str | os.PathLike, members: list[str | os.PathLike], image_rms: ImageRms) -> pd.DataFrame:
    """Envelope rows (key, column, envelope, envelope_rel, members) of every figure of ``base``
    that the members made too; the image's RMS (``image_rms``, the diff's measure) comes as
    column ``<image rms>``."""
    base = Path(base)
    rows = []
    for path in manifest_figures(base):
        key = figure_key(path)
        made = [Path(m) for m in members if figure_paths(Path(m) / path)["csv"].exists()]
        if not made:
            continue
        ref = figure_paths(base / path)
        reference = pd.read_csv(ref["csv"])
        worst: dict[str, list[float]] = {}
        for member in made:
            files = figure_paths(member / path)
            for column, (absolute, relative) in column_spread(reference, pd.read_csv(files["csv"])).items():
                old = worst.setdefault(column, [0.0, 0.0])
                worst[column] = [max(old[0], absolute), max(old[1], relative)]
            old = worst.setdefault(IMAGE_COLUMN, [0.0, 0.0])
            worst[IMAGE_COLUMN] = [max(old[0], image_rms(files["png"], ref["png"])), np.nan]
        rows += [
            {"key": key, "column": column, "envelope": a, "envelope_rel": r, "members": len(made)}
            for column, (a, r) in worst.items()
        ]
    return pd.DataFrame(rows, columns=ENVELOPE_COLUMNS)


def write_envelope(envelope: pd.DataFrame, reference_dir: str | os.PathLike) -> Path:
    """``envelope`` (rows of :func:`measure_envelope`) as the reference set's envelope file."""
    path = Path(reference_dir) / ENVELOPE_FILE
    write_csv(envelope, path)
    return path


def read_envelope(reference_dir: str | os.PathLike) -> dict[tuple[str, str], float]:
    """``{(key, column): envelope}`` of a reference set; empty when it has no envelope file."""
    path = Path(reference_dir) / ENVELOPE_FILE
    if not path.exists():
        return {}
    frame = pd.read_csv(path)
    return {(r.key, r.column): float(r.envelope) for r in frame.itertuples()}


def figure_envelope(envelopes: dict[tuple[str, str], float], key: str) -> dict[str, float]:
    """``{column: envelope}`` of figure ``key`` (its image's under ``<image rms>``)."""
    return {column: value for (figure, column), value in envelopes.items() if figure == key}
