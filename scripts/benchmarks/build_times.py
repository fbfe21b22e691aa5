"""What the README's commands cost: the environment from a fresh clone, the paper build, the smoke
build, the phase and plateau smoke builds on top of it, and the fast tests, each timed from clean
with the kernel's counts. It prints numbers and writes them; it asserts nothing.

    .venv/bin/python scripts/benchmarks/build_times.py [--cores 2] [--workdir DIR] [--only smoke ...]
        [--write docs/measurements/build_times]

Each step runs as its command does: ``make env`` in a clone of the last commit (no .venv); the
builds through ``replication.pipeline_run`` (what ``make figures CONFIG=config/smoke.yaml``, ``make
phase ...`` and ``make plateau ...`` run) in one scratch tree, one after the other (the plateau
reads the phase grid); the tests as the README gives them. Per step: wall time, CPU time of every
process it started (user + system, ``resource.getrusage`` of the children), the load average before
it and the CPU time other work took meanwhile (the machine's busy time in /proc/stat less the
step's own), the machine's single-core float32 GEMM rate just before it
(``replication.measurements.gemm_rate``: how fast the machine was then, which times from other
machines or days compare through), and for a build its jobs per rule with their CPU time from
Snakemake's benchmark files. ``--write PATH`` writes ``PATH.json`` (read by ``replication.cost``
for ``make cost`` and by the README's and docs' tests) and ``PATH.md`` (the same in words, included
by docs/performance.md); steps measured before and not now stay in them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replication.job_cost import job_costs
from replication.measurements import busy_cpu_seconds

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
CONFIGS = {"smoke": ROOT / "config" / "smoke.yaml", "paper": ROOT / "config" / "config.yaml"}
# The steps in order: name -> (the command a reader types, the build's target or None for the
# tests, what the step starts from, the build's settings)
STEPS = {
    "env": ("make env", None, "from a fresh clone", None),
    "paper": ("make figures", "figures/all", "from clean", "paper"),
    "smoke": ("make figures CONFIG=config/smoke.yaml", "figures/all", "from clean", "smoke"),
    "phase_smoke": ("make phase CONFIG=config/smoke.yaml", "figures/phase", "from clean", "smoke"),
    "plateau_smoke": ("make plateau CONFIG=config/smoke.yaml", "figures/plateau", "after the phase smoke", "smoke"),
    "fast_tests": ('.venv/bin/python -m pytest -m "not pipeline" -n 2', None, "in the checkout", None),
}


def measured(command: list[str], cwd: Path, check: bool = True) -> dict:
    """Run ``command``; its wall time, its processes' CPU time (user, system) and the CPU time
    the rest of the machine took meanwhile. With ``check``, exits with its output if it fails."""
    load = os.getloadavg()[0]
    before, busy_before, start = resource.getrusage(resource.RUSAGE_CHILDREN), busy_cpu_seconds(), time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after, busy_after = resource.getrusage(resource.RUSAGE_CHILDREN), busy_cpu_seconds()
    if check and result.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(user + system, 1),
        "user_s": round(user, 1),
        "sys_s": round(system, 1),
        "others_cpu_s": round(max(0.0, busy_after - busy_before - user - system), 1),
        "load_before": round(load, 2),
        "output_tail": result.stdout.strip().splitlines()[-1:] if result.stdout.strip() else [],
    }


def snakemake_args(target: str, cores: str, settings: str) -> list[str]:
    return [target, "--cores", cores, "--configfile", str(CONFIGS[settings])]


def build_command(workdir: Path, target: str, cores: str, settings: str) -> list[str]:
    """What ``make figures`` (``CONFIG=...``, ``phase``, ``plateau``) runs: under the run lock."""
    args = snakemake_args(target, cores, settings)
    return [PYTHON, "-m", "replication.pipeline_run", "--directory", str(workdir), "--", *args]


def planned_jobs(workdir: Path, target: str, cores: str, settings: str) -> dict[str, int]:
    """Jobs per rule that the build of ``target`` will run in ``workdir`` (Snakemake's dry run, as
    ``make cost``); in an empty folder, every job the target needs from clean."""
    from replication.cost import planned_jobs as jobs_of_dry_run
    from replication.snakemake_command import snakemake_command

    dry_run = snakemake_command(workdir, *snakemake_args(target, cores, settings), "--dry-run", "--quiet", "rules")
    result = subprocess.run(dry_run, cwd=ROOT, capture_output=True, text=True, check=True)
    return jobs_of_dry_run(result.stdout + result.stderr)


def rule_costs(workdir: Path, planned: dict[str, int], seen: set) -> dict:
    """Per rule the build ran: its jobs and their CPU-s by the kernel's count at the end of each job's
    log (replication.job_cost; logs in ``seen`` were counted by an earlier step); a job without that
    line (a rule whose script keeps no log) gets 0 CPU-s: its time is in the build's total."""
    jobs = job_costs(workdir / "logs")
    rules = {rule: {"jobs": count, "cpu_s": 0.0} for rule, count in planned.items()}
    for row in jobs.itertuples():
        if str(workdir / row.log) in seen:
            continue
        seen.add(str(workdir / row.log))
        rules.setdefault(row.rule, {"jobs": 0, "cpu_s": 0.0})["cpu_s"] += row.cpu_s
    return {rule: {"jobs": entry["jobs"], "cpu_s": round(entry["cpu_s"], 2)} for rule, entry in rules.items()}


