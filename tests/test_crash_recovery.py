"""`make figures` after a SIGKILL finishes the run; it never touches a live run's lock."""

import base64
import fcntl
import hashlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT
from replication.io import TEMPORARY_GLOB

SMOKE = ["CONFIG=config/smoke.yaml", "CORES=2"]


def make_figures(workdir: Path, **kwargs) -> subprocess.Popen:
    """The README command, with its outputs in ``workdir``."""
    return subprocess.Popen(
        ["make", "--no-print-directory", "-C", str(ROOT), "figures", *SMOKE, f"WORKDIR={workdir}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,
    )


def incomplete_outputs(workdir: Path) -> set[str]:
    """Outputs Snakemake marked as being written: each marker is the urlsafe base64 of the path,
    cut into folders whose names start with '@' when it is longer than a file name may be."""
    markers = workdir / ".snakemake" / "incomplete"
    names = set()
    for marker in markers.rglob("*") if markers.is_dir() else []:
        if marker.is_file() and marker.name != "migration_underway":
            encoded = "".join(part.removeprefix("@") for part in marker.relative_to(markers).parts)
            names.add(base64.urlsafe_b64decode(encoded).decode())
    return names


def finished_outputs(workdir: Path) -> set[str]:
    done = {p.relative_to(workdir).as_posix() for p in (workdir / "results").rglob("*") if p.is_file()}
    return done - incomplete_outputs(workdir)


def snapshot(workdir: Path) -> dict[str, tuple[int, str]]:
    files = {}
    for folder in ("results", "figures"):
        for path in (workdir / folder).rglob("*"):
            if path.is_file():
                files[path.relative_to(workdir).as_posix()] = (
                    path.stat().st_mtime_ns,
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
    return files


def wait_for_the_killed_run_to_exit(workdir: Path, timeout_s: float = 120) -> None:
    """SIGKILL is not instant: the kernel frees the run lock once every killed process has exited."""
    deadline = time.monotonic() + timeout_s
    with open(workdir / ".snakemake" / "run.flock") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                assert time.monotonic() < deadline, "the killed run still holds its lock"
                time.sleep(0.1)
            else:
                fcntl.flock(lock, fcntl.LOCK_UN)
                return


@dataclass
class ResumedRun:
    """A smoke `make figures` killed mid-job with SIGKILL, then run again with the same command."""

    workdir: Path
    interrupted: set[str]  # outputs being written when the run was killed
    before: dict[str, tuple[int, str]]  # (mtime, sha256) of every file after the kill
    locks_left: bool  # the killed run left Snakemake's lock behind
    returncode: int
    output: str  # of the second run


def kill_mid_job_and_resume(workdir: Path) -> ResumedRun:
    first = make_figures(workdir, start_new_session=True)
    deadline = time.monotonic() + 900
    # Kill once some job has finished and another is being written: a run caught mid-job.
    while time.monotonic() < deadline and first.poll() is None:
        if incomplete_outputs(workdir) and finished_outputs(workdir):
            break
        time.sleep(0.2)
    assert first.poll() is None, "the run ended before it could be killed:\n" + first.stdout.read()[-3000:]
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    first.stdout.close()
    wait_for_the_killed_run_to_exit(workdir)
    interrupted = incomplete_outputs(workdir)
    before = snapshot(workdir)
    locks = workdir / ".snakemake" / "locks"
    locks_left = locks.is_dir() and any(locks.iterdir())
    second = make_figures(workdir)
    output, _ = second.communicate(timeout=1800)
    return ResumedRun(workdir, interrupted, before, locks_left, second.returncode, output)


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
    # That the result is the uninterrupted run's, byte for byte: tests/test_determinism.py.


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
