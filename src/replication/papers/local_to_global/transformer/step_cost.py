"""Speed of the Local to Global transformer at the paper's settings, both attention paths side by side.

For the ``fast`` and ``sdpa`` attention paths, in one process and interleaved so that the machine's
load falls on both alike, prints: attention forward + backward alone, the evaluation forward (test
loss, no gradients), and ms per training iteration alone and with a test evaluation every step
(wall clock and CPU time, from the slope between a short and a longer run so that set-up cost
cancels; each number the median of repetitions taken in turn for the two paths), with the ratio
sdpa / fast of CPU times; the floor of the fast path's training iteration (its attention's block
products alone: per block of rows of the causal triangle, the forward's product with E and the
backward's two, at the model's shapes, timed alone with torch.mm) and the iteration's ratio to it;
then peak memory, the bulk sampler against a per-position Python loop, and the machine's load and
single-core GEMM rate (``replication.measurements.gemm_rate``). It prints numbers; it asserts nothing.

    .venv/bin/python -m replication.papers.local_to_global.transformer.step_cost [--threads 1 2] [--steps 40]
        [--repeats 3] [--device cpu]
"""

from __future__ import annotations

import dataclasses
import os
import resource
import statistics
import time

import torch
import yaml

from replication.command_line import command_parser
from replication.compute import keep_freed_memory
from replication.config import validate_config
from replication.measurements import gemm_rate
from replication.papers.local_to_global.data import sample_sequences, symbols_in_bulk
from replication.papers.local_to_global.transformer.fast_attention import BLOCK_ROWS
from replication.papers.local_to_global.transformer.model import initialise
from replication.papers.local_to_global.transformer.settings import transformer_settings
from replication.papers.local_to_global.transformer.train import make_model, stream_seed, train
from replication.paths import PROJECT_ROOT

# The paper settings of Fig. 4, read from the project's config so the benchmark cannot drift.
_CONFIG = validate_config(
    yaml.safe_load((PROJECT_ROOT / "config" / "config.yaml").read_text()),
    PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml",
)
SETTINGS = dataclasses.replace(transformer_settings(_CONFIG["local_to_global"]).run("fig4"), checkpoints=())
CHAIN = SETTINGS.chain


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


PATHS = ("fast", "sdpa")


def per_step(steps: int, eval_every: int, device: str, repeats: int, floor=None) -> dict[str, tuple[float, float]]:
    """(wall, cpu) seconds per iteration for each path: the slope between runs of `steps` and 3 * `steps`
    iterations, the median over `repeats` slopes taken in turn for the paths (load changes hit both).
    With ``floor`` (a function giving CPU seconds), also "floor": its CPU seconds after each repeat,
    and "ratio": the fast path's CPU slope over it, repeat by repeat (medians, as (ratio, ratio))."""

    def run(attention, n):
        settings = dataclasses.replace(SETTINGS, eval_every=eval_every, device=device, attention=attention, steps=n)
        return timed(lambda: train(settings, "standard", 1, progress=False))

    slopes = {attention: [] for attention in PATHS}
    for attention in PATHS:
        run(attention, 5)  # warm-up: allocator, kernels
    floors = []
    for _ in range(repeats):
        for attention in PATHS:
            short, long = run(attention, steps), run(attention, 3 * steps)
            slopes[attention].append(((long[0] - short[0]) / (2 * steps), (long[1] - short[1]) / (2 * steps)))
        if floor is not None:  # right after the runs it is compared with: the same load on both
            floors.append(floor())
    result = {
        attention: tuple(statistics.median(slope[i] for slope in values) for i in (0, 1))
        for attention, values in slopes.items()
    }
    if floors:
        ratio = statistics.median(slope[1] / f for slope, f in zip(slopes["fast"], floors))
        result |= {"floor": (statistics.median(floors),) * 2, "ratio": (ratio, ratio)}
    return result


