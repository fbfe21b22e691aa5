"""What a cheaper phase diagram would measure: the phase cell's runs at other sequence lengths N and
batch sizes B, against the paper's (N 1024, B 16). It prints numbers; it asserts nothing.

The attention's cost per iteration grows with B N^2 and the rest with B N, so a shorter context is
the lever on the grid's cost; whether it keeps what the grid measures (the escape iteration, the
closed fraction a run settles at) is what this measures, at cells with short and long plateaus.

    .venv/bin/python -m replication.papers.local_to_global.phase.context_cost [--cells 0.5,0.8 0.3,0.9]
        [--sizes 1024x16 512x16 256x16 256x64] [--csv OUT.csv] [--write OUT.md]
    .venv/bin/python -m replication.papers.local_to_global.phase.context_cost --from A.csv B.csv --write OUT.md

Each (cell, N x B) trains every init and seed of the phase settings (config/config.yaml), with the
grid's early stopping; per run: iterations, CPU-s (``resource.getrusage``), escape iteration and
final closed fraction (``phase.measures``). ``--from`` renders rows measured before.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

import pandas as pd

from replication.command_line import command_parser

COMMAND = "python -m replication.papers.local_to_global.phase.context_cost"
COLUMNS = ["N", "B", "p", "q", "init", "seed", "steps", "cpu_s", "ms_per_iter", "escape", "final_closed"]


def settings():
    """The transformer's and the phase's settings of config/config.yaml (as phase.cost reads them)."""
    from replication.measurements import paper_settings

    settings = paper_settings("local_to_global", [])
    return settings.transformer, settings.phase


def measure(cells: list[tuple[float, float]], sizes: list[tuple[int, int]]) -> pd.DataFrame:
    import torch

    from replication.papers.local_to_global.phase.grid import Cell
    from replication.papers.local_to_global.phase.measures import run_measures
    from replication.papers.local_to_global.phase.settings import phase_run_settings
    from replication.papers.local_to_global.phase.tables import _tail
    from replication.papers.local_to_global.phase.training import train_cell

    transformer, phase = settings()
    torch.set_num_threads(transformer.threads)
    rows = []
    for context, batch in sizes:
        for p, q in cells:
            cell = Cell.keyed(p, q)
            run = phase_run_settings(transformer, phase, cell)
            run = dataclasses.replace(run, model=dataclasses.replace(run.model, context=context), batch_size=batch)
            evaluations, runs, _ = train_cell(run, phase.stop, phase.measures.smooth, progress=False)
            for (init, seed), frame in evaluations.groupby(["init", "seed"], sort=False):
                measured = run_measures(frame, cell.chain, phase.measures, phase.stop.closed, tail=_tail(phase))
                cost = runs[(runs.init == init) & (runs.seed == seed)].iloc[0]
                rows.append(
                    {
                        "N": context,
                        "B": batch,
                        "p": p,
                        "q": q,
                        "init": init,
                        "seed": int(seed),
                        "steps": int(cost.steps_run),
                        "cpu_s": round(float(cost.cpu_s), 1),
                        "ms_per_iter": round(1000 * float(cost.cpu_s) / int(cost.steps_run), 1),
                        "escape": measured["escape"],
                        "final_closed": round(measured["final_closed"], 3),
                    }
                )
                print(rows[-1], flush=True)
    return pd.DataFrame(rows, columns=COLUMNS)


def summary(rows: pd.DataFrame, horizon: int) -> pd.DataFrame:
    """Per (cell, init, N x B): escapes of the seeds (- never), median escape (never counts as the
    horizon: a lower bound), its ratio to the first size's, final closed fraction, ms per iteration."""
    first = rows[["N", "B"]].iloc[0].tolist()
    out = []
    for (p, q, init), group in rows.groupby(["p", "q", "init"], sort=False):
        medians = {}
        for (context, batch), runs in group.groupby(["N", "B"], sort=False):
            escapes = runs.escape.fillna(horizon)
            medians[(context, batch)] = escapes.median()
            bound = "+" if runs.escape.isna().sum() * 2 >= len(runs) else ""  # the median never escaped
            out.append(
                {
                    "cell": f"({p:g}, {q:g})",
                    "init": init,
                    "N x B": f"{context} x {batch}",
                    "escapes": ", ".join("-" if pd.isna(e) else f"{e:.0f}" for e in runs.escape),
                    "median escape": f"{escapes.median():.0f}{bound}",
                    "vs first": f"{escapes.median() / medians.get(tuple(first), escapes.median()):.2f}{bound}",
                    "final closed": ", ".join(f"{c:.2f}" for c in runs.final_closed),
                    "iterations": int(runs.steps.sum()),
                    "ms / iteration": f"{(runs.cpu_s.sum() / runs.steps.sum()) * 1000:.1f}",
                }
            )
    return pd.DataFrame(out)


def main() -> None:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("--cells", nargs="*", default=["0.5,0.8", "0.3,0.9"], help="P,Q of each cell")
    parser.add_argument("--sizes", nargs="*", default=["1024x16", "512x16", "256x16", "256x64"], help="NxB")
    parser.add_argument("--csv", type=Path, help="write the runs here")
    parser.add_argument("--from", dest="sources", nargs="*", type=Path, help="render these runs, train nothing")
    parser.add_argument("--write", type=Path, help="the summary as Markdown")
    args = parser.parse_args()
    _, phase = settings()
    if args.sources:
        rows = pd.concat([pd.read_csv(path) for path in args.sources], ignore_index=True)[COLUMNS]
    else:
        cells = [tuple(float(v) for v in cell.split(",")) for cell in args.cells]
        sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes]
        rows = measure(cells, sizes)
    from replication.io import write_csv, write_text

    if args.csv:
        write_csv(rows, args.csv)
    table = summary(rows, phase.horizon)
    print(table.to_string(index=False))
    if args.write:
        from replication.provenance import cpu_model

        header = (
            f"<!-- written by {COMMAND} --write; do not edit -->\n"
            f"Measured on {time.strftime('%Y-%m-%d')}, {cpu_model()}, {os.cpu_count()} CPUs, "
            f"two runs side by side, with the phase settings (horizon {phase.horizon}, seeds "
            f"{', '.join(map(str, phase.seeds))}, early stopping); a median escape with + is a lower "
            "bound (half the seeds or more never escaped). Rows: "
            f"`{' '.join([COMMAND, *sys.argv[1:]])}`.\n\n"
        )
        write_text(header + table.to_markdown(index=False, disable_numparse=True) + "\n", args.write)


if __name__ == "__main__":
    main()
