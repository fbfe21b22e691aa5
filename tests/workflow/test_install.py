"""A plain (not editable) install runs the workflow: the wheel of a fresh clone, installed into a
folder of its own, builds the smoke pipeline from a copy of the checkout that has no src/, so only
the installed package (its modules and package data: rules, scripts, captions, schemas, smoke
settings, templates) can be imported. Its outputs equal the checkout's smoke run byte for byte.

The build is the session's second smoke run (``resumed_smoke_run``, tests/conftest.py): `make
figures` typed in that copy, killed mid-job and finished by the same command, so that one build
serves this test, crash recovery and determinism."""

import subprocess
import sys
import zipfile

import pandas as pd
import pytest

pytestmark = pytest.mark.pipeline


def test_the_wheel_holds_the_package_data(installed_package):
    names = set(zipfile.ZipFile(installed_package.wheel).namelist())
    for paper in ("local_to_global", "benign_overfitting"):
        assert f"replication/papers/{paper}/schema.yaml" in names and f"replication/papers/{paper}/smoke.yaml" in names
        assert any(n.startswith(f"replication/papers/{paper}/") and n.endswith(".smk") for n in names)
        assert any(n.startswith(f"replication/papers/{paper}/") and n.endswith(".rst") for n in names)
        assert any(n.startswith(f"replication/papers/{paper}/") and "/scripts/" in n for n in names)
    assert "replication/diff/templates/report.html" in names


def test_the_installed_package_builds_the_smoke_pipeline(installed_package, resumed_smoke_run, smoke_run):
    where = subprocess.run(
        [sys.executable, "-c", "import replication; print(replication.__file__)"],
        cwd=installed_package.clone,
        env=installed_package.environment(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(installed_package.site)), where
    assert not (installed_package.clone / "src").exists()
    assert resumed_smoke_run.returncode == 0, resumed_smoke_run.output[-5000:]
    manifest = pd.read_csv(resumed_smoke_run.workdir / "figures" / "all", sep="\t")
    reference = pd.read_csv(smoke_run / "figures" / "all", sep="\t")
    assert len(manifest) > 20 and "figures/benign_overfitting/fig1.pdf" in set(manifest.path)
    # Every figure, table and report, byte for byte the checkout's (the manifest holds their hashes).
    pd.testing.assert_frame_equal(manifest, reference)
