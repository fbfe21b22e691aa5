"""The command line of a Snakemake run of this project's workflow, built in one place."""

from __future__ import annotations

import os
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SNAKEFILE = PROJECT_ROOT / "workflow" / "Snakefile"


def snakemake_executable() -> str:
    """The ``snakemake`` of the running interpreter's environment (not whichever is first on PATH)."""
    return str(Path(sys.executable).with_name("snakemake"))


def snakemake_command(workdir: str | os.PathLike, *args: str, snakefile: str | os.PathLike = SNAKEFILE) -> list[str]:
    """Snakemake running ``snakefile`` (the workflow's) with its outputs in ``workdir``, then ``args``."""
    return [snakemake_executable(), "--snakefile", str(snakefile), "--directory", str(workdir), *args]
