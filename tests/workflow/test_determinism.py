"""Same config, same bytes: two smoke pipeline runs from clean give identical files.

The second run is the one tests/test_crash_recovery.py kills mid-job and resumes: one pipeline
build checks both that a resumed run and that a rerun of the same config give the same bytes."""

import pytest
import hashlib
from pathlib import Path

# Every test here runs Snakemake (or asks for a fixture that does).
pytestmark = pytest.mark.pipeline

# Outputs of the pipeline proper; figures/diff compares with references and is no part of figures/all.
OUTPUT_DIRS = ("results", "figures")
EXCLUDED = ("figures/diff",)


def digests(workdir: Path) -> dict[str, str]:
    files = {}
    for folder in OUTPUT_DIRS:
        for path in sorted((workdir / folder).rglob("*")):
            name = path.relative_to(workdir).as_posix()
            if path.is_file() and not name.startswith(EXCLUDED):
                files[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def test_smoke_pipeline_is_byte_identical(smoke_run, resumed_smoke_run):
    assert resumed_smoke_run.returncode == 0, resumed_smoke_run.output[-5000:]
    first, second = digests(smoke_run), digests(resumed_smoke_run.workdir)
    assert "figures/all" in first and "results/claims.csv" in first
    assert any(name.endswith(".png") for name in first) and any(name.endswith(".csv") for name in first)
    assert sorted(first) == sorted(second), (
        f"only in the first: {set(first) - set(second)}; only in the second: {set(second) - set(first)}"
    )
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"differ between two runs of the same config: {differing}"
