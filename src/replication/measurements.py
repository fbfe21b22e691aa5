"""What the benchmark scripts share: the settings as the workflow reads them, the kernel's counts
of a finished run (``/usr/bin/time -v`` reports), the jobs' Snakemake benchmark files, and the one
Markdown writer of their reports (``docs/measurements/``). Benchmarks import this, never each other.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pandas as pd
import yaml

from .paths import PROJECT_ROOT


def workflow_config(configfiles: list[str]) -> dict:
    """The settings the workflow would read: config/config.yaml, then ``configfiles`` over it (and a
    paper's smoke.yaml where they say ``settings: smoke``, as workflow/rules/common.smk does)."""
    from .config import apply_settings, update_config, validate_config

    config = yaml.safe_load((PROJECT_ROOT / "config" / "config.yaml").read_text())
    given = [yaml.safe_load(Path(path).read_text()) or {} for path in configfiles]
    for values in given:
        update_config(config, values)
    return validate_config(apply_settings(config, given), PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml")


def paper_settings(paper_id: str, configfiles: list[str]):
    """A paper's typed settings (``Paper.settings``) of ``workflow_config(configfiles)``: the
    objects its rule files read."""
    from .registry import papers

    paper = next(paper for paper in papers() if paper.id == paper_id)
    return paper.typed_settings(workflow_config(configfiles)[paper_id])


def kernel_time(path: Path) -> tuple[float, float, str, float]:
    """User and system CPU seconds, the wall clock as written and in hours, of a ``/usr/bin/time -v`` report."""
    text = Path(path).read_text()
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text).group(1)
    parts = [float(part) for part in wall.split(":")]  # h:mm:ss or m:ss.ss
    hours = sum(part * 60.0**-i for i, part in enumerate(parts)) / (60 if len(parts) == 2 else 1)
    return user, system, wall, hours


def time_lines(path: Path, name: str) -> list[str]:
    """A ``/usr/bin/time -v`` report in two lines: CPU seconds in all, and the wall clock."""
    user, system, wall, hours = kernel_time(path)
    total = user + system
    return [
        f"{name}: {total:.0f} CPU-s in all ({total / 3600:.2f} CPU-h; user {user:.0f}, system {system:.0f})",
        f"  wall {wall} ({hours:.2f} h), {total / 3600 / hours:.2f} cores busy on average",
    ]


def report_body(script: str, lines: list[str], directory: Path | None) -> tuple[str, list[str]]:
    """The command that ran ``script`` and ``lines`` as Markdown bullets (two-space indented lines
    nested), with the run's folder ``directory`` written as DIR in both."""
    command = " ".join([script, *sys.argv[1:]])
    if directory is not None:
        command = command.replace(str(directory), "DIR")
        lines = [line.replace(str(directory), "DIR") for line in lines]
    return command, [f"    - {line.strip()}" if line.startswith("  ") else f"- {line}" for line in lines]


def job_table(benchmarks: Path) -> pd.DataFrame:
    """One row per job of Snakemake's benchmark files under ``benchmarks/<rule>/``: rule, job (its
    file below the rule), wall_s, cpu_s, max_rss_mb."""
    rows = []
    for path in sorted(benchmarks.glob("*/**/*.tsv")):
        rule = path.relative_to(benchmarks).parts[0]
        frame = pd.read_csv(path, sep="\t")
        for _, record in frame.iterrows():  # one line per repetition of the job
            rows.append(
                {
                    "rule": rule,
                    "job": str(path.relative_to(benchmarks / rule).with_suffix("")),
                    "wall_s": float(record["s"]),
                    "cpu_s": float(pd.to_numeric(record["cpu_time"], errors="coerce")),
                    "max_rss_mb": float(pd.to_numeric(record["max_rss"], errors="coerce")),
                }
            )
    if not rows:
        raise SystemExit(f"no benchmark files under {benchmarks}/<rule>/; run the pipeline first")
    return pd.DataFrame(rows)


def rule_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per rule: jobs, summed CPU and wall seconds, the largest job's wall time, peak memory; then a total."""
    table = (
        jobs.groupby("rule")
        .agg(
            jobs=("job", "size"),
            cpu_s=("cpu_s", "sum"),
            wall_s=("wall_s", "sum"),
            longest_job_s=("wall_s", "max"),
            peak_rss_mb=("max_rss_mb", "max"),
        )
        .sort_values("cpu_s", ascending=False)
        .reset_index()
    )
    table["cpu_share"] = table.cpu_s / table.cpu_s.sum()
    total = {
        "rule": "total",
        "jobs": table.jobs.sum(),
        "cpu_s": table.cpu_s.sum(),
        "wall_s": table.wall_s.sum(),
        "longest_job_s": table.longest_job_s.max(),
        "peak_rss_mb": table.peak_rss_mb.max(),
        "cpu_share": 1.0,
    }
    return pd.concat([table, pd.DataFrame([total])], ignore_index=True)


def cpu_line() -> str:
    """The machine a measurement ran on, as the reports say it."""
    from .provenance import cpu_model

    return f"{cpu_model()}, {os.cpu_count()} CPUs"


def busy_cpu_seconds(stat: Path = Path("/proc/stat")) -> float:
    """CPU time the whole machine has spent busy since boot (every process's, on every core): the
    kernel's first line of ``stat`` less its idle and I/O-wait times."""
    fields = [int(v) for v in stat.read_text().splitlines()[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def gemm_rate(size: int = 1024, repeats: int = 10) -> float:
    """This machine's float32 matrix product on one core now, in GFLOP per CPU-second: the fastest of
    ``repeats`` products of two ``size`` x ``size`` matrices with one torch thread (the kernel the
    transformer step's products run on; whatever else runs can only slow a product down). How fast
    the machine was when a time was taken, so that times from two machines, or from one machine on
    two days, compare through it."""
    import time

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        left, right = torch.ones(size, size), torch.ones(size, size)
        left @ right  # warm-up: the kernel's buffers
        seconds = []
        for _ in range(repeats):
            start = time.process_time()
            left @ right
            seconds.append(time.process_time() - start)
    finally:
        torch.set_num_threads(threads)
    return 2 * size**3 / min(seconds) / 1e9