def kernel_times(reps: int, device: str) -> dict[str, dict[str, tuple[float, float]]]:
    """(wall, cpu) seconds of attention forward + backward and of the evaluation forward, per path."""
    models = {}
    for attention in PATHS:
        model = initialise(
            make_model(dataclasses.replace(SETTINGS, attention=attention)),
            "standard",
            SETTINGS.sigma,
            torch.Generator().manual_seed(stream_seed(1, 0)),
            SETTINGS.rank_one_value,
        )
        models[attention] = model.to(device)
    g = torch.Generator().manual_seed(1)
    tokens = sample_sequences(CHAIN, (SETTINGS.batch_size,), SETTINGS.model.context + 1, g).to(device)
    x, y = tokens[:, :-1], tokens[:, 1:]

    def attention_step(model):
        embedded = x.unsqueeze(-1).to(model.e.dtype) * model.e + model.p[: x.shape[1]]
        model.attend(x, embedded).square().sum().backward()

    def evaluation(model):
        with torch.no_grad():
            model.loss(x, y)

    samples = {attention: {"attention": [], "evaluation": []} for attention in PATHS}
    for what, fn in (("attention", attention_step), ("evaluation", evaluation)):
        for attention in PATHS:
            fn(models[attention])  # warm-up
        for _ in range(reps):  # interleaved: load changes hit both paths alike
            for attention in PATHS:
                samples[attention][what].append(timed(lambda fn=fn, attention=attention: fn(models[attention])))
    # The median: on a shared machine a few repetitions catch another job's burst.
    return {
        attention: {what: tuple(statistics.median(t[i] for t in ts) for i in (0, 1)) for what, ts in kinds.items()}
        for attention, kinds in samples.items()
    }


def gemm_floor(reps: int) -> tuple[float, float]:
    """(CPU seconds, GFLOP) of the fast path's block products alone, one group pair (every row of E
    in one group, as at initialisation): per block of BLOCK_ROWS rows with ``width`` keys, the forward's
    (2 (d + 1) (B + 1), width) x (width, rows) product and the backward's two of that size, in the
    layouts the step uses (the right-hand side keys first). The median over ``reps``."""
    length, d, batch = SETTINGS.model.context, SETTINGS.model.d, SETTINGS.batch_size
    columns = 2 * (d + 1) * (batch + 1)
    rhs = torch.randn(length, columns)  # (keys, columns)
    grad_sums, sums, grad_rhs = (torch.randn(columns, length) for _ in range(3))
    blocks = [(start, min(start + BLOCK_ROWS, length)) for start in range(0, length, BLOCK_ROWS)]
    weights = [torch.rand(stop, stop - start) for start, stop in blocks]  # (keys, rows) per block

    def products():
        for (start, stop), w in zip(blocks, weights):
            torch.mm(rhs[:stop].T, w, out=sums[:, start:stop])
            grad_rhs[:, :stop].addmm_(grad_sums[:, start:stop], w.T)
            torch.mm(rhs[:stop], grad_sums[:, start:stop])

    products()  # warm-up
    seconds = statistics.median(timed(products)[1] for _ in range(reps))
    flops = 3 * 2 * columns * sum(stop * (stop - start) for start, stop in blocks)
    return seconds, flops / 1e9


def side_by_side(label: str, results: dict[str, tuple[float, float]]) -> str:
    (fast_wall, fast_cpu), (sdpa_wall, sdpa_cpu) = results["fast"], results["sdpa"]
    return (
        f"  {label:<34} fast {fast_cpu * 1e3:7.1f} ms CPU ({fast_wall * 1e3:7.1f} wall) | "
        f"sdpa {sdpa_cpu * 1e3:7.1f} ms CPU ({sdpa_wall * 1e3:7.1f} wall) | "
        f"sdpa/fast x{sdpa_cpu / fast_cpu:.2f} CPU, x{sdpa_wall / fast_wall:.2f} wall"
    )


