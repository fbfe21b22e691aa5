"""Where the pipeline's time goes: CPU seconds, wall clock and peak memory per rule.

Reads each job's cost as the kernel counted it, the last line of its log (logs/, written by
``replication.job_cost``), and Snakemake's ``benchmark:`` files (benchmarks/<rule>/...tsv, one per
job) for the rules whose jobs wrote no such line (those files undercount CPU time), and writes a
table (CSV and Markdown, one row per rule, largest CPU time first, with a total) and a
bar chart of the three quantities.

    .venv/bin/python scripts/benchmarks/timings.py [--directory .] [--out benchmarks/timings]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from replication.io import atomic_path, write_csv, write_text
from replication.job_cost import job_costs
from replication.measurements import job_table, rule_table


def jobs_of_run(directory: Path) -> pd.DataFrame:
    """One row per job: the kernel's count from its log where it has one, else its benchmark file."""
    counted = job_costs(directory / "logs").rename(columns={"log": "job"})
    benchmarks = directory / "benchmarks"
    sampled = job_table(benchmarks) if benchmarks.is_dir() and any(benchmarks.glob("*/**/*.tsv")) else None
    if sampled is not None:
        sampled = sampled[~sampled.rule.isin(set(counted.rule))]
    frames = [frame for frame in (counted, sampled) if frame is not None and not frame.empty]
    if not frames:
        raise SystemExit(f"no job costs under {directory}/logs and no benchmark files; run the pipeline first")
    return pd.concat(frames, ignore_index=True)[["rule", "job", "wall_s", "cpu_s", "max_rss_mb"]]


def markdown(table: pd.DataFrame) -> str:
    """A pipe table (tabulate), floats to one decimal."""
    return table.to_markdown(index=False, floatfmt=".1f") + "\n"


def bar_chart(table: pd.DataFrame, path: Path) -> None:
    rules = table[table.rule != "total"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 0.3 * len(rules) + 1.5), sharey=True)
    for ax, (column, label) in zip(
        axes,
        (
            ("cpu_s", "CPU time (s, all jobs)"),
            ("wall_s", "wall time (s, all jobs)"),
            ("peak_rss_mb", "peak memory (MB, max RSS)"),
        ),
    ):
        ax.barh(rules.rule, rules[column], color="tab:blue")
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    axes[0].invert_yaxis()
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(
            tmp, format=path.suffix[1:], dpi=120, metadata={"Software": None} if path.suffix == ".png" else None
        )
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", default=".", help="the pipeline's working directory (holds benchmarks/)")
    parser.add_argument("--out", default=None, help="output prefix (default: <directory>/benchmarks/timings)")
    args = parser.parse_args()
    benchmarks = Path(args.directory) / "benchmarks"
    out = Path(args.out) if args.out else benchmarks / "timings"
    table = rule_table(jobs_of_run(Path(args.directory)))
    write_csv(table, out.with_suffix(".csv"))
    write_text(markdown(table), out.with_suffix(".md"))
    bar_chart(table, out.with_suffix(".png"))
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    print(f"written: {out.with_suffix('.csv')}, {out.with_suffix('.md')}, {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
