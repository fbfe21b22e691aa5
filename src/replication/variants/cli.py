"""``python -m replication.variants``: lay out a variant's tree and build it there."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .assignments import split_assignments
from .create import prepare


def add_tree_options(parser: argparse.ArgumentParser, what: str, dry_run: str) -> None:
    """The options of a command that lays out trees (``what``: variants, points) under ``<root>/variants``."""
    parser.add_argument("--base", help=f"the tree to seed new {what} from (default: the closest one)")
    parser.add_argument("--root", default=".", help=f"the project's tree; {what} go to <root>/variants")
    parser.add_argument("--dry-run", action="store_true", help=dry_run)
    parser.add_argument("--make-goal", help="run by `make GOAL`: what its messages and a Ctrl-C name as the command")


def parse_command_line(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``argv`` (default: ``sys.argv[1:]``) parsed up to ``--``; what follows it, the targets and
    options for Snakemake, in ``snakemake_args``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.snakemake_args = argv[split + 1 :]
    return args


def main(argv: list[str] | None = None) -> int:
    """Lay out the variant ``argv`` names and build it in its tree (0), or say why not in one line (1)."""
    from ..errors import ConfigError
    from ..make_command import PAPER_CONFIG, make_command, option_value, python_command
    from ..pipeline_run import INTERRUPTED, stopped_line
    from .commands import variant_settings_file

    parser = argparse.ArgumentParser(
        prog="python -m replication.variants", description="Build a named variant in variants/<name>/."
    )
    parser.add_argument("--name", help="the variant (config/variants/<name>.yaml if it exists); default: from --set")
    parser.add_argument("--configfile", action="append", default=[], help="config files under it (e.g. smoke)")
    parser.add_argument("--set", action="append", default=[], dest="assignments", help="key.path=value")
    parser.add_argument("--sets", default="", help="several key.path=value, split on spaces outside [] {} and quotes")
    parser.add_argument("--file", help="the variant's settings file (default: config/variants/<name>.yaml)")
    add_tree_options(parser, "variants", dry_run="lay out and validate; print the tree only")
    args = parse_command_line(parser, argv)
    goal, config = args.make_goal or "figures", Path(args.configfile[0]) if args.configfile else PAPER_CONFIG
    rest = args.snakemake_args
    if args.make_goal:
        resume = make_command(goal, config, args.name, args.sets, cores=option_value(rest, "--cores"))
    else:
        resume = python_command("replication.variants", sys.argv[1:] if argv is None else argv)
    try:
        assignments = [a for a in args.assignments if a.strip()] + split_assignments(args.sets)
        tree, overlay_file, _ = prepare(
            args.name,
            args.configfile,
            assignments,
            args.root,
            base=args.base,
            variant_file=args.file or variant_settings_file(args.name, assignments, args.root, config, goal),
        )
        if args.dry_run:
            print(tree)
            return 0
        from ..pipeline_run import main as run_pipeline

        configfiles = [str(Path(path).resolve()) for path in args.configfile] + [str(overlay_file.resolve())]
        under_make = ["--make-goal", args.make_goal] if args.make_goal else []
        return run_pipeline(
            [
                "--directory",
                str(tree),
                "--resume-command",
                resume,
                *under_make,
                "--",
                *rest,
                "--configfile",
                *configfiles,
            ]
        )
    except ConfigError as error:
        print(f"Invalid config: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # before Snakemake started (a seeding cut short is redone: create.prepare)
        print(stopped_line(resume, None), file=sys.stderr)
        return 0 if args.make_goal else INTERRUPTED
