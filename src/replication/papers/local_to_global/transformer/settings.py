"""The paper's config sections as typed settings (defaults: schema.yaml beside this file, filled in
by the config validation; none here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from replication.settings import from_mapping

from .markov import MarkovChain


@dataclass(frozen=True)
class Fig1Settings:
    """``fig1``: the (e, w) landscape and its flows."""

    chains: tuple[MarkovChain, ...]
    extent: float
    contour_points: int
    quiver_points: int
    trajectories: int
    flow_time: float
    seed: int


@dataclass(frozen=True)
class AttentionFlowSettings:
    """``fig2`` and ``fig5``: (e, w, a) flows from N(0, sigma^2 I_3) starts."""

    chains: tuple[MarkovChain, ...]
    sigma: float
    extent: float
    trajectories: int
    flow_time: float
    view: tuple[float, ...]
    seed: int


@dataclass(frozen=True)
class GridStarts:
    points: int
    extent: float
    margin: float


@dataclass(frozen=True)
class SampledLossSettings:
    sigma: float
    starts: int
    sequences: int
    length: int
    z: float


@dataclass(frozen=True)
class LandscapeClaimSettings:
    energy_drift: float
    endpoint_loss: float
    small_sigma: float
    fraction_high: float
    fraction_low: float
    sampled: SampledLossSettings


@dataclass(frozen=True)
class BasinSettings:
    """``basins``: fractions of Gaussian starts ending at a local minimum, and claims 1-4."""

    chains: tuple[MarkovChain, ...]
    sigmas: tuple[float, ...]
    n_starts: int
    flow_time: float
    rounds: int
    grid: GridStarts
    claims: LandscapeClaimSettings
    seed: int


@dataclass(frozen=True)
class LandscapeSettings:
    fig1: Fig1Settings
    fig2: AttentionFlowSettings
    fig5: AttentionFlowSettings
    basins: BasinSettings


def landscape_settings(section: Mapping) -> LandscapeSettings:
    """The landscape sections of the validated ``local_to_global`` section, typed."""
    return from_mapping(LandscapeSettings, {key: section[key] for key in ("fig1", "fig2", "fig5", "basins")})


@dataclass(frozen=True)
class ModelSettings:
    """``transformer.model``: the architecture (Table 1)."""

    d: int
    context: int
    mlp_ratio: int


@dataclass(frozen=True)
class OptimizerSettings:
    name: str
    lr: float
    betas: tuple[float, ...]
    momentum: float
    weight_decay: float
    no_decay: tuple[str, ...]


@dataclass(frozen=True)
class ScheduleSettings:
    name: str
    warmup: float
    div_factor: float
    final_div_factor: float
    horizon: int | None  # None: the run's own length


@dataclass(frozen=True)
class ExperimentSettings:
    """``transformer.experiments.<figure>``: one figure's runs."""

    chain: MarkovChain
    inits: tuple[str, ...]
    seeds: tuple[int, ...]
    steps: int
    eval_every: int
    checkpoints: tuple[int, ...]


@dataclass(frozen=True)
class Fig4Settings:
    window: int
    smooth: int


@dataclass(frozen=True)
class TransformerClaimSettings:
    """``transformer.claims``: thresholds of claims 5 and 6."""

    tolerance: float
    plateau: tuple[int, ...]
    share_fig3: float
    share_fig6: float
    structure_step: int
    cos_e: float
    flatness: float


@dataclass(frozen=True)
class AblationSettings:
    fig3: tuple[str, ...]
    fig6: tuple[str, ...]
    peak_lr: float
    schedule_steps: int


@dataclass(frozen=True)
class RunSettings:
    """Everything one training run reads: the shared training settings and one experiment's.

    ``embedding`` is "scalar" (the paper's token ``x e``) in every figure run; only the Fig. 3
    ablation trains the authors' "two_symbol" embedding.
    """

    model: ModelSettings
    batch_size: int
    sigma: float
    rank_one_value: str
    optimizer: OptimizerSettings
    schedule: ScheduleSettings
    device: str
    threads: int
    attention: str
    chunk: int
    embedding: str
    chain: MarkovChain
    inits: tuple[str, ...]
    seeds: tuple[int, ...]
    steps: int
    eval_every: int
    checkpoints: tuple[int, ...]


@dataclass(frozen=True)
class TransformerSettings:
    """``transformer``: Figs. 3, 4, 6 and Tables 1, 2."""

    model: ModelSettings
    batch_size: int
    sigma: float
    rank_one_value: str
    optimizer: OptimizerSettings
    schedule: ScheduleSettings
    device: str
    threads: int
    attention: str
    chunk: int
    experiments: dict[str, ExperimentSettings]
    fig4: Fig4Settings
    claims: TransformerClaimSettings
    ablation: AblationSettings

    def run(self, experiment: str) -> RunSettings:
        """The shared training settings with one experiment's (chain, steps, eval_every, ...)."""
        shared = {field.name: getattr(self, field.name) for field in fields(RunSettings) if hasattr(self, field.name)}
        spec = self.experiments[experiment]
        return RunSettings(
            **shared, **{field.name: getattr(spec, field.name) for field in fields(spec)}, embedding="scalar"
        )

    def runs(self, experiment: str) -> list[tuple[str, int]]:
        """(init, seed) of every run of an experiment, in config order."""
        spec = self.experiments[experiment]
        return [(init, seed) for init in spec.inits for seed in spec.seeds]


def transformer_settings(section: Mapping) -> TransformerSettings:
    """The ``transformer`` section of the validated ``local_to_global`` section, typed."""
    return from_mapping(TransformerSettings, section["transformer"])


def run_settings(mapping: Mapping) -> RunSettings:
    """One run's settings from a plain mapping with every field (e.g. written out in a test)."""
    return from_mapping(RunSettings, mapping)
