"""What the phase part declares about its run's cost (``Part.run_cost``): ``phase.cost`` on the
blessed grid, with the run's ``/usr/bin/time -v`` report when the folder holds one."""

from replication.papers.local_to_global.phase import PART, cost_arguments


def test_the_grid_is_measured_with_its_time_report_when_there(tmp_path):
    probes = ("--startups", "3", "--gemm", "--step", "--heap")
    assert cost_arguments(tmp_path) == ("--directory", str(tmp_path), *probes)
    (tmp_path / "time.txt").write_text("")
    assert cost_arguments(tmp_path) == ("--directory", str(tmp_path), *probes, "--time", str(tmp_path / "time.txt"))
    command = PART.run_cost.command(tmp_path, "python3")
    assert command[:3] == ["python3", "-m", "replication.papers.local_to_global.phase.cost"]
    assert command[-2:] == ["--write", "docs/measurements/phase_cost.md"]
