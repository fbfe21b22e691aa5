"""Mutation testing of the library (`make mutation`): run mutmut, then write the report.

mutmut (configured in pyproject.toml, [tool.mutmut]) mutates every module of src/replication/
except the figure-drawing ones, records which fast tests run each function, and runs each mutant
against those tests only. This script starts a fresh run (so the numbers reflect the current
tests) and writes results/mutation/report.md: the kill rate per module, per package (the core, each
paper and each part of one) and overall, and every surviving mutant with its file, line and diff.
Mutants listed in scripts/mutation_equivalents.toml (no input can tell them from the original; the
reason is written there) are left out of the rates; entries that no longer fit are listed.

    python scripts/mutation.py                 # fresh run, then the report
    python scripts/mutation.py --survivors     # rerun what the last run did not detect (after new tests)
    python scripts/mutation.py --only 'replication.io.*' 'replication.config.*'   # some modules only
    python scripts/mutation.py --report-only   # the report of the last run
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import resource
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
EXCLUDED = ROOT / "scripts" / "mutation_excluded.toml"
REPORT = ROOT / "results" / "mutation" / "report.md"
# One line per mutmut invocation since the last fresh run: what ran, wall and CPU seconds, load.
RUNS = ROOT / "results" / "mutation" / "runs.tsv"
DETECTED = {"killed", "timeout", "segfault", "caught by type check"}
# mutmut forks one worker per mutant from a process that has run tests; a worker forked while
# torch's OpenMP pool exists can block forever and be counted as a timeout, i.e. a false kill.
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
RESULT_LINE = re.compile(r"^\s*(\S+): (.+)$")
# The rates of every module outside papers/ together (the papers' packages are named by their modules).
CORE = "core (src/replication/ outside papers/)"


def timed(command: list[str], what: str) -> None:
    """Run mutmut; append its wall and CPU time (its own and its workers') and the load to RUNS."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    # mutmut's progress goes to the terminal; its exit status is non-zero when mutants survive.
    subprocess.run(command, cwd=ROOT, check=False, env={**os.environ, **SINGLE_THREADED})
    wall = time.monotonic() - start
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
    RUNS.parent.mkdir(parents=True, exist_ok=True)
    with RUNS.open("a") as log:
        log.write(f"{what}\t{wall:.0f}\t{cpu:.0f}\t{load}\n")


def run_mutmut(jobs: int | None) -> None:
    """A fresh mutmut run from the project root."""
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    RUNS.unlink(missing_ok=True)
    timed([str(MUTMUT), "run"] + ([f"--max-children={jobs}"] if jobs else []), "full run")


def run_named(patterns: list[str], jobs: int | None, what: str | None = None) -> None:
    """Run the mutants whose names match ``patterns`` (fnmatch), reusing the mutants and test
    records of an earlier run when there is one (mutmut adds the records of new tests)."""
    command = [str(MUTMUT), "run"] + ([f"--max-children={jobs}"] if jobs else []) + patterns
    timed(command, what or "only " + " ".join(patterns))


def rerun_survivors(jobs: int | None) -> None:
    """Run again, against the current tests, every mutant no test has detected: the survivors, those no
    test reached, and those not checked (mutmut resets the mutants of a function whose source changed)."""
    excluded = excluded_functions()
    names = [
        name for name, status in mutmut_results().items() if status not in DETECTED and not is_excluded(name, excluded)
    ]
    if names:
        run_named(names, jobs, f"rerun of {len(names)} undetected")


def run_times() -> list[tuple[str, int, int, str]]:
    """(what, wall s, CPU s, load average) of every mutmut invocation since the last fresh run."""
    if not RUNS.exists():
        return []
    rows = [line.split("\t") for line in RUNS.read_text().splitlines() if line]
    return [(what, int(wall), int(cpu), load) for what, wall, cpu, load in rows]


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


def excluded_functions() -> dict[str, str]:
    """Mangled function name (replication.io.x_atomic_path), or a whole module's name (the benchmarks
    in the papers' parts), -> why its mutants are left out."""
    entries = tomllib.loads(EXCLUDED.read_text()).get("excluded", []) if EXCLUDED.exists() else []
    return {entry.get("function") or entry["module"]: entry["reason"] for entry in entries}


def is_excluded(name: str, excluded: dict[str, str]) -> bool:
    """Whether the mutant's function or its whole module is in ``excluded_functions()``."""
    return re.sub(r"__mutmut_\d+$", "", name) in excluded or module_of(name) in excluded


def shorten(what: str, width: int = 160) -> str:
    """An invocation's description for the report's table (a rerun of named mutants lists them all)."""
    return what if len(what) <= width else what[: width - 25].rsplit(" ", 1)[0] + f" ... ({len(what.split())} names)"


def judge(results: dict[str, str]) -> tuple[dict[str, Counter], list[tuple[str, str, str]], list[str]]:
    """Per module: mutants run, killed (timeouts among them), equivalent, surviving, not run, excluded;
    the survivors (name, status, diff); the equivalents whose name now points at another mutation."""
    equivalents = load_equivalents()
    excluded = excluded_functions()
    counts: dict[str, Counter] = defaultdict(Counter)
    survivors, stale = [], []
    for name, status in sorted(results.items()):
        module = module_of(name)
        if is_excluded(name, excluded):
            counts[module]["excluded"] += 1
            continue
        if status in ("not checked", "skipped", "check was interrupted by user"):
            counts[module]["not run"] += 1
            continue
        counts[module]["mutants"] += 1
        if status in DETECTED:
            counts[module]["killed"] += 1
            counts[module]["timeout"] += status == "timeout"
            continue
        diff = mutant_diff(name)
        entry = equivalents.get(name)
        if entry is not None and entry["changes"] in diff:
            counts[module]["equivalent"] += 1
            continue
        if entry is not None:
            stale.append(name)
        counts[module]["survived"] += 1
        survivors.append((name, status, diff))
    return counts, survivors, stale


def rate(c: Counter) -> float | None:
    """Killed share of the mutants run that are not equivalent; None when there are none."""
    judged = c["mutants"] - c["equivalent"]
    return c["killed"] / judged if judged else None


def packages_of(module: str) -> list[str]:
    """The packages whose rates a module counts towards: the core (every module outside papers/), or
    its paper (replication.papers.<paper>) and, in a subpackage of the paper, that part too."""
    parts = module.split(".")
    if parts[1:2] != ["papers"]:
        return [CORE]
    groups = [".".join(parts[:3])]
    if len(parts) > 3 and (ROOT / "src" / Path(*parts[:4])).is_dir():
        groups.append(".".join(parts[:4]))
    return groups


def rate_table(first_column: str, counts: dict[str, Counter], with_total: bool) -> list[str]:
    """A Markdown table of the counts and kill rate of each key of ``counts`` (and of all of them)."""
    columns = ("mutants run", "killed", "timeout", "equivalent", "surviving", "kill rate", "not run", "excluded")
    rows = sorted(counts.items()) + ([("**all**", sum(counts.values(), Counter()))] if with_total else [])
    lines = [f"| {first_column} | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for name, c in rows:
        shown = "-" if rate(c) is None else f"{rate(c):.1%}"
        cells = [c["mutants"], c["killed"], c["timeout"], c["equivalent"], c["survived"], shown]
        lines.append(f"| {name} | " + " | ".join(map(str, cells + [c["not run"], c["excluded"]])) + " |")
    return lines


def time_lines(times: list[tuple[str, int, int, str]]) -> list[str]:
    """The run time, in total and per mutmut invocation."""
    if not times:
        return []
    wall, cpu = sum(t[1] for t in times), sum(t[2] for t in times)
    return [
        f"Run time: {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU (mutmut and its workers) on "
        f"{os.cpu_count()} cores, in {len(times)} invocation(s):",
        "",
        "| invocation | wall s | CPU s | load average at the end (1 / 5 / 15 min) |",
        "|---|---:|---:|---|",
        *(f"| {shorten(what)} | {w} | {c} | {load} |" for what, w, c, load in times),
        "",
    ]


def package_counts(counts: dict[str, Counter]) -> dict[str, Counter]:
    """The modules' counts summed per package (``packages_of``)."""
    packages: dict[str, Counter] = defaultdict(Counter)
    for module, c in counts.items():
        for package in packages_of(module):
            packages[package] += c
    return packages


def build_report(results: dict[str, str], judged, times: list[tuple[str, int, int, str]]) -> str:
    """The report of ``results`` as ``judge`` judged them (it reads every survivor's diff: judge once)."""
    counts, survivors, stale = judged
    total = sum(counts.values(), Counter())
    if not total["mutants"]:
        raise SystemExit("no mutant was run: mutmut stopped before the mutants (its output above says why)")
    packages = package_counts(counts)
    rated = {module: rate(c) for module, c in counts.items() if rate(c) is not None}
    lowest = min(rated, key=rated.get)
    lines = [
        "# Mutation testing report",
        "",
        f"Tool: mutmut (pyproject.toml [tool.mutmut]); equivalent mutants: {EQUIVALENTS.relative_to(ROOT)}.",
        "",
        f"**Overall kill rate: {rate(total):.1%}** ({total['killed']} killed, {total['timeout']} of them by a "
        f"timeout, of {total['mutants'] - total['equivalent']} mutants; {total['equivalent']} equivalent left out; "
        f"{total['survived']} surviving); lowest module: {lowest}, {rated[lowest]:.1%}.",
        "",
        *time_lines(times),
        "Killed includes timeouts (a mutant that makes a test hang is detected).",
        "",
        f"Per package ({CORE}; each paper, and each part of a paper by itself):",
        "",
        *rate_table("package", packages, with_total=False),
        "",
        "Per module:",
        "",
        *rate_table("module", counts, with_total=True),
    ]
    if total["not run"]:
        lines += [
            "",
            f"{total['not run']} mutants were not run (a partial or interrupted run): the rates cover the rest.",
        ]
    if excluded := excluded_functions():
        lines += [
            "",
            f"Excluded functions and modules ({EXCLUDED.relative_to(ROOT)}, with the reasons): " + ", ".join(excluded),
        ]
    if stale:
        lines += ["", "Listed as equivalent but the mutation under that name changed (re-check): " + ", ".join(stale)]
    listed = {name: results.get(name, "no such mutant") for name in load_equivalents()}
    if wrong := [f"{name} ({status})" for name, status in listed.items() if status in DETECTED | {"no such mutant"}]:
        lines += ["", "Listed as equivalent but killed or gone (remove or re-key): " + ", ".join(wrong)]
    lines += ["", f"## Surviving mutants ({len(survivors)})", ""]
    for name, status, diff in survivors:
        path = source_path(module_of(name)).relative_to(ROOT)
        lines += [f"### {name} ({status})", "", f"{path}:{changed_line(name, diff)}", "", "```diff", diff, "```", ""]
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
    parser.add_argument("--summary", type=Path, help="also write the per-package rates here (for the docs)")
    args = parser.parse_args()
    if args.survivors:
        rerun_survivors(args.jobs)
    elif args.only:
        run_named(args.only, args.jobs)
    elif not args.report_only:
        run_mutmut(args.jobs)
    results = mutmut_results()
    judged = judge(results)
    report = build_report(results, judged, run_times())
    write_text(report, REPORT)
    print(report.split("## Surviving")[0])
    print(f"report: {REPORT.relative_to(ROOT)}")
    if args.summary:
        write_text(summary(judged[0], args.summary), args.summary)
        print(f"summary: {args.summary}")


def summary(counts: dict[str, Counter], path: Path) -> str:
    """The per-package rates of the last run (``judge``'s counts per module), for the docs: when, where,
    of which commit, how much of the library the run judged, and the packages' table (the report has
    every module and mutant)."""
    from replication.provenance import cpu_model

    packages = package_counts(counts)
    total = sum(counts.values(), Counter())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    # A module's "no tests" mutants are judged at once and its tested ones later: a partly judged
    # module's rate is biased low, so only whole modules are rated here.
    partial = sorted(module for module, c in counts.items() if c["not run"])
    below = sorted(m for m, c in counts.items() if m not in partial and rate(c) is not None and rate(c) < 0.9)
    return "\n".join(
        [
            f"<!-- written by scripts/mutation.py --summary {path}; do not edit -->",
            f"Mutation testing of commit {commit.strip() or 'unknown'}, {time.strftime('%Y-%m-%d')}, {cpu_model()}, "
            f"{os.cpu_count()} cores: {total['mutants']} mutants judged, {total['not run']} not run, "
            f"{total['excluded']} excluded; **overall {rate(total):.1%}** of the non-equivalent mutants judged killed.",
            "",
            *rate_table("package", packages, with_total=False),
            "",
            f"Modules below 90% ({len(below)}): "
            + (", ".join(f"`{m}` {rate(counts[m]):.0%}" for m in below) or "none"),
            "",
            f"Modules not wholly judged ({len(partial)}; their rates, and their packages', are not final): "
            + (", ".join(f"`{m}`" for m in partial) or "none"),
            "",
        ]
    )


if __name__ == "__main__":
    main()
