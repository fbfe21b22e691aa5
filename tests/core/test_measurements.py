"""What the benchmark scripts share: the settings the workflow reads, the kernel's counts of a run
(``/usr/bin/time -v``), the jobs' Snakemake benchmark files per job and per rule, and the report's
command line and bullets."""

from __future__ import annotations

import os
import sys

import pandas as pd
import pytest
import yaml

from replication import measurements, provenance, registry
from replication.errors import ConfigError
from replication.paths import PROJECT_ROOT
from replication.variants import resolve

SMOKE = str(PROJECT_ROOT / "config" / "smoke.yaml")

TIME_REPORT = """\tCommand being timed: "snakemake figures/all --cores 2"
\tUser time (seconds): 5400.25
\tSystem time (seconds): 359.75
\tPercent of CPU this job got: 154%
\tElapsed (wall clock) time (h:mm:ss or m:ss): {wall}
\tMaximum resident set size (kbytes): 1843200
"""


def write_time_report(tmp_path, wall: str):
    path = tmp_path / "time.txt"
    path.write_text(TIME_REPORT.format(wall=wall))
    return path


# --- settings ------------------------------------------------------------------------------------


def test_the_workflow_config_is_config_yaml_with_the_config_files_over_it(tmp_path):
    override = tmp_path / "override.yaml"
    override.write_text(yaml.safe_dump({"benign_overfitting": {"model": {"n": 33}}}))
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    config = measurements.workflow_config([SMOKE, str(override), str(empty)])
    # The smoke settings of every paper, the last file's value over them, the schema's defaults.
    assert config["settings"] == "smoke" and config["diff"]["reference_set"] == "smoke"
    assert config["benign_overfitting"]["model"]["n"] == 33
    assert config["benign_overfitting"]["fig1"]["d"] == 2000
    assert set(config) >= {paper.id for paper in registry.papers()}


def test_a_value_the_schema_refuses_is_a_config_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"benign_overfitting": {"model": {"n": "many"}}}))
    with pytest.raises(ConfigError):
        measurements.workflow_config([str(bad)])


def test_a_papers_typed_settings_of_the_workflow_config(monkeypatch):
    config = resolve([SMOKE])
    read = []
    monkeypatch.setattr(measurements, "workflow_config", lambda configfiles: read.append(configfiles) or config)
    for paper in registry.papers():
        settings = measurements.paper_settings(paper.id, [SMOKE])
        expected = paper.typed_settings(config[paper.id])
        assert settings == expected and type(settings) is type(expected), paper.id
    assert read == [[SMOKE]] * len(registry.papers())


# --- the kernel's counts ----------------------------------------------------------------------------


def test_the_kernels_counts_of_a_run_of_hours(tmp_path):
    user, system, wall, hours = measurements.kernel_time(write_time_report(tmp_path, "1:30:36"))
    assert (user, system, wall) == (5400.25, 359.75, "1:30:36")
    assert hours == pytest.approx(1.51)


def test_the_kernels_counts_of_a_run_of_minutes(tmp_path):
    user, system, wall, hours = measurements.kernel_time(write_time_report(tmp_path, "45:36.00"))
    assert wall == "45:36.00" and hours == pytest.approx(0.76)


def test_a_run_in_two_lines(tmp_path):
    lines = measurements.time_lines(write_time_report(tmp_path, "1:00:00"), "smoke build")
    assert lines == [
        "smoke build: 5760 CPU-s in all (1.60 CPU-h; user 5400, system 360)",
        "  wall 1:00:00 (1.00 h), 1.60 cores busy on average",
    ]


def test_a_long_run_on_many_cores_in_two_lines(tmp_path):
    report = tmp_path / "big.txt"
    report.write_text(
        "\tUser time (seconds): 71999.00\n\tSystem time (seconds): 1.00\n"
        "\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:30:00\n"
    )
    assert measurements.time_lines(report, "big") == [
        "big: 72000 CPU-s in all (20.00 CPU-h; user 71999, system 1)",
        "  wall 0:30:00 (0.50 h), 40.00 cores busy on average",
    ]


# --- the report ----------------------------------------------------------------------------------


def test_the_report_names_its_command_and_nests_indented_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["ignored", "--directory", str(tmp_path), "--cores", "2"])
    lines = [f"built in {tmp_path}/figures", "  of which 3 jobs", "second"]
    command, bullets = measurements.report_body("scripts/benchmarks/build.py", lines, tmp_path)
    assert command == "scripts/benchmarks/build.py --directory DIR --cores 2"
    assert bullets == ["- built in DIR/figures", "    - of which 3 jobs", "- second"]
    command, bullets = measurements.report_body("build.py", lines, None)
    assert command == f"build.py --directory {tmp_path} --cores 2"
    assert bullets == [f"- built in {tmp_path}/figures", "    - of which 3 jobs", "- second"]


def test_the_machine_line(monkeypatch):
    monkeypatch.setattr(provenance, "cpu_model", lambda: "Some CPU @ 3 GHz")
    monkeypatch.setattr(measurements.os, "cpu_count", lambda: 12)
    assert measurements.cpu_line() == "Some CPU @ 3 GHz, 12 CPUs"


