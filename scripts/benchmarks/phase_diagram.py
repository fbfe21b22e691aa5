"""Cost of the phase diagram (figures/phase): CPU seconds per run, per iteration and per job, the
start-up cost of a job, and what early stopping saves. It prints numbers; it asserts nothing.

    .venv/bin/python scripts/benchmarks/phase_diagram.py --directory DIR [--startups 3] [--gemm] [--step] [--heap]
        [--train P Q]

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
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from replication.compute import keep_freed_memory
from replication.measurements import paper_settings, report_body, time_lines

ROOT = Path(__file__).resolve().parents[2]
IMPORTS = "import torch, replication.papers.local_to_global.phase.training, replication.io"
LINES: list[str] = []  # everything printed, for --write


def say(line: str) -> None:
    print(line, flush=True)
    LINES.append(line)


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f} on {} CPUs".format(*os.getloadavg(), os.cpu_count())


def phase_config(configfiles: list[str]):
    """The transformer and phase settings the workflow reads with ``configfiles``."""
    settings = paper_settings("local_to_global", configfiles)
    return settings.transformer, settings.phase


def child_environment() -> dict[str, str]:
    """This environment, with this checkout's library first on the path of a child interpreter."""
    path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def startups(count: int) -> float:
    """CPU-s of one job's start-up (the mean over ``count`` fresh interpreters)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    env = child_environment()
    for _ in range(count):
        subprocess.run([sys.executable, "-c", IMPORTS], check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / count
    wall = (time.perf_counter() - wall) / count
    say(f"start-up of a job (python + torch + package imports): {cpu:.2f} CPU-s, {wall:.2f} s wall")
    return cpu


def gemm_rate() -> None:
    """GFLOP/s of the attention's big product, (2 (d + 1) (B + 1)) x N times N x 128 in float32 (d 8,
    B 16, N 1024), on one thread: torch.mm (the BLAS PyTorch was built with) and, where PyTorch has
    it, oneDNN's matrix product, for comparison (the pipeline uses torch.mm)."""
    import torch

    torch.set_num_threads(1)
    left, right = torch.randn(306, 1024), torch.rand(1024, 128)
    products = {"torch.mm": lambda: torch.mm(left, right)}
    if torch.backends.mkldnn.is_available():
        weights = right.T.contiguous()
        products["oneDNN"] = lambda: torch.ops.mkldnn._linear_pointwise(left, weights, None, "none", [], "")
    rates = {}
    for name, product in products.items():
        for _ in range(5):
            product()
        repeats, start = 50, time.perf_counter()
        for _ in range(repeats):
            product()
        rates[name] = 2 * 306 * 1024 * 128 * repeats / (time.perf_counter() - start) / 1e9
    say(
        "float32 GEMM of the attention's shape, 1 thread: "
        + ", ".join(f"{name} {rate:.0f} GFLOP/s" for name, rate in rates.items())
    )


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


