"""The checks a build makes before any job: its settings are those its tree records (``check_tree``),
and the project root builds the paper's settings only (``check_root``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..paths import PROJECT_ROOT, shown_tree
from .create import resolve
from .records import assignment_text, differences, read_record, settings_name, settings_sha256, tree_settings


def check_tree(config: Mapping, tree: str | os.PathLike) -> None:
    """ConfigError (one line) when the tree at ``tree`` records other values than ``config``'s for
    any of its settings."""
    from ..errors import ConfigError

    record = read_record(tree)
    if record is None or "settings" not in record:
        return
    wanted = tree_settings(config)
    if settings_sha256(wanted) == settings_sha256(record["settings"]):
        return
    # Keys the record lacks are additions (a new paper, a new schema key): the tree's figures were
    # not made with another value of them, so they do not conflict; the new record adds them.
    changes = [change for change in differences(record["settings"], wanted) if change[1] is not None]
    if not changes:
        return
    shown = ", ".join(f"{key} ({old!r} -> {new!r})" for key, old, new in changes[:3])
    more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
    if Path(tree).resolve() == PROJECT_ROOT.resolve():
        # The root's figures are the paper's (check_root): a record of other settings is stale.
        advice = "rebuild the paper's tree from scratch (variants/ stays): make clean-paper && make figures"
    else:
        advice = f"build them as a variant beside it: make figures VARIANT=<name> SET='{assignment_text(changes[:3])}'"
    raise ConfigError(
        f"{shown_tree(tree)} holds the settings '{record.get('name')}' and these differ in {shown}{more}; {advice}"
    )


def root_command(config: Mapping) -> str:
    """The command that builds ``config``'s settings in a tree of their own."""
    if config.get("variant"):
        return f"make figures VARIANT={config['variant']}"
    if config.get("settings") == "smoke":
        return (
            "make figures CONFIG=config/smoke.yaml "
            "(or: snakemake figures/all --directory variants/smoke --configfile config/smoke.yaml)"
        )
    return "make figures VARIANT=<name> SET='key.path=value ...'"


def check_root(config: Mapping, tree: str | os.PathLike, paper: Mapping | None = None) -> None:
    """ConfigError (one line) when ``tree`` is the project root and ``config`` is not the paper's
    settings (``paper``: the validated ``config/config.yaml``): "paper" always names the root's
    figures, so the smoke settings and every variant build in a tree of their own."""
    from ..errors import ConfigError

    if Path(tree).resolve() != PROJECT_ROOT.resolve():
        return
    wanted = tree_settings(config)
    paper_settings = tree_settings(resolve([]) if paper is None else paper)
    if settings_name(config) == "paper" and settings_sha256(wanted) == settings_sha256(paper_settings):
        return
    changes = [change for change in differences(paper_settings, wanted) if change[1] is not None]
    what = f"the settings '{settings_name(config)}'" + (f" ({len(changes)} keys differ)" if changes else "")
    raise ConfigError(
        f"the project root is the tree of the paper's settings, not of {what}; "
        f"build them in their own tree: {root_command(config)}"
    )
