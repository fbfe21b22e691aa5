"""The landscape sections of the paper's config (``fig1``, ``fig2``, ``fig5``, ``basins``) as typed
settings (defaults: the paper's schema.yaml, filled in by the config validation; none here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from replication.settings import from_mapping

from ..markov import MarkovChain


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
class Canonical3dFlowSettings:
    """``fig2`` and ``fig5``: flows of the model with the attention scalar, (e, w, a), from N(0, sigma^2 I_3) starts."""

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
    fig2: Canonical3dFlowSettings
    fig5: Canonical3dFlowSettings
    basins: BasinSettings


def landscape_settings(section: Mapping) -> LandscapeSettings:
    """The landscape sections of the validated ``local_to_global`` section, typed."""
    return from_mapping(LandscapeSettings, {key: section[key] for key in ("fig1", "fig2", "fig5", "basins")})
