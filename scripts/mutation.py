"""Mutation testing of the library (`make mutation`): run mutmut, then write the report.

mutmut (configured in pyproject.toml, [tool.mutmut]) mutates every module of src/replication/
except the figure-drawing ones, records which fast tests run each function, and runs each mutant
against those tests only. This script starts a fresh run (so the numbers reflect the current
tests) and writes results/mutation/report.md: the kill rate per module and overall, and every
surviving mutant with its file, line and diff. Mutants listed in scripts/mutation_equivalents.toml
(no input can tell them from the original; the reason is written there) are left out of the rates.

    python scripts/mutation.py                 # fresh run, then the report
    python scripts/mutation.py --survivors     # rerun only the last run's survivors (after new tests)
    python scripts/mutation.py --only 'replication.io.*' 'replication.config.*'   # some modules only
    python scripts/mutation.py --report-only   # the report of the last run
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from replication.io import write_text  # noqa: E402

MUTMUT = Path(sys.executable).with_name("mutmut")
EQUIVALENTS = ROOT / "scripts" / "mutation_equivalents.toml"
REPORT = ROOT / "results" / "mutation" / "report.md"
DETECTED = {"killed", "timeout", "segfault", "caught by type check"}
RESULT_LINE = re.compile(r"^\s*(\S+): (.+)$")


def run_mutmut(jobs: int | None) -> float:
    """A fresh mutmut run from the project root; returns its wall time in seconds."""
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    command = [str(MUTMUT), "run"] + ([f"--max-children={jobs}"] if jobs else [])
    start = time.monotonic()
    # mutmut's progress goes to the terminal; its exit status is non-zero when mutants survive.
    subprocess.run(command, cwd=ROOT, check=False)
    return time.monotonic() - start


def run_named(patterns: list[str], jobs: int | None) -> float:
    """Run the mutants whose names match ``patterns`` (fnmatch), reusing the mutants and test
    records of an earlier run when there is one (mutmut adds the records of new tests)."""
    command = [str(MUTMUT), "run"] + ([f"--max-children={jobs}"] if jobs else []) + patterns
    start = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=False)
    return time.monotonic() - start


def rerun_survivors(jobs: int | None) -> float:
    """Run again, against the current tests, the mutants that no test killed last time."""
    names = [name for name, status in mutmut_results().items() if status not in DETECTED | {"not checked"}]
    return run_named(names, jobs) if names else 0.0


def mutmut_results() -> dict[str, str]:
    """Mutant name -> status (killed, survived, no tests, timeout, ...) of the last run."""
    output = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    results = {}
    for line in output.splitlines():
        match = RESULT_LINE.match(line)
        if match:
            results[match.group(1)] = match.group(2).strip()
    if not results:
        raise SystemExit("no mutation results: run `make mutation` first")
    return results


def mutant_diff(name: str) -> str:
    """The mutant's diff, as `mutmut show` prints it (in this process: one `mutmut show` per
    survivor would start Python hundreds of times)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return get_diff_for_mutant(name)
    finally:
        os.chdir(cwd)


def module_of(name: str) -> str:
    """replication.io.x_atomic_path__mutmut_3 -> replication.io (class methods: .xǁClassǁmethod)."""
    return re.split(r"\.xǁ|\.x_", name, maxsplit=1)[0]


def function_of(name: str) -> tuple[str | None, str]:
    """(class, function) of a mutant name."""
    tail = re.split(r"\.(?=xǁ|x_)", name, maxsplit=1)[1]
    tail = re.sub(r"__mutmut_\d+$", "", tail)
    if tail.startswith("xǁ"):
        _, cls, function = tail.split("ǁ", 2)
        return cls, function
    return None, tail[2:]


def source_path(module: str) -> Path:
    relative = Path(*module.split("."))
    path = ROOT / "src" / relative.with_suffix(".py")
    return path if path.exists() else ROOT / "src" / relative / "__init__.py"


def definition_lines(path: Path) -> dict[tuple[str | None, str], int]:
    """(class, function) -> line of its `def` in the original source."""
    lines = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines[(None, node.name)] = node.lineno
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines[(node.name, item.name)] = item.lineno
    return lines


