"""The manifest ``figures/all``: one tab-separated line per figure, table and report the pipeline
made (path, sha256, paper, figure). Building it is the pipeline's default target; the diff, blessing
and the envelopes read from it which figures a run made."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pandas as pd

from .io import write_csv
from .paths import FIGURES_ROOT

MANIFEST_COLUMNS = ["path", "sha256", "paper", "figure"]


def manifest_rows(records: list[dict], tree: str | os.PathLike = "") -> pd.DataFrame:
    """The manifest of ``records`` (path, paper, figure), each with the sha256 of its file; the paths
    are relative to ``tree`` (a sweep's point, where the workflow runs as a module)."""
    rows = []
    for record in records:
        digest = hashlib.sha256((Path(tree) / record["path"]).read_bytes()).hexdigest()
        rows.append({"path": record["path"], "sha256": digest, "paper": record["paper"], "figure": record["figure"]})
    return pd.DataFrame(rows, columns=MANIFEST_COLUMNS)


def write_manifest(manifest: pd.DataFrame, path: str | os.PathLike) -> None:
    write_csv(manifest, path, sep="\t")


def read_manifest(workdir: str | os.PathLike, name: str = "all") -> pd.DataFrame:
    """The manifest ``figures/<name>`` of the run in ``workdir`` (``all``: the laptop set)."""
    return pd.read_csv(Path(workdir) / FIGURES_ROOT / name, sep="\t")


def manifest_figures(workdir: str | os.PathLike) -> list[str]:
    """The PDF paths (relative to ``workdir``) of every figure in ``<workdir>/figures/all``."""
    return [path for path in read_manifest(workdir).path if Path(path).suffix == ".pdf"]
