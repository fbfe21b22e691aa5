"""How far one transformer run of the paper settings moves under numerical noise alone.

Trains one (experiment, init, seed) run of config/config.yaml several times, each in its own
process: unperturbed, as perturbation members (REPLICATION_PERTURBATION, last-bit moves of the
initial parameters) and with torch's kernels for a narrower vector unit (ATEN_CPU_CAPABILITY,
as on another CPU). Prints, against the unperturbed run: the largest step-by-step |d| of the
test loss (raw and as plotted, a centred moving average), and the stable statistics a
comparison could use instead (plateau level, escape iteration, final loss). Also CPU time and
the load average, since the machine may be shared.

    .venv/bin/python -m replication.papers.local_to_global.transformer.ensemble_spread \\
        --steps 1000 --members 1 2 --isa avx2
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from replication.command_line import command_parser
from replication.paths import PROJECT_ROOT


def worker(args) -> None:
    import torch

    from replication.config import validate_config
    from replication.io import write_csv
    from replication.papers.local_to_global.transformer.settings import transformer_settings
    from replication.papers.local_to_global.transformer.train import train

    torch.set_num_threads(1)
    config = validate_config(
        yaml.safe_load((PROJECT_ROOT / "config" / "config.yaml").read_text()),
        PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml",
    )
    settings = transformer_settings(config["local_to_global"]).run(args.experiment)
    settings = dataclasses.replace(settings, steps=args.steps or settings.steps)
    name = f"{args.experiment}/{args.init}/seed{args.seed}"
    result = train(settings, args.init, args.seed, name=name, progress=False)
    write_csv(result.losses, args.out)


def statistics(losses: pd.DataFrame, chain: dict, smooth: int) -> dict:
    from replication.papers.local_to_global.markov import MarkovChain

    tested = losses.dropna(subset=["test_loss"]).set_index("step").test_loss
    smoothed = tested.rolling(smooth, center=True, min_periods=1).mean()
    unigram = MarkovChain(**chain).unigram_loss
    below = smoothed[smoothed < unigram - 0.01]
    return {
        "plateau_200_600": float(smoothed.loc[200:600].mean()),
        "escape_step": int(below.index[0]) if len(below) else -1,
        "final_loss": float(smoothed.iloc[-20:].mean()),
        "raw": tested,
        "smoothed": smoothed,
    }


def main() -> int:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("--experiment", default="fig4", help="the experiment whose run is repeated (default: fig4)")
    parser.add_argument("--init", default="standard", help="its initialisation (default: standard)")
    parser.add_argument("--seed", type=int, default=1, help="its seed (default: 1)")
    parser.add_argument("--steps", type=int, default=0, help="0: the config's")
    parser.add_argument("--members", type=int, nargs="*", default=[1, 2], help="perturbation members run beside it")
    parser.add_argument("--isa", nargs="*", default=["avx2"], help="ATEN_CPU_CAPABILITY values to run")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    variants = [("base", {})] + [(f"member {m}", {"REPLICATION_PERTURBATION": str(m)}) for m in args.members]
    variants += [(f"isa {isa}", {"ATEN_CPU_CAPABILITY": isa}) for isa in args.isa]
    from replication.config import validate_config

    config = validate_config(
        yaml.safe_load((PROJECT_ROOT / "config" / "config.yaml").read_text()),
        PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml",
    )
    chain = config["local_to_global"]["transformer"]["experiments"][args.experiment]["chain"]
    smooth = config["local_to_global"]["transformer"]["fig4"]["smooth"]
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, extra in variants:
            out = Path(scratch) / f"{label.replace(' ', '_')}.csv"
            env = {k: v for k, v in os.environ.items() if k not in ("REPLICATION_PERTURBATION", "ATEN_CPU_CAPABILITY")}
            wall, cpu = time.perf_counter(), os.times()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    __spec__.name,  # this module, also when run with -m
                    "--worker",
                    "--out",
                    str(out),
                    "--experiment",
                    args.experiment,
                    "--init",
                    args.init,
                    "--seed",
                    str(args.seed),
                    "--steps",
                    str(args.steps),
                ],
                check=True,
                env={**env, **extra},
            )
            after = os.times()
            cpu_s = after.children_user + after.children_system - cpu.children_user - cpu.children_system
            print(
                f"{label}: {time.perf_counter() - wall:.0f} s wall, {cpu_s:.0f} s CPU, load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            results[label] = statistics(pd.read_csv(out), chain, smooth)
    base = results["base"]
    rows = []
    for label, stats in results.items():
        rows.append(
            {
                "variant": label,
                "max|d| raw": float((stats["raw"] - base["raw"]).abs().max()),
                "max|d| smoothed": float((stats["smoothed"] - base["smoothed"]).abs().max()),
                "plateau": stats["plateau_200_600"],
                "escape step": stats["escape_step"],
                "final loss": stats["final_loss"],
            }
        )
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
