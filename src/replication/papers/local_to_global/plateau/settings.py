"""The ``local_to_global.plateau`` config section as typed settings (defaults: the paper's schema.yaml)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from replication.settings import from_mapping

from ..markov import MarkovChain
from ..phase.grid import Cell
from ..phase.settings import PHASE_DIR, PhaseSettings, StopSettings, phase_run_settings
from ..transformer.settings import RunSettings, TransformerSettings

PLATEAU_DIR = "results/local_to_global/plateau"
# The model's parameters in its own order (MarkovTransformer.named_parameters), and their blocks.
BLOCKS = ("e", "p", "W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "b")
INIT = "standard"  # the init whose plateau the canonical model explains (Thm 1: the local minimum at e = 0)


@dataclass(frozen=True)
class HeldOutSettings:
    least: int  # held-out batches measured at every point
    most: int  # and at most, added one at a time until the verdict is decided (verdict.sequential_curvature)


@dataclass(frozen=True)
class HessianSettings:
    batches: int  # fitted batches: the bottom eigenvectors are found on their union
    batch_size: int
    seed: int
    tol: float  # Lanczos' relative tolerance
    significance: float  # z: standard errors that decide a verdict
    tolerance: str | float  # the loss' verdict: "horizon" (the escape rate within the run) or a fraction of lambda_max
    held_out: HeldOutSettings
    preconditioned: bool  # also AdamW's preconditioned Hessian (adamw.py)
    dtype: str  # "float32" or "float64": the precision of the Hessian-vector products

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)

    def loss_tolerance(self, lambda_max: float, horizon: float) -> float:
        """tol of the loss' verdicts: ``horizon`` (adamw.horizon_rate at the point) or the stated
        fraction of ``lambda_max``."""
        return horizon if self.tolerance == "horizon" else float(self.tolerance) * lambda_max


@dataclass(frozen=True)
class GrowthSettings:
    """``plateau.growth``: runs through the plateau with dense checkpoints, at a few cells."""

    cells: tuple[tuple[float, float], ...]
    seeds: tuple[int, ...]
    every: int
    after: int

    @property
    def cell_list(self) -> list[Cell]:
        return [Cell(MarkovChain(p, q)) for p, q in self.cells]


@dataclass(frozen=True)
class PlateauSettings:
    """``plateau``: points on the standard init's plateau and the Hessian there."""

    points: tuple[int, ...]
    mid_plateau: bool
    hessian: HessianSettings


# The escape sweeps: each changes one of the transformer's training keys (``TrainingSettings``).
SWEEPS = ("sigma", "batch_size")


@dataclass(frozen=True)
class EscapeSettings:
    """``plateau.escape``: the init-scale and batch sweeps at a few cells above the line."""

    cells: tuple[tuple[float, float], ...]
    seeds: tuple[int, ...]
    sigma: tuple[float, ...]
    batch_size: tuple[int, ...]
    batch_factor: float

    @property
    def cell_list(self) -> list[Cell]:
        return [Cell(MarkovChain(p, q)) for p, q in self.cells]

    def values(self, sweep: str) -> tuple:
        """The values of ``sweep`` (one of ``SWEEPS``), in config order."""
        return getattr(self, sweep)

    def value_named(self, sweep: str, name: str):
        """The configured value of ``sweep`` whose name (``value_name``) is ``name``."""
        return next(value for value in self.values(sweep) if value_name(value) == name)

    @property
    def jobs(self) -> list[tuple[Cell, str, float]]:
        """(cell, sweep, value) of every training job, cell-major."""
        return [(cell, sweep, value) for cell in self.cell_list for sweep in SWEEPS for value in self.values(sweep)]


def value_name(value) -> str:
    """A sweep value in a path or wildcard: ``0.005``, ``64``."""
    return f"{value:g}"


def plateau_settings(section: Mapping) -> PlateauSettings:
    """The ``plateau`` section of the validated ``local_to_global`` section, typed, without its
    ``escape`` sweeps (``escape_settings``) and ``growth`` runs (``growth_settings``): changing them
    reruns no points or Hessian job."""
    own = {key: value for key, value in section["plateau"].items() if key not in ("escape", "growth")}
    return from_mapping(PlateauSettings, own)


def growth_settings(section: Mapping) -> GrowthSettings:
    """The ``plateau.growth`` section of the validated ``local_to_global`` section, typed."""
    return from_mapping(GrowthSettings, section["plateau"]["growth"])


