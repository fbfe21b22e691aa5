"""Claims of the phase diagram, judged per (p, q) cell over seeds (Clopper-Pearson intervals) and
then over cells: the paper's thesis (Sec. 5: "the same conclusion holds for all (p, q)") where it
can be checked. A cell whose gap is below the measured noise gets a ``not checkable`` row, never a
pass or a fail.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.claims import Claim, not_checkable, over_runs, over_seeds
from replication.contract import BEYOND_THE_PAPER

from .. import PAPER
from ..transformer.settings import TransformerClaimSettings
from .grid import Cell
from .prediction import PREDICTION_CHECKS, PredictionCheck, canonical_prediction
from .settings import PhaseSettings

FIGURE = "Phase diagram (beyond the paper)"


def _cell_id(claim: str, row) -> str:
    return f"{claim} ({Cell.keyed(row.p, row.q).label})"


def _per_cell(claim, statement, threshold, cells, runs, outcome, measured, describe) -> list[Claim]:
    """One row per cell of ``cells``: checked over its runs where resolvable, not checkable otherwise;
    then one row over the resolvable cells (holds when it holds in every one of them). A cell's
    verdict is ``replication.claims.cell_holds`` over its seeds, the rule the heatmaps outline by."""
    rows, verdicts = [], []
    for cell in cells.itertuples():
        group = runs[(runs.p == cell.p) & (runs.q == cell.q)]
        claim_id = _cell_id(claim, cell)
        if not cell.resolvable:
            rows.append(
                not_checkable(
                    PAPER.name,
                    claim_id,
                    FIGURE,
                    statement.format(cell=f"(p, q) = ({cell.p:g}, {cell.q:g})"),
                    f"unresolvable: gap {cell.gap:.2g} nats against a batch-gap noise of {cell.noise_gap:.2g} "
                    "(measures.resolution)",
                    spec=BEYOND_THE_PAPER,
                )
            )
            continue
        stats = over_seeds(outcome(group))
        rule = f"per seed; {stats.pop('rule')}"
        verdicts.append(stats["holds"])
        rows.append(
            Claim(
                PAPER.name,
                claim_id,
                FIGURE,
                statement.format(cell=f"(p, q) = ({cell.p:g}, {cell.q:g})"),
                float(measured(group)),
                threshold,
                reason=describe(group),
                rule=rule,
                **stats,
                spec=BEYOND_THE_PAPER,
            )
        )
    skipped = int((~cells.resolvable).sum())
    overall = statement.format(cell=f"every resolvable cell ({len(verdicts)} of {len(cells)})")
    if not verdicts:
        rows.append(
            not_checkable(
                PAPER.name,
                f"{claim} (all cells)",
                FIGURE,
                overall,
                f"no resolvable cell ({skipped} unresolvable)",
                spec=BEYOND_THE_PAPER,
            )
        )
        return rows
    stats = over_runs(verdicts)
    rows.append(
        Claim(
            PAPER.name,
            f"{claim} (all cells)",
            FIGURE,
            overall,
            stats["holds_fraction"],
            "holds in every resolvable cell",
            reason=(
                f"holds in {sum(verdicts)} of {len(verdicts)} resolvable cells; {skipped} unresolvable cells "
                "not judged; the cells that fail are the rows above"
            ),
            rule="per cell (each over its seeds); holds in every cell",
            **{k: v for k, v in stats.items() if k not in ("rule",)},
            spec=BEYOND_THE_PAPER,
        )
    )
    return rows


def _seeds(group: pd.DataFrame, column: str, fmt: str = "{:.0f}") -> str:
    return ", ".join(f"seed {int(r.seed)} " + fmt.format(getattr(r, column)) for r in group.itertuples())


# What each check of the canonical prediction states and the criterion of one seed; {step} is
# the iteration it is judged at, {escape}, {closed} and {horizon} the settings of the measures.
PREDICTION_TEXTS = {
    "5w": (
        "Standard init, {cell} (p + q > 1): stays on the unigram plateau H(pi) up to iteration {step} "
        "(the paper's window), as the canonical model predicts.",
        "closed fraction < {escape} through iteration {step}",
    ),
    "5h": (
        "Standard init, {cell} (p + q > 1): stays on the unigram plateau H(pi) up to iteration {step} "
        "(the horizon), as the canonical model predicts.",
        "closed fraction < {escape} through iteration {step}",
    ),
    "5r": (
        "Standard init, {cell} (p + q < 1): reaches the entropy rate, as the canonical model predicts.",
        "final closed fraction >= {closed} (by iteration {horizon})",
    ),
    "5o": (
        "Our init, {cell} (p + q > 1): reaches the entropy rate (Sec. 5.2).",
        "final closed fraction >= {closed} (by iteration {horizon})",
    ),
}


def _first_escape(group: pd.DataFrame) -> float:
    return group.escape.min() if group.escaped.any() else np.nan


def _escapes(group: pd.DataFrame) -> str:
    return "escape at " + _seeds(group, "escape") + f"; NaN: never escaped by {int(group.last_step.max())}"


def _least_closed(group: pd.DataFrame) -> float:
    return group.final_closed.min()


def _final_closed(group: pd.DataFrame) -> str:
    return "final closed fraction " + _seeds(group, "final_closed", "{:.3f}")


def _predicted_cells(cells: pd.DataFrame, check: PredictionCheck) -> pd.DataFrame:
    """The cells of ``check.init`` where the canonical model predicts ``check.on_plateau``."""
    predicted = [canonical_prediction(r.init, r.p, r.q) for r in cells.itertuples()]
    chosen = (cells.init == check.init) & pd.Series([v is check.on_plateau for v in predicted], index=cells.index)
    return cells[chosen].reset_index(drop=True)


def _prediction_claims(
    runs: pd.DataFrame, cells: pd.DataFrame, phase: PhaseSettings, check: PredictionCheck
) -> list[Claim]:
    """The rows of one check of the canonical prediction, per cell over its seeds."""
    step = phase.window if check.step == "window" else phase.horizon
    statement, criterion = PREDICTION_TEXTS[check.claim]
    values = {"step": step, "escape": phase.measures.escape, "closed": phase.stop.closed, "horizon": phase.horizon}
    measured, describe = (_first_escape, _escapes) if check.on_plateau else (_least_closed, _final_closed)
    return _per_cell(
        check.claim,
        statement.replace("{step}", str(step)),
        criterion.format(**values),
        _predicted_cells(cells, check),
        runs[runs.init == check.init],
        lambda g: g[check.column],
        measured,
        describe,
    )


def phase_claims(
    runs: pd.DataFrame, cells: pd.DataFrame, phase: PhaseSettings, settings: TransformerClaimSettings
) -> list[Claim]:
    """``runs``: measures.csv (with the final structure, ``measures.final_structure``); ``cells``: cells.csv."""
    share, cos_e = settings.share_fig3, settings.cos_e
    standard_cells = cells[cells.init == "standard"].reset_index(drop=True)
    claims = _per_cell(
        "6g",
        "Standard init, {cell}: W_1 and W_V end rank one with their R^d side along e, as in Fig. 3 "
        "(Sec. 5.1: 'the same conclusion holds for all (p, q)').",
        f"min(share W_1, share W_V) >= {share} and |cos e| >= {cos_e} after the last step",
        standard_cells,
        runs[runs.init == "standard"],
        lambda g: (
            (g[["share_W_1", "share_W_V"]].min(axis=1) >= share) & (g[["cos_e_W_1", "cos_e_W_V"]].min(axis=1) >= cos_e)
        ),
        lambda g: g[["share_W_1", "share_W_V"]].min(axis=1).min(),
        lambda g: "; ".join(
            f"seed {int(r.seed)} shares {r.share_W_1:.3f}/{r.share_W_V:.3f}, "
            f"|cos e| {r.cos_e_W_1:.2f}/{r.cos_e_W_V:.2f}" + ("" if r.reached else " (not at the entropy rate)")
            for r in g.itertuples()
        ),
    )
    for check in PREDICTION_CHECKS:
        claims += _prediction_claims(runs, cells, phase, check)
    return claims
