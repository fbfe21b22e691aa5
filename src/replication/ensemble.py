"""Numerical-noise envelopes of the figures, measured at blessing time (the CESM-ECT idea).

Members are reruns of the pipeline with ``REPLICATION_PERTURBATION=<member>`` (see
``replication.numerics``): initial parameters and inputs moved in their last bits, nothing else.
The envelope of a figure's data column is the largest ``|member - base|`` over members and rows;
that of its image the largest RMS between a member's PNG and the base's. ``make diff`` accepts
``|new - ref| <= k * envelope + atol + rtol |ref|`` (``diff.envelope_factor`` is k).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .numerics import VARIABLE
from .paths import figure_paths

ENVELOPE_FILE = "envelope.csv"
IMAGE_COLUMN = "<image rms>"
ENVELOPE_COLUMNS = ["key", "column", "envelope", "envelope_rel", "members"]


def manifest_figures(workdir: str | os.PathLike) -> list[str]:
    """The PDF paths (relative to ``workdir``) of every figure in ``<workdir>/figures/all``."""
    manifest = pd.read_csv(Path(workdir) / "figures" / "all", sep="\t")
    return [path for path in manifest.path if Path(path).suffix == ".pdf"]


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
        b, m = b.to_numpy(float), m.to_numpy(float)
        same = (b == m) | (np.isnan(b) & np.isnan(m))
        with np.errstate(invalid="ignore", divide="ignore"):
            error = np.where(same, 0.0, np.abs(m - b))
            relative = np.where(same, 0.0, error / np.abs(b))
        spread[column] = (
            float(np.nan_to_num(error, nan=np.inf).max(initial=0.0)),
            float(np.nan_to_num(relative, nan=np.inf, posinf=np.inf).max(initial=0.0)),
        )
    return spread


def image_rms(actual: str | os.PathLike, expected: str | os.PathLike) -> float:
    from .diff import image_rms_between

    return image_rms_between(actual, expected)


def measure_envelope(base: str | os.PathLike, members: list[str | os.PathLike]) -> pd.DataFrame:
    """Envelope rows (key, column, envelope, envelope_rel, members) of every figure of ``base``
    that the members made too; the image's RMS comes as column ``<image rms>``."""
    from .diff import figure_key

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


def read_envelope(reference_dir: str | os.PathLike) -> dict[tuple[str, str], float]:
    """``{(key, column): envelope}`` of a reference set; empty when it has no envelope file."""
    path = Path(reference_dir) / ENVELOPE_FILE
    if not path.exists():
        return {}
    frame = pd.read_csv(path)
    return {(r.key, r.column): float(r.envelope) for r in frame.itertuples()}


def run_members(
    members: list[int],
    configfile: str | os.PathLike,
    scratch: str | os.PathLike,
    targets: list[str],
    cores: str = "all",
) -> list[Path]:
    """Run the pipeline once per perturbation member, each in ``scratch/member<K>``; print the cost."""
    snakefile = Path(__file__).resolve().parents[2] / "workflow" / "Snakefile"
    folders = []
    for member in members:
        if member < 1:
            raise ValueError(f"ensemble member {member}: members are integers >= 1 (0 is the unperturbed run)")
        folder = Path(scratch) / f"member{member}"
        command = [
            str(Path(sys.executable).with_name("snakemake")),
            *targets,
            "--cores",
            str(cores),
            "--snakefile",
            str(snakefile),
            "--directory",
            str(folder),
            "--configfile",
            str(Path(configfile).resolve()),
            "--quiet",
            "rules",
        ]
        wall, cpu = time.perf_counter(), _children_cpu()
        print(f"ensemble member {member}: {' '.join(targets)} in {folder}", flush=True)
        subprocess.run(command, check=True, env={**os.environ, VARIABLE: str(member)})
        wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
        print(
            f"ensemble member {member}: {wall:.0f} s wall, {cpu:.0f} s CPU, load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        folders.append(folder)
    return folders


def _children_cpu() -> float:
    usage = os.times()
    return usage.children_user + usage.children_system
