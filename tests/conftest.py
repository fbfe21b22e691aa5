"""Shared fixtures: the smoke pipeline, run once per session into a temporary directory."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def run_snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run the project's workflow in ``workdir`` (outputs land there, not in the checkout)."""
    command = [str(SNAKEMAKE), "--snakefile", str(ROOT / "workflow" / "Snakefile"), "--directory", str(workdir), *args]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """A complete smoke pipeline (config/smoke.yaml): every figure and results file."""
    workdir = tmp_path_factory.mktemp("smoke")
    run_snakemake(workdir, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "2", "figures/all")
    return workdir
