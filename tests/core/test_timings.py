"""make timings: the per-rule table sums the jobs' Snakemake benchmark files."""

import subprocess
import sys
from pathlib import Path

import pandas as pd

from helpers import ROOT, squeeze_markdown

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
SCRIPT = ROOT / "scripts" / "benchmarks" / "timings.py"


def _write(path: Path, wall: float, rss: float, cpu: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:{int(wall):02d}\t{rss}\t900.0\t200.0\t250.0\t0.00\t0.01\t1.50\t{cpu}\n")


def test_table_and_chart_per_rule(tmp_path):
    bench = tmp_path / "benchmarks"
    _write(bench / "train" / "fig4" / "standard" / "seed1.tsv", wall=40.0, rss=400.0, cpu=38.5)
    _write(bench / "train" / "fig4" / "ours" / "seed1.tsv", wall=30.0, rss=450.0, cpu=29.0)
    _write(bench / "plot" / "run.tsv", wall=5.0, rss=200.0, cpu=2.5)
    subprocess.run([sys.executable, str(SCRIPT), "--directory", str(tmp_path)], check=True, capture_output=True)
    table = pd.read_csv(bench / "timings.csv").set_index("rule")
    assert list(table.index) == ["train", "plot", "total"]  # largest CPU time first, then the total
    assert (
        table.loc["train", "jobs"] == 2 and table.loc["train", "cpu_s"] == 67.5 and table.loc["train", "wall_s"] == 70.0
    )
    assert table.loc["train", "longest_job_s"] == 40.0 and table.loc["train", "peak_rss_mb"] == 450.0
    assert (
        table.loc["total", "cpu_s"] == 70.0
        and table.loc["total", "jobs"] == 3
        and table.loc["total", "peak_rss_mb"] == 450.0
    )
    assert abs(table.loc["plot", "cpu_share"] - 2.5 / 70.0) < 1e-9
    assert "| train | 2 | 67.5 |" in squeeze_markdown((bench / "timings.md").read_text())
    assert (bench / "timings.png").read_bytes()[:4] == b"\x89PNG"


def test_the_kernels_count_in_a_jobs_log_replaces_its_rules_benchmark_files(tmp_path):
    from replication.job_cost import PREFIX

    bench = tmp_path / "benchmarks"
    _write(bench / "train" / "fig4" / "seed1.tsv", wall=40.0, rss=400.0, cpu=20.0)  # sampled: undercounts
    _write(bench / "plot" / "run.tsv", wall=5.0, rss=200.0, cpu=2.5)
    log = tmp_path / "logs" / "train" / "fig4" / "seed1.log"
    log.parent.mkdir(parents=True)
    cost = "cpu_s=39.00 user_s=38.00 system_s=1.00 wall_s=41.00 max_rss_mb=410.00"
    log.write_text(f"step 100\n{PREFIX} rule=train {cost}\n")
    subprocess.run([sys.executable, str(SCRIPT), "--directory", str(tmp_path)], check=True, capture_output=True)
    table = pd.read_csv(bench / "timings.csv").set_index("rule")
    assert table.loc["train", "cpu_s"] == 39.0 and table.loc["train", "wall_s"] == 41.0  # the log's, not the file's
    assert table.loc["plot", "cpu_s"] == 2.5 and table.loc["total", "jobs"] == 2  # no log line: its benchmark file
