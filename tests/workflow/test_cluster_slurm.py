"""The smoke pipeline on a real single-node SLURM cluster: tests/slurm/run.sh.

The script installs slurm-wlm and munge with apt and starts their daemons, so it needs root on
Debian/Ubuntu and runs only where REPLICATION_SLURM_TEST=1 (CI sets it in .ci/run). Elsewhere:
`sudo REPLICATION_SLURM_TEST=1 .venv/bin/pytest tests/workflow/test_cluster_slurm.py`, or the script alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

# Every test here runs Snakemake (or asks for a fixture that does).
pytestmark = pytest.mark.pipeline


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("REPLICATION_SLURM_TEST") != "1",
    reason="installs and starts SLURM (root, apt): set REPLICATION_SLURM_TEST=1, as CI does",
)
def test_smoke_pipeline_on_slurm(smoke_run, phase_smoke_run):
    # The session's local smoke runs (figures/all, figures/phase) are the reference the SLURM run
    # of its targets must equal byte for byte.
    references = os.pathsep.join([str(smoke_run), str(phase_smoke_run)])
    result = subprocess.run(
        ["bash", str(ROOT / "tests" / "slurm" / "run.sh")],
        env={**os.environ, "PYTHON": sys.executable, "REPLICATION_SLURM_REFERENCE": references},
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = result.stdout[-8000:] + result.stderr[-8000:]
    assert result.returncode == 0, report
    assert "figures: " in result.stdout and "identical to the local run" in result.stdout, report
    # The daemons are gone with the configuration the script wrote.
    conf = Path("/etc/slurm/slurm.conf")
    assert not conf.exists() or "tests/slurm/run.sh" not in conf.read_text()
