"""Cost of the phase diagram (figures/phase): CPU seconds per run, per iteration and per job, the
start-up cost of a job, and what early stopping saves. It prints numbers; it asserts nothing.

    .venv/bin/python scripts/benchmarks/phase_diagram.py --directory DIR [--startups 3] [--train P Q]

- ``--directory``: a pipeline directory with phase cells (finished or not): the runs' CPU seconds
  as the kernel counted them (``resource.getrusage`` around each run, in each cell's runs.csv), the
  iterations run against the horizon, and, when only some cells are done, the projection to the grid.
- ``--startups N``: N fresh interpreters importing what a cell job imports (Python, torch, the
  package), CPU and wall from the kernel (RUSAGE_CHILDREN): a job's start-up before its first step.
- ``--train P Q``: one cell trained here at the config's settings (every init and seed): CPU-s per
  run and per iteration, steps run against the horizon.
- ``--time FILE``: the ``/usr/bin/time -v`` report of the pipeline run, for the total CPU-s and wall.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[2]
IMPORTS = "import torch, replication.papers.local_to_global.phase.run, replication.io"


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f} on {} CPUs".format(*os.getloadavg(), os.cpu_count())


def phase_config(configfiles: list[str]):
    """The settings the workflow would read: config/config.yaml, then ``configfiles`` over it (and a
    paper's smoke.yaml where they say ``settings: smoke``, as workflow/rules/common.smk does)."""
    from replication.config import apply_settings, update_config, validate_config
    from replication.papers.local_to_global.phase.settings import phase_settings
    from replication.papers.local_to_global.transformer.settings import transformer_settings

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    given = [yaml.safe_load(Path(path).read_text()) or {} for path in configfiles]
    for values in given:
        update_config(config, values)
    config = validate_config(apply_settings(config, given), ROOT / "workflow" / "schemas" / "config.schema.yaml")
    return transformer_settings(config["local_to_global"]), phase_settings(config["local_to_global"])


def startups(count: int) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    for _ in range(count):
        subprocess.run([sys.executable, "-c", IMPORTS], check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / count
    wall = (time.perf_counter() - wall) / count
    print(f"start-up (python + torch + package imports): {cpu:.2f} CPU-s, {wall:.2f} s wall per job")


def directory(folder: Path, phase) -> None:
    cells_dir = folder / "results" / "local_to_global" / "phase" / "cells"
    tables = sorted(cells_dir.glob("*/runs.csv"))
    if not tables:
        print(f"{folder}: no finished cell")
        return
    runs = pd.concat([pd.read_csv(t).assign(cell=t.parent.name) for t in tables], ignore_index=True)
    cells_total = len(phase.chains)
    steps, horizon = runs.steps_run.sum(), (runs.horizon).sum()
    per_iteration = runs.cpu_s.sum() / steps
    print(f"{folder}: {len(tables)} of {cells_total} cells finished, {len(runs)} runs")
    print(
        f"  CPU-s per run: median {runs.cpu_s.median():.1f}, mean {runs.cpu_s.mean():.1f}, max {runs.cpu_s.max():.1f}; "
        f"per iteration {1000 * per_iteration:.1f} ms (evaluations included)"
    )
    by_cell = runs.groupby("cell").agg(cpu_s=("cpu_s", "sum"), steps=("steps_run", "sum"))
    print(f"  CPU-s of training per cell job: median {by_cell.cpu_s.median():.0f}, max {by_cell.cpu_s.max():.0f}")
    by_init = runs.groupby("init").agg(
        steps=("steps_run", "mean"), stopped=("stopped_early", "mean"), cpu=("cpu_s", "mean")
    )
    for init, row in by_init.iterrows():
        print(
            f"  {init}: mean {row.steps:.0f} iterations per run, {row.stopped:.0%} stopped early, "
            f"{row.cpu:.1f} CPU-s per run"
        )
    print(
        f"  early stopping: {steps} of {horizon} iterations run ({steps / horizon:.0%}); "
        f"saved ~{(horizon - steps) * per_iteration:.0f} CPU-s ({(horizon - steps) * per_iteration / 3600:.2f} CPU-h) "
        f"in these cells, x{horizon / steps:.2f} against running every run to the horizon"
    )
    if len(tables) < cells_total:
        projected = by_cell.cpu_s.mean() * cells_total
        print(
            f"  projection to the grid ({cells_total} cells) from the finished ones: {projected:.0f} CPU-s of "
            f"training ({projected / 3600:.2f} CPU-h); the finished cells are not a random sample"
        )
    else:
        print(f"  grid total: {runs.cpu_s.sum():.0f} CPU-s of training ({runs.cpu_s.sum() / 3600:.2f} CPU-h)")


def time_report(path: Path) -> None:
    text = path.read_text()
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text).group(1)
    total = user + system
    print(f"{path}: {total:.0f} CPU-s in all ({total / 3600:.2f} CPU-h; user {user:.0f}, system {system:.0f})")
    print(f"  wall {wall}")


def train_one(transformer, phase, p: float, q: float) -> None:
    import torch

    from replication.papers.local_to_global.markov import MarkovChain
    from replication.papers.local_to_global.phase.run import train_cell
    from replication.papers.local_to_global.phase.settings import phase_run_settings

    torch.set_num_threads(transformer.threads)
    settings = phase_run_settings(transformer, phase, MarkovChain(p, q))
    _, runs, _ = train_cell(settings, phase.stop, phase.measures.smooth, f"p{p:g}_q{q:g}", progress=False)
    for run in runs.itertuples():
        print(
            f"  ({p:g}, {q:g}) {run.init} seed {run.seed}: {run.steps_run} of {run.horizon} iterations, "
            f"{run.cpu_s:.1f} CPU-s ({1000 * run.cpu_s / run.steps_run:.1f} ms per iteration), {run.wall_s:.1f} s wall"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", type=Path)
    parser.add_argument("--configfile", nargs="*", default=[], help="over config/config.yaml, e.g. config/smoke.yaml")
    parser.add_argument("--startups", type=int, default=0)
    parser.add_argument("--train", nargs=2, type=float, metavar=("P", "Q"))
    parser.add_argument("--time", type=Path)
    args = parser.parse_args()
    transformer, phase = phase_config(args.configfile)
    print(load())
    print(
        f"grid: {len(phase.chains)} cells x {len(phase.inits)} inits x {len(phase.seeds)} seeds, "
        f"horizon {phase.horizon}, "
        f"test every {phase.eval_every}, stop after {phase.stop.patience} iterations at >= {phase.stop.closed}; "
        f"context {transformer.model.context}, batch {transformer.batch_size}, attention {transformer.attention}"
    )
    if args.startups:
        startups(args.startups)
    if args.train:
        train_one(transformer, phase, *args.train)
    if args.directory:
        directory(args.directory, phase)
    if args.time:
        time_report(args.time)
    print(load())


if __name__ == "__main__":
    main()
