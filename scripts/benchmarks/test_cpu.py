"""Where the test suite's time goes: the CPU time of every test, from the kernel.

Runs pytest (by default as `make test` does) with this file as a plugin: around each test it reads
``resource.getrusage`` of the worker and of its waited-for children (Snakemake and its jobs), and
prints the total, the machine's idle core-seconds, the long tests by start on each worker (a
timeline), the slowest tests and the files that cost most. A test's session fixtures count in
the first test that asks for them. Processes that are no children of pytest are not counted: the
SLURM test's jobs run under ``slurmd``.

    .venv/bin/python scripts/benchmarks/test_cpu.py [--top 20] [--long 10] [-- PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from replication.measurements import busy_cpu_seconds

ROOT = Path(__file__).resolve().parents[2]
OUT_VARIABLE = "REPLICATION_TEST_CPU_DIR"  # where each worker writes its tests' costs


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """(The plugin) one line per test: its id, worker and start, CPU seconds and wall seconds."""
    cpu, wall, start = _cpu_s(), time.monotonic(), time.time()
    try:
        return (yield)
    finally:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        row = {
            "id": item.nodeid,
            "worker": worker,
            "start": start,
            "cpu": _cpu_s() - cpu,
            "wall": time.monotonic() - wall,
        }
        with open(Path(os.environ[OUT_VARIABLE]) / f"{worker}.jsonl", "a") as out:
            out.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=20, help="how many tests and files to list")
    parser.add_argument("--long", type=float, default=10.0, help="list the tests longer than this (wall s) by start")
    parser.add_argument("pytest_args", nargs="*", default=["-n", "2", "--maxschedchunk", "1"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="test-cpu-") as out:
        env = {
            **os.environ,
            OUT_VARIABLE: out,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])),
        }
        started, busy = time.monotonic(), busy_cpu_seconds()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", Path(__file__).stem, "-q", *args.pytest_args], cwd=ROOT, env=env
        )
        wall, busy = time.monotonic() - started, busy_cpu_seconds() - busy
        rows = [json.loads(line) for path in Path(out).glob("*.jsonl") for line in path.read_text().splitlines()]
    if not rows:
        raise SystemExit("no test ran")
    total = sum(row["cpu"] for row in rows)
    print(f"\n{len(rows)} tests, {total:.0f} CPU-s in the tests, {wall:.0f} s wall (pytest exited {result.returncode})")
    cores = os.cpu_count()
    print(f"the machine's {cores} cores idle {cores * wall - busy:.0f} of {cores * wall:.0f} core-s")
    first = min(row["start"] for row in rows)
    print(f"\ntests over {args.long:g} s, by start (s from the first test's start, wall s, CPU-s, worker):")
    for row in sorted((row for row in rows if row["wall"] > args.long), key=lambda row: row["start"]):
        print(f"{row['start'] - first:8.1f} {row['wall']:8.1f} {row['cpu']:8.1f}  {row['worker']:4}  {row['id']}")
    print(f"\nslowest {args.top} tests (CPU-s, wall s):")
    for row in sorted(rows, key=lambda row: -row["cpu"])[: args.top]:
        print(f"{row['cpu']:8.1f} {row['wall']:8.1f}  {row['id']}")
    by_file, tests = Counter(), Counter()
    for row in rows:
        by_file[row["id"].split("::")[0]] += row["cpu"]
        tests[row["id"].split("::")[0]] += 1
    print("\nfiles that cost most (CPU-s, tests, share of the total):")
    for name, cpu in by_file.most_common(args.top):
        print(f"{cpu:8.1f} {tests[name]:5d} {cpu / total:6.1%}  {name}")
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()
