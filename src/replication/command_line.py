"""Mistakes on Snakemake's command line that Snakemake reports with a long traceback, as one line.

The workflow's default profile (workflow/profiles/default/profile.yaml) runs this check: Snakemake
reads that profile before it opens the config files, so a mistyped ``--configfile`` stops here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

CONFIGFILE_OPTIONS = ("--configfile", "--configfiles")


def configfiles(argv: Sequence[str]) -> list[str]:
    """The config files named on a Snakemake command line: the words after ``--configfile`` up to
    the next option (it takes several), or ``--configfile=PATH``."""
    files, taking = [], False
    for word in argv:
        option, equals, value = word.partition("=")
        if option in CONFIGFILE_OPTIONS:
            taking = not equals
            if equals:
                files.append(value)
        elif word.startswith("-"):
            taking = False
        elif taking:
            files.append(word)
    return files


def missing_configfiles(argv: Sequence[str]) -> list[str]:
    """The config files named on a command line that do not exist (relative paths are read from
    the current folder, as Snakemake reads them)."""
    return [name for name in configfiles(argv) if not Path(name).is_file()]


def exit_if_configfiles_are_missing(argv: Sequence[str] | None = None) -> None:
    """Exit with one line naming every config file of the command line that does not exist."""
    missing = missing_configfiles(sys.argv[1:] if argv is None else argv)
    if missing:
        sys.exit(
            f"Error: config file not found: {', '.join(missing)} (given with --configfile, read from {Path.cwd()})"
        )


def command_description(doc: str) -> str:
    """A module's command-line description for ``--help``: its docstring's first paragraph as one line,
    without reST's double backquotes (a first line alone often stops mid-sentence)."""
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split()).replace("``", "")


def command_parser(spec, doc: str) -> argparse.ArgumentParser:
    """The parser of a ``python -m`` command: its usage names the module to run (``spec``: the module's
    ``__spec__``, which names it also when run with -m), its description is ``command_description(doc)``."""
    return argparse.ArgumentParser(prog=f"python -m {spec.name}", description=command_description(doc))
