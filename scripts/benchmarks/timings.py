"""Where the pipeline's time goes: CPU seconds, wall clock and peak memory per rule.

Reads the Snakemake ``benchmark:`` files of a run (benchmarks/<rule>/...tsv, one per job) and
writes a table (CSV and Markdown, one row per rule, largest CPU time first, with a total) and a
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


def job_table(benchmarks: Path) -> pd.DataFrame:
    """One row per job: rule, job (its file below the rule), wall_s, cpu_s, max_rss_mb."""
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
    table = rule_table(job_table(benchmarks))
    write_csv(table, out.with_suffix(".csv"))
    write_text(markdown(table), out.with_suffix(".md"))
    bar_chart(table, out.with_suffix(".png"))
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    print(f"written: {out.with_suffix('.csv')}, {out.with_suffix('.md')}, {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
