"""The Fig. 3 ablation's variants and the run settings of each (ablation.py: the study, its models
and tables). Without torch: the workflow reads these when it parses, on every Snakemake start."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from .settings import AblationSettings, RunSettings


def _retrained_variants() -> tuple[str, ...]:
    """The variants that are retrained, as the schema allows them for Fig. 3 and Fig. 6
    (``transformer.ablation``): the list is kept there only."""
    schema = yaml.load((Path(__file__).parents[1] / "schema.yaml").read_text(), Loader=yaml.CSafeLoader)
    ablation = schema["properties"]["transformer"]["properties"]["ablation"]["properties"]
    return tuple(dict.fromkeys([*ablation["fig3"]["items"]["enum"], *ablation["fig6"]["items"]["enum"]]))


RETRAINED = _retrained_variants()
VARIANTS = ("pipeline", *RETRAINED)


def variant_settings(run: RunSettings, ablation: AblationSettings, variant: str, init: str) -> RunSettings:
    """The figure's run settings changed by one variant (``all_authors``: every change that applies
    to ``init`` at once: the two-symbol embedding to the standard init, ``value_output`` to the
    rank-one one). Training stops at the figure's last checkpoint."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown ablation variant {variant!r}; allowed: {', '.join(VARIANTS)}")
    last = max(run.checkpoints)
    changes, optimizer, schedule = {"steps": last, "eval_every": last}, {}, {}
    every = variant == "all_authors"
    if variant == "peak_lr" or every:
        optimizer["lr"] = ablation.peak_lr
    if variant == "schedule_horizon" or every:
        schedule["horizon"] = ablation.schedule_steps
    if variant == "two_symbol_embedding" or (every and init == "standard"):
        if init != "standard":
            raise ValueError("the two-symbol embedding is defined for the standard (GPT-2) init only")
        changes["embedding"] = "two_symbol"
        # Their optimiser decays Linear weights only: the (tied) embedding table is not decayed.
        optimizer["no_decay"] = tuple(sorted({*run.optimizer.no_decay, "wte"}))
    if variant == "value_output" or (every and init == "rank_one"):
        changes["rank_one_value"] = "output"
    return dataclasses.replace(
        run,
        optimizer=dataclasses.replace(run.optimizer, **optimizer),
        schedule=dataclasses.replace(run.schedule, **schedule),
        **changes,
    )
