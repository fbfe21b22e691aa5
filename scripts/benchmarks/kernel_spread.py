"""How far other kernel families move the figures, against the perturbation members' envelope.

    .venv/bin/python scripts/benchmarks/kernel_spread.py --run DIR --configfile config/config.yaml \\
        --targets figures/local_to_global/fig3_ablation.pdf --members 1 2 3 4 aten-avx2 aten-default \\
        --csv docs/measurements/kernel_spread_paper.csv

reruns the targets of the built tree DIR once per ensemble member (``replication.kernels``: a
perturbation member or a kernel family), in scratch folders, and writes each member's spread per
figure and data column (the ``envelope_members.csv`` format of a reference set) with its CPU time
from the kernel (``resource.getrusage``).

    .venv/bin/python scripts/benchmarks/kernel_spread.py --summarise figures/reference/smoke \\
        docs/measurements/kernel_spread_paper.csv --write docs/measurements/kernel_spread.md

    .venv/bin/python scripts/benchmarks/kernel_spread.py --speed --steps 300 --csv docs/measurements/kernel_pinned.csv

trains one transformer run of the paper settings (Fig. 3, standard init, seed 1; ``--steps`` of it)
once per setting (native kernels, one pinned code path, the pinned path with AVX2 caps on top, and
kernel families), each in its own process, and writes CPU-s per step (kernel) and how far each
test-loss curve lies from the native one and from the pinned one (0: the last bit agrees).

``--summarise`` summarises members' spreads (a reference set's ``envelope_members.csv`` or such a CSV): per kernel
family the largest spread against the perturbation members' envelope and against every other
member's (what k must cover), the envelope's own spread (largest of n perturbation members against
the largest of the first n/2), and per figure and column the numbers behind them. Prints; asserts
nothing.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
HEADER = "<!-- written by scripts/benchmarks/kernel_spread.py --write; do not edit -->"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args) -> None:
    """Each member in turn; the CSVs are written again after each, so a stopped run keeps its members."""
    from replication.diff.ensemble import run_ensemble
    from replication.diff.images import image_rms_between
    from replication.io import write_csv
    from replication.kernels import describe, native_kernels, parse_members

    members = parse_members(args.members)
    capability = native_kernels()["torch_cpu_capability"]
    frames = [another_cpu(args.run, args.against, args.targets)] if args.against else []
    if args.append and Path(args.csv).is_file():  # the members of an earlier run stay, unless run again
        earlier = pd.read_csv(args.csv)
        labels = {m.label for m in members} | set(frames[0].member if frames else [])
        frames.insert(0, earlier[~earlier.member.astype(str).isin(labels)])
    if frames:
        write_csv(pd.concat(frames, ignore_index=True), args.csv)
    costs, cost_file = [], Path(args.csv).with_name(Path(args.csv).stem + "_cost.csv")
    earlier_cost = pd.read_csv(cost_file) if args.append and cost_file.is_file() else pd.DataFrame()
    if not earlier_cost.empty:
        earlier_cost = earlier_cost[~earlier_cost.member.astype(str).isin({m.label for m in members})]
    with tempfile.TemporaryDirectory(prefix="kernels-") as scratch:
        for member in members:
            cpu, wall = children_cpu(), time.perf_counter()
            folders = run_ensemble([member], args.configfile, args.scratch or scratch, args.targets, args.cores)
            cpu, wall = children_cpu() - cpu, time.perf_counter() - wall
            costs.append({"member": member.label, "what": describe(member), "cpu_s": round(cpu), "wall_s": round(wall)})
            frames.append(target_spreads(args.run, folders, args.targets, image_rms_between))
            write_csv(pd.concat(frames, ignore_index=True), args.csv)
            cost = pd.DataFrame(costs).assign(
                targets=" ".join(args.targets), cpu=_cpu_model(), torch_cpu_capability=capability
            )
            write_csv(pd.concat([earlier_cost, cost], ignore_index=True), cost_file)
    if costs:
        print(cost.to_string(index=False))


# One code path whatever the CPU: torch's kernels without vector units it dispatches to, MKL's branch
# for every x86-64 CPU. With AVX2 caps on top, what the pinned path ignores must not move a bit.
PINNED = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
SPEED_SETTINGS = {
    "native": {},
    "pinned": PINNED,
    "pinned, AVX2 caps": {**PINNED, "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
}


def speed(args) -> None:
    """The pinned path's cost and agreement, against native kernels and families (one run each)."""
    import os
    import subprocess

    from replication.io import write_csv
    from replication.kernels import KERNEL_VARIABLES

    curves, rows = {}, []
    worker = Path(__file__).with_name("ensemble_spread.py")
    plain = {k: v for k, v in os.environ.items() if k not in (*KERNEL_VARIABLES, "REPLICATION_PERTURBATION")}
    with tempfile.TemporaryDirectory() as scratch:
        for label, extra in SPEED_SETTINGS.items():
            out = Path(scratch) / f"{len(rows)}.csv"
            command = [sys.executable, str(worker), "--worker", "--out", str(out), "--experiment", "fig3"]
            command += ["--init", "standard", "--seed", "1", "--steps", str(args.steps)]
            cpu, wall = children_cpu(), time.perf_counter()
            subprocess.run(command, check=True, env={**plain, **extra})
            cpu, wall = children_cpu() - cpu, time.perf_counter() - wall
            curves[label] = pd.read_csv(out).test_loss.to_numpy()
            rows.append({"setting": label, "variables": " ".join(f"{k}={v}" for k, v in extra.items()) or "-"})
            rows[-1] |= {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "load": round(os.getloadavg()[0], 1)}
    for row in rows:
        curve = curves[row["setting"]]
        for against in ("native", "pinned"):
            row[f"max_d_{against}"] = float(np.nanmax(np.abs(curve - curves[against])))
    table = pd.DataFrame(rows).assign(steps=args.steps, cpu=_cpu_model())
    table["cpu_per_native"] = (table.cpu_s / table.cpu_s.iloc[0]).round(2)
    print(table.to_string(index=False))
    if args.csv:
        write_csv(table, args.csv)