def figure_costs(step: dict, cores: str) -> dict:
    """Each figure of the build's manifest from clean: its jobs and their CPU-s at this step's per-job
    costs (``replication.cost``). Jobs shared between figures count in each of them."""
    from replication.cost import per_job_costs
    from replication.registry import papers

    costs = per_job_costs({"runs": {"step": step}}, step["settings"])
    manifest = step["target"].removeprefix("figures/")
    figures = [f.path for paper in papers() for f in paper.figures if f.manifest == manifest]
    result = {}
    with tempfile.TemporaryDirectory(prefix="figure-cost-") as empty:
        for path in figures:
            jobs = planned_jobs(Path(empty), path, cores, step["settings"])
            cpu_s = sum(n * costs.get(rule, 0.0) for rule, n in jobs.items())
            result[path] = {"jobs": sum(jobs.values()), "cpu_s": round(cpu_s, 1)}
    return result


def tests_run(output_tail: list[str]) -> str:
    """``N tests`` from pytest's last line (passed, failed, skipped ... together): what the time is for."""
    counts = re.findall(r"(\d+) (?:passed|failed|skipped|xfailed|xpassed|errors?)\b", " ".join(output_tail))
    return f"{sum(int(n) for n in counts)} tests"


def describe(name: str, step: dict) -> list[str]:
    """A measured step in words: its command, size, wall and CPU time, and what else ran."""
    typed, target, start, _ = STEPS[name]
    what = f"{target}, {step['jobs']} jobs" if target else step["summary"]
    share = step["others_cpu_s"] / (step["wall_s"] * step["cpus"]) if step["wall_s"] else 0.0
    return [
        f"`{typed}` {start} ({what}): **{step['wall_s'] / 60:.1f} min wall, {step['cpu_s'] / 60:.1f} CPU-min** "
        f"(user {step['user_s']:.0f} s, system {step['sys_s']:.0f} s)",
        f"  {step['date']}, {step['cpu_model']}, {step['cpus']} CPUs; meanwhile other work took "
        f"{step['others_cpu_s']:.0f} CPU-s ({share:.0%} of the machine), load average {step['load_before']:.2f} before"
        + (f", single-core GEMM {step['gemm_gflops']:.0f} GFLOP/s" if "gemm_gflops" in step else ""),
    ]


