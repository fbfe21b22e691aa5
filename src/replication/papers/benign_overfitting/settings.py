"""The paper's config section as typed settings (defaults: schema.yaml beside this file)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import product

from replication.settings import from_mapping


@dataclass(frozen=True)
class RunSettings:
    """``model``: the data and training settings shared by every run (paper Sec. 5)."""

    n: int
    T: int
    rho: float
    eta: float
    lr: float
    n_test: int
    noise: str


@dataclass(frozen=True)
class Cell:
    """One (d, ||mu||) setting."""

    d: int
    signal_norm: float


@dataclass(frozen=True)
class Range:
    """Evenly spaced values start, start + step, ..., stop (inclusive)."""

    start: float
    stop: float
    step: float


@dataclass(frozen=True)
class Fig1Settings:
    """``fig1``: hand-built token selections (no training)."""

    d: int
    signal_norm: float
    n: int
    n_test: int
    scales: dict[str, float]
    seed: int


@dataclass(frozen=True)
class TrajectorySettings:
    """``trajectories``: the recorded runs of Figs. 2, 3, by panel."""

    steps: int
    record_every: int
    seed: int
    runs: dict[str, Cell]


@dataclass(frozen=True)
class GridSettings:
    """``grid``: the d x ||mu|| grid of Figs. 4-6."""

    dims: Range
    signal_norms: Range
    steps: int
    seeds: tuple[int, ...]
    shard_size: int


# The grid's cells from its settings: pure Python, so the workflow reads them without the trainer's
# numba import (every Snakemake start parses the rules).
def axis_values(spec: Range) -> list[float]:
    """start, start + step, ..., stop (inclusive)."""
    count = int(round((spec.stop - spec.start) / spec.step)) + 1
    return [spec.start + k * spec.step for k in range(count)]


def grid_cells(settings: GridSettings) -> list[tuple[int, float, int]]:
    """Every (d, ||mu||, seed) of the grid, in a fixed order."""
    dims = [int(d) for d in axis_values(settings.dims)]
    norms = [float(m) for m in axis_values(settings.signal_norms)]
    return [(d, m, int(seed)) for d, m, seed in product(dims, norms, settings.seeds)]


def shards(cells: list, shard_size: int) -> list[list]:
    return [cells[k : k + shard_size] for k in range(0, len(cells), shard_size)]


@dataclass(frozen=True)
class Published:
    """A published range and the margin it is judged with."""

    published: tuple[float, float]
    margin: float

    @property
    def judged(self) -> tuple[float, float]:
        """The range a value must lie in: the published one widened by the margin on both sides."""
        low, high = self.published
        return low - self.margin, high + self.margin


@dataclass(frozen=True)
class SplitRanges:
    """[low, high] accuracy on the train and the test split."""

    train: tuple[float, float]
    test: tuple[float, float]


@dataclass(frozen=True)
class ClaimSettings:
    """``claims``: thresholds of the claims and the cells each reads (schema.yaml describes each)."""

    fig1_accuracy: dict[str, SplitRanges]
    fig2_clean_least: float
    fig2_noisy_most: float
    train_loss: Published
    test_loss: Published
    smallest_signal_test_loss: Published
    strong_signal: float
    strong_d: int
    strong_test_loss: float
    clear_signal: float
    weak_signal: float
    weak_test_accuracy: tuple[float, float]
    memorising_d: float
    hard_signal: float
    hard_d: float
    eq9_least: float
    eq10_band: tuple[float, float]
    class_size_tolerance: float


@dataclass(frozen=True)
class Settings:
    model: RunSettings
    fig1: Fig1Settings
    trajectories: TrajectorySettings
    grid: GridSettings
    claims: ClaimSettings


def settings(section: Mapping) -> Settings:
    """The validated ``benign_overfitting`` section, typed."""
    return from_mapping(Settings, section)
