"""The ``local_to_global.phase`` config section as typed settings (defaults: the paper's schema.yaml)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from replication.settings import from_mapping

from ..markov import MarkovChain
from ..transformer.settings import ExperimentSettings, RunSettings, TransformerSettings, paper_window
from .grid import Cell, off_the_line


@dataclass(frozen=True)
class StopSettings:
    closed: float  # fraction of the gap closed (smoothed) that counts as "at the entropy rate"
    patience: int  # iterations it must stay there before the run ends


@dataclass(frozen=True)
class MeasureSettings:
    escape: float  # fraction of the gap closed that ends the plateau
    drop: float  # the initial drop ends once the excess loss is below (1 + drop) x the gap
    smooth: int  # trailing mean over this many evaluations before any threshold
    resolution: float  # resolvable: gap >= resolution x the noise of the smoothed excess loss


@dataclass(frozen=True)
class PhaseSettings:
    """``phase``: the transformer over a grid of (p, q), standard init and ours, several seeds."""

    p: tuple[float, ...]
    q: tuple[float, ...]
    inits: tuple[str, ...]
    seeds: tuple[int, ...]
    horizon: int
    eval_every: int
    window: int  # the paper's window, transformer.fig4.window
    stop: StopSettings
    measures: MeasureSettings

    @property
    def cells(self) -> list[Cell]:
        """Every cell of the grid, p-major, without the cells on p + q = 1."""
        return [Cell(MarkovChain(p, q)) for p in self.p for q in self.q if off_the_line(p, q)]

    @property
    def runs(self) -> list[tuple[str, int]]:
        """(init, seed) of every run of one cell."""
        return [(init, seed) for init in self.inits for seed in self.seeds]

    def experiment(self, cell: Cell) -> ExperimentSettings:
        """The runs of one cell: every (init, seed) on its chain, to the horizon, no checkpoints."""
        return ExperimentSettings(
            chain=cell.chain,
            inits=self.inits,
            seeds=self.seeds,
            steps=self.horizon,
            eval_every=self.eval_every,
            checkpoints=(),
        )


# Where the cells' runs and the measures live (results of the workflow's working directory).
PHASE_DIR = "results/local_to_global/phase"


def cell_files(phase: PhaseSettings, name: str) -> list[str]:
    """The file ``name`` of every cell of the grid, in grid order."""
    return [f"{PHASE_DIR}/cells/{cell.name}/{name}" for cell in phase.cells]


def phase_settings(section: Mapping) -> PhaseSettings:
    """The ``phase`` section of the validated ``local_to_global`` section, typed, with the paper's window."""
    return from_mapping(PhaseSettings, {**section["phase"], "window": paper_window(section)})


def phase_run_settings(transformer: TransformerSettings, phase: PhaseSettings, cell: Cell) -> RunSettings:
    """One cell's training settings: the transformer's shared settings (model, optimiser, attention,
    ...) with the cell's runs (``PhaseSettings.experiment``), made as every run's are
    (``TransformerSettings.run_of``), over a one-cycle schedule of the horizon."""
    run = transformer.run_of(phase.experiment(cell))
    return dataclasses.replace(run, schedule=dataclasses.replace(run.schedule, horizon=phase.horizon))
