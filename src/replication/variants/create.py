"""A variant's tree laid out: its settings resolved as the workflow resolves them, its tree seeded
from the closest existing one and given its record (``prepare``)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from ..paths import PROJECT_ROOT
from .assignments import check_name, derived_name, parse_assignments
from .records import RECORD, VARIANTS_DIR, closest_tree, read_record, record_of, record_text, tree_settings, trees
from .seeding import seed_tree

VARIANT_FILES = PROJECT_ROOT / "config" / "variants"
SCHEMA = PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml"


def load_yaml(path: str | os.PathLike) -> dict:
    from ..errors import ConfigError

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path}: no such file")
    return yaml.safe_load(path.read_text()) or {}


def resolve(configfiles: Iterable[str | os.PathLike], overlay: Mapping = ()) -> dict:
    """The validated config of ``config/config.yaml``, then ``configfiles``, then ``overlay``,
    merged exactly as the workflow merges them (``workflow/rules/common.smk``)."""
    from snakemake.utils import update_config

    from ..config import apply_settings, validate_config

    config = load_yaml(PROJECT_ROOT / "config" / "config.yaml")
    given = [load_yaml(path) for path in configfiles] + [dict(overlay or {})]
    for values in given:
        update_config(config, copy.deepcopy(values))
    apply_settings(config, given)
    return validate_config(config, SCHEMA)


def variant_overlay(name: str, variant_file: Mapping, assignments: Mapping) -> dict:
    """What a variant adds to its config files: its file's values, the command line's, its name."""
    from snakemake.utils import update_config

    overlay = copy.deepcopy(dict(variant_file))
    update_config(overlay, copy.deepcopy(dict(assignments)))
    overlay["variant"] = name
    return overlay


def prepare(
    name: str | None,
    configfiles: list[str],
    assignments: list[str],
    root: str | os.PathLike = ".",
    prefix: str = "",
    base: str | os.PathLike | None = None,
    variant_file: str | os.PathLike | None = None,
) -> tuple[Path, Path, dict]:
    """Validate a variant and lay out its tree: ``(tree, overlay file, resolved config)``.

    Raises ConfigError (one line) for a bad key or value, in the variant's file or on the command
    line, before anything is written. A new tree (one without a record) is seeded from ``base``, else
    from the closest existing tree under ``root``, then gets its record. The variant's file: ``variant_file``, else
    ``config/variants/<name>.yaml`` if there is one.
    """
    root = Path(root)
    name = check_name(name or derived_name(assignments))
    own_file = Path(variant_file) if variant_file else VARIANT_FILES / f"{name}.yaml"
    if variant_file is None and not own_file.is_file():
        own_file = None
    overlay = variant_overlay(name, load_yaml(own_file) if own_file else {}, parse_assignments(assignments))
    config = resolve(configfiles, overlay)
    tree = root / VARIANTS_DIR / name
    if read_record(tree) is None:
        if base is None:
            base = closest_tree(tree_settings(config), {k: v for k, v in trees(root).items() if k != name})
        if base is not None:
            copied = seed_tree(base, tree, prefix)
            print(f"variant {name}: seeded from {base} ({copied} files); only what its settings change reruns")
        # The record marks the tree as this variant's from now on, so a build cut short (Ctrl-C)
        # resumes in it instead of seeding it again over the jobs it finished. Written after the
        # seeding: a seeding cut short leaves no record and is redone.
        from ..io import write_text

        write_text(record_text(record_of(config)), tree / RECORD)
    overlay_file = tree / "variant.yaml"
    overlay_file.parent.mkdir(parents=True, exist_ok=True)
    overlay_file.write_text(
        "# The values this variant sets over its config files (replication.variants).\n"
        + yaml.safe_dump(overlay, sort_keys=False, default_flow_style=None)
    )
    return tree, overlay_file, config
