"""Cost of the phase diagram (figures/phase): CPU seconds per run, per iteration and per job, the
start-up cost of a job, and what early stopping saves. It prints numbers; it asserts nothing.

    .venv/bin/python -m replication.papers.local_to_global.phase.cost --directory DIR [--startups 3] [--gemm]
        [--step] [--heap] [--train P Q]

- ``--directory``: a pipeline directory with phase cells (finished or not): the runs' CPU seconds
  as the kernel counted them (``resource.getrusage`` around each run, in each cell's runs.csv), the
  iterations run against the horizon, and, when only some cells are done, the projection to the grid.
- ``--startups N``: N fresh interpreters importing what a cell job imports (Python, torch, the
  package), CPU and wall from the kernel (RUSAGE_CHILDREN): a job's start-up before its first step.
- ``--train P Q``: one cell trained here at the config's settings (every init and seed): CPU-s per
  run and per iteration, steps run against the horizon.
- ``--time FILE``: the ``/usr/bin/time -v`` report of the pipeline run, for the total CPU-s and wall.
- ``--gemm``: the machine's float32 GEMM rate on one thread (the attention's big products, as the
  fast attention forms them): CPUs differ about twofold in it, and the step is bound by it.
- ``--step``: one training step's CPU alone, and the part of it the attention's big products take,
  timed alone with torch.mm and with oneDNN: what routing them through oneDNN would save.
- ``--heap``: the step in fresh interpreters, alternately with glibc's default heap and with freed
  memory kept (``replication.compute``, as the training jobs run), alone and two side by side:
  CPU ms (user and system) and page faults per step, and what keeping saves of a finished grid.
- ``--write FILE``: the same lines as Markdown (a bullet each, with the command and the machine),
  e.g. ``docs/measurements/phase_cost.md``, which the documentation includes.

The probes of the machine (start-ups, GEMM, step, heap) are ``phase.cost_probes``. After
``make bless-manifest MANIFEST=phase`` this measures the blessed run (the part's ``run_cost``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd

from replication.command_line import command_parser
from replication.compute import keep_freed_memory
from replication.measurements import report_body, time_lines

from .cost_probes import gemm_rate, heap_cost, phase_config, startups, step_cost

COMMAND = "python -m replication.papers.local_to_global.phase.cost"
LINES: list[str] = []  # everything printed, for --write


def say(line: str) -> None:
    print(line, flush=True)
    LINES.append(line)


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f} on {} CPUs".format(*os.getloadavg(), os.cpu_count())


def directory(folder: Path, phase, startup: float | None, heap_saving: float | None) -> None:
    """The runs' cost in ``folder``; for a finished grid its total, with the cell jobs' start-ups
    (``startup`` CPU-s each) when measured, and what keeping freed memory saves of it (``heap_saving``
    ms per iteration, from ``heap_cost``) against glibc's default heap."""
    cells_dir = folder / "results" / "local_to_global" / "phase" / "cells"
    tables = sorted(cells_dir.glob("*/runs.csv"))
    if not tables:
        say(f"{folder}: no finished cell")
        return
    runs = pd.concat([pd.read_csv(t).assign(cell=t.parent.name) for t in tables], ignore_index=True)
    cells_total = len(phase.cells)
    steps, horizon = runs.steps_run.sum(), (runs.horizon).sum()
    per_iteration = runs.cpu_s.sum() / steps
    say(f"{folder}: {len(tables)} of {cells_total} cells finished, {len(runs)} runs")
    say(
        f"  CPU-s per run: median {runs.cpu_s.median():.1f}, mean {runs.cpu_s.mean():.1f}, max {runs.cpu_s.max():.1f}; "
        f"per iteration {1000 * per_iteration:.1f} ms (evaluations included)"
    )
    by_cell = runs.groupby("cell").agg(cpu_s=("cpu_s", "sum"), steps=("steps_run", "sum"))
    say(f"  CPU-s of training per cell job: median {by_cell.cpu_s.median():.0f}, max {by_cell.cpu_s.max():.0f}")
    runs["side"] = [("p + q > 1" if sum(cell_pq(cell)) > 1 else "p + q < 1") for cell in runs.cell]
    by_init = runs.groupby(["init", "side"]).agg(
        runs=("steps_run", "size"),
        steps=("steps_run", "mean"),
        stopped=("stopped_early", "mean"),
        cpu=("cpu_s", "mean"),
        total=("cpu_s", "sum"),
    )
    for (init, side), row in by_init.iterrows():
        say(
            f"  {init}, {side}: {int(row.runs)} runs, mean {row.steps:.0f} iterations, "
            f"{row.stopped:.0%} stopped early, {row.cpu:.1f} CPU-s per run, "
            f"{row.total / runs.cpu_s.sum():.0%} of the training CPU-s"
        )
    say(
        f"  early stopping: {steps} of {horizon} iterations run ({steps / horizon:.0%}); "
        f"saved ~{(horizon - steps) * per_iteration:.0f} CPU-s ({(horizon - steps) * per_iteration / 3600:.2f} CPU-h) "
        f"in these cells, x{horizon / steps:.2f} against running every run to the horizon"
    )
    if len(tables) < cells_total:
        # Per side of the line: the finished cells' mean, times the grid's cells on that side.
        above = {cell: (lambda pq: pq[0] + pq[1] > 1)(cell_pq(cell)) for cell in by_cell.index}
        grid_above = sum(cell.chain.p + cell.chain.q > 1 for cell in phase.cells)
        means = by_cell.cpu_s.groupby(pd.Series(above)).mean()
        if len(means) == 2:
            projected = means[True] * grid_above + means[False] * (cells_total - grid_above)
            how = "the mean cell of each side of the line times the grid's cells on that side"
        else:
            projected, how = by_cell.cpu_s.mean() * cells_total, "the mean cell times the grid's cells"
        say(
            f"  projection to the grid ({cells_total} cells): {projected:.0f} CPU-s of training "
            f"({projected / 3600:.2f} CPU-h; {how})"
        )
    else:
        training = runs.cpu_s.sum()
        say(f"  grid total: {training:.0f} CPU-s of training ({training / 3600:.2f} CPU-h)")
        if startup is not None:
            total = training + startup * cells_total
            say(
                f"  with the start-ups of its {cells_total} cell jobs ({startup:.2f} CPU-s each): "
                f"{total:.0f} CPU-s in all ({total / 3600:.2f} CPU-h)"
            )
            # The step cost at which these iterations (and start-ups) would fit in 2 CPU-hours
            budget = (2 * 3600 - startup * cells_total) / steps
            say(
                f"  2 CPU-h for these {steps} iterations: at most {1000 * budget:.1f} ms per iteration "
                f"(measured {1000 * per_iteration:.1f}: x{per_iteration / budget:.2f} too slow)"
            )
        if heap_saving is not None:
            saved = heap_saving / 1000 * steps
            say(
                f"  keeping freed memory saves ~{saved:.0f} CPU-s of these iterations against glibc's default heap "
                f"({heap_saving:.1f} ms per iteration side by side, the heap line above: "
                f"x{training / (training - saved):.2f})"
            )
        # Cell jobs side by side on every core: the runs' wall time shared among the cores.
        wall = runs.wall_s.sum() / os.cpu_count()
        say(f"  wall of the training on {os.cpu_count()} cores side by side: {wall / 3600:.2f} h")


