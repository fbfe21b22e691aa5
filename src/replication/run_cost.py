"""The cost of the run a manifest's reference set was blessed from, measured as the part that owns the
manifest declares it (``contract.Part.run_cost``): ``make bless-manifest`` runs this after blessing.

    python -m replication.run_cost MANIFEST RUN_DIR

runs each declared measurement of MANIFEST (``python -m <the part's benchmark> ... --write
docs/measurements/<its report>``) on the finished run in RUN_DIR, from the project root; a manifest
whose parts declare none is left as blessed. The core names no part: it reads the declarations through the registry.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from . import registry
from .contract import RunCost
from .make_command import other_manifests
from .paths import PROJECT_ROOT


def registered_manifests() -> list[str]:
    """Every manifest the papers register: "all" (figures/all), then their parts' own, sorted."""
    return ["all", *sorted(other_manifests())]


def declared_costs(manifest: str) -> list[RunCost]:
    """The measurements the parts of ``manifest`` declare (none for most). An unregistered name is
    one error naming the registered ones."""
    allowed = registered_manifests()
    if manifest not in allowed:
        raise ValueError(f"manifest {manifest!r} is not registered; allowed: {', '.join(allowed)}")
    return [
        part.run_cost
        for paper in registry.papers()
        for part in paper.parts
        if part.manifest == manifest and part.run_cost is not None
    ]


def measure_run(
    manifest: str, run_dir: str | Path, run: Callable[..., object] = subprocess.run, python: str = sys.executable
) -> list[list[str]]:
    """Run each measurement ``manifest``'s parts declare on the finished run in ``run_dir`` (absolute,
    so that the reports write it as DIR), from the project root; the command lines run."""
    folder = Path(run_dir).resolve()
    if not folder.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    commands = [cost.command(folder, python) for cost in declared_costs(manifest)]
    for command in commands:
        print(" ".join(command), flush=True)
        run(command, check=True, cwd=PROJECT_ROOT)
    return commands


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m replication.run_cost",
        description="Measure the cost of a blessed run, as the parts of its manifest declare.",
    )
    parser.add_argument("manifest", help="the manifest blessed (figures/<manifest>)")
    parser.add_argument("run_dir", help="the tree of the finished run it was blessed from")
    args = parser.parse_args(argv)
    try:
        commands = measure_run(args.manifest, args.run_dir)
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    if not commands:
        print(f"figures/{args.manifest}: its parts declare no measurement of the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
