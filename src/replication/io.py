"""Atomic file output: a killed job never leaves a partial file at a final path."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from .job_cost import record_at_exit

# Temporary files of atomic writes: ".<name>.<random>.tmp<suffix>" beside the final path. Only a
# killed process leaves one behind; `remove_stale_temporaries` clears them before a resumed run.
TEMPORARY_GLOB = ".*.tmp*"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp" + path.suffix)
    os.close(fd)
    tmp = Path(tmp)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make outputs private
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_stale_temporaries(folders) -> list[Path]:
    """Delete the temporary files of atomic writes that a killed job left under ``folders``; call it
    only when no job can be writing there."""
    removed = []
    for folder in map(Path, folders):
        for path in sorted(folder.rglob(TEMPORARY_GLOB)) if folder.is_dir() else []:
            if path.is_file():
                path.unlink()
                removed.append(path)
    return removed


def write_csv(frame: pd.DataFrame, path: str | os.PathLike, **kwargs) -> None:
    """Write a tidy table atomically, with a fixed float format so reruns are byte-identical."""
    kwargs.setdefault("index", False)
    kwargs.setdefault("float_format", "%.10g")
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, **kwargs)


def write_npz(path: str | os.PathLike, **arrays: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def log_to(log_path: str | os.PathLike | None) -> logging.Logger:
    """Send this job's stderr (tqdm bars, warnings) and a logger to its Snakemake log file, which a
    Snakemake job ends with its cost from the kernel (job_cost.py)."""
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        sys.stderr = open(log_path, "w", buffering=1)
        record_at_exit()
    # Other libraries' warnings only: their INFO lines (fontTools lists every glyph of every figure's
    # fonts) would bury the job's own.
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s", force=True
    )
    log = logging.getLogger("replication")
    log.setLevel(logging.INFO)
    return log
