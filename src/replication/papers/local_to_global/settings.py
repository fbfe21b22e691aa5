"""The paper's settings, typed, in one object: each part's settings an attribute of it.

The workflow builds it once from the validated ``local_to_global`` section (``Paper.settings``;
``SETTINGS["local_to_global"]`` in the rule files), so every rule file reads the same objects and
none types a section again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .landscape.settings import LandscapeSettings, landscape_settings
from .phase.settings import PhaseSettings, phase_settings
from .plateau.settings import (
    EscapeSettings,
    GrowthSettings,
    PlateauSettings,
    escape_settings,
    growth_settings,
    plateau_settings,
)
from .transformer.settings import TransformerSettings, transformer_settings


@dataclass(frozen=True)
class Settings:
    landscape: LandscapeSettings  # Figs. 1, 2, 5 and the basins
    transformer: TransformerSettings  # the transformer's training, Figs. 3, 4, 6 and the tables
    phase: PhaseSettings  # the grid over (p, q)
    plateau: PlateauSettings  # the points on the plateau and the Hessian there
    escape: EscapeSettings  # plateau.escape: the init-scale and batch sweeps
    growth: GrowthSettings  # plateau.growth: the runs that follow the unstable mode


def settings(section: Mapping) -> Settings:
    """Every part's settings from the validated ``local_to_global`` section."""
    return Settings(
        landscape=landscape_settings(section),
        transformer=transformer_settings(section),
        phase=phase_settings(section),
        plateau=plateau_settings(section),
        escape=escape_settings(section),
        growth=growth_settings(section),
    )
