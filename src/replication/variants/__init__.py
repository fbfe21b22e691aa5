"""Named variants: a set of settings over the paper config, built in a tree of its own.

A *tree* is a working folder of the pipeline (``results/``, ``figures/``, ``logs/``): the paper
run is the project root, a variant ``variants/<name>/``. Each tree holds one set of settings and
records it in ``figures/settings.yaml`` (``records``). A build whose settings differ from its tree's
record stops before any job (``checks.check_tree``); the root builds the paper's settings only
(``checks.check_root``).

A new variant's tree is seeded from the existing tree whose settings are closest (``seeding``):
its files and Snakemake's metadata records are copied, so Snakemake's own rerun triggers rerun
exactly the jobs whose settings changed and what depends on them. Its settings come from its file
and the command line (``assignments``), resolved and laid out by ``create.prepare``; ``cli`` is
``python -m replication.variants``. Cheap to import: the workflow imports it while it parses.
"""

from __future__ import annotations

from .assignments import NAME_PATTERN, check_name, derived_name, parse_assignments, split_assignments
from .checks import check_root, check_tree
from .commands import settings_command, tree_base, variant_command, variant_settings_file
from .create import SCHEMA, VARIANT_FILES, load_yaml, prepare, resolve, variant_overlay
from .records import (
    NOT_SETTINGS,
    RECORD,
    VARIANTS_DIR,
    assignments_of,
    closest_tree,
    differences,
    flatten,
    read_record,
    record_of,
    record_text,
    settings_name,
    settings_sha256,
    tree_settings,
    trees,
)
from .seeding import NOT_SEEDED, SEEDED, seed_tree

__all__ = [
    "NAME_PATTERN",
    "NOT_SEEDED",
    "NOT_SETTINGS",
    "RECORD",
    "SCHEMA",
    "SEEDED",
    "VARIANTS_DIR",
    "VARIANT_FILES",
    "assignments_of",
    "variant_overlay",
    "check_name",
    "check_root",
    "check_tree",
    "closest_tree",
    "derived_name",
    "differences",
    "flatten",
    "load_yaml",
    "parse_assignments",
    "prepare",
    "read_record",
    "record_of",
    "record_text",
    "resolve",
    "seed_tree",
    "settings_command",
    "settings_name",
    "settings_sha256",
    "split_assignments",
    "tree_base",
    "tree_settings",
    "trees",
    "variant_command",
    "variant_settings_file",
]