def cell_pq(cell: str) -> tuple[float, float]:
    p, q = cell.removeprefix("p").split("_q")
    return float(p), float(q)


def common_random_numbers(folder: Path) -> None:
    """What scoring the model, the chain and the unigram predictor on the same batches cancels: the
    per-batch noise of the closed fraction with common random numbers against the fixed population
    losses (cells.csv of the measures rule, one value per cell and init)."""
    path = folder / "results" / "local_to_global" / "phase" / "cells.csv"
    if not path.exists():
        return
    cells = pd.read_csv(path)
    ratio = cells.noise_closed_fixed / cells.noise_closed
    say(
        f"common random numbers: per-batch noise of the closed fraction {cells.noise_closed.median():.3g} "
        f"(median over {len(cells)} cell-inits) against {cells.noise_closed_fixed.median():.3g} against fixed "
        f"population losses: x{ratio.median():.1f} less (range x{ratio.min():.1f}-x{ratio.max():.1f}); "
        f"{int(cells.resolvable.sum())} of {len(cells)} cell-inits resolvable"
    )


def time_report(path: Path) -> None:
    for line in time_lines(path, str(path)):
        say(line)


def train_one(transformer, phase, p: float, q: float) -> None:
    import torch

    from replication.papers.local_to_global.phase.grid import Cell
    from replication.papers.local_to_global.phase.settings import phase_run_settings
    from replication.papers.local_to_global.phase.training import train_cell

    torch.set_num_threads(transformer.threads)
    settings = phase_run_settings(transformer, phase, Cell.keyed(p, q))
    _, runs, _ = train_cell(settings, phase.stop, phase.measures.smooth, progress=False)
    for run in runs.itertuples():
        say(
            f"  ({p:g}, {q:g}) {run.init} seed {run.seed}: {run.steps_run} of {run.horizon} iterations, "
            f"{run.cpu_s:.1f} CPU-s ({1000 * run.cpu_s / run.steps_run:.1f} ms per iteration), {run.wall_s:.1f} s wall"
        )


