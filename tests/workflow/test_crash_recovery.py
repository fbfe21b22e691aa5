"""`make figures` after a SIGKILL finishes the run; it never touches a live run's lock."""

import pytest
import base64
import fcntl
import hashlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from helpers import make_figures, snapshot
from replication.io import TEMPORARY_GLOB

# Every test here runs Snakemake (or asks for a fixture that does).
pytestmark = pytest.mark.pipeline


@pytest.mark.slow  # the second smoke build from clean (the installed wheel's), killed and resumed
def test_sigkill_mid_job_then_the_same_command_finishes(resumed_smoke_run, smoke_run):
    run = resumed_smoke_run
    assert run.interrupted and run.before
    assert run.locks_left, "a killed run leaves Snakemake's lock behind"
    assert run.returncode == 0, run.output[-5000:]
    assert "Clearing the Snakemake lock left by a run that no longer exists" in run.output
    after = snapshot(run.workdir)
    # Partial files of atomic writes cut short are no outputs: the resumed run removes them.
    partial = {name for name in run.before if Path(name).match(TEMPORARY_GLOB)}
    assert not any(Path(name).match(TEMPORARY_GLOB) for name in after), "partial files stayed"
    finished = {name for name in run.before if name not in run.interrupted | partial}
    assert finished
    changed = [name for name in finished if after.get(name) != run.before[name]]
    assert not changed, f"finished outputs were rewritten: {changed}"
    # That the result is the uninterrupted run's, byte for byte: tests/workflow/test_determinism.py.


def test_a_live_run_is_left_alone(tmp_path):
    workdir = tmp_path / "run"
    (workdir / ".snakemake" / "locks").mkdir(parents=True)
    (workdir / ".snakemake" / "locks" / "0.output.lock").write_text("figures/all\n")
    with open(workdir / ".snakemake" / "run.flock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242\n")
        held.flush()
        result = make_figures(workdir)
        output, _ = result.communicate(timeout=300)
    assert result.returncode != 0
    assert "a run of the pipeline is alive" in output and "(process 4242)" in output
    assert (workdir / ".snakemake" / "locks" / "0.output.lock").exists()
    assert not (workdir / "results").exists()


def test_a_snakemake_started_by_hand_is_left_alone(tmp_path):
    """A Snakemake process working in the folder without the run lock (started outside make)."""
    workdir = tmp_path / "run"
    workdir.mkdir()
    fake = tmp_path / "bin" / "snakemake"
    fake.parent.mkdir()
    fake.symlink_to("/bin/sleep")
    sleeper = subprocess.Popen([str(fake), "60"], cwd=workdir)
    try:
        result = make_figures(workdir)
        output, _ = result.communicate(timeout=300)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode != 0
    assert f"Snakemake is running in {workdir} (process {sleeper.pid})" in output
    assert not (workdir / "results").exists()
