"""Cost of the plateau analysis (figures/plateau) at the config's settings, measured on a few cells,
and its projection to the full run. It prints numbers; it asserts nothing.

    .venv/bin/python -m replication.papers.local_to_global.plateau.cost [--cells 0.5,0.8 0.8,0.5] [--seeds 1]
        [--configfile F] [--write docs/measurements/plateau_cost.md] [--csv FILE] [--against float64 0.001]

Each cell's standard-init run is trained to the fixed points (``plateau.points``) as the points
job does, then the Hessian job's work is done at every point. CPU seconds come from the kernel
(``resource.getrusage``). The projection: (cells above the line) x (seeds) x (retraining to the last
point + per point x points, with one mid-plateau point per escaping run, assumed for every run).
``--csv`` writes the spectra measured (one row per point), e.g. for docs/measurements; ``--against``
computes every point again at another precision and tolerance and prints the differences.

    .venv/bin/python -m replication.papers.local_to_global.plateau.cost --directory DIR --time DIR/time.txt
        [--phase-time DIR/phase_time.txt] [--write docs/measurements/plateau_run.md]

instead reports a finished run of figures/plateau in the tree DIR: its total from the kernel (a
``/usr/bin/time -v`` report of the whole Snakemake run, every job included) against the 1.5 CPU-h
goal, the phase grid's beside it, and what the run did: points, Hessian-vector products, and the
escape sweeps' runs (trained, with their kernel CPU-s, or read from the phase grid).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
from pathlib import Path

import pandas as pd

from replication.command_line import command_parser
from replication.io import write_csv, write_text
from replication.measurements import kernel_time, paper_settings, report_body, time_lines

COMMAND = "python -m replication.papers.local_to_global.plateau.cost"
LINES: list[str] = []


def say(line: str) -> None:
    print(line, flush=True)
    LINES.append(line)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def parser() -> argparse.ArgumentParser:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument(
        "--cells", nargs="+", default=["0.5,0.8", "0.8,0.5", "0.7,0.6", "0.9,0.9"], help="P,Q of each cell measured"
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[1], help="seeds of each cell")
    parser.add_argument("--configfile", nargs="*", default=[], help="over config/config.yaml, e.g. config/smoke.yaml")
    parser.add_argument("--write", help="also write the lines printed as Markdown here")
    parser.add_argument("--csv", help="write the measured runs here")
    parser.add_argument(
        "--against",
        nargs=2,
        metavar=("DTYPE", "TOL"),
        help="also compute every point at this precision and Lanczos tolerance (e.g. float64 0.001): "
        "the differences in lambda_min, lambda_max, noise, the held-out curvature and its noise, "
        "and the canonical lambda_min, and the CPU ratio",
    )
    parser.add_argument("--directory", type=Path, help="a finished run's tree: report it instead of measuring")
    parser.add_argument(
        "--time",
        type=Path,
        nargs="+",
        help="the run's /usr/bin/time -v report (with --directory); several for a run stopped and resumed",
    )
    parser.add_argument("--phase-time", type=Path, help="the phase grid's run's /usr/bin/time -v report")
    return parser


def main() -> None:
    arguments = parser()
    args = arguments.parse_args()
    if args.directory is not None and not args.time:
        arguments.error(f"--directory needs --time: the run's /usr/bin/time -v reports ({args.directory}/time*.txt)")
    if args.directory is not None:
        finished_run(args.directory, args.time, args.phase_time)
    else:
        measure(args)
    if args.write:
        write(args.write, args.directory)


def say_spectra(p: float, q: float, spectra: pd.DataFrame) -> None:
    """One line per point measured at (``p``, ``q``)."""
    for r in spectra.itertuples():
        mode = (
            f"; AdamW's mode {r.mode_curvature:.3g} +- {r.mode_curvature_noise:.2g} ({r.mode_verdict}, tol "
            f"{r.mode_tol:.3g})"
            if "mode_curvature" in spectra
            else ""
        )
        say(
            f"({p:g}, {q:g}) seed {r.seed} iteration {r.step}: lambda_min {r.lambda_min:.3g}, held-out curvature "
            f"{r.curvature:.3g} +- {r.curvature_noise:.2g} over {r.held_out_batches} batches ({r.verdict}, tol "
            f"{r.tol:.2g}), canonical {r.canonical_curvature:.2g} ({r.canonical_verdict}){mode}, closed "
            f"{r.closed:.2f}, gradient / noise {r.gradient_ratio:.3g}, {r.products} products"
        )


def measure(args) -> None:
    """Each of ``args.cells`` trained to its points and its spectra computed, then the projection."""
    import torch

    from replication.compute import prepare_training_job
    from replication.papers.local_to_global.phase.grid import Cell
    from replication.papers.local_to_global.phase.settings import phase_run_settings
    from replication.papers.local_to_global.plateau.points import train_to_points
    from replication.papers.local_to_global.plateau.settings import plateau_cells
    from replication.papers.local_to_global.plateau.spectrum import cell_spectra

    prepare_training_job(1)
    settings = paper_settings("local_to_global", args.configfile)
    transformer, phase, plateau = settings.transformer, settings.phase, settings.plateau
    machine = f"torch {torch.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    say(f"{machine}; points {list(plateau.points)}")
    rows, train_cpu, hessian_cpu, reference_cpu = [], 0.0, 0.0, 0.0
    for cell in args.cells:
        p, q = (float(v) for v in cell.split(","))
        cell = Cell.keyed(p, q)
        settings = phase_run_settings(transformer, phase, cell)
        points = pd.DataFrame([{"seed": s, "step": t, "kind": "fixed"} for s in args.seeds for t in plateau.points])
        start = cpu_seconds()
        arrays = train_to_points(settings, points, progress=False)
        train_cpu += cpu_seconds() - start
        start = cpu_seconds()
        spectra, _ = cell_spectra(points, arrays, cell.chain, settings, plateau.hessian)
        hessian_cpu += cpu_seconds() - start
        rows.append(spectra)
        if args.against:
            reference_hessian = dataclasses.replace(plateau.hessian, dtype=args.against[0], tol=float(args.against[1]))
            start = cpu_seconds()
            reference, _ = cell_spectra(points, arrays, cell.chain, settings, reference_hessian)
            reference_cpu += cpu_seconds() - start
            compare_spectra(spectra, reference, plateau.hessian, reference_hessian)
        say_spectra(p, q, spectra)
    spectra = pd.concat(rows, ignore_index=True)
    per_step = train_cpu / (len(args.cells) * len(args.seeds) * max(plateau.points))
    per_point = hessian_cpu / len(spectra)
    cells = len(plateau_cells(phase))
    runs = cells * len(phase.seeds)
    points_per_run = len(plateau.points) + int(plateau.mid_plateau)
    # Retraining: to the last fixed point, or to the mid-plateau point when it is later (at most the escape).
    projected = runs * (per_step * max(plateau.points) + per_point * points_per_run)
    say(f"retraining: {per_step * 1e3:.1f} CPU-ms per iteration; Hessian: {per_point:.1f} CPU-s per point")
    if args.against:
        say(
            f"Hessian at {args.against[0]}, tol {args.against[1]}: {reference_cpu / len(spectra):.1f} CPU-s per point "
            f"(x{reference_cpu / hessian_cpu:.2f} the configured {plateau.hessian.dtype}, tol {plateau.hessian.tol:g})"
        )
    say(
        f"projected full run: {cells} cells x {len(phase.seeds)} seeds x ({max(plateau.points)} iterations + "
        f"{points_per_run} points) = {projected:.0f} CPU-s ({projected / 3600:.2f} CPU-h), job start-ups aside"
    )
    if args.csv:
        write_csv(spectra, args.csv, float_format=None)  # every digit, as pandas writes them


GOAL_CPU_H = 2.5  # on top of the phase grid


def finished_run(directory: Path, time_files: list[Path], phase_time: Path | None) -> None:
    """The lines of a finished run's report (``directory``: its tree; ``time_files``: the reports of
    its parts, a run stopped and resumed with the same command having one per part)."""
    from replication.provenance import cpu_model

    say(f"{cpu_model()}, {os.cpu_count()} CPUs")
    user = system = 0.0
    for index, time_file in enumerate(time_files):
        name = "figures/plateau, the whole run" if len(time_files) == 1 else f"figures/plateau, part {index + 1}"
        for line in time_lines(time_file, name):
            say(line)
        part_user, part_system, _, _ = kernel_time(time_file)
        user, system = user + part_user, system + part_system
    if len(time_files) > 1:
        total = user + system
        say(f"figures/plateau, the {len(time_files)} parts together: {total:.0f} CPU-s ({total / 3600:.2f} CPU-h)")
    say(
        f"  against the goal of {GOAL_CPU_H} CPU-h on top of the phase grid: x{(user + system) / 3600 / GOAL_CPU_H:.2f}"
    )
    if phase_time is not None:
        for line in time_lines(phase_time, "the phase grid it read, its run"):
            say(line)
    results = directory / "results/local_to_global/plateau"
    points = pd.read_csv(results / "points.csv")
    kinds = points.kind.value_counts().to_dict()
    runs = points.groupby(["p", "q", "seed"]).ngroups
    say(
        f"points: {len(points)} ({kinds.get('fixed', 0)} fixed, {kinds.get('mid', 0)} mid-plateau) of {runs} runs in "
        f"{points.groupby(['p', 'q']).ngroups} cells; Hessian-vector products {points.products.sum()} "
        f"({points.products.mean():.0f} per point)"
    )
    # The escape jobs' own files: phase_<sweep>_<value>.csv read from the grid, the others trained.
    files = sorted((results / "escape").glob("*/*.csv"))
    read = sum(len(pd.read_csv(f)) for f in files if f.name.startswith("phase_"))
    fresh = pd.concat([pd.read_csv(f) for f in files if not f.name.startswith("phase_")], ignore_index=True)
    say(f"escape sweeps: {read + len(fresh)} runs, {len(fresh)} trained, {read} read from the phase grid")
    for (sweep, value), group in fresh.groupby(["sweep", "value"]):
        say(
            f"  {sweep} {value:g}: {len(group)} runs, {group.cpu_s.sum():.0f} CPU-s, {group.steps_run.sum()} steps "
            f"({group.cpu_s.sum() / group.steps_run.sum() * 1e3:.1f} CPU-ms per step), "
            f"{int(group.escaped.sum())} escaped"
        )
    say(f"  trained runs in all: {fresh.cpu_s.sum():.0f} CPU-s ({fresh.cpu_s.sum() / 3600:.2f} CPU-h)")


def write(path, directory: Path | None) -> None:
    command, bullets = report_body(COMMAND, LINES, directory)
    bullets = "\n".join(bullets)
    write_text(f"# Cost of the plateau analysis\n\nWritten by `{command}`.\n\n{bullets}\n", path)


def compare_spectra(spectra: pd.DataFrame, reference: pd.DataFrame, hessian, reference_hessian) -> None:
    """One line per point: how far the configured spectrum is from the reference computation."""
    columns = ["lambda_min", "lambda_max", "noise", "curvature", "curvature_noise", "canonical_lambda_min"]
    for r, ref in zip(spectra.itertuples(), reference.itertuples()):
        gaps = ", ".join(f"{c} {getattr(ref, c):.4g} vs {getattr(r, c):.4g}" for c in columns)
        same = "same verdict" if r.verdict == ref.verdict else "VERDICT DIFFERS"
        say(
            f"  ({r.p:g}, {r.q:g}) seed {r.seed} iteration {r.step}, {reference_hessian.dtype} tol "
            f"{reference_hessian.tol:g} vs {hessian.dtype} tol {hessian.tol:g}: {gaps}; {same}; "
            f"{ref.products} vs {r.products} products"
        )


if __name__ == "__main__":
    main()