def loop_sampler(chain, batch, length, generator):
    """A per-position Python loop (one batched draw per position), the usual way to sample."""
    s = torch.empty(batch, length, dtype=torch.long)
    s[:, 0] = (torch.rand(batch, generator=generator) < chain.stationary[1]).long()
    for n in range(1, length):
        u = torch.rand(batch, generator=generator)
        s[:, n] = torch.where(s[:, n - 1] == 1, u < 1 - chain.q, u < chain.p).long()
    return s


def main():
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch threads, one measurement each")
    parser.add_argument("--steps", type=int, default=40, help="iterations of the shorter of each pair of runs")
    parser.add_argument("--reps", type=int, default=10, help="repetitions of each kernel timing")
    parser.add_argument("--repeats", type=int, default=3, help="per-iteration slopes per path (median)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the model trains")
    args = parser.parse_args()
    keep_freed_memory()  # as every training job does

    print(f"load before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs, torch {torch.__version__}")
    print(f"single-core GEMM (float32, 1024 x 1024 products): {gemm_rate():.0f} GFLOP/s")
    print("settings: d=8, N=1024, B=16, AdamW, standard init, p=0.5, q=0.8")
    g = torch.Generator().manual_seed(0)
    reps = 20
    torch.set_num_threads(1)
    length = SETTINGS.model.context + 1
    samplers = {
        "Python loop over positions": lambda: [
            loop_sampler(CHAIN, SETTINGS.batch_size, length, g) for _ in range(reps)
        ],
        "bulk scan (other devices)": lambda: symbols_in_bulk(
            CHAIN, torch.rand(reps, SETTINGS.batch_size, length, generator=g)
        ),
        "numba walk (CPU)": lambda: sample_sequences(CHAIN, (reps, SETTINGS.batch_size), length, g),
    }
    sample_sequences(CHAIN, (1, 1), 2, g)  # the walk's compiled code loaded
    cpu = {name: timed(sampler)[1] / reps for name, sampler in samplers.items()}
    loop = cpu["Python loop over positions"]
    print(
        "sampling one batch (1 thread, CPU time): "
        + ", ".join(f"{name} {t * 1e3:.3f} ms (x{loop / t:.0f})" for name, t in cpu.items())
    )
    for threads in args.threads:
        torch.set_num_threads(threads)
        print(f"threads {threads} (load {os.getloadavg()[0]:.2f}):")
        kernels = kernel_times(args.reps, args.device)
        for what, label in (
            ("attention", "attention forward + backward"),
            ("evaluation", "evaluation forward (test loss)"),
        ):
            print(side_by_side(label, {attention: kernels[attention][what] for attention in PATHS}))
        floor = (lambda: gemm_floor(args.reps)[0]) if args.device == "cpu" else None
        train_only = per_step(args.steps, 10**9, args.device, args.repeats, floor)
        print(side_by_side("training iteration", train_only))
        if floor is not None:
            blocks, gflop = 3 * len(range(0, SETTINGS.model.context, BLOCK_ROWS)), gemm_floor(1)[1]
            print(
                f"  floor: the attention's {blocks} block products alone {train_only['floor'][1] * 1e3:.1f} ms CPU "
                f"({gflop / train_only['floor'][1]:.0f} GFLOP/s); the fast training iteration "
                f"x{train_only['ratio'][1]:.2f} of it (median of the repeats' ratios; goal <= x1.5)"
            )
        with_eval = per_step(args.steps, 1, args.device, args.repeats)
        print(side_by_side("iteration + test loss every step", with_eval))
    print(f"peak memory (max RSS): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if args.device == "cuda" and torch.cuda.is_available():
        print(f"peak CUDA memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
    print(f"load after: {os.getloadavg()[0]:.2f} (1 min)")
    print(
        "goals (1 thread, sdpa/fast): attention forward + backward >= x3, training iteration >= x2.5, "
        "evaluation forward >= x2.5"
    )


if __name__ == "__main__":
    main()
