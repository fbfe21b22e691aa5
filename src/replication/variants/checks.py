"""The checks a build makes before any job: its settings are those its tree records (``check_tree``),
and the project root builds the paper's settings only (``check_root``). Their advice is a command
that builds the settings asked for over the same base (``commands.settings_command``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..make_command import PAPER_CONFIG, base_config, default_workdir, make_command, shown_path, target_of
from ..paths import PROJECT_ROOT, shown_tree
from .commands import settings_command
from .create import resolve
from .records import differences, read_record, settings_name, settings_sha256, tree_settings


def check_tree(config: Mapping, tree: str | os.PathLike, goal: str = "figures") -> None:
    """ConfigError (one line) when the tree at ``tree`` records other values than ``config``'s for
    any of its settings; its advice builds ``config``'s settings (``make goal``) in another tree."""
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
    raise ConfigError(
        f"{shown_tree(tree)} holds the settings '{record.get('name')}' and these differ in "
        f"{shown}{more}; {tree_advice(config, record, tree, goal)}"
    )


def tree_advice(config: Mapping, record: Mapping, tree: str | os.PathLike, goal: str) -> str:
    """How to build the settings of ``config``, which ``tree`` (recording ``record``) does not hold."""
    if Path(tree).resolve() == PROJECT_ROOT.resolve():
        # The root's figures are the paper's (check_root): a record of other settings is stale.
        return "rebuild the paper's tree from scratch (variants/ stays): make clean-paper && make figures"
    base = make_command(goal, base_config(config))
    command = settings_command(config, goal, taken=[record.get("name")])
    if command == base and record.get("name") == settings_name(config):
        # The tree of a config file's own settings, made before a value of them changed (the file
        # or a schema default edited since): stale, and only a fresh build in it holds them.
        fresh = make_command(goal, base_config(config), workdir=tree)
        return f"the tree is older than these settings; rebuild it from scratch: rm -r {shown_path(tree)} && {fresh}"
    return f"build them in a tree of their own: {command}"


def check_root(config: Mapping, tree: str | os.PathLike, paper: Mapping | None = None, goal: str = "figures") -> None:
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
    command, base = settings_command(config, goal), base_config(config)
    if command == make_command(goal, base) and base != PAPER_CONFIG:  # a config file's own settings
        target = target_of(goal)
        command += (
            f" (or: snakemake {target} --directory {shown_path(default_workdir(base))} --configfile {shown_path(base)})"
        )
    raise ConfigError(
        f"the project root is the tree of the paper's settings, not of {what}; build them in their own tree: {command}"
    )