def target_spreads(tree: str, folders: dict, targets: list[str], image_rms) -> pd.DataFrame:
    """Per member, each target figure's spread against the tree (which need not hold figures/all)."""
    from replication.diff.envelopes import IMAGE_COLUMN, column_spread
    from replication.paths import figure_key, figure_paths

    rows = []
    for label, folder in folders.items():
        for target in targets:
            key, base, member = figure_key(target), figure_paths(Path(tree) / target), figure_paths(folder / target)
            spreads = column_spread(pd.read_csv(base["csv"]), pd.read_csv(member["csv"]))
            spreads[IMAGE_COLUMN] = (image_rms(member["png"], base["png"]), np.nan)
            rows += [
                {"key": key, "column": c, "member": label, "spread": a, "spread_rel": r}
                for c, (a, r) in spreads.items()
            ]
    return pd.DataFrame(rows)


def another_cpu(tree: str, reference: str, targets: list[str]) -> pd.DataFrame:
    """The spread of a reference set made on another CPU (its provenance names it) against the tree
    built here, as one more member (``cpu <model>``), for the targets' figures."""
    import json

    from replication.diff.envelopes import column_spread
    from replication.paths import figure_key

    model = json.loads((Path(reference) / "provenance.json").read_text())["cpu_model"]
    rows = []
    for target in targets:
        key = figure_key(target)
        here = pd.read_csv(Path(tree) / "figures" / f"{key}.csv")
        for column, (spread, relative) in column_spread(here, pd.read_csv(Path(reference) / f"{key}.csv")).items():
            rows.append(
                {"key": key, "column": column, "member": f"cpu {model}", "spread": spread, "spread_rel": relative}
            )
    return pd.DataFrame(rows)


def _cpu_model() -> str:
    from replication.provenance import cpu_model

    return cpu_model()


def source_spreads(source: str) -> tuple[str, pd.DataFrame]:
    path = Path(source)
    if path.is_dir():
        from replication.diff.ensemble import read_spreads

        return f"reference set `{path.relative_to(ROOT) if path.is_absolute() else path}`", read_spreads(path)
    return f"`{source}`", pd.read_csv(path)


