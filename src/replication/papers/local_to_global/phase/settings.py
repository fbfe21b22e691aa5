"""The ``local_to_global.phase`` config section as typed settings (defaults: the paper's schema.yaml)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from replication.settings import from_mapping

from ..markov import MarkovChain
from ..transformer.settings import RunSettings, TransformerSettings, paper_window

# The line p + q = 1 (i.i.d. data, no gap to close) is left out of the grid; float sums such as
# 0.7 + 0.3 miss 1 by rounding only.
_ON_THE_LINE = 1e-9


def off_the_line(p: float, q: float) -> bool:
    """Whether (p, q) is a cell of the grid: not on the line p + q = 1."""
    return abs(p + q - 1) > _ON_THE_LINE


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
    def chains(self) -> list[MarkovChain]:
        """Every cell of the grid, p-major, without the cells on p + q = 1."""
        return [MarkovChain(p, q) for p in self.p for q in self.q if off_the_line(p, q)]

    @property
    def runs(self) -> list[tuple[str, int]]:
        """(init, seed) of every run of one cell."""
        return [(init, seed) for init in self.inits for seed in self.seeds]


# Where the cells' runs and the measures live (results of the workflow's working directory).
PHASE_DIR = "results/local_to_global/phase"


def cell_files(phase: PhaseSettings, name: str) -> list[str]:
    """The file ``name`` of every cell of the grid, in grid order."""
    return [f"{PHASE_DIR}/cells/{cell_name(chain)}/{name}" for chain in phase.chains]


def cell_name(chain: MarkovChain) -> str:
    """The cell's folder and wildcard value, e.g. ``p0.2_q0.3``."""
    return f"p{chain.p:g}_q{chain.q:g}"


def cell_chain(name: str) -> MarkovChain:
    """The chain of a cell name (inverse of ``cell_name``)."""
    p, q = name.removeprefix("p").split("_q")
    return MarkovChain(float(p), float(q))


def phase_settings(section: Mapping) -> PhaseSettings:
    """The ``phase`` section of the validated ``local_to_global`` section, typed, with the paper's window."""
    return from_mapping(PhaseSettings, {**section["phase"], "window": paper_window(section)})


def phase_run_settings(transformer: TransformerSettings, phase: PhaseSettings, chain: MarkovChain) -> RunSettings:
    """One cell's training settings: the transformer's shared settings (model, optimiser, attention,
    ...) with the cell's chain, run to the horizon over a one-cycle schedule of the horizon."""
    shared = {
        field.name: getattr(transformer, field.name)
        for field in dataclasses.fields(RunSettings)
        if hasattr(transformer, field.name)
    }
    schedule = dataclasses.replace(transformer.schedule, horizon=phase.horizon)
    return RunSettings(
        **{**shared, "schedule": schedule},
        embedding="scalar",
        chain=chain,
        inits=phase.inits,
        seeds=phase.seeds,
        steps=phase.horizon,
        eval_every=phase.eval_every,
        checkpoints=(),
    )
