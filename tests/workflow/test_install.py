"""A plain (not editable) install runs the workflow: the wheel of a fresh clone, installed into a
folder of its own, builds the smoke pipeline from a copy of the checkout that has no src/, so only
the installed package (its modules and package data: rules, scripts, captions, schemas, smoke
settings, templates) can be imported. Its outputs equal the checkout's smoke run byte for byte."""

import os
import shutil
import subprocess
import sys
import zipfile

import pandas as pd
import pytest

from helpers import SNAKEMAKE, SNAKEMAKE_TIMEOUT_S, tracked_copy

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(checkout copy without src/, the folder the wheel was installed into, the wheel)."""
    clone, dist, target = (tmp_path_factory.mktemp(name) for name in ("clone", "dist", "site"))
    tracked_copy(clone)
    pip = [sys.executable, "-m", "pip"]
    # No build isolation: the locked setuptools builds it, with nothing fetched.
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", dist, clone], check=True, capture_output=True
    )
    (wheel,) = dist.glob("replication-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", target, wheel], check=True, capture_output=True)
    shutil.rmtree(clone / "src")
    return clone, target, wheel


def test_the_wheel_holds_the_package_data(installed):
    _, _, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for paper in ("local_to_global", "benign_overfitting"):
        assert f"replication/papers/{paper}/schema.yaml" in names and f"replication/papers/{paper}/smoke.yaml" in names
        assert any(n.startswith(f"replication/papers/{paper}/") and n.endswith(".smk") for n in names)
        assert any(n.startswith(f"replication/papers/{paper}/") and n.endswith(".rst") for n in names)
        assert any(n.startswith(f"replication/papers/{paper}/") and "/scripts/" in n for n in names)
    assert "replication/diff/templates/report.html" in names


def test_the_installed_package_builds_the_smoke_pipeline(installed, smoke_run):
    clone, target, _ = installed
    environment = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import replication; print(replication.__file__)"],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(target)), where
    result = subprocess.run(
        [str(SNAKEMAKE), "figures/all", "-d", "variants/smoke", "--configfile", "config/smoke.yaml", "--cores", "2"],
        cwd=clone,
        env=environment,
        capture_output=True,
        text=True,
        timeout=SNAKEMAKE_TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    manifest = pd.read_csv(clone / "variants" / "smoke" / "figures" / "all", sep="\t")
    reference = pd.read_csv(smoke_run / "figures" / "all", sep="\t")
    assert len(manifest) > 20 and "figures/benign_overfitting/fig1.pdf" in set(manifest.path)
    # Every figure, table and report, byte for byte the checkout's (the manifest holds their hashes).
    pd.testing.assert_frame_equal(manifest, reference)
