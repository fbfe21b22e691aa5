"""The learning rate of every training step: one-cycle (PyTorch's OneCycleLR, cosine, written out) or
constant. Plain floats, no torch: the plateau's analysis jobs read the same rates as the runs."""

from __future__ import annotations

import math

import numpy as np

from .settings import RunSettings, ScheduleSettings


def _cosine(start: float, end: float, fraction: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * fraction) + 1)


def one_cycle_rate(step: int, peak: float, total: int, schedule: ScheduleSettings) -> float:
    """The rate after ``step`` scheduler steps (the ``step + 1``-th update), as OneCycleLR computes it:
    a cosine from peak / div_factor up to the peak over the first ``warmup x total - 1`` steps, then
    down to peak / div_factor / final_div_factor at ``total - 1`` (tests compare it with OneCycleLR's
    rates bit for bit)."""
    initial = peak / schedule.div_factor
    warmed = float(schedule.warmup * total) - 1
    if step <= warmed:
        return _cosine(initial, peak, step / warmed)
    return _cosine(peak, initial / schedule.final_div_factor, (step - warmed) / (total - 1 - warmed))


def schedule_rates(settings: RunSettings, steps: int) -> np.ndarray:
    """eta_t for t = 0..steps (eta_0 = NaN, no update at step 0): the rate of every update of a run
    of ``steps`` steps. One-cycle spans ``max(steps, horizon, 2)`` steps (a ``horizon`` beyond the run
    stops it before the cycle ends)."""
    schedule, peak = settings.schedule, settings.optimizer.lr
    rates = np.full(steps + 1, np.nan)
    if schedule.name == "constant":
        rates[1:] = peak
        return rates
    total = max(steps, schedule.horizon or steps, 2)
    for step in range(1, steps + 1):
        rates[step] = one_cycle_rate(step - 1, peak, total, schedule)
    return rates
