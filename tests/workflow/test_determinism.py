"""Same config, same bytes: two smoke pipeline runs from clean give identical files.

The second run is the one tests/workflow/test_crash_recovery.py kills mid-job and resumes, made by
the installed wheel (tests/workflow/test_install.py): one pipeline build checks that a resumed run,
a run of the installed package and a rerun of the same config give the same bytes."""

import hashlib
import json
from pathlib import Path

import pytest

# Every test here runs Snakemake (or asks for a fixture that does).
pytestmark = pytest.mark.pipeline

# Outputs of the pipeline proper; figures/diff compares with references and is no part of figures/all.
OUTPUT_DIRS = ("results", "figures")
EXCLUDED = ("figures/diff",)
# The checkout a provenance record names: the second run's is a copy without git history.
CHECKOUT_FIELDS = ("git_commit", "git_tree")


def provenance_without_checkout(path: Path) -> bytes:
    record = json.loads(path.read_text())
    return json.dumps({key: value for key, value in record.items() if key not in CHECKOUT_FIELDS}).encode()


def digests(workdir: Path) -> dict[str, str]:
    files = {}
    for folder in OUTPUT_DIRS:
        for path in sorted((workdir / folder).rglob("*")):
            name = path.relative_to(workdir).as_posix()
            if path.is_file() and not name.startswith(EXCLUDED):
                data = provenance_without_checkout(path) if path.name.endswith("provenance.json") else path.read_bytes()
                files[name] = hashlib.sha256(data).hexdigest()
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
    # The copy's provenance names no commit (it has no history); its other fields are compared above.
    record = json.loads((resumed_smoke_run.workdir / "figures" / "provenance.json").read_text())
    assert [record[field] for field in CHECKOUT_FIELDS] == ["unknown", "unknown"]
    assert not differing, f"differ between two runs of the same config: {differing}"