def main() -> None:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument(
        "--directory", type=Path, help="a phase run's folder: the cost of its runs (and totals when finished)"
    )
    parser.add_argument("--configfile", nargs="*", default=[], help="over config/config.yaml, e.g. config/smoke.yaml")
    parser.add_argument("--startups", type=int, default=0, help="time this many fresh job start-ups (0: none)")
    parser.add_argument("--train", nargs=2, type=float, metavar=("P", "Q"), help="train the cell (p, q) once, timed")
    parser.add_argument("--time", type=Path, help="a /usr/bin/time -v report of the run to summarise")
    parser.add_argument("--gemm", action="store_true", help="the attention's big product in GFLOP/s, one thread")
    parser.add_argument("--step", action="store_true", help="one training step against its block products")
    parser.add_argument(
        "--heap", action="store_true", help="the step with glibc's default heap against freed memory kept"
    )
    parser.add_argument("--write", type=Path, help="also write the lines printed as Markdown here")
    args = parser.parse_args()
    keep_freed_memory()  # as every training job does (replication.compute)
    transformer, phase = phase_config(args.configfile)
    say(load())
    say(
        f"grid: {len(phase.cells)} cells x {len(phase.inits)} inits x {len(phase.seeds)} seeds, "
        f"horizon {phase.horizon}, "
        f"test every {phase.eval_every}, stop after {phase.stop.patience} iterations at >= {phase.stop.closed}; "
        f"context {transformer.model.context}, batch {transformer.batch_size}, attention {transformer.attention}"
    )
    if args.gemm:
        say(gemm_rate())
    if args.step:
        for line in step_cost(transformer, phase):
            say(line)
    heap_saving = startup = None
    if args.heap:
        lines, heap_saving = heap_cost()
        for line in lines:
            say(line)
    if args.startups:
        startup, line = startups(args.startups)
        say(line)
    if args.train:
        train_one(transformer, phase, *args.train)
    if args.directory:
        directory(args.directory, phase, startup, heap_saving)
        common_random_numbers(args.directory)
    if args.time:
        time_report(args.time)
    say(load())
    if args.write:
        write(args.write, args.directory)


def write(path: Path, directory: Path | None) -> None:
    """LINES as Markdown bullets under the date, the CPU and the command (the run's folder as DIR)."""
    from replication.io import write_text
    from replication.provenance import cpu_model

    command, bullets = report_body(COMMAND, LINES, directory)
    header = [
        f"<!-- written by {COMMAND} --write; do not edit -->",
        f"Measured on {time.strftime('%Y-%m-%d')}, {cpu_model()}, {os.cpu_count()} CPUs, with `{command}`:",
        "",
    ]
    write_text("\n".join(header + bullets) + "\n", path)


if __name__ == "__main__":
    main()
