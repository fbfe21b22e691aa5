"""The ``make`` command lines the project prints: the one that resumes a stopped run, and the ones its
messages suggest. Each names the settings it builds over (``CONFIG=``, the goal, ``WORKDIR=``), so
that typed as printed it builds what was being built, never the paper's settings by default.

Plain text arithmetic, cheap to import (the workflow imports it while it parses).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .paths import PROJECT_ROOT, shown_path

CONFIG_DIR = PROJECT_ROOT / "config"
PAPER_CONFIG = CONFIG_DIR / "config.yaml"
SMOKE_CONFIG = CONFIG_DIR / "smoke.yaml"
# The Makefile's goals that build, by the Snakemake target each builds: what a message suggests
# for a run of that target. Any other manifest, figures/<name>: `make build MANIFEST=<name>`; any
# other target: `make figures`, which builds figures/all.
GOALS = {
    "figures/all": "figures",
    "figures/diff/passed": "diff",
}
MANIFEST_GOAL = "build MANIFEST="
# What a suggested SET holds where the settings are the user's to choose.
SET_PLACEHOLDER = "key.path=value ..."


def default_workdir(config: str | os.PathLike) -> Path:
    """The tree ``make figures CONFIG=config`` builds in (the Makefile's WORKDIR): the project root
    for the paper's settings, ``variants/<name of the file>`` for any other config file."""
    config = Path(config).resolve()
    return PROJECT_ROOT if config == PAPER_CONFIG else PROJECT_ROOT / "variants" / config.stem


def base_config(config: Mapping) -> Path:
    """The config file a resolved config's settings are laid over: the smoke settings' or the paper's."""
    return SMOKE_CONFIG if config.get("settings") == "smoke" else PAPER_CONFIG


def goal_of(targets: Iterable[str]) -> str:
    """The make goal of a Snakemake command line's targets (``figures`` unless one is another goal's,
    or a manifest's: ``build MANIFEST=<name>``)."""
    for word in targets:
        if word in GOALS:
            return GOALS[word]
        if word.startswith("figures/") and word.removeprefix("figures/") in other_manifests():
            return MANIFEST_GOAL + word.removeprefix("figures/")
    return "figures"


def target_of(goal: str) -> str:
    """The Snakemake target a make goal builds (``goal_of`` inverted; figures/all for any other)."""
    if goal.startswith(MANIFEST_GOAL):
        return f"figures/{goal.removeprefix(MANIFEST_GOAL)}"
    return next((target for target, name in GOALS.items() if name == goal), "figures/all")


def other_manifests() -> set[str]:
    """The registered manifests other than figures/all (the papers' parts declare them)."""
    from .registry import papers

    return {manifest for paper in papers() for manifest in paper.manifests if manifest != "all"}


def option_value(argv: Sequence[str], option: str) -> str | None:
    """The value of ``option`` on a command line (``--cores 2`` or ``--cores=2``), else None."""
    for index, word in enumerate(argv):
        if word == option and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith(option + "="):
            return word.partition("=")[2]
    return None


def quoted(text: str) -> str:
    """``text`` as one shell word, in single quotes as the docs write SET."""
    return f"'{text}'" if "'" not in text else shlex.quote(text)


def make_command(
    goal: str = "figures",
    config: str | os.PathLike | None = None,
    variant: str | None = None,
    sets: str = "",
    cores: str | None = None,
    workdir: str | os.PathLike | None = None,
    **variables: str,
) -> str:
    """``make GOAL`` with the variables that differ from the Makefile's defaults: CONFIG (not
    config/config.yaml), VARIANT, SET, CORES (not all), WORKDIR (not CONFIG's own tree), then
    ``variables`` (e.g. SWEEP) as given."""
    words = ["make", goal]
    config = Path(config or PAPER_CONFIG)
    if config.resolve() != PAPER_CONFIG:
        words.append(f"CONFIG={shown_path(config)}")
    if variant:
        words.append(f"VARIANT={variant}")
    if sets.strip():
        words.append(f"SET={quoted(sets.strip())}")
    words += [f"{name}={quoted(value) if ' ' in value else value}" for name, value in variables.items()]
    if cores not in (None, "all"):
        words.append(f"CORES={cores}")
    if workdir is not None and Path(workdir).resolve() != default_workdir(config):
        words.append(f"WORKDIR={shown_path(workdir)}")
    return " ".join(words)


def python_command(module: str, argv: Sequence[str]) -> str:
    """``python -m module argv`` as typed in the project root, with this environment's Python."""
    return shlex.join([shown_path(sys.executable), "-m", module, *argv])
