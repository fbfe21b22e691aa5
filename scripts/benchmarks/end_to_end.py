"""End-to-end timing: `figures/all` from clean, a no-op rerun, and optionally `make test`.

    .venv/bin/python scripts/benchmarks/end_to_end.py --cores 2                 # paper settings
    .venv/bin/python scripts/benchmarks/end_to_end.py --config config/smoke.yaml
    .venv/bin/python scripts/benchmarks/end_to_end.py --cores 2 --test          # also the test suite

The pipeline runs in a scratch directory, so figures/ of the checkout stays as it is. Prints the
times, their ratio to the goals (figures/all <= 600 s on 2 cores and <= 1000 CPU-s, no-op rerun
<= 3 s), the CPU seconds, wall time and peak memory per rule from the jobs' benchmark files, and
the machine's load average, which matters on a shared machine.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replication.measurements import job_table, rule_table

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GOALS = {"figures/all from clean": 600.0, "no-op rerun": 3.0}
CPU_GOAL = 1000.0  # CPU-s of figures/all from clean, all jobs together


def timed(command: list[str], **kwargs) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    seconds = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}{result.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--cores", default="2")
    parser.add_argument("--test", action="store_true", help="also time `make test`")
    parser.add_argument("--workdir", help="run here and keep the outputs (default: a scratch directory)")
    args = parser.parse_args()
    times = {}
    with tempfile.TemporaryDirectory(prefix="end-to-end-") as scratch:
        workdir = args.workdir or scratch
        snakemake = [
            str(BIN / "snakemake"),
            "--snakefile",
            str(ROOT / "workflow" / "Snakefile"),
            "--directory",
            workdir,
            "--configfile",
            str(ROOT / args.config),
            "--cores",
            args.cores,
        ]
        print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs; config {args.config}")
        times["figures/all from clean"] = timed(snakemake + ["figures/all"], cwd=ROOT)
        per_rule = rule_table(job_table(Path(workdir) / "benchmarks"))
        times["no-op rerun"] = timed(snakemake + ["figures/all"], cwd=ROOT)
    if args.test:
        times["make test"] = timed(["make", "test"], cwd=ROOT)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(per_rule.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    cpu = per_rule.cpu_s.iloc[-1]
    print(f"{'CPU-s of all jobs':>24}: {cpu:8.1f} s  ({cpu / CPU_GOAL:.2f} x the {CPU_GOAL:g} s goal)")
    for name, seconds in times.items():
        goal = GOALS.get(name)
        ratio = f"  ({seconds / goal:.2f} x the {goal:g} s goal)" if goal else ""
        print(f"{name:>24}: {seconds:8.1f} s{ratio}")


if __name__ == "__main__":
    main()
