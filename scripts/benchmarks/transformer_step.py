"""Speed of one training iteration of the Local to Global transformer at the paper's settings.

Prints ms per iteration for training alone and with a test evaluation every step (wall clock and
CPU time, from the slope between a short and a longer run so that set-up cost cancels), steps per
second, peak memory, the bulk sampler against a per-position Python loop, and the machine's load.
It prints numbers; it asserts nothing.

    .venv/bin/python scripts/benchmarks/transformer_step.py [--threads 1 2] [--steps 40] [--device cpu]
"""
from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import torch
import yaml

from replication.config import validate_config
from replication.local_to_global.data import sample_sequences
from replication.local_to_global.markov import MarkovChain
from replication.local_to_global.runs import run_settings
from replication.local_to_global.train import train

ROOT = Path(__file__).resolve().parents[2]
# The paper settings of Fig. 4, read from the project's config so the benchmark cannot drift.
_CONFIG = validate_config(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()), ROOT / "workflow" / "schemas" / "config.schema.yaml")
SETTINGS = {**run_settings(_CONFIG["local_to_global"]["transformer"], "fig4"), "checkpoints": []}
CHAIN = MarkovChain(SETTINGS["chain"]["p"], SETTINGS["chain"]["q"])


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def per_step(steps: int, eval_every: int, device: str) -> tuple[float, float]:
    """(wall, cpu) seconds per iteration: the slope between runs of `steps` and 3 * `steps` iterations."""
    def run(n):
        return timed(lambda: train(CHAIN, "standard", 1, {**SETTINGS, "steps": n, "eval_every": eval_every, "device": device}, progress=False))
    run(5)  # warm-up: allocator, kernels
    short, long = run(steps), run(3 * steps)
    return (long[0] - short[0]) / (2 * steps), (long[1] - short[1]) / (2 * steps)


def loop_sampler(chain, batch, length, generator):
    """A per-position Python loop (one batched draw per position), the usual way to sample."""
    s = torch.empty(batch, length, dtype=torch.long)
    s[:, 0] = (torch.rand(batch, generator=generator) < chain.stationary[1]).long()
    for n in range(1, length):
        u = torch.rand(batch, generator=generator)
        s[:, n] = torch.where(s[:, n - 1] == 1, u < 1 - chain.q, u < chain.p).long()
    return s


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()

    print(f"load before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs, torch {torch.__version__}")
    print("settings: d=8, N=1024, B=16, AdamW, standard init, p=0.5, q=0.8")
    g = torch.Generator().manual_seed(0)
    reps = 20
    torch.set_num_threads(1)
    loop_wall, loop_cpu = (t / reps for t in timed(lambda: [loop_sampler(CHAIN, SETTINGS["batch_size"], SETTINGS["model"]["context"] + 1, g) for _ in range(reps)]))
    bulk_wall, bulk_cpu = (t / reps for t in timed(lambda: sample_sequences(CHAIN, (reps, SETTINGS["batch_size"]), SETTINGS["model"]["context"] + 1, g)))
    print(f"sampling one batch (1 thread): Python loop over positions {loop_wall * 1e3:.2f} ms wall "
          f"({loop_cpu * 1e3:.2f} ms CPU), bulk {bulk_wall * 1e3:.3f} ms wall ({bulk_cpu * 1e3:.3f} ms CPU): "
          f"x{loop_cpu / bulk_cpu:.0f} less CPU")
    for threads in args.threads:
        torch.set_num_threads(threads)
        train_wall, train_cpu = per_step(args.steps, eval_every=10**9, device=args.device)
        eval_wall, eval_cpu = per_step(args.steps, eval_every=1, device=args.device)
        print(
            f"threads {threads}: train {train_wall * 1e3:.1f} ms/iter wall ({train_cpu * 1e3:.1f} ms CPU), "
            f"{1 / train_wall:.1f} steps/s | with test loss every step {eval_wall * 1e3:.1f} ms/iter wall "
            f"({eval_cpu * 1e3:.1f} ms CPU), evaluation adds {(eval_wall - train_wall) * 1e3:.1f} ms "
            f"({(eval_cpu - train_cpu) * 1e3:.1f} ms CPU)"
        )
    print(f"peak memory (max RSS): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if args.device == "cuda" and torch.cuda.is_available():
        print(f"peak CUDA memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
    print(f"load after: {os.getloadavg()[0]:.2f} (1 min)")
    print("goal: <= 30 ms/iter training, evaluation adding <= 15 ms; authors' code here: ~60 ms, ~200 ms with eval")


if __name__ == "__main__":
    main()
