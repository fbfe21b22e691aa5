"""Every committed reference set was made with the settings its name stands for today: the set's
record (figures/reference/<set>/settings.yaml) against the settings the same name resolves to now
(config/config.yaml for `paper`, config/smoke.yaml over it for `smoke`, config/variants/<name>.yaml
over its base for a variant), schema defaults filled in. A default changed since the set was
blessed leaves `make diff` and `make compare` judging against figures of other settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT
from replication.variants import differences, read_record, record_of, resolve
from replication.variants.create import VARIANT_FILES, load_yaml, variant_overlay

REFERENCES = ROOT / "figures" / "reference"
BASE_FILES = {"paper": [], "smoke": [ROOT / "config" / "smoke.yaml"]}
# Sets whose record differs from today's settings of their name: each passes (and its marker must
# go) once the set is re-blessed.
STALE = {
    "phase": "schema changes since the set was blessed (benign_overfitting.claims.*, phase.window, "
    "transformer.claims.plateau, plateau.*): re-blessed with make bless-manifest MANIFEST=phase",
}


def current_settings(record: dict) -> dict:
    """The settings the record's name resolves to now: its base config files, then the variant's file."""
    name, base = record["name"], record.get("over", "paper")
    overlay = {}
    if name not in BASE_FILES:
        variant_file = VARIANT_FILES / f"{name}.yaml"
        assert variant_file.is_file(), f"reference set of variant {name!r}: no {variant_file.relative_to(ROOT)}"
        overlay = variant_overlay(name, load_yaml(variant_file), {})
    return record_of(resolve(BASE_FILES[base], overlay))["settings"]


def reference_sets() -> list:
    return [
        pytest.param(folder, id=folder.name, marks=[pytest.mark.xfail(strict=True, reason=STALE[folder.name])])
        if folder.name in STALE
        else pytest.param(folder, id=folder.name)
        for folder in sorted(REFERENCES.iterdir())
        if (folder / "settings.yaml").is_file()
    ]


@pytest.mark.parametrize("reference", reference_sets())
def test_a_reference_set_holds_the_current_settings_of_its_name(reference: Path):
    record = read_record(reference)
    changed = differences(record["settings"], current_settings(record))
    assert not changed, f"{reference.relative_to(ROOT)} ({record['name']}) differs from today's settings: " + "; ".join(
        f"{key}: {old!r} recorded, {new!r} now" for key, old, new in changed
    )


def test_every_base_of_a_reference_set_is_known():
    """A set over a base this test cannot resolve would pass unchecked above."""
    for folder in sorted(REFERENCES.iterdir()):
        record = read_record(folder)
        assert record.get("over", "paper") in BASE_FILES, folder
