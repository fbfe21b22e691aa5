"""What a build would run and about what it costs, before it runs (``make cost``): Snakemake's dry run
of the target in its tree, its jobs per rule, and their CPU time from the per-job cost of the same
rules measured at the same base settings (``docs/measurements/build_times.json``, written by
``scripts/benchmarks/build_times.py``).

A rule's cost per job is its jobs' CPU time in Snakemake's benchmark files of a measured build,
plus an even share of what those files do not count (the kernel's count of the whole build less
theirs: Snakemake's own start-ups, rules without benchmark files), so that a build's jobs add up to
its measured total. A variant is costed at its base's
per-job costs (its settings may make a job dearer or cheaper); rules never measured at the base
settings are named and left out of the sum.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from .command_line import command_parser
from .paths import PROJECT_ROOT
from .snakemake_command import snakemake_command

MEASUREMENTS = PROJECT_ROOT / "docs" / "measurements" / "build_times.json"


def planned_jobs(dry_run: str) -> dict[str, int]:
    """Jobs per rule from the ``Job stats`` table of Snakemake's dry run (empty: nothing to do)."""
    lines = [line.strip() for line in dry_run.splitlines()]
    if "Job stats:" not in lines:
        return {}
    jobs = {}
    for line in lines[lines.index("Job stats:") + 3 :]:  # after the header and its dashes
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total" or not parts[1].isdigit():
            break
        jobs[parts[0]] = int(parts[1])
    return jobs


def per_job_costs(measurements: Mapping, settings: str) -> dict[str, float]:
    """CPU seconds per job of each rule measured in a build at ``settings`` (see the module's text)."""
    costs = {}
    for run in measurements.get("runs", {}).values():
        rules = run.get("rules") or {}
        jobs = sum(rule["jobs"] for rule in rules.values())
        if run.get("settings") != settings or not jobs:
            continue
        uncounted = max(0.0, run["cpu_s"] - sum(rule["cpu_s"] for rule in rules.values())) / jobs
        for name, rule in rules.items():
            costs[name] = rule["cpu_s"] / rule["jobs"] + uncounted
    return costs


def cost_line(jobs: Mapping[str, int], costs: Mapping[str, float], settings: str, source: str) -> str:
    """``N jobs, about X CPU-min from measurements (source)``, naming the rules no measurement covers."""
    count = sum(jobs.values())
    if not count:
        return "0 jobs: nothing to run, every output is up to date"
    unmeasured = sorted(rule for rule in jobs if rule not in costs)
    if len(unmeasured) == len(jobs):
        return (
            f"{count} jobs; no measured cost at {settings} settings ({source} has none of their rules): "
            "scripts/benchmarks/build_times.py measures the builds"
        )
    cpu_s = sum(n * costs[rule] for rule, n in jobs.items() if rule in costs)
    line = f"{count} jobs, about {cpu_s / 60:.1f} CPU-min from measurements ({source}, {settings} settings)"
    if unmeasured:
        left = sum(jobs[rule] for rule in unmeasured)
        line += f"; {left} jobs of rules never measured there not counted: {', '.join(unmeasured)}"
    return line


def main(argv: list[str] | None = None) -> int:
    """Print Snakemake's dry run of the targets and options after ``--`` in ``--directory``, then the
    cost line; 1 with Snakemake's error (or the config's, in one line) when it cannot plan."""
    from .errors import ConfigError
    from .variants import resolve

    parser = command_parser(__spec__, __doc__)
    parser.add_argument("--directory", default=".", help="the tree the build would run in")
    parser.add_argument("--configfile", action="append", default=[], help="config files over config/config.yaml")
    parser.add_argument(
        "--measurements", type=Path, default=MEASUREMENTS, help="the per-job costs measured (default: %(default)s)"
    )
    parser.add_argument("snakemake_args", nargs=argparse.REMAINDER, help="targets and options, after --")
    args = parser.parse_args(argv)
    rest = args.snakemake_args[1:] if args.snakemake_args[:1] == ["--"] else args.snakemake_args
    try:
        settings = resolve(args.configfile).get("settings") or "paper"
    except ConfigError as error:
        print(f"Invalid config: {error}", file=sys.stderr)
        return 1
    configs = ["--configfile", *args.configfile] if args.configfile else []
    command = snakemake_command(Path(args.directory).resolve(), *rest, *configs, "--dry-run", "--quiet", "rules")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode:
        print((result.stdout + result.stderr).strip(), file=sys.stderr)
        return result.returncode
    jobs = planned_jobs(result.stdout + "\n" + result.stderr)
    for rule, count in jobs.items():
        print(f"{count:5d}  {rule}")
    measurements = json.loads(args.measurements.read_text()) if args.measurements.is_file() else {}
    source = args.measurements.relative_to(PROJECT_ROOT) if args.measurements.is_relative_to(PROJECT_ROOT) else ""
    print(cost_line(jobs, per_job_costs(measurements, settings), settings, str(source or args.measurements)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