def figure_table(step: dict) -> list[str]:
    """The paper build's figures by what each costs from clean, dearest first (Markdown)."""
    figures = sorted((step.get("figures") or {}).items(), key=lambda item: -item[1]["cpu_s"])
    if not figures:
        return []
    lines = [
        "",
        f"What each figure of `{step['command']}` costs from clean ({step['date']}, {step['cpu_model']}): "
        "its jobs at the build's per-job CPU time (`make cost TARGET=<figure>` plans the same); a job two "
        "figures need counts in both, so the column adds up to more than the build.",
        "",
        "| figure | jobs | CPU-min |",
        "|---|---:|---:|",
    ]
    return lines + [f"| `{path}` | {entry['jobs']} | {entry['cpu_s'] / 60:.1f} |" for path, entry in figures]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", default="2")
    parser.add_argument("--workdir", help="build here and keep the tree (default: a scratch directory)")
    parser.add_argument("--only", nargs="+", choices=list(STEPS), default=list(STEPS))
    parser.add_argument("--write", type=Path, help="PATH: write PATH.json and PATH.md")
    args = parser.parse_args()
    from replication.measurements import gemm_rate
    from replication.provenance import cpu_model

    machine = {"date": time.strftime("%Y-%m-%d"), "cpu_model": cpu_model(), "cpus": os.cpu_count()}
    results, seen = {}, set()
    with tempfile.TemporaryDirectory(prefix="build-times-") as scratch:
        workdir = Path(args.workdir or scratch)
        for name in args.only:
            typed, target, _, settings = STEPS[name]
            gemm = round(gemm_rate(), 1)  # before the step: its own load does not slow it
            if target:
                tree = workdir / settings  # the paper's and the smoke builds apart
                planned = planned_jobs(tree, target, args.cores, settings)
                step = measured(build_command(tree, target, args.cores, settings), ROOT)
                step["rules"] = rule_costs(tree, planned, seen)
                step["jobs"] = sum(rule["jobs"] for rule in step["rules"].values())
                step.update(settings=settings, target=target, cores=int(args.cores))
                if settings == "paper":
                    step["figures"] = figure_costs(step, args.cores)
            elif name == "env":  # a clone of the last commit, with no .venv
                clone = Path(scratch) / "clone"
                subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
                step = measured(["make", "env"], clone)
                step["summary"] = "a new .venv, every version of requirements/lock.txt"
            else:  # failing tests cost their time too: the summary says how many
                step = measured([PYTHON, "-m", "pytest", "-m", "not pipeline", "-n", "2"], ROOT, check=False)
                step["summary"] = tests_run(step["output_tail"])
            del step["output_tail"]
            results[name] = {"command": typed, **machine, "gemm_gflops": gemm, **step}
            for line in describe(name, results[name]):
                print(line, flush=True)
            if args.write:  # after each step: a later step's failure keeps the earlier ones
                write(args.write, {name: results[name]})


def write(path: Path, results: dict) -> None:
    """``path``.json: the steps measured now over those measured before (kept); ``path``.md: every
    step of it in words."""
    from replication.io import write_text
    from replication.measurements import report_body

    json_path = path.with_suffix(".json")
    runs = json.loads(json_path.read_text())["runs"] if json_path.is_file() else {}
    runs.update(results)
    write_text(json.dumps({"runs": runs}, indent=1, sort_keys=True) + "\n", json_path)
    lines = [line for name in STEPS if name in runs for line in describe(name, runs[name])]
    command, bullets = report_body("scripts/benchmarks/build_times.py", lines, None)
    bullets += figure_table(runs.get("paper", {}))
    header = [
        "<!-- written by scripts/benchmarks/build_times.py --write; do not edit -->",
        "The README's commands timed (CPU time of every process a step started, from the kernel), "
        f"last written by `{command}`:",
        "",
    ]
    write_text("\n".join(header + bullets) + "\n", path.with_suffix(".md"))


if __name__ == "__main__":
    main()
