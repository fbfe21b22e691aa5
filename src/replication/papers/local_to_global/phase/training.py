"""The training of one cell of the phase diagram: every (init, seed) run on its chain, each stopped
once the answer is known, with the per-evaluation losses the measures need and the runs' CPU cost."""

from __future__ import annotations

import resource
import time

import numpy as np
import pandas as pd
import torch

from ..markov import MarkovChain
from ..transformer.settings import RunSettings
from ..transformer.train import Monitor, train
from .grid import Cell
from .measures import CellOutputs, chain_cross_entropy, closed_fraction, settled_since, unigram_cross_entropy
from .settings import StopSettings


class GapMonitor(Monitor):
    """Records, per test batch, the chain's and the unigram predictor's cross-entropy on the same
    sequences; asks to stop once the smoothed closed fraction has stayed >= ``stop.closed`` for
    ``stop.patience`` iterations."""

    def __init__(self, chain: MarkovChain, stop: StopSettings, smooth: int):
        self.chain, self.stop, self.smooth = chain, stop, smooth
        self.steps, self.test, self.own, self.unigram = [], [], [], []

    def evaluated(self, step, x, y, loss):
        self.steps.append(step)
        self.test.append(loss)  # stays on the device until should_stop syncs
        self.own.append(float(chain_cross_entropy(self.chain, x, y)))
        self.unigram.append(float(unigram_cross_entropy(self.chain, y)))

    def should_stop(self, step: int) -> bool:
        closed = closed_fraction(torch.stack(self.test).double().cpu().numpy(), self.own, self.unigram, self.smooth)
        since = settled_since(np.array(self.steps), closed, self.stop.closed)
        return since is not None and step - since >= self.stop.patience

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "step": self.steps,
                "test_loss": torch.stack(self.test).double().cpu().numpy(),
                "chain_loss": self.own,
                "unigram_loss": self.unigram,
            }
        )


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def train_cell(settings: RunSettings, stop: StopSettings, smooth: int, progress: bool = True) -> CellOutputs:
    """Train every (init, seed) of the cell of ``settings.chain`` (``phase_run_settings``), each
    stopped by ``stop`` (the closed fraction summed over ``smooth`` evaluations, as
    ``measures.closed_fraction``); a run is named ``<cell name>/<init>/seed<seed>``.

    Returns the evaluations (init, seed, step, lr, train_loss, test_loss, chain_loss,
    unigram_loss), one row per run (init, seed, steps run, stopped early, CPU and wall seconds from
    the kernel) and the final parameters (``<init>/seed<seed>/<parameter>``).
    """
    name = Cell(settings.chain).name
    evaluations, runs, final = [], [], {}
    for init in settings.inits:
        for seed in settings.seeds:
            monitor = GapMonitor(settings.chain, stop, smooth)
            cpu, wall = _cpu_seconds(), time.perf_counter()
            run = f"{name}/{init}/seed{seed}"
            result = train(settings, init, seed, name=run, progress=progress, monitor=monitor)
            cpu, wall = _cpu_seconds() - cpu, time.perf_counter() - wall
            frame = monitor.frame().merge(result.losses[["step", "lr", "train_loss"]], on="step", how="left")
            frame.insert(0, "seed", seed)
            frame.insert(0, "init", init)
            evaluations.append(frame)
            last = int(result.losses.step.iloc[-1])
            runs.append(
                {
                    "init": init,
                    "seed": seed,
                    "steps_run": last,
                    "horizon": settings.steps,
                    "stopped_early": last < settings.steps,
                    "cpu_s": cpu,
                    "wall_s": wall,
                }
            )
            final.update({f"{init}/seed{seed}/{key}": value for key, value in result.final.items()})
    columns = ["init", "seed", "step", "lr", "train_loss", "test_loss", "chain_loss", "unigram_loss"]
    return CellOutputs(pd.concat(evaluations, ignore_index=True)[columns], pd.DataFrame(runs), final)
