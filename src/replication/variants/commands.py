"""The commands that build a tree, as the messages suggest them, and the refusal of a variant that
names no settings.

Every suggestion builds what was being built: its settings over the same base (``CONFIG=`` for the
smoke settings, ``replication.make_command``), never the paper's settings by default. A variant
named on the command line takes its settings from its file, from ``SET``, or, built before, from its
tree's ``variant.yaml``; with none of these it stops (``variant_settings_file``): a misspelt name
would otherwise build an unchanged copy of its base.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..make_command import CONFIG_DIR, PAPER_CONFIG, SET_PLACEHOLDER, SMOKE_CONFIG, base_config, make_command
from .assignments import derived_name
from .create import VARIANT_FILES, load_yaml, resolve
from .records import VARIANTS_DIR, assignments_of, differences, read_record, tree_settings, trees

OVERLAY = "variant.yaml"  # what a variant's tree keeps of its settings over its base (create.prepare)


def settings_command(config: Mapping, goal: str = "figures", taken: Iterable[str] = ()) -> str:
    """The make command that builds the settings of ``config`` (a resolved config) in a tree of
    their own: over their base (the smoke settings' or the paper's), every value that differs from
    the base as SET, in the variant ``config`` names or one named after its SET, never one of ``taken``."""
    base = base_config(config)
    base_settings = tree_settings(resolve([] if base == PAPER_CONFIG else [base]))
    changes = [
        (key, old, new) for key, old, new in differences(base_settings, tree_settings(config)) if new is not None
    ]
    if not changes:
        return make_command(goal, base)
    assignments = assignments_of(changes)
    derived = derived_name(assignments)
    taken = set(taken)  # read once: an iterator would be empty for the second name
    name = next((n for n in (config.get("variant"), derived) if n and n not in taken), f"{derived}-2")
    return make_command(goal, base, variant=None if name == derived else name, sets=" ".join(assignments))


def tree_base(tree: str | os.PathLike, default: Path = PAPER_CONFIG) -> Path:
    """The config file a tree's settings were laid over, from its record (``default`` without one)."""
    record = read_record(tree)
    if record is None:
        return default
    return SMOKE_CONFIG if record.get("over") == "smoke" else PAPER_CONFIG


def variant_command(
    name: str, root: str | os.PathLike = ".", config: Path = PAPER_CONFIG, goal: str = "figures"
) -> str:
    """The command that builds the tree ``variants/<name>`` (again, if it has a record): a variant
    over its tree's base, else over ``config``; the tree of a config file of that name (smoke);
    SET to fill in where nothing holds its settings yet."""
    tree = Path(root) / VARIANTS_DIR / name
    base = tree_base(tree, config)
    if (VARIANT_FILES / f"{name}.yaml").is_file() or (tree / OVERLAY).is_file():
        return make_command(goal, base, variant=name)
    own_config = CONFIG_DIR / f"{name}.yaml"
    if own_config.is_file() and own_config != PAPER_CONFIG:
        return make_command(goal, own_config, workdir=tree)
    if read_record(tree) is not None:  # built with WORKDIR=variants/<name>
        return make_command(goal, base, workdir=tree)
    return make_command(goal, base, variant=name, sets=SET_PLACEHOLDER)


def known_variants(root: str | os.PathLike = ".") -> tuple[list[str], list[str]]:
    """``(names of config/variants/*.yaml, trees built under variants/ without such a file)``."""
    files = sorted(path.stem for path in VARIANT_FILES.glob("*.yaml"))
    return files, [name for name in trees(root) if name != "paper" and name not in files]


def unknown_variant(name: str, root: str | os.PathLike, config: Path, goal: str) -> str:
    """One line for a variant with no file, no SET and no tree: the variants there are, the closest
    to ``name`` with its command, and how a new one is given its settings."""
    files, built = known_variants(root)
    listing = f"the variants: {', '.join(files) or 'none'} (config/variants/)"
    listing += f", {', '.join(built)} (built in variants/)" if built else ""
    close = difflib.get_close_matches(name, files + built, n=1)
    hint = f"did you mean {close[0]}: {variant_command(close[0], root, config, goal)}; " if close else ""
    return (
        f"variant {name!r} has no settings: no config/variants/{name}.yaml, no SET and no tree variants/{name}; "
        f"{hint}{listing}; a new variant takes them from SET: "
        f"{make_command(goal, config, variant=name, sets=SET_PLACEHOLDER)}"
    )


def variant_settings_file(
    name: str | None,
    assignments: list[str],
    root: str | os.PathLike = ".",
    config: Path = PAPER_CONFIG,
    goal: str = "figures",
) -> Path | None:
    """The file a variant named on the command line takes its settings from, when neither its own
    file (``create.prepare`` reads config/variants/<name>.yaml) nor SET gives them: its tree's
    ``variant.yaml``, built before over the same base. ConfigError (one line) when nothing holds
    them, or when its tree was built over another base (the command that builds it named)."""
    from ..errors import ConfigError

    if name is None or assignments or (VARIANT_FILES / f"{name}.yaml").is_file():
        return None
    tree = Path(root) / VARIANTS_DIR / name
    if read_record(tree) is None:
        raise ConfigError(unknown_variant(name, root, config, goal))
    if tree_base(tree) != base_config(load_yaml(config)):
        raise ConfigError(
            f"variant {name!r}: its tree variants/{name} holds settings over {tree_base(tree).name}, "
            f"not over {Path(config).name}; build it with: {variant_command(name, root, config, goal)}"
        )
    overlay = tree / OVERLAY
    return overlay if overlay.is_file() else None
