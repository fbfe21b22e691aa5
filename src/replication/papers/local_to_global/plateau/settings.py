"""The ``local_to_global.plateau`` config section as typed settings (defaults: the paper's schema.yaml)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from replication.settings import from_mapping

from ..phase.grid import Cell
from ..phase.settings import PHASE_DIR, PhaseSettings

PLATEAU_DIR = "results/local_to_global/plateau"
INIT = "standard"  # the init whose plateau the canonical model explains (Thm 1: the local minimum at e = 0)


@dataclass(frozen=True)
class HessianSettings:
    batches: int
    batch_size: int
    seed: int
    smallest: int
    tol: float
    significance: float
    dtype: str  # "float32" or "float64": the precision of the Hessian-vector products

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)


@dataclass(frozen=True)
class PlateauSettings:
    """``plateau``: points on the standard init's plateau and the Hessian there."""

    points: tuple[int, ...]
    mid_plateau: bool
    hessian: HessianSettings


def plateau_settings(section: Mapping) -> PlateauSettings:
    """The ``plateau`` section of the validated ``local_to_global`` section, typed."""
    return from_mapping(PlateauSettings, section["plateau"])


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
    "HessianSettings",
    "PlateauSettings",
    "plateau_cells",
    "plateau_files",
    "plateau_settings",
]
