"""Settings sweeps (``make sweep SWEEP=<name>``): one or two settings over a few values, every point
a variant, all points built by ONE Snakemake run, then a summary against the swept values.

``config/sweeps/<name>.yaml``::

    configfiles: [config/smoke.yaml]       # under the points (optional; default: the paper config)
    settings:                              # one or two keys; the points are their grid
      section.optimizer.lr: [0.001, 0.002]
    claims: [C-1]                          # claims whose measured value and verdict the summary shows
    measurements:                          # optional: a statistic of a figure's data column
      - {name: final_loss, file: figures/section/curve.csv, column: loss, stat: min}

One run, one DAG: a driver Snakefile (``variants/<name>.sweep.smk``, written here) includes the
workflow once per point as a Snakemake ``module`` whose paths are prefixed with the point's tree
(``variants/<point>/``), so a cluster profile receives the jobs of every point together. Each point
is seeded from the closest existing tree (``replication.variants.seed_tree``): only what its
settings change reruns.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .command_line import command_parser
from .io import write_csv, write_text
from .paths import PROJECT_ROOT
from .variants import VARIANTS_DIR, check_name, load_yaml, prepare
from .variants.cli import add_tree_options, parse_command_line

SWEEP_FILES = PROJECT_ROOT / "config" / "sweeps"
SNAKEFILE = PROJECT_ROOT / "workflow" / "Snakefile"
STATS = ("mean", "median", "min", "max", "last")


def read_sweep(name: str, path: str | os.PathLike | None = None) -> dict:
    """The sweep file (``path``, else ``config/sweeps/<name>.yaml``), checked: one or two settings with
    at least one value each."""
    from .errors import ConfigError

    check_name(name)
    sweep = load_yaml(path or SWEEP_FILES / f"{name}.yaml")
    unknown = sorted(set(sweep) - {"configfiles", "settings", "claims", "measurements"})
    if unknown:
        raise ConfigError(f"sweep {name}: key {unknown[0]!r}; allowed: configfiles, settings, claims, measurements")
    settings = sweep.get("settings") or {}
    if not 1 <= len(settings) <= 2 or not all(isinstance(v, list) and v for v in settings.values()):
        raise ConfigError(f"sweep {name}: 'settings': allowed: one or two keys, each with a list of values")
    for measurement in sweep.get("measurements") or []:
        if set(measurement) != {"name", "file", "column", "stat"} or measurement["stat"] not in STATS:
            raise ConfigError(
                f"sweep {name}: measurement {measurement}: allowed: name, file, column and stat ({', '.join(STATS)})"
            )
    return sweep


def points(name: str, sweep: dict) -> list[dict]:
    """Every point of the grid: its variant name and ``{key: value}``."""
    keys = list(sweep["settings"])
    grid = []
    for values in itertools.product(*(sweep["settings"][key] for key in keys)):
        chosen = dict(zip(keys, values))
        label = ",".join(f"{key.split('.')[-1]}={value}" for key, value in chosen.items())
        grid.append({"name": check_name(f"{name}-{label}"), "values": chosen})
    return grid


def assignments(values: dict) -> list[str]:
    return [f"{key}={json.dumps(value)}" for key, value in values.items()]


def driver_text(trees: list[tuple[str, Path]]) -> str:
    """A Snakefile that includes the workflow once per point, each under its tree's prefix."""
    lines = ["# Written by replication.sweeps: the workflow once per point of the sweep, one DAG.", "import json", ""]
    for index, (name, config_file) in enumerate(trees):
        lines += [
            f"module point{index}:",
            f"    snakefile: {str(SNAKEFILE)!r}",
            f"    config: json.loads(open({str(config_file)!r}).read())",
            f"    prefix: {name!r}",
            "",
            f"use rule * from point{index} as point{index}_*",
            "",
        ]
    lines += [
        "rule sweep:",
        "    default_target: True",
        f"    input: {[f'{name}/figures/all' for name, _ in trees]!r}",
        "    localrule: True",
        "",
    ]
    return "\n".join(lines)


def _statistic(frame: pd.DataFrame, column: str, stat: str) -> float:
    values = frame[column].dropna()
    if values.empty:
        return np.nan
    return float(values.iloc[-1]) if stat == "last" else float(getattr(values, stat)())


