"""Same config, same bytes: the smoke pipeline run twice from clean gives identical files."""

import hashlib
from pathlib import Path

from conftest import ROOT, run_snakemake

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


def test_smoke_pipeline_is_byte_identical(smoke_run, tmp_path):
    run_snakemake(tmp_path, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "2", "figures/all")
    first, second = digests(smoke_run), digests(tmp_path)
    assert "figures/all" in first and "results/claims.csv" in first
    assert any(name.endswith(".png") for name in first) and any(name.endswith(".csv") for name in first)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"differ between two runs of the same config: {differing}"
