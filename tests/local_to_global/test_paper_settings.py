"""The paper's settings object: each part's typed settings, built once from the config section."""

from helpers import schema_defaults
from replication.papers.local_to_global.landscape.settings import LandscapeSettings
from replication.papers.local_to_global.phase.settings import PhaseSettings
from replication.papers.local_to_global.plateau.settings import EscapeSettings, GrowthSettings, PlateauSettings
from replication.papers.local_to_global.transformer.settings import TransformerSettings
from replication.registry import paper_named


def test_every_part_reads_its_own_typed_settings_from_the_section():
    section = schema_defaults()["local_to_global"]
    section["phase"]["horizon"] = 1234  # a changed value reaches the part that owns it
    typed = paper_named("local_to_global").typed_settings(section)
    kinds = {
        "landscape": LandscapeSettings,
        "transformer": TransformerSettings,
        "phase": PhaseSettings,
        "plateau": PlateauSettings,
        "escape": EscapeSettings,
        "growth": GrowthSettings,
    }
    assert {name: type(getattr(typed, name)) for name in kinds} == kinds
    assert typed.phase.horizon == 1234 and typed.transformer.batch_size == 16
    assert typed.landscape.fig1.contour_points == 121 and typed.escape.batch_factor == 2.0
    assert typed.plateau.hessian is not None and typed.growth.seeds