def family_lines(summary: pd.DataFrame) -> list[str]:
    families = [c[: -len("/others")] for c in summary.columns if c.endswith("/others")]
    lines = [
        "| member | columns it moves | largest / ulp envelope | largest / every other member | at |",
        "|---|---|---|---|---|",
    ]
    for family in families:
        moved = summary[summary[family] > 0]
        ratio = moved[f"{family}/ulp"].replace(np.inf, np.nan)
        others = moved[f"{family}/others"].replace(np.inf, np.nan)
        at = moved.loc[others.idxmax()] if others.notna().any() else None
        where = f"{at.key} `{at.column}`" if at is not None else "-"
        lines.append(
            f"| {family} | {len(moved)} of {len(summary)} | {_g(ratio.max())} | {_g(others.max())} | {where} |"
        )
    half = (summary.ulp / summary.ulp_half).replace(np.inf, np.nan)
    lines += [
        "",
        f"Perturbation members: the largest of n over the largest of the first n/2, per column: median "
        f"{_g(half.median())}, at most {_g(half.max())} ({int((summary.ulp > 0).sum())} columns moved).",
    ]
    return lines


def _g(value: float) -> str:
    return "-" if pd.isna(value) else f"{value:.3g}"


def summarise(args) -> None:
    from replication.diff.ensemble import spread_summary

    command = f"scripts/benchmarks/kernel_spread.py --summarise {' '.join(args.summarise)}"
    lines = [HEADER, f"Last written by `{command}`.", ""]
    for source in args.summarise:
        name, spreads = source_spreads(source)
        if spreads.empty:
            lines += [f"{name}: no members' spreads.", ""]
            continue
        summary = spread_summary(spreads.astype({"member": str}))
        families = [c[: -len("/others")] for c in summary.columns if c.endswith("/others")]
        members = sorted(spreads.member.astype(str).unique(), key=lambda m: (not m.isdigit(), m.zfill(4)))
        lines += [f"### {name}", "", f"Members: {', '.join(members)}.", "", *family_lines(summary), ""]
        cost = Path(source).with_name(Path(source).stem + "_cost.csv")
        if cost.is_file():
            table = pd.read_csv(cost)
            lines += [
                f"Measured on {table.cpu.iloc[0]} (torch {table.torch_cpu_capability.iloc[0]}), targets "
                f"`{table.targets.iloc[0]}`; CPU-s per member (kernel): "
                + ", ".join(f"{r.member} {r.cpu_s}" for r in table.itertuples())
                + ".",
                "",
            ]
        moved = summary[summary["all"] > 0]
        head = ["figure", "column", "ulp (n)", "ulp (n/2)", *families, "all"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for _, row in moved.iterrows():
            cells = [row.key, f"`{row.column}`", *(_g(row[c]) for c in ["ulp", "ulp_half", *families, "all"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.write:
        Path(args.write).write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", help="a built tree: rerun its targets once per member")
    parser.add_argument("--configfile", help="the tree's config (with --run)")
    parser.add_argument("--targets", nargs="+", default=["figures/all"])
    parser.add_argument("--members", nargs="*", default=["1", "2", "aten-avx2"])
    parser.add_argument("--append", action="store_true", help="keep the other members of an existing --csv")
    parser.add_argument("--cores", default="all")
    parser.add_argument("--scratch", help="folder for the members' trees (default: temporary, removed)")
    parser.add_argument("--against", help="with --run: a reference set made on another CPU, one more member")
    parser.add_argument("--csv", help="where --run writes the spreads (and <name>_cost.csv beside)")
    parser.add_argument("--speed", action="store_true", help="the pinned path's cost and agreement")
    parser.add_argument("--steps", type=int, default=300, help="training steps of the --speed runs")
    parser.add_argument("--summarise", nargs="+", help="reference sets or spread CSVs to summarise")
    parser.add_argument("--write", help="the summary as Markdown, e.g. docs/measurements/kernel_spread.md")
    args = parser.parse_args()
    if args.run:
        if not (args.configfile and args.csv):
            parser.error("--run needs --configfile and --csv")
        run(args)
    if args.speed:
        speed(args)
    if args.summarise:
        summarise(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
