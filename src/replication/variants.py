"""Named variants: a set of settings over the paper config, built in a tree of its own.

A *tree* is a working folder of the pipeline (``results/``, ``figures/``, ``logs/``): the paper
run is the project root, a variant ``variants/<name>/``. Each tree holds one set of settings and
records it in ``figures/settings.yaml`` (the validated config, schema defaults filled in; ``diff``,
``settings`` and ``variant`` left out: they say how a tree is compared and named, not what made it).
A build whose settings differ from its tree's record stops before any job (``check_tree``).

A new variant's tree is seeded from the existing tree whose settings are closest (``seed_tree``):
its files and Snakemake's metadata records are copied, so Snakemake's own rerun triggers (every
rule passes its settings as params) rerun exactly the jobs whose settings changed and what depends
on them; the base tree is only read. Cheap to import: the workflow imports it while it parses.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import re
import shutil
import sys
from base64 import urlsafe_b64decode, urlsafe_b64encode
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from .paths import PROJECT_ROOT

RECORD = Path("figures") / "settings.yaml"
# Top-level keys that do not make figures: how trees are compared (diff), which smoke merge was
# asked for (settings: its effect is in the values) and the tree's name.
NOT_SETTINGS = ("diff", "settings", "variant")
VARIANTS_DIR = Path("variants")
VARIANT_FILES = PROJECT_ROOT / "config" / "variants"
SCHEMA = PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml"
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.=,+-]*"
# What a seeded tree copies from its base: outputs, logs and benchmarks (Snakemake counts a missing
# benchmark file as a missing output). Never figures/reference (committed) or figures/diff.
SEEDED = ("results", "figures", "logs", "benchmarks")
NOT_SEEDED = ("figures/reference", "figures/diff")
# The base's record is not the new tree's: the new tree's build writes its own.


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


def assignment_text(changes: Iterable[tuple[str, Any, Any]]) -> str:
    """``key=value ...`` of the b side of ``changes``: what SET= takes."""
    return " ".join(f"{key}={json.dumps(new) if isinstance(new, str | list) else new}" for key, _, new in changes)


def check_tree(config: Mapping, tree: str | os.PathLike) -> None:
    """ConfigError (one line) when the tree at ``tree`` records other values than ``config``'s for
    any of its settings."""
    from .errors import ConfigError

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
        f"the tree {Path(tree).resolve()} holds the settings '{record.get('name')}' and these differ in "
        f"{shown}{more}; {advice}"
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
    from .errors import ConfigError

    if Path(tree).resolve() != PROJECT_ROOT.resolve():
        return
    wanted = tree_settings(config)
    paper_settings = tree_settings(resolve([]) if paper is None else paper)
    if settings_name(config) == "paper" and settings_sha256(wanted) == settings_sha256(paper_settings):
        return
    changes = [change for change in differences(paper_settings, wanted) if change[1] is not None]
    what = f"the settings '{settings_name(config)}'" + (f" ({len(changes)} keys differ)" if changes else "")
    raise ConfigError(
        f"the project root {PROJECT_ROOT} is the tree of the paper's settings, not of {what}; "
        f"build them in their own tree: {root_command(config)}"
    )


def split_assignments(text: str) -> list[str]:
    """``SET``'s text as assignments: split on whitespace outside brackets, braces and quotes, so
    ``a=[1, 2] b='x y'`` is two. ConfigError (one line) for an unclosed bracket or quote."""
    from .errors import ConfigError

    parts, current, closers, quote = [], "", [], ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            closers.append("]" if char == "[" else "}")
        elif char in "]}":
            if not closers or closers.pop() != char:
                raise ConfigError(f"settings {text!r}: unmatched {char!r}; allowed: key.path=value ..., e.g. a=[1, 2]")
        elif char.isspace() and not closers:
            parts.append(current)
            current = ""
            continue
        current += char
    if quote or closers:
        raise ConfigError(f"settings {text!r}: unclosed {quote or closers[-1]!r}; allowed: key.path=value ...")
    return [part for part in [*parts, current] if part]


def parse_assignments(assignments: Iterable[str]) -> dict:
    """``["a.b=2e-3", "c=[1, 2]"]`` -> ``{"a": {"b": 0.002}, "c": [1, 2]}`` (values read as YAML)."""
    from .errors import ConfigError

    overlay: dict = {}
    for assignment in assignments:
        key, sep, text = assignment.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", key.strip()):
            raise ConfigError(f"setting {assignment!r}: allowed: key.path=value, e.g. section.key=3")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as error:
            problem = getattr(error, "problem", None) or type(error).__name__
            raise ConfigError(
                f"setting {assignment!r}: the value is not YAML ({problem}); allowed: a number, a word, "
                "a list [1, 2] or a mapping {a: 1}"
            ) from None
        if isinstance(value, str) and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+", value):
            value = float(value)  # YAML 1.1 reads 2e-3 as text
        node = overlay
        *parents, leaf = key.strip().split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return overlay


def derived_name(assignments: Iterable[str]) -> str:
    """A variant name from its settings: the last key part and value of each, e.g. ``lr=0.002``."""
    parts = []
    for assignment in assignments:
        key, _, text = assignment.partition("=")
        parts.append(f"{key.strip().split('.')[-1]}={re.sub(r'[^A-Za-z0-9_.+-]+', '_', text.strip())}")
    return ",".join(parts) or "paper"


def check_name(name: str) -> str:
    from .errors import ConfigError

    if not re.fullmatch(NAME_PATTERN, name) or name in ("paper", "reference"):
        raise ConfigError(
            f"variant name {name!r}: allowed: letters, digits and _ . = , + - (not 'paper' or 'reference')"
        )
    return name


def load_yaml(path: str | os.PathLike) -> dict:
    from .errors import ConfigError

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path}: no such file")
    return yaml.safe_load(path.read_text()) or {}


def resolve(configfiles: Iterable[str | os.PathLike], overlay: Mapping = ()) -> dict:
    """The validated config of ``config/config.yaml``, then ``configfiles``, then ``overlay``,
    merged exactly as the workflow merges them (``workflow/rules/common.smk``)."""
    from snakemake.utils import update_config

    from .config import apply_settings, validate_config

    config = load_yaml(PROJECT_ROOT / "config" / "config.yaml")
    given = [load_yaml(path) for path in configfiles] + [dict(overlay or {})]
    for values in given:
        update_config(config, copy.deepcopy(values))
    apply_settings(config, given)
    return validate_config(config, SCHEMA)


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


def _metadata_id(path: Path) -> str:
    return urlsafe_b64decode("".join(part.lstrip("@") for part in path.parts).encode()).decode()


def _metadata_path(folder: Path, record_id: str) -> Path:
    encoded = urlsafe_b64encode(record_id.encode()).decode()
    parts = [encoded[i : i + 254] for i in range(0, len(encoded), 254)]
    return folder.joinpath(*(["@" + part for part in parts[:-1]] + parts[-1:]))


def seed_tree(base: str | os.PathLike, dest: str | os.PathLike, prefix: str = "") -> int:
    """Copy the outputs, logs and benchmarks of tree ``base`` into ``dest``, and Snakemake's
    metadata records of them into the Snakemake folder that will build ``dest``: ``dest/.snakemake``,
    or with ``prefix`` (a sweep: one Snakemake run in ``dest``'s parent, the tree's paths prefixed)
    the parent's, with every path in a record prefixed. Times are kept (Snakemake compares them);
    ``base`` is only read. Returns the number of files copied."""
    base, dest = Path(base), Path(dest)
    copied = 0
    for folder in SEEDED:
        for source in sorted((base / folder).rglob("*")) if (base / folder).is_dir() else []:
            relative = source.relative_to(base)
            skipped = relative == RECORD or any(relative.as_posix().startswith(skip + "/") for skip in NOT_SEEDED)
            if not source.is_file() or skipped:
                continue
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            copied += 1
    metadata = base / ".snakemake" / "metadata"
    target_metadata = (dest.parent if prefix else dest) / ".snakemake" / "metadata"
    for source in sorted(metadata.rglob("*")) if metadata.is_dir() else []:
        if not source.is_file() or source.name.startswith("@"):
            continue
        record_id = _metadata_id(source.relative_to(metadata))
        if Path(record_id).is_absolute() or any(record_id.startswith(skip) for skip in NOT_SEEDED):
            continue
        record = json.loads(source.read_text())
        if prefix:
            for field in ("input", "log"):
                record[field] = [p if os.path.isabs(p) else prefix + p for p in record.get(field) or []]
        target = _metadata_path(target_metadata, prefix + record_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record))
        shutil.copystat(source, target)
    return copied


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
        from .io import write_text

        write_text(record_text(record_of(config)), tree / RECORD)
    overlay_file = tree / "variant.yaml"
    overlay_file.parent.mkdir(parents=True, exist_ok=True)
    overlay_file.write_text(
        "# The values this variant sets over its config files (replication.variants).\n"
        + yaml.safe_dump(overlay, sort_keys=False, default_flow_style=None)
    )
    return tree, overlay_file, config


def main(argv: list[str] | None = None) -> int:
    from .errors import ConfigError

    parser = argparse.ArgumentParser(
        prog="python -m replication.variants", description="Build a named variant in variants/<name>/."
    )
    parser.add_argument("--name", help="the variant (config/variants/<name>.yaml if it exists); default: from --set")
    parser.add_argument("--configfile", action="append", default=[], help="config files under it (e.g. smoke)")
    parser.add_argument("--set", action="append", default=[], dest="assignments", help="key.path=value")
    parser.add_argument("--sets", default="", help="several key.path=value, split on spaces outside [] {} and quotes")
    parser.add_argument("--file", help="the variant's settings file (default: config/variants/<name>.yaml)")
    parser.add_argument("--base", help="the tree to seed a new variant from (default: the closest one)")
    parser.add_argument("--root", default=".", help="the project's tree; variants go to <root>/variants")
    parser.add_argument("--dry-run", action="store_true", help="lay out and validate; print the tree only")
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.snakemake_args = argv[split + 1 :]  # after --: targets and options for Snakemake
    try:
        assignments = [a for a in args.assignments if a.strip()] + split_assignments(args.sets)
        tree, overlay_file, _ = prepare(
            args.name,
            args.configfile,
            assignments,
            args.root,
            base=args.base,
            variant_file=args.file,
        )
    except ConfigError as error:
        print(f"Invalid config: {error}", file=sys.stderr)
        return 1
    if args.dry_run:
        print(tree)
        return 0
    from .pipeline_run import main as run_pipeline

    rest = args.snakemake_args
    configfiles = [str(Path(path).resolve()) for path in args.configfile] + [str(overlay_file.resolve())]
    return run_pipeline(["--directory", str(tree), "--", *rest, "--configfile", *configfiles])


if __name__ == "__main__":
    sys.exit(main())