def summary_table(name: str, sweep: dict, grid: list[dict], root: Path) -> pd.DataFrame:
    """One row per point: its swept values, each chosen claim's measured value and verdict, each
    measurement."""
    rows = []
    for point in grid:
        tree = root / VARIANTS_DIR / point["name"]
        row = {"point": point["name"], **point["values"]}
        claims = pd.read_csv(tree / "results" / "claims.csv", dtype={"claim_id": str})
        for claim in sweep.get("claims") or []:
            # "C-5" names every row of spec claim 5 ("C-5 (5a)", ...); a full id names one.
            match = claims[(claims.claim_id == claim) | claims.claim_id.str.startswith(claim + " (")]
            if match.empty:
                raise ValueError(f"sweep {name}: claim {claim!r} is not in {tree}/results/claims.csv")
            for found in match.itertuples():
                row[f"{found.claim_id} measured"] = found.measured
                row[f"{found.claim_id} holds"] = bool(found.holds)
        for measurement in sweep.get("measurements") or []:
            frame = pd.read_csv(tree / measurement["file"])
            row[measurement["name"]] = _statistic(frame, measurement["column"], measurement["stat"])
        rows.append(row)
    return pd.DataFrame(rows)


def draw_summary(name: str, summary: pd.DataFrame, keys: list[str]):
    """The summary's figure: one panel per column of ``summary`` that is not a swept setting, against
    the first setting ``keys[0]``, one line per value of the second if there is one."""
    from .plotting import apply_style, plt

    shown = [c for c in summary.columns if c not in ("point", *keys)]
    apply_style()
    fig, axes = plt.subplots(1, max(1, len(shown)), figsize=(3.6 * max(1, len(shown)), 3.0), squeeze=False)
    for axis, column in zip(axes[0], shown):
        groups = summary.groupby(keys[1]) if len(keys) == 2 else [(None, summary)]
        for value, group in groups:
            y = pd.to_numeric(group[column], errors="coerce")
            axis.plot(group[keys[0]], y, "o-", label=f"{keys[1].split('.')[-1]}={value}" if value is not None else None)
        axis.set_xlabel(keys[0].split(".")[-1])
        axis.set_title(column)
        if column.endswith(" holds"):
            axis.set_yticks([0, 1], ["fails", "holds"])
        if len(keys) == 2:
            axis.legend()
    fig.suptitle(f"sweep {name}", fontsize=10)
    fig.tight_layout()
    return fig


def summarize(name: str, sweep: dict, grid: list[dict], root: Path, out_dir: Path) -> pd.DataFrame:
    """summary.csv (``summary_table``), summary.png (``draw_summary``: each column against the first
    swept setting) and summary.md (the table and the figure)."""
    from .plotting import plt

    summary = summary_table(name, sweep, grid, root)
    write_csv(summary, out_dir / "summary.csv")
    fig = draw_summary(name, summary, list(sweep["settings"]))
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_dir / "summary.png", dpi=120)
    plt.close(fig)
    write_text(
        f"# Sweep {name}\n\n"
        + summary.to_markdown(index=False, disable_numparse=True)
        + "\n\n![summary](summary.png)\n",
        out_dir / "summary.md",
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    from .errors import ConfigError
    from .make_command import make_command, option_value
    from .pipeline_run import main as run_pipeline

    parser = command_parser(__spec__, __doc__)
    parser.add_argument("name", help="config/sweeps/<name>.yaml")
    parser.add_argument("--configfile", action="append", default=[], help="under the points (after the sweep's own)")
    parser.add_argument("--file", help="the sweep file (default: config/sweeps/<name>.yaml)")
    add_tree_options(parser, "points", dry_run="lay out the points and print Snakemake's job list")
    args = parse_command_line(parser, argv)
    root = Path(args.root)
    try:
        sweep = read_sweep(args.name, args.file)
        configfiles = [str(PROJECT_ROOT / p) for p in sweep.get("configfiles") or []] + args.configfile
        grid = points(args.name, sweep)
        trees = []
        for point in grid:
            tree, _, config = prepare(
                point["name"], configfiles, assignments(point["values"]), root, point["name"] + "/", base=args.base
            )
            # The resolved config, smoke merge done (a module does not merge smoke.yaml over it again).
            config_file = tree / "config.json"
            config_file.write_text(json.dumps(config, sort_keys=True))
            trees.append((point["name"], config_file.resolve()))
    except ConfigError as error:
        print(f"Invalid config: {error}", file=sys.stderr)
        return 1
    driver = root / VARIANTS_DIR / f"{args.name}.sweep.smk"
    write_text(driver_text(trees), driver)
    rest = args.snakemake_args
    under_make = []
    if args.make_goal:  # what a Ctrl-C names as the command that resumes
        resume = make_command(args.make_goal, cores=option_value(rest, "--cores"), SWEEP=args.name)
        under_make = ["--make-goal", args.make_goal, "--resume-command", resume]
    code = run_pipeline(
        ["--directory", str(root / VARIANTS_DIR), "--snakefile", str(driver.resolve()), *under_make, "--", *rest]
        + (["--dry-run"] if args.dry_run else []),
    )
    if code != 0 or args.dry_run:
        return code
    out = root / "sweeps" / args.name
    summary = summarize(args.name, sweep, grid, root, out)
    print(summary.to_string(index=False))
    print(f"sweep {args.name}: {len(grid)} points; summary in {out}/summary.csv, summary.png, summary.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
