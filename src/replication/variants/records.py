"""A tree's record of its settings (``figures/settings.yaml``), how two sets of settings differ, and
the trees there are.

A *tree* is a working folder of the pipeline (``results/``, ``figures/``, ``logs/``): the paper
run is the project root, a variant ``variants/<name>/``. Each tree holds one set of settings and
records it in ``figures/settings.yaml`` (the validated config, schema defaults filled in; ``diff``,
``settings`` and ``variant`` left out: they say how a tree is compared and named, not what made it).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

RECORD = Path("figures") / "settings.yaml"
# Top-level keys that do not make figures: how trees are compared (diff), which smoke merge was
# asked for (settings: its effect is in the values) and the tree's name.
NOT_SETTINGS = ("diff", "settings", "variant")
VARIANTS_DIR = Path("variants")


def tree_settings(config: Mapping) -> dict:
    """The settings that make a tree's figures: the validated config without ``NOT_SETTINGS``."""
    plain = json.loads(json.dumps(dict(config), default=str))  # plain dicts (validation leaves OrderedDicts)
    return {key: value for key, value in plain.items() if key not in NOT_SETTINGS}


def settings_name(config: Mapping) -> str:
    """What a tree's figures are called by: the variant's name, else ``smoke`` or ``paper``."""
    return config.get("variant") or config.get("settings") or "paper"


def settings_sha256(settings: Mapping) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


def record_of(config: Mapping) -> dict:
    """The record a tree keeps in ``figures/settings.yaml``: name, what it is over (paper or smoke),
    sha256 and the settings."""
    settings = tree_settings(config)
    return {
        "name": settings_name(config),
        "over": config.get("settings") or "paper",  # the settings a variant's values are laid over
        "sha256": settings_sha256(settings),
        "settings": settings,
    }


def record_text(record: Mapping) -> str:
    return (
        "# The settings this tree's figures were made with: the validated config, schema defaults filled in\n"
        "# (replication.variants). A build with other settings goes to a variant: docs/explore.md.\n"
        + yaml.safe_dump(dict(record), sort_keys=False, default_flow_style=None, width=110)
    )


def read_record(tree: str | os.PathLike) -> dict | None:
    """The record of a tree (a working folder, or a reference set holding ``settings.yaml``)."""
    tree = Path(tree)
    for path in (tree / RECORD, tree / RECORD.name):
        if path.is_file():
            return yaml.safe_load(path.read_text())
    return None


def flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a.b.c": value}`` for every leaf of nested mappings; lists are leaves."""
    if isinstance(node, Mapping) and node:
        flat = {}
        for key, value in node.items():
            flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: node}


def differences(a: Mapping, b: Mapping) -> list[tuple[str, Any, Any]]:
    """``(key, value in a, value in b)`` for every leaf that differs (None where a side lacks it)."""
    flat_a, flat_b = flatten(a), flatten(b)
    return [
        (key, flat_a.get(key), flat_b.get(key))
        for key in sorted(set(flat_a) | set(flat_b))
        if flat_a.get(key) != flat_b.get(key)
    ]


def assignments_of(changes: Iterable[tuple[str, Any, Any]]) -> list[str]:
    """``key=value`` of the b side of ``changes``, each value in YAML's flow style on one line (text
    with spaces in double quotes, as SET splits on spaces): what SET= reads back as the same value."""
    return [f"{key}={set_value(new)}" for key, _, new in changes]


def set_value(value: Any) -> str:
    if isinstance(value, str) and any(char.isspace() for char in value):
        return json.dumps(value)
    # No width limit: PyYAML would break a longer collection across lines, and SET is one line.
    return yaml.safe_dump(value, default_flow_style=True, width=math.inf).strip().removesuffix("\n...")


def trees(root: str | os.PathLike = ".") -> dict[str, Path]:
    """Every tree with a record: ``paper`` (the root) and each variant under ``variants/``."""
    root = Path(root)
    found = {"paper": root} if read_record(root) else {}
    for folder in sorted((root / VARIANTS_DIR).glob("*")):
        if folder.is_dir() and read_record(folder):
            found[folder.name] = folder
    return found


def closest_tree(settings: Mapping, candidates: Mapping[str, Path]) -> Path | None:
    """The tree whose recorded settings differ from ``settings`` in the fewest keys."""
    scored = [(len(differences(read_record(path)["settings"], settings)), name) for name, path in candidates.items()]
    return candidates[min(scored)[1]] if scored else None
