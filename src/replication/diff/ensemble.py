"""The blessing ensemble: perturbation members and kernel families run, and what each moved.

``make bless`` reruns the ensemble's targets once per member (``replication.kernels``: a
perturbation member moves parameters and inputs by a few ulps; a kernel family runs other vector
kernels of torch, MKL, NumPy, numba or oneDNN, as another CPU would). Per member, figure and data
column the largest ``|member - base|`` is kept in ``envelope_members.csv`` beside the reference
set's ``envelope.csv``, the largest over all members (what ``make diff`` uses). From the members
file the envelope's own spread is read: each family against the perturbation members, and the
largest of n perturbation members against the largest of the first n/2
(``scripts/benchmarks/kernel_spread.py`` writes it into the documentation).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import write_csv
from ..kernels import Member, describe
from ..snakemake_command import snakemake_command
from .envelopes import ENVELOPE_COLUMNS, ImageRms, measure_envelope, write_envelope

MEMBERS_FILE = "envelope_members.csv"
MEMBER_COLUMNS = ["key", "column", "member", "spread", "spread_rel"]


def run_ensemble(
    members: list[Member],
    configfile: str | os.PathLike,
    scratch: str | os.PathLike,
    targets: list[str],
    cores: str = "all",
    family_targets: list[str] | None = None,
) -> dict[str, Path]:
    """Run ``targets`` once per member (``family_targets``, when given, for the kernel families),
    each in ``scratch/<member's folder>`` under the member's environment; print each run's cost.
    Returns ``{label: folder}``."""
    folders = {}
    for member in members:
        folder = Path(scratch) / member.folder
        targets_of = family_targets if member.family and family_targets else targets
        command = snakemake_command(
            folder,
            *targets_of,
            "--cores",
            str(cores),
            "--configfile",
            str(Path(configfile).resolve()),
            "--quiet",
            "rules",
        )
        wall, cpu = time.perf_counter(), _children_cpu()
        print(f"ensemble member {describe(member)}: {' '.join(targets_of)} in {folder}", flush=True)
        subprocess.run(command, check=True, env=member.environment())
        wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
        print(
            f"ensemble member {member.label}: {wall:.0f} s wall, {cpu:.0f} s CPU, "
            f"load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        folders[member.label] = folder
    return folders


def _children_cpu() -> float:
    usage = os.times()
    return usage.children_user + usage.children_system


def measure_spreads(base: str | os.PathLike, folders: dict[str, Path], image_rms: ImageRms) -> pd.DataFrame:
    """Rows (key, column, member, spread, spread_rel): per member, figure and data column (and the
    image, ``<image rms>``) the largest deviation from ``base``, as ``measure_envelope`` measures it."""
    frames = []
    for label, folder in folders.items():
        one = measure_envelope(base, [folder], image_rms)
        frames.append(
            pd.DataFrame(
                {
                    "key": one.key,
                    "column": one.column,
                    "member": label,
                    "spread": one.envelope,
                    "spread_rel": one.envelope_rel,
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=MEMBER_COLUMNS)


def envelope_of(spreads: pd.DataFrame) -> pd.DataFrame:
    """The envelope (``envelope.csv``'s rows) from the members' spreads: the largest over members,
    in the order the figures and columns first appear."""
    grouped = spreads.groupby(["key", "column"], sort=False)
    frame = grouped.agg(
        envelope=("spread", "max"), envelope_rel=("spread_rel", "max"), members=("member", "nunique")
    ).reset_index()
    return frame[ENVELOPE_COLUMNS]


def write_ensemble(base: str | os.PathLike, folders, dest: str | os.PathLike, image_rms: ImageRms) -> set[Path]:
    """``envelope.csv`` and ``envelope_members.csv`` of reference set ``dest`` from the members'
    trees (``{label: folder}``, or folders, labelled by their names). Returns the files written."""
    if not isinstance(folders, dict):
        folders = {Path(folder).name: Path(folder) for folder in folders}
    spreads = measure_spreads(base, folders, image_rms)
    members_path = Path(dest) / MEMBERS_FILE
    write_csv(spreads, members_path)
    return {write_envelope(envelope_of(spreads), dest), members_path}


def read_spreads(reference_dir: str | os.PathLike) -> pd.DataFrame:
    """The members' spreads of a reference set (empty when it has none)."""
    path = Path(reference_dir) / MEMBERS_FILE
    return pd.read_csv(path) if path.exists() else pd.DataFrame(columns=MEMBER_COLUMNS)


def spread_summary(spreads: pd.DataFrame) -> pd.DataFrame:
    """Per figure and data column: the perturbation members' envelope (``ulp``, the largest of n)
    and that of the first n/2 (``ulp_half``), each kernel family's spread, its ratio to ``ulp`` and
    to the envelope of every other member (``<family>/others``: how far a CPU whose kernels the
    ensemble lacked would lie, in envelopes), and the envelope over all members (``all``).
    Families are the members whose label is no integer; rows and families in the order they first
    appear."""
    spreads = spreads[spreads.column != "<image rms>"]
    is_ulp = spreads.member.astype(str).str.fullmatch(r"\d+")
    ulp = spreads[is_ulp].copy()
    ulp["order"] = ulp.member.astype(int)
    first = sorted(ulp.order.unique())[: max(1, len(ulp.order.unique()) // 2)]
    per = spreads.pivot_table(index=["key", "column"], columns="member", values="spread", aggfunc="max", sort=False)
    summary = pd.DataFrame(index=per.index)
    summary["ulp"] = ulp.groupby(["key", "column"], sort=False).spread.max()
    summary["ulp_half"] = ulp[ulp.order.isin(first)].groupby(["key", "column"], sort=False).spread.max()
    for family in [m for m in per.columns if not str(m).isdigit()]:
        summary[family] = per[family]
        with np.errstate(divide="ignore", invalid="ignore"):
            summary[f"{family}/ulp"] = per[family] / summary["ulp"]
            summary[f"{family}/others"] = per[family] / per.drop(columns=family).max(axis=1)
    summary["all"] = per.max(axis=1)
    return summary.reset_index()
