"""The one format of claim tables: each area writes its own, a report merges them.

A claim row says what was measured, by which rule it is judged over how many runs, and of which
kind it is: ``checked`` (two independent computations or a measurement against the paper; it can
fail), ``documentation`` (an identity or a certainty of the theory, kept to show the pipeline's
quantities, never counted as reproduced) or ``not checkable`` (a sentence of the paper that this
pipeline cannot test, with the reason).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from .io import write_csv

KINDS = ("checked", "documentation", "not checkable")
CLAIM_COLUMNS = [
    "paper",
    "claim_id",
    "spec",
    "figure",
    "statement",
    "measured",
    "threshold",
    "holds",
    "reason",
    "kind",
    "rule",
    "n_runs",
    "holds_fraction",
    "ci_low",
    "ci_high",
]
CONFIDENCE = 0.95
SEEDS_RULE = "holds in a majority of seeds"


@dataclass(frozen=True)
class Claim:
    paper: str
    claim_id: str
    # The spec claim it reports, named by the code that makes it, never read from its id: an id of
    # the paper's spec catalogue ("L2G-5", "BO-fig4") or replication.contract.BEYOND_THE_PAPER.
    spec: str = field(kw_only=True)
    figure: str
    statement: str
    measured: float
    threshold: str
    holds: bool
    reason: str
    kind: str = "checked"
    rule: str = "single measurement"
    n_runs: int = 1
    holds_fraction: float = float("nan")
    ci_low: float = float("nan")
    ci_high: float = float("nan")

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.claim_id}: kind {self.kind!r}; allowed: {', '.join(KINDS)}")
        if np.isnan(self.holds_fraction):
            # One run or one pooled measurement: the fraction is that run's outcome.
            object.__setattr__(self, "holds_fraction", float(bool(self.holds)) if self.kind == "checked" else np.nan)


def binomial_interval(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper-Pearson (exact) interval of a fraction; (nan, nan) without trials."""
    if trials <= 0:
        return float("nan"), float("nan")
    from scipy.stats import binomtest  # here: importing scipy.stats costs ~0.5 s, and most importers never call this

    interval = binomtest(int(successes), int(trials)).proportion_ci(confidence, method="exact")
    return float(interval.low), float(interval.high)


def cell_holds(holds_fraction: float) -> bool:
    """The verdict rule of one cell (one setting run with several seeds): it holds a claim when a
    strict majority of its seeds do. Every figure that marks a cell and every claim judged over
    seeds decides by this (docs/claims.md gives the reasons)."""
    return bool(np.isfinite(holds_fraction) and holds_fraction > 0.5)


def over_seeds(outcomes) -> dict:
    """Statistics of one cell's outcomes, one per seed, judged by ``cell_holds``; the keyword
    arguments of a :class:`Claim` as ``over_runs`` returns them."""
    stats = over_runs(outcomes)
    stats["holds"] = cell_holds(stats["holds_fraction"])
    stats["rule"] = SEEDS_RULE
    return stats


def over_runs(outcomes, required: float = 1.0) -> dict:
    """Aggregation over runs (seeds): holds when the fraction of runs in which it holds is >= ``required``.

    Returns the keyword arguments ``n_runs``, ``holds_fraction``, ``ci_low``, ``ci_high``, ``holds``
    and ``rule`` of a :class:`Claim`.
    """
    outcomes = np.asarray(outcomes, dtype=bool).ravel()
    n, k = len(outcomes), int(outcomes.sum())
    low, high = binomial_interval(k, n)
    fraction = k / n if n else float("nan")
    rule = "holds in every run" if required >= 1.0 else f"holds in >= {required:.0%} of runs"
    return {
        "n_runs": n,
        "holds_fraction": fraction,
        "ci_low": low,
        "ci_high": high,
        "holds": bool(n and fraction >= required),
        "rule": rule,
    }


def documentation(paper, claim_id, figure, statement, measured, threshold, holds, reason, why, *, spec) -> Claim:
    """A row kept for its value that cannot fail by construction; ``why`` says why."""
    return Claim(
        paper,
        claim_id,
        figure,
        statement,
        float(measured),
        threshold,
        bool(holds),
        f"{reason}; documentation: {why}",
        kind="documentation",
        rule="not a test",
        n_runs=1,
        spec=spec,
    )


def not_checkable(paper, claim_id, figure, statement, why, *, spec) -> Claim:
    return Claim(
        paper,
        claim_id,
        figure,
        statement,
        float("nan"),
        "",
        False,
        why,
        kind="not checkable",
        rule="none",
        n_runs=0,
        spec=spec,
    )


def write_claims(claims: list[Claim], path: str | os.PathLike) -> pd.DataFrame:
    frame = pd.DataFrame([asdict(c) for c in claims], columns=CLAIM_COLUMNS)
    frame["holds"] = frame["holds"].astype(bool)
    write_csv(frame, path)
    return frame