def changed_line(name: str, diff: str) -> int | None:
    """Line in the source file of the first line the mutant changes."""
    path = source_path(module_of(name))
    start = definition_lines(path).get(function_of(name))
    if start is None:
        return None
    offset = None
    for line in diff.splitlines():
        hunk = re.match(r"^@@ -(\d+)", line)
        if hunk:
            offset = int(hunk.group(1)) - 1
            continue
        if offset is None or line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            return start + offset
        if line.startswith(" "):
            offset += 1
        elif line.startswith("+"):
            return start + offset  # a pure insertion: the line before which it goes
    return None


def load_equivalents() -> dict[str, dict]:
    if not EQUIVALENTS.exists():
        return {}
    entries = tomllib.loads(EQUIVALENTS.read_text()).get("equivalent", [])
    return {entry["mutant"]: entry for entry in entries}


def build_report(results: dict[str, str], wall_s: float | None, what: str = "full run") -> str:
    equivalents = load_equivalents()
    counts: dict[str, Counter] = defaultdict(Counter)
    survivors, stale = [], []
    for name, status in sorted(results.items()):
        module = module_of(name)
        if status in ("not checked", "skipped", "check was interrupted by user"):
            counts[module]["not run"] += 1
            continue
        counts[module]["mutants"] += 1
        if status in DETECTED:
            counts[module]["killed"] += 1
            continue
        diff = mutant_diff(name)
        entry = equivalents.get(name)
        if entry is not None and entry["changes"] in diff:
            counts[module]["equivalent"] += 1
            continue
        if entry is not None:
            stale.append(name)  # the name now points at another mutation
        counts[module]["survived"] += 1
        survivors.append((name, status, diff))

    def rate(c: Counter) -> float:
        judged = c["mutants"] - c["equivalent"]
        return c["killed"] / judged if judged else 1.0

    total = sum(counts.values(), Counter())
    lines = ["# Mutation testing report", ""]
    lines.append(f"Tool: mutmut (pyproject.toml [tool.mutmut]); equivalent mutants: {EQUIVALENTS.relative_to(ROOT)}.")
    if wall_s is not None:
        load = os.getloadavg()
        lines.append(
            f"Run time ({what}): {wall_s / 60:.1f} min on {os.cpu_count()} cores (load average at the end "
            f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f})."
        )
    lines += [
        "",
        f"**Overall kill rate: {rate(total):.1%}** ({total['killed']} killed of "
        f"{total['mutants'] - total['equivalent']} mutants; {total['equivalent']} equivalent left out; "
        f"{total['survived']} surviving)",
        "",
    ]
    lines += [
        "| module | mutants run | killed | equivalent | surviving | kill rate | not run |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for module in sorted(counts):
        c = counts[module]
        shown = f"{rate(c):.1%}" if c["mutants"] else "-"
        lines.append(
            f"| {module} | {c['mutants']} | {c['killed']} | {c['equivalent']} | {c['survived']} | {shown} "
            f"| {c['not run']} |"
        )
    if total["not run"]:
        lines += [
            "",
            f"{total['not run']} mutants were not run (a partial or interrupted run): the rates cover the rest.",
        ]
    if stale:
        lines += ["", "Listed as equivalent but the mutation under that name changed (re-check): " + ", ".join(stale)]
    lines += ["", f"## Surviving mutants ({len(survivors)})", ""]
    for name, status, diff in survivors:
        path = source_path(module_of(name)).relative_to(ROOT)
        line = changed_line(name, diff)
        lines += [f"### {name} ({status})", "", f"{path}:{line}", "", "```diff", diff, "```", ""]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--report-only", action="store_true", help="write the report of the last run")
    mode.add_argument("--survivors", action="store_true", help="rerun only the last run's surviving mutants")
    mode.add_argument("--only", nargs="+", metavar="GLOB", help="run only the mutants matching these name patterns")
    parser.add_argument(
        "--jobs", type=int, default=None, help="mutants run side by side (default: mutmut's, the cores)"
    )
    args = parser.parse_args()
    if args.report_only:
        wall_s = None
    elif args.survivors:
        wall_s = rerun_survivors(args.jobs)
    elif args.only:
        wall_s = run_named(args.only, args.jobs)
    else:
        wall_s = run_mutmut(args.jobs)
    what = "rerun of the survivors" if args.survivors else f"only {' '.join(args.only)}" if args.only else "full run"
    report = build_report(mutmut_results(), wall_s, what)
    write_text(report, REPORT)
    print(report.split("## Surviving")[0])
    print(f"report: {REPORT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
