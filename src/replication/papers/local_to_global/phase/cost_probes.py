"""The machine-side probes of the phase diagram's cost (``phase.cost``): a job's start-up, the GEMM
rate, one training step and its attention products, and the step under glibc's default heap against
freed memory kept. Each returns the lines it measured; ``phase.cost`` prints and writes them. It
asserts nothing.

    python -m replication.papers.local_to_global.phase.cost_probes MODE STEPS

is one heap probe's fresh interpreter (``heap_cost`` starts them): MODE is a key of ``HEAP_MODES``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import replication
from replication.compute import keep_freed_memory
from replication.measurements import paper_settings

# What a cell job imports before its first step.
IMPORTS = "import torch, replication.papers.local_to_global.phase.training, replication.io"
# glibc's own thresholds; freed memory kept (replication.compute, as jobs do): mode -> its label
HEAP_MODES = {"default": "default", "kept": "freed memory kept"}


def phase_config(configfiles: list[str]):
    """The transformer and phase settings the workflow reads with ``configfiles``."""
    settings = paper_settings("local_to_global", configfiles)
    return settings.transformer, settings.phase


def child_environment() -> dict[str, str]:
    """This environment, with the library this process imported first on the path of a child interpreter."""
    library = str(Path(replication.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [library, os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def startups(count: int) -> tuple[float, str]:
    """CPU-s of one job's start-up (the mean over ``count`` fresh interpreters), and its line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    env = child_environment()
    for _ in range(count):
        subprocess.run([sys.executable, "-c", IMPORTS], check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / count
    wall = (time.perf_counter() - wall) / count
    return cpu, f"start-up of a job (python + torch + package imports): {cpu:.2f} CPU-s, {wall:.2f} s wall"


def gemm_rate() -> str:
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
    return "float32 GEMM of the attention's shape, 1 thread: " + ", ".join(
        f"{name} {rate:.0f} GFLOP/s" for name, rate in rates.items()
    )


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
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step, settings


def step_cost(transformer, phase, steps: int = 30) -> list[str]:
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

    def blas():  # the right-hand side keys first, as the fast attention lays it out
        for (start, stop), w in zip(blocks, weights):
            torch.mm(rhs_rows[:stop].T, w)
            torch.mm(grad_sums[:, start:stop], w.T)
            torch.mm(rhs_rows[:stop], grad_sums[:, start:stop])

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
    lines = [
        f"a training step at (0.5, 0.8), standard init, 1 thread alone: {per_step:.1f} ms CPU, of which the "
        f"attention's big products ({len(blocks)} blocks x 3 products) take {products['torch.mm']:.1f} ms with torch.mm"
    ]
    if "oneDNN" in products:
        faster = per_step - products["torch.mm"] + products["oneDNN"]
        lines.append(
            f"  the same products with oneDNN: {products['oneDNN']:.1f} ms; the step with them: {faster:.1f} ms "
            f"(x{per_step / faster:.2f})"
        )
    return lines


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


def heap_cost(repeats: int = 3, steps: int = 40) -> tuple[list[str], float]:
    """The step with glibc's default heap against freed memory kept, in fresh interpreters taken in
    turn, alone and two side by side (as a grid's two jobs run on two cores): median CPU ms per step
    (user + system) and page faults per step. Returns its lines and the CPU ms per step that keeping
    saves side by side."""
    import json
    import statistics

    env = child_environment()
    command = [sys.executable, "-m", __name__]
    lines, saved = [], 0.0
    for side_by_side in (1, 2):
        samples = {mode: [] for mode in HEAP_MODES}
        for _ in range(repeats):
            for mode in HEAP_MODES:
                children = [
                    subprocess.Popen([*command, mode, str(steps)], stdout=subprocess.PIPE, text=True, env=env)
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
        lines.append(
            f"heap, a step at (0.5, 0.8), {where} ({len(samples['kept'])} processes of {steps} steps per heap): "
            + "; ".join(parts)
            + f": x{cpu['default'] / cpu['kept']:.2f}"
        )
        saved = cpu["default"] - cpu["kept"]
    return lines, saved


def main() -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description="One heap probe's fresh interpreter (heap_cost starts them)."
    )
    parser.add_argument("mode", choices=list(HEAP_MODES), help="the heap: glibc's default or freed memory kept")
    parser.add_argument("steps", type=int, help="training steps to time")
    args = parser.parse_args()
    heap_child(args.mode, args.steps)


if __name__ == "__main__":
    main()
