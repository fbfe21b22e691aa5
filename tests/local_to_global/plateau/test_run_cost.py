"""What the plateau part declares about its run's cost (``Part.run_cost``): ``plateau.cost`` on the
blessed run, with every ``time*.txt`` report of its parts in order and the phase grid's when there."""

import subprocess
import sys

from replication.papers.local_to_global.plateau import PART, cost_arguments


def test_the_run_is_reported_from_its_time_reports(tmp_path):
    assert cost_arguments(tmp_path) == ("--directory", str(tmp_path))
    for name in ("time_2.txt", "time_1.txt", "phase_time.txt", "other.txt"):
        (tmp_path / name).write_text("")
    assert cost_arguments(tmp_path) == (
        "--directory",
        str(tmp_path),
        "--time",
        str(tmp_path / "time_1.txt"),
        str(tmp_path / "time_2.txt"),
        "--phase-time",
        str(tmp_path / "phase_time.txt"),
    )
    command = PART.run_cost.command(tmp_path, "python3")
    assert command[:3] == ["python3", "-m", "replication.papers.local_to_global.plateau.cost"]
    assert command[-2:] == ["--write", "docs/measurements/plateau_run.md"]


def test_a_run_without_time_reports_is_one_clear_error(tmp_path):
    module = PART.run_cost.module
    done = subprocess.run([sys.executable, "-m", module, "--directory", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2 and "--directory needs --time" in done.stderr
