"""Benchmark: the full Benign-overfitting grid (400 cells x 20000 steps) with the exact Gram trainer,
and the cost of one gradient step against the direct d-dimensional form and the authors' form.

    .venv/bin/python -m replication.papers.benign_overfitting.grid_cost  # full grid, 2 worker processes
    .venv/bin/python -m replication.papers.benign_overfitting.grid_cost --steps 2000

The machine may be shared: the load average is printed next to the numbers.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread per worker process

import numpy as np  # noqa: E402
import torch  # noqa: E402

from replication.command_line import command_parser
from replication.config import validate_config  # noqa: E402
from replication.papers.benign_overfitting import model  # noqa: E402
from replication.papers.benign_overfitting.data import head, sample_dataset  # noqa: E402
from replication.papers.benign_overfitting.grid import run_cells  # noqa: E402
from replication.papers.benign_overfitting.settings import grid_cells, settings  # noqa: E402
from replication.papers.benign_overfitting.train import GramProblem, stack, train_gram  # noqa: E402
from replication.paths import PROJECT_ROOT  # noqa: E402

# The paper's settings are the schema's defaults; one seed per cell.
_SCHEMA = PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml"
PAPER = settings(validate_config({"benign_overfitting": {"grid": {"seeds": [1]}}}, _SCHEMA)["benign_overfitting"])


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def per_step_costs(d: int = 2000) -> dict[str, float]:
    """Seconds per gradient step of one d = 2000 cell in three forms."""
    data = sample_dataset(np.random.default_rng(0), 20, 8, d, 20.0, 0.2, 0.2)
    nu, y = head(d, 20.0), data.y.astype(float)
    steps = 30
    start = time.perf_counter()
    model.train_direct(data.x, y, nu, 1e-4, steps)
    direct = (time.perf_counter() - start) / steps
    # The authors' form: logits x @ W @ p with a d x d matrix W (identity), autograd, float32
    x, target = torch.tensor(data.x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)
    W, p = torch.eye(d), torch.zeros(d, 1, requires_grad=True)
    nu_t = torch.tensor(nu, dtype=torch.float32).view(-1, 1)
    start = time.perf_counter()
    for _ in range(3):
        s = torch.softmax((x @ W @ p).squeeze(-1), dim=-1)
        f = (s * (x @ nu_t).squeeze(-1)).sum(1)
        torch.log(1 + torch.exp(-target * f)).mean().backward()
        with torch.no_grad():
            p -= 1e-4 * p.grad
        p.grad = None
    authors = (time.perf_counter() - start) / 3
    problem = GramProblem.from_data(data)
    start = time.perf_counter()
    gram_steps = 20000
    train_gram(*stack([problem]), 1e-4, gram_steps)
    gram = (time.perf_counter() - start) / gram_steps
    return {
        "authors' form (x @ W @ p, torch autograd)": authors,
        "direct d-dim (numpy)": direct,
        "exact Gram (this project)": gram,
    }


def _chunk(args):
    cells, steps = args
    start, cpu = time.perf_counter(), time.process_time()
    frame = run_cells(cells, PAPER.model, steps, batch_cells=4)
    return frame, time.perf_counter() - start, time.process_time() - cpu


def grid_time(steps: int, workers: int):
    cells = grid_cells(PAPER.grid)
    chunks = [cells[k::workers] for k in range(workers)]  # interleaved: equal work per worker
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_chunk, [(chunk, steps) for chunk in chunks]))
    wall = time.perf_counter() - start
    return wall, len(cells), [t for _, t, _ in results], [c for _, _, c in results], sum(len(f) for f, _, _ in results)


def main() -> None:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument(
        "--steps", type=int, default=20000, help="gradient steps per cell (default: the paper's %(default)s)"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="processes the grid is split over (default: %(default)s)"
    )
    args = parser.parse_args()
    train_gram(
        *stack([GramProblem.from_data(sample_dataset(np.random.default_rng(0), 2, 8, 30, 1.0, 0.2, 0.5))]), 1e-4, 2
    )  # compile (or load) the Numba kernel once, outside the timings
    print(f"[{load()}] per-step cost of one d = 2000 cell (n = 20, T = 8):")
    costs = per_step_costs()
    gram = costs["exact Gram (this project)"]
    for name, seconds in costs.items():
        print(f"  {name:42s} {seconds * 1e6:12.1f} us/step   {seconds / gram:10.0f} x the Gram step")
    print(
        f"  one cell at 20000 steps: authors' form {costs[next(iter(costs))] * 20000 / 3600:.2f} h, "
        f"Gram {gram * 20000:.2f} s"
    )
    print(f"[{load()}] grid: 400 cells x {args.steps} steps, {args.workers} worker processes ...")
    wall, cells, worker_times, worker_cpu, rows = grid_time(args.steps, args.workers)
    assert rows == cells
    cpu = sum(worker_cpu)
    print(
        f"  wall time {wall:.1f} s  (workers {', '.join(f'{t:.1f}' for t in worker_times)} s wall, "
        f"{', '.join(f'{t:.1f}' for t in worker_cpu)} s CPU)"
    )
    print(
        f"  CPU time {cpu:.1f} core-s = {cpu / (cells * args.steps) * 1e6:.2f} us per cell-step; "
        f"on {args.workers} otherwise idle cores: ~{cpu / args.workers:.1f} s wall"
    )
    goal = 60 * args.steps / 20000
    print(
        f"  goal <= {goal:.0f} s: {'met' if wall <= goal else 'NOT met'} in wall time at this load, "
        f"{'met' if cpu / args.workers <= goal else 'NOT met'} in CPU time per core; "
        f"the authors' form would need ~{costs[next(iter(costs))] * 20000 * cells / 86400:.0f} core-days"
    )
    print(f"[{load()}] done")


if __name__ == "__main__":
    main()
