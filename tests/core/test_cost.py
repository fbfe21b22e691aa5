"""`make cost`: the dry run's jobs per rule and their CPU time from the measured per-rule costs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import ROOT
from replication.cost import MEASUREMENTS, cost_line, per_job_costs, planned_jobs

DRY_RUN = """
Building DAG of jobs...
Job stats:
job                  count
-----------------  -------
l2g_transformer          8
bo_grid                  1
figures_manifest         1
total                   10

Reasons:
    (check individual jobs above for details)
This was a dry-run (flag -n). The order of jobs does not reflect the order of execution.
"""

MEASURED = {
    "runs": {
        "smoke": {
            "settings": "smoke",
            "cpu_s": 200.0,  # the kernel's count: twice what the benchmark files hold
            "rules": {
                "l2g_transformer": {"jobs": 8, "cpu_s": 80.0},
                "bo_grid": {"jobs": 1, "cpu_s": 20.0},
                "figures_manifest": {"jobs": 1, "cpu_s": 0.0},  # no benchmark file: in the total
            },
        },
        "fast_tests": {"cpu_s": 500.0},
    }
}


def test_the_dry_runs_jobs_per_rule():
    assert planned_jobs(DRY_RUN) == {"l2g_transformer": 8, "bo_grid": 1, "figures_manifest": 1}
    assert planned_jobs("Building DAG of jobs...\nNothing to be done (all requested files are present).") == {}


def test_per_job_costs_add_up_to_the_kernels_count():
    """The benchmark files' CPU-s per job, plus an even share of what they miss."""
    costs = per_job_costs(MEASURED, "smoke")
    # 100 CPU-s the benchmark files do not count, spread over the 10 jobs
    assert costs == {"l2g_transformer": 20.0, "bo_grid": 30.0, "figures_manifest": 10.0}
    assert sum(costs[rule] * n for rule, n in planned_jobs(DRY_RUN).items()) == 200.0
    assert per_job_costs(MEASURED, "paper") == {}


def test_per_job_costs_of_the_build_at_the_settings_asked_for_wherever_it_is_listed():
    """The build at other settings listed first; the benchmark files counting more than the kernel
    (their rounding, or a kernel's count that lost a job): no share is added, none taken off."""
    paper = {"settings": "paper", "cpu_s": 9.0, "rules": {"bo_grid": {"jobs": 1, "cpu_s": 5.0}}}
    smoke = {"settings": "smoke", "cpu_s": 90.0, "rules": {"bo_grid": {"jobs": 4, "cpu_s": 100.0}}}
    measured = {"runs": {"fast_tests": {"cpu_s": 500.0}, "paper": paper, "smoke": smoke}}
    assert per_job_costs(measured, "smoke") == {"bo_grid": 25.0}
    assert per_job_costs(measured, "paper") == {"bo_grid": 9.0}
    assert per_job_costs({}, "smoke") == {}  # no build measured yet


def test_the_cost_line():
    costs = per_job_costs(MEASURED, "smoke")
    source = "docs/measurements/build_times.json"
    assert cost_line(planned_jobs(DRY_RUN), costs, "smoke", source) == (
        "10 jobs, about 3.3 CPU-min from measurements (docs/measurements/build_times.json, smoke settings)"
    )
    assert cost_line({"l2g_transformer": 2, "new_rule": 3}, costs, "smoke", source).endswith(
        "about 0.7 CPU-min from measurements (docs/measurements/build_times.json, smoke settings); "
        "3 jobs of rules never measured there not counted: new_rule"
    )
    assert cost_line({"l2g_transformer": 2}, {}, "paper", source).startswith(
        "2 jobs; no measured cost at paper settings"
    )
    assert cost_line({}, costs, "smoke", source) == "0 jobs: nothing to run, every output is up to date"
    # Ten CPU-minutes exactly, and two rules never measured, named in order.
    assert cost_line({"c": 1, "a": 2, "b": 1}, {"a": 300.0}, "paper", "m.json") == (
        "4 jobs, about 10.0 CPU-min from measurements (m.json, paper settings); "
        "2 jobs of rules never measured there not counted: b, c"
    )
    assert cost_line({"b": 1}, {"a": 300.0}, "paper", "m.json") == (
        "1 jobs; no measured cost at paper settings (m.json has none of their rules): "
        "scripts/benchmarks/build_times.py measures the builds"
    )


@pytest.mark.pipeline
def test_the_cost_of_the_smoke_build_from_clean_is_its_measurement(tmp_path):
    """The dry run from clean plans the jobs the benchmark ran, and costs them at its measured total."""
    measured = json.loads(MEASUREMENTS.read_text())["runs"]["smoke"]
    command = [sys.executable, "-m", "replication.cost", "--directory", str(tmp_path),
               "--configfile", str(ROOT / "config" / "smoke.yaml"), "--", "figures/all", "--cores", "2"]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    last = result.stdout.strip().splitlines()[-1]
    assert last == (
        f"{sum(rule['jobs'] for rule in measured['rules'].values())} jobs, about {measured['cpu_s'] / 60:.1f} "
        "CPU-min from measurements (docs/measurements/build_times.json, smoke settings)"
    ), result.stdout
    assert not list(tmp_path.glob("results/*")), "a dry run builds nothing"