def phase_step(transformer, phase):
    """One training step at (0.5, 0.8) from the standard init at the phase settings, on one thread
    (a closure over a fixed batch), and the run's settings."""
    import dataclasses

    import torch

    from replication.papers.local_to_global.data import sample_sequences
    from replication.papers.local_to_global.markov import MarkovChain
    from replication.papers.local_to_global.phase.grid import Cell
    from replication.papers.local_to_global.phase.settings import phase_run_settings
    from replication.papers.local_to_global.transformer.model import initialise
    from replication.papers.local_to_global.transformer.train import make_model, make_optimizer

    torch.set_num_threads(1)
    chain = MarkovChain(0.5, 0.8)
    settings = dataclasses.replace(phase_run_settings(transformer, phase, Cell(chain)), checkpoints=())
    generator = torch.Generator().manual_seed(1)
    model = initialise(make_model(settings), "standard", settings.sigma, generator, settings.rank_one_value)
    optimizer = make_optimizer(model, settings)
    tokens = sample_sequences(chain, (settings.batch_size,), settings.model.context + 1, generator)
    x, y = tokens[:, :-1], tokens[:, 1:]

    def step():
        loss = model.loss(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step, settings


def step_cost(transformer, phase, steps: int = 30) -> None:
    """One training step (``phase_step``), one thread alone, and the part of it that the attention's
    big products take: the step's own sequence of them (forward, and the two backward products, per
    block of rows of the causal triangle), timed alone with torch.mm, as the fast attention calls it,
    and with oneDNN's product (row-major left operands, as oneDNN wants them), and the step with the
    oneDNN products in their place."""
    import torch

    from replication.papers.local_to_global.transformer.fast_attention import BLOCK_ROWS

    step, settings = phase_step(transformer, phase)
    length = settings.model.context

    rows = 2 * (settings.model.d + 1) * (settings.batch_size + 1)
    rhs, grad_sums = torch.randn(rows, length), torch.randn(rows, length)
    rhs_rows, grad_rows = rhs.T.contiguous(), grad_sums.T.contiguous()
    blocks = [(start, min(start + BLOCK_ROWS, length)) for start in range(0, length, BLOCK_ROWS)]
    weights = [torch.rand(stop, stop - start) for start, stop in blocks]  # (keys, rows) per block

    def blas():
        for (start, stop), w in zip(blocks, weights):
            torch.mm(rhs[:, :stop], w)
            torch.mm(grad_sums[:, start:stop], w.T)
            torch.mm(rhs[:, :stop].T, grad_sums[:, start:stop])

    def onednn():
        onednn_product = torch.ops.mkldnn._linear_pointwise  # a @ b.T
        for (start, stop), w in zip(blocks, weights):
            onednn_product(rhs[:, :stop], w.T, None, "none", [], "")
            onednn_product(grad_sums[:, start:stop], w, None, "none", [], "")
            onednn_product(grad_rows[start:stop], rhs_rows[:stop], None, "none", [], "")

    def cpu_ms(fn, repeats):
        for _ in range(3):
            fn()
        cpu = time.process_time()
        for _ in range(repeats):
            fn()
        return (time.process_time() - cpu) / repeats * 1e3

    per_step = cpu_ms(step, steps)
    products = {"torch.mm": cpu_ms(blas, steps)}
    if torch.backends.mkldnn.is_available():
        products["oneDNN"] = cpu_ms(onednn, steps)
    say(
        f"a training step at (0.5, 0.8), standard init, 1 thread alone: {per_step:.1f} ms CPU, of which the "
        f"attention's big products ({len(blocks)} blocks x 3 products) take {products['torch.mm']:.1f} ms with torch.mm"
    )
    if "oneDNN" in products:
        faster = per_step - products["torch.mm"] + products["oneDNN"]
        say(
            f"  the same products with oneDNN: {products['oneDNN']:.1f} ms; the step with them: {faster:.1f} ms "
            f"(x{per_step / faster:.2f})"
        )


# glibc's own thresholds; freed memory kept (replication.compute, as jobs do): mode -> its label
HEAP_MODES = {"default": "default", "kept": "freed memory kept"}


def heap_child(mode: str, steps: int) -> None:
    """In a fresh interpreter: ``steps`` training steps (``phase_step``) with the heap ``mode``; prints
    the kernel's user and system CPU ms and the page faults per step as JSON."""
    import json

    if mode == "kept":
        keep_freed_memory()
    transformer, phase = phase_config([])
    step, _ = phase_step(transformer, phase)
    for _ in range(3):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(steps):
        step()
    after = resource.getrusage(resource.RUSAGE_SELF)
    per_step = {
        "user_ms": (after.ru_utime - before.ru_utime) * 1e3,
        "system_ms": (after.ru_stime - before.ru_stime) * 1e3,
        "faults": after.ru_minflt - before.ru_minflt,
    }
    print(json.dumps({key: value / steps for key, value in per_step.items()}))


def heap_cost(repeats: int = 3, steps: int = 40) -> float:
    """The step with glibc's default heap against freed memory kept, in fresh interpreters taken in
    turn, alone and two side by side (as a grid's two jobs run on two cores): median CPU ms per step
    (user + system) and page faults per step. Returns the CPU ms per step that keeping saves side by side."""
    import json
    import statistics

    env = child_environment()
    command = [sys.executable, str(Path(__file__).resolve()), "--steps", str(steps), "--heap-child"]
    saved = 0.0
    for side_by_side in (1, 2):
        samples = {mode: [] for mode in HEAP_MODES}
        for _ in range(repeats):
            for mode in HEAP_MODES:
                children = [
                    subprocess.Popen([*command, mode], stdout=subprocess.PIPE, text=True, env=env)
                    for _ in range(side_by_side)
                ]
                samples[mode] += [json.loads(child.communicate()[0]) for child in children]
        cpu = {mode: statistics.median(s["user_ms"] + s["system_ms"] for s in samples[mode]) for mode in HEAP_MODES}
        parts = [
            f"{label} {cpu[mode]:.1f} ms (system {statistics.median(s['system_ms'] for s in samples[mode]):.1f}, "
            f"{statistics.median(s['faults'] for s in samples[mode]):.0f} page faults)"
            for mode, label in HEAP_MODES.items()
        ]
        where = "alone" if side_by_side == 1 else "two side by side"
        say(
            f"heap, a step at (0.5, 0.8), {where} ({len(samples['kept'])} processes of {steps} steps per heap): "
            + "; ".join(parts)
            + f": x{cpu['default'] / cpu['kept']:.2f}"
        )
        saved = cpu["default"] - cpu["kept"]
    return saved


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", type=Path)
    parser.add_argument("--configfile", nargs="*", default=[], help="over config/config.yaml, e.g. config/smoke.yaml")
    parser.add_argument("--startups", type=int, default=0)
    parser.add_argument("--train", nargs=2, type=float, metavar=("P", "Q"))
    parser.add_argument("--time", type=Path)
    parser.add_argument("--gemm", action="store_true")
    parser.add_argument("--step", action="store_true")
    parser.add_argument("--heap", action="store_true")
    parser.add_argument("--steps", type=int, default=40, help=argparse.SUPPRESS)
    parser.add_argument("--heap-child", choices=list(HEAP_MODES), help=argparse.SUPPRESS)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    if args.heap_child:
        return heap_child(args.heap_child, args.steps)
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
        gemm_rate()
    if args.step:
        step_cost(transformer, phase)
    heap_saving = heap_cost() if args.heap else None
    startup = startups(args.startups) if args.startups else None
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

    command, bullets = report_body("scripts/benchmarks/phase_diagram.py", LINES, directory)
    header = [
        "<!-- written by scripts/benchmarks/phase_diagram.py --write; do not edit -->",
        f"Measured on {time.strftime('%Y-%m-%d')}, {cpu_model()}, {os.cpu_count()} CPUs, with `{command}`:",
        "",
    ]
    write_text("\n".join(header + bullets) + "\n", path)


if __name__ == "__main__":
    main()
