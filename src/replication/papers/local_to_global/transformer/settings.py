"""The ``transformer`` section of the paper's config as typed settings (defaults: the paper's
schema.yaml, filled in by the config validation; none here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from replication.settings import from_mapping

from ..markov import MarkovChain


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
class Fig4Settings:
    window: int
    smooth: int


@dataclass(frozen=True)
class TransformerClaimSettings:
    """``transformer.claims``: thresholds of claims 5 and 6; ``window`` is the paper's window
    (``transformer.fig4.window``), the end of claim 5's plateau."""

    tolerance: float
    plateau_from: int
    window: int
    share_fig3: float
    share_fig6: float
    structure_step: int
    cos_e: float
    flatness: float

    @property
    def plateau(self) -> tuple[int, int]:
        """Claim 5's iterations [from, to]: the standard init on H(pi), ours at the entropy rate by ``to``."""
        return self.plateau_from, self.window


@dataclass(frozen=True)
class AblationSettings:
    fig3: tuple[str, ...]
    fig6: tuple[str, ...]
    peak_lr: float
    schedule_steps: int


@dataclass(frozen=True)
class TrainingSettings:
    """``transformer``'s keys that every training run shares: architecture, data, optimiser, schedule, device."""

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


@dataclass(frozen=True)
class ExperimentSettings:
    """``transformer.experiments.<figure>``: one figure's runs."""

    chain: MarkovChain
    inits: tuple[str, ...]
    seeds: tuple[int, ...]
    steps: int
    eval_every: int
    checkpoints: tuple[int, ...]


# The two settings below are made of the sections above (dataclass inheritance: each field is
# declared once, and a run's fields stay flat: ``run.steps``, ``dataclasses.replace(run, steps=...)``).


@dataclass(frozen=True)
class RunSettings(ExperimentSettings, TrainingSettings):
    """Everything one training run reads: the shared training settings, then one experiment's.

    ``embedding`` is "scalar" (the paper's token ``x e``) in every figure run; only the Fig. 3
    ablation trains the authors' "two_symbol" embedding.
    """

    embedding: str


@dataclass(frozen=True)
class TransformerSettings(TrainingSettings):
    """``transformer``: Figs. 3, 4, 6 and Tables 1, 2."""

    experiments: dict[str, ExperimentSettings]
    fig4: Fig4Settings
    claims: TransformerClaimSettings
    ablation: AblationSettings

    def run(self, experiment: str) -> RunSettings:
        """The shared training settings with the experiment ``experiment``'s (chain, steps, ...)."""
        return self.run_of(self.experiments[experiment])

    def run_of(self, experiment: ExperimentSettings) -> RunSettings:
        """The shared training settings with ``experiment``'s, in the paper's scalar embedding: the one
        way a run's settings are made, for a figure's experiment and for any other (a phase cell)."""
        training = {field.name: getattr(self, field.name) for field in fields(TrainingSettings)}
        own = {field.name: getattr(experiment, field.name) for field in fields(ExperimentSettings)}
        return RunSettings(**training, **own, embedding="scalar")

    def runs(self, experiment: str) -> list[tuple[str, int]]:
        """(init, seed) of every run of an experiment, in config order."""
        spec = self.experiments[experiment]
        return [(init, seed) for init in spec.inits for seed in spec.seeds]


def transformer_settings(section: Mapping) -> TransformerSettings:
    """The ``transformer`` section of the validated ``local_to_global`` section, typed; its claims
    get the paper's window from ``fig4.window`` (one key)."""
    transformer = section["transformer"]
    claims = {**transformer["claims"], "window": paper_window(section)}
    return from_mapping(TransformerSettings, {**transformer, "claims": claims})


def paper_window(section: Mapping) -> int:
    """The paper's window (Fig. 4's last iteration) of the validated ``local_to_global`` section."""
    return section["transformer"]["fig4"]["window"]


def run_settings(mapping: Mapping) -> RunSettings:
    """One run's settings from a plain mapping with every field (e.g. written out in a test)."""
    return from_mapping(RunSettings, mapping)
