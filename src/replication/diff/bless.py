"""Blessing: a tree's figures become the reference set (``python -m replication.diff.bless``, ``make bless``)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..io import atomic_path
from ..kernels import describe, native_kernels, parse_members
from ..manifest import read_manifest
from ..paths import FIGURES_ROOT, figure_key, figure_paths
from ..perturbation import DEFAULT_ULPS
from ..provenance import read_provenance, write_provenance
from ..run_cost import declared_costs
from .ensemble import run_ensemble, write_ensemble
from .images import image_rms_between


def claims_files(manifest: str) -> dict[str, str]:
    """The claims report of a manifest and its data (path in the tree -> name in the reference set): blessed
    with the figures, so the committed set carries the claims the documentation shows."""
    prefix = "" if manifest == "all" else f"{manifest}_"
    return {f"figures/{prefix}claims.md": "claims.md", f"results/{prefix}claims.csv": "claims.csv"}


def provenance_file(manifest: str) -> str:
    return "provenance.json" if manifest == "all" else f"{manifest}_provenance.json"


def bless(
    workdir: str | os.PathLike,
    dest: str | os.PathLike,
    members: list[str | os.PathLike] = (),
    ensemble: dict | None = None,
    manifest: str = "all",
) -> list[str]:
    """Make ``dest`` the reference set of every figure in ``<workdir>/figures/<manifest>``: PNG and CSV,
    the tree's ``provenance.json`` and ``settings.yaml``, its claims report (``claims.md`` and
    ``claims.csv``, when the manifest lists ``figures/claims.md``; then both must exist), the other
    Markdown reports it lists (tables, findings; under their path below ``figures/``) and, given
    ensemble ``members`` (runs of the same pipeline under perturbed numerics), ``envelope.csv``;
    ``ensemble`` fields are added to the provenance. A manifest other than ``all`` brings its own
    claims report (``figures/<manifest>_claims.md``) and provenance.

    Every other file in ``dest`` is removed, so the set is exactly the pipeline's figures. Returns
    the keys written.
    """
    workdir, dest = Path(workdir), Path(dest)
    listed = list(read_manifest(workdir, manifest).path)
    figures = [path for path in listed if Path(path).suffix == ".pdf"]
    claims = claims_files(manifest)
    claims = claims if next(iter(claims)) in listed else {}
    for source in claims:  # before anything is written: a tree without its claims blesses nothing
        if not (workdir / source).is_file():
            raise FileNotFoundError(
                f"{workdir / source}: figures/{manifest} lists the claims report, the tree has no {source}"
            )
    wanted = set()
    for path in figures:
        key = figure_key(path)
        for suffix, source in figure_paths(workdir / path).items():
            if suffix == "pdf":
                continue
            target = dest / f"{key}.{suffix}"
            with atomic_path(target) as tmp:
                shutil.copyfile(source, tmp)
            wanted.add(target)
    # The written reports the manifest lists (tables, findings: Markdown other than the claims report),
    # under their path below figures/, so the set carries what the documentation quotes.
    reports = {
        path: Path(path).relative_to(FIGURES_ROOT).as_posix()
        for path in listed
        if Path(path).suffix == ".md" and path not in claims
    }
    for source, name in (reports | claims).items():
        with atomic_path(dest / name) as tmp:
            shutil.copyfile(workdir / source, tmp)
        wanted.add(dest / name)
    provenance = read_provenance(workdir / FIGURES_ROOT / provenance_file(manifest))
    provenance.update({f"ensemble_{name}": value for name, value in (ensemble or {}).items()})
    write_provenance(provenance, dest / "provenance.json")
    wanted.add(dest / "provenance.json")
    # The settings the set was made with (figures/settings.yaml of the tree), beside its figures.
    record = workdir / FIGURES_ROOT / "settings.yaml"
    if record.exists():
        with atomic_path(dest / record.name) as tmp:
            shutil.copyfile(record, tmp)
        wanted.add(dest / record.name)
    if members:
        wanted |= write_ensemble(workdir, members, dest, image_rms_between)
    for stale in [p for p in dest.rglob("*") if p.is_file() and p not in wanted]:
        stale.unlink()
    for folder in sorted((p for p in dest.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return [figure_key(path) for path in figures]


def main(argv: list[str] | None = None) -> int:
    blessing = argparse.ArgumentParser(
        prog="python -m replication.diff.bless",
        description="Copy the PNG and CSV of every figure of a tree into a reference set, "
        "with the numerical-noise envelope of an ensemble.",
    )
    blessing.add_argument("workdir", help="where the pipeline ran (holds figures/all, or figures/<manifest>)")
    blessing.add_argument("dest", help="the reference set, e.g. figures/reference/smoke")
    blessing.add_argument(
        "--members",
        nargs="*",
        default=[],
        help="ensemble members to run: perturbation members (integers >= 1) and kernel families "
        "(replication.kernels); none: no envelope, floors only",
    )
    blessing.add_argument("--configfile", help="the config of the tree in workdir (needed with --members)")
    blessing.add_argument(
        "--targets",
        nargs="*",
        default=["figures/all"],
        help="what each member builds; figures outside it get no envelope (floors only)",
    )
    blessing.add_argument(
        "--family-targets",
        nargs="*",
        default=[],
        help="what each kernel family builds (default: --targets); figures outside both get no envelope",
    )
    blessing.add_argument("--scratch", help="folder for the members' runs (default: a temporary one, removed)")
    blessing.add_argument("--cores", default="all", help="cores of each member's Snakemake run (default: all)")
    blessing.add_argument("--manifest", default="all", help="the figures of figures/<manifest> (e.g. phase)")
    args = blessing.parse_args(argv)
    try:
        members = parse_members(args.members)
        declared_costs(args.manifest)  # a registered manifest, before anything runs
    except ValueError as error:
        blessing.error(str(error))
    ensemble = {}
    with tempfile.TemporaryDirectory(prefix="ensemble-") as temporary:
        folders = []
        if args.members:
            if not args.configfile:
                blessing.error("--members needs --configfile")
            start = time.perf_counter()
            folders = run_ensemble(
                members, args.configfile, args.scratch or temporary, args.targets, args.cores, args.family_targets
            )
            wall = time.perf_counter() - start
            ensemble = {
                "members": " ".join(member.label for member in members),
                "families": "; ".join(describe(member) for member in members if member.family),
                "ulps": DEFAULT_ULPS,
                "targets": " ".join(args.targets),
                "family_targets": " ".join(args.family_targets or args.targets),
                "wall_s": round(wall),
            } | {f"native_{name}": value for name, value in native_kernels().items()}
            print(f"ensemble of {len(folders)} members: {wall:.0f} s wall in all", flush=True)
        keys = bless(args.workdir, args.dest, folders, ensemble, manifest=args.manifest)
    print(f"blessed {len(keys)} figures into {args.dest}: {', '.join(keys)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