def test_the_gemm_rate_is_the_fastest_products_flops_on_one_thread(monkeypatch):
    """2 n^3 floating-point operations over the fastest product's CPU seconds, with one torch thread
    during the products and the caller's thread count afterwards."""
    import time

    import torch

    clock = iter([0.0, 0.5, 1.0, 1.25, 2.0, 3.0])  # products of 0.5, 0.25 and 1.0 CPU-seconds
    monkeypatch.setattr(time, "process_time", lambda: next(clock))
    threads, seen = torch.get_num_threads(), []
    product = torch.Tensor.__matmul__
    monkeypatch.setattr(torch.Tensor, "__matmul__", lambda a, b: seen.append(torch.get_num_threads()) or product(a, b))
    torch.set_num_threads(2)
    try:
        rate = measurements.gemm_rate(size=4, repeats=3)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    assert rate == pytest.approx(2 * 4**3 / 0.25 / 1e9)
    assert seen == [1, 1, 1, 1]  # the warm-up and the three timed products


# --- the jobs' benchmark files ----------------------------------------------------------------------

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write_benchmark(benchmarks, path: str, *lines: str) -> None:
    file = benchmarks / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(HEADER + "".join(line + "\n" for line in lines))


@pytest.fixture
def benchmarks(tmp_path):
    benchmarks = tmp_path / "benchmarks"
    write_benchmark(benchmarks, "train/seed1.tsv", "10.5\t0:00:10\t200.5\t0\t0\t0\t0\t0\t90\t9.25")
    # Two repetitions of one job, in a folder below the rule.
    write_benchmark(
        benchmarks,
        "train/long/seed2.tsv",
        "20.0\t0:00:20\t300.0\t0\t0\t0\t0\t0\t90\t18.0",
        "22.0\t0:00:22\t310.0\t0\t0\t0\t0\t0\t90\t19.0",
    )
    # A job too short for the sampler: no CPU time, no memory.
    write_benchmark(benchmarks, "plot/fig1.tsv", "0.5\t0:00:00\t-\t-\t-\t-\t-\t-\t-\t-")
    (benchmarks / "notes.tsv").write_text(HEADER)  # no rule's folder: not a job
    return benchmarks


def test_one_row_per_job_and_repetition_of_the_benchmark_files(benchmarks):
    jobs = measurements.job_table(benchmarks)
    assert list(jobs.columns) == ["rule", "job", "wall_s", "cpu_s", "max_rss_mb"]
    records = jobs.to_dict("records")
    assert records[1:] == [
        {"rule": "train", "job": "long/seed2", "wall_s": 20.0, "cpu_s": 18.0, "max_rss_mb": 300.0},
        {"rule": "train", "job": "long/seed2", "wall_s": 22.0, "cpu_s": 19.0, "max_rss_mb": 310.0},
        {"rule": "train", "job": "seed1", "wall_s": 10.5, "cpu_s": 9.25, "max_rss_mb": 200.5},
    ]
    plot = records[0]
    assert (plot["rule"], plot["job"], plot["wall_s"]) == ("plot", "fig1", 0.5)
    assert pd.isna(plot["cpu_s"]) and pd.isna(plot["max_rss_mb"])
    assert all(isinstance(value, float) for record in records for value in list(record.values())[2:])


def test_no_benchmark_files_is_one_message(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "loose.tsv").write_text(HEADER + "1\t0\t1\t0\t0\t0\t0\t0\t0\t1\n")
    with pytest.raises(SystemExit) as stop:
        measurements.job_table(tmp_path / "benchmarks")
    message = f"no benchmark files under {tmp_path / 'benchmarks'}/<rule>/; run the pipeline first"
    assert str(stop.value) == message


def test_the_rule_table_sums_each_rules_jobs_dearest_first_then_a_total(benchmarks):
    table = measurements.rule_table(measurements.job_table(benchmarks))
    expected = pd.DataFrame(
        {
            "rule": ["train", "plot", "total"],
            "jobs": [3, 1, 4],
            "cpu_s": [46.25, 0.0, 46.25],
            "wall_s": [52.5, 0.5, 53.0],
            "longest_job_s": [22.0, 0.5, 22.0],
            "peak_rss_mb": [310.0, float("nan"), 310.0],
            "cpu_share": [1.0, 0.0, 1.0],
        }
    )
    pd.testing.assert_frame_equal(table, expected)


def test_the_rule_tables_shares_and_order():
    jobs = pd.DataFrame(
        {
            "rule": ["a", "b", "b", "c", "a"],
            "job": ["1", "1", "2", "1", "2"],
            "wall_s": [4.0, 1.0, 3.0, 9.0, 2.0],
            "cpu_s": [1.0, 2.0, 4.0, 3.0, 0.0],
            "max_rss_mb": [10.0, 50.0, 20.0, 5.0, 30.0],
        }
    )
    table = measurements.rule_table(jobs)
    assert table.to_dict("list") == {
        "rule": ["b", "c", "a", "total"],
        "jobs": [2, 1, 2, 5],
        "cpu_s": [6.0, 3.0, 1.0, 10.0],
        "wall_s": [4.0, 9.0, 6.0, 19.0],
        "longest_job_s": [3.0, 9.0, 4.0, 9.0],
        "peak_rss_mb": [50.0, 5.0, 30.0, 50.0],
        "cpu_share": [0.6, 0.3, 0.1, 1.0],
    }


def test_busy_time_is_every_state_but_idle_and_waiting(tmp_path):
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice, in clock ticks
    stat.write_text("cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 50 2 25 500 10 1 1 3 0 0\n")
    assert measurements.busy_cpu_seconds(stat) == pytest.approx(167 / os.sysconf("SC_CLK_TCK"))