def escape_settings(section: Mapping) -> EscapeSettings:
    """The ``plateau.escape`` section of the validated ``local_to_global`` section, typed."""
    return from_mapping(EscapeSettings, section["plateau"]["escape"])


def escape_phase(phase: PhaseSettings, escape: EscapeSettings, cell: Cell) -> PhaseSettings:
    """The phase grid's settings (horizon, evaluations, measures) narrowed to one escape cell's runs:
    that cell alone, the standard init, the sweeps' seeds; each run stops at its escape (the first
    evaluation whose smoothed closed fraction reaches ``measures.escape``, as the escape measure
    reads it). The sweeps read nothing after the escape, and the trajectory up to it is the one of a
    run that goes on to the entropy rate."""
    stop = StopSettings(closed=phase.measures.escape, patience=0)
    return dataclasses.replace(
        phase, p=(cell.chain.p,), q=(cell.chain.q,), inits=(INIT,), seeds=escape.seeds, stop=stop
    )


def from_phase_grid(
    transformer: TransformerSettings, phase: PhaseSettings, escape: EscapeSettings, cell: Cell, sweep: str, value
) -> bool:
    """Whether an escape job's runs are runs of the phase grid: ``value`` is the transformer's own
    setting of ``sweep``, the cell is on the grid and the grid trains the standard init at every
    seed of the sweeps. Such a job is read from the grid's measures, not trained again."""
    return (
        value == getattr(transformer, sweep)
        and cell in phase.cells
        and INIT in phase.inits
        and set(escape.seeds) <= set(phase.seeds)
    )


def escape_run_settings(
    transformer: TransformerSettings, phase: PhaseSettings, escape: EscapeSettings, cell: Cell, sweep: str, value
) -> RunSettings:
    """One escape job's training settings: the cell's runs made as the phase grid makes them
    (``phase_run_settings`` of ``escape_phase``) with ``sweep`` set to ``value``."""
    run = phase_run_settings(transformer, escape_phase(phase, escape, cell), cell)
    return dataclasses.replace(run, **{sweep: value})


def escape_runtime(escape: EscapeSettings, batch_size: int, sweep: str, name: str) -> int:
    """Minutes asked for one escape job (``name``: its value's): 30 per 16 sequences of its batch
    (``batch_size``, the transformer's, outside the batch sweep), since a step costs about batch / 16
    times one of batch 16 and the job's runs at batch 16 take minutes (docs/plateau.md)."""
    batch = escape.value_named(sweep, name) if sweep == "batch_size" else batch_size
    return 30 * max(1, -(-batch // 16))


def escape_path(cell: Cell, sweep: str, value, phase_grid: bool = False) -> str:
    """The measures of one escape job's runs: trained (``<sweep>_<value>.csv``) or read from the
    phase grid (``phase_<sweep>_<value>.csv``, ``from_phase_grid``)."""
    prefix = "phase_" if phase_grid else ""
    return f"{PLATEAU_DIR}/escape/{cell.name}/{prefix}{sweep}_{value_name(value)}.csv"


def escape_files(transformer: TransformerSettings, phase: PhaseSettings, escape: EscapeSettings) -> list[str]:
    """Every escape job's measures, in ``EscapeSettings.jobs`` order, trained or read from the grid."""
    return [
        escape_path(cell, sweep, value, from_phase_grid(transformer, phase, escape, cell, sweep, value))
        for cell, sweep, value in escape.jobs
    ]


def plateau_cells(phase: PhaseSettings) -> list[Cell]:
    """The phase grid's cells above the line (p + q > 1), where the plateau is the canonical model's
    local minimum, in grid order."""
    return [cell for cell in phase.cells if cell.chain.p + cell.chain.q > 1]


def plateau_files(phase: PhaseSettings, name: str) -> list[str]:
    return [f"{PLATEAU_DIR}/cells/{cell.name}/{name}" for cell in plateau_cells(phase)]


__all__ = [
    "INIT",
    "PHASE_DIR",
    "PLATEAU_DIR",
    "SWEEPS",
    "EscapeSettings",
    "GrowthSettings",
    "HeldOutSettings",
    "HessianSettings",
    "PlateauSettings",
    "escape_files",
    "escape_path",
    "escape_phase",
    "escape_run_settings",
    "escape_runtime",
    "escape_settings",
    "from_phase_grid",
    "growth_settings",
    "plateau_cells",
    "plateau_files",
    "plateau_settings",
    "value_name",
]
