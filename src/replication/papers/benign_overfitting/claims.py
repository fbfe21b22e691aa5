"""The paper's checkable statements (spec section 4), measured on this pipeline's outputs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.claims import Claim, documentation, not_checkable, over_runs

from .data import IRRELEVANT, RELEVANT, WEAK_OPPOSITE
from .metrics import final_roles, relevant_probability

PAPER = "Benign overfitting"


def _claim(claim_id, figure, statement, measured, threshold, holds, reason, **stats) -> Claim:
    return Claim(PAPER, claim_id, figure, statement, float(measured), threshold, bool(holds), reason, **stats)


def _over_runs(grid: pd.DataFrame, inside) -> tuple[dict, str]:
    """Statistics of a per-run outcome over every run of the grid. The verdict is per cell: a cell
    holds when the outcome holds in a majority of its seeds, the claim when every cell holds, so a
    failure in a minority of seeds is seed noise and one in most or all seeds is systematic."""
    inside = pd.Series(np.asarray(inside, dtype=bool), index=grid.index)
    stats = over_runs(inside)
    per_cell = inside.groupby([grid.d, grid.signal_norm]).mean()
    stats["holds"] = bool(len(per_cell) and (per_cell > 0.5).all())
    stats["rule"] = f"every cell in a majority of its seeds ({grid.seed.nunique()} per cell); fraction over all runs"
    always = per_cell[per_cell == 0]
    mostly = per_cell[(per_cell > 0) & (per_cell <= 0.5)]
    sometimes = per_cell[(per_cell > 0.5) & (per_cell < 1)]

    def listed(part):
        if not len(part):
            return ""
        cells = "; ".join(f"({int(d)}, {m:g})" for d, m in part.index[:6]) + (" ..." if len(part) > 6 else "")
        return f" [{cells}]"

    note = (
        f"{len(per_cell)} cells: {len(always)} fail in every seed{listed(always)}, {len(mostly)} in half or more"
        f"{listed(mostly)}, {len(sometimes)} in a minority of seeds only (seed noise){listed(sometimes)}"
    )
    return stats, note


def fig1_claims(frame: pd.DataFrame) -> list[Claim]:
    acc = frame.groupby(["scenario", "split"]).correct.mean()
    expected = {  # scenario -> (train range, test range), spec section 4
        "benign": ((1.0, 1.0), (1.0, 1.0)),
        "harmful": ((1.0, 1.0), (0.53, 0.70)),
        "not_overfitting": ((0.8, 0.8), (1.0, 1.0)),
    }
    claims = []
    for scenario, ranges in expected.items():
        for split, (low, high) in zip(("train", "test"), ranges):
            value = acc[(scenario, split)]
            claims.append(
                _claim(
                    f"fig1_{scenario}_{split}_accuracy",
                    "Fig. 1",
                    f"{scenario.replace('_', ' ')} token selection: {split} accuracy in [{low:g}, {high:g}]",
                    value,
                    f"[{low:g}, {high:g}]",
                    low - 1e-9 <= value <= high + 1e-9,
                    f"{split} accuracy {value:.3f} of the hard selection argmax_t x_t . p",
                )
            )
    return claims


def fig2_claims(traj: dict, clean_least: float = 0.9, noisy_most: float = 0.1) -> list[Claim]:
    """Fig. 2 (drawn from the run of Fig. 3a): clean samples end with r near 1, noisy ones near 0."""
    final = relevant_probability(traj)[-1]
    clean, noisy = final[~traj["noisy"]].min(), final[traj["noisy"]].max()
    run = f"d = {int(traj['d'])}, ||mu|| = {float(traj['signal_norm']):g}, {int(traj['steps'][-1])} steps"
    return [
        _claim(
            "fig2_clean_r_to_one",
            "Fig. 2",
            "clean samples' relevant-token probability r goes to 1",
            clean,
            f">= {clean_least:g}",
            clean >= clean_least,
            f"smallest final r over clean samples; {run}",
        ),
        _claim(
            "fig2_noisy_r_to_zero",
            "Fig. 2",
            "noisy samples' relevant-token probability r goes to 0",
            noisy,
            f"<= {noisy_most:g}",
            noisy <= noisy_most,
            f"largest final r over noisy samples; {run}",
        ),
    ]


def fig3_claims(trajectories: dict[str, dict]) -> list[Claim]:
    """Where noisy samples end (final argmax role), per scenario of Fig. 3."""

    def count(traj, noisy, role):
        return int(((traj["noisy"] == noisy) & (final_roles(traj) == role)).sum())

    checks = [
        (
            "fig3a_clean_select_relevant",
            "a",
            "benign: every clean sample ends on the relevant token",
            lambda t: count(t, False, RELEVANT) / max(1, int((~t["noisy"]).sum())),
            "= 1",
            lambda v: v == 1.0,
        ),
        (
            "fig3a_noisy_select_weak_opposite",
            "a",
            "benign: a noisy sample ends on W_{-Y*}",
            lambda t: count(t, True, WEAK_OPPOSITE),
            ">= 1",
            lambda v: v >= 1,
        ),
        (
            "fig3b_noisy_select_irrelevant",
            "b",
            "harmful: a noisy sample ends on an irrelevant token",
            lambda t: count(t, True, IRRELEVANT),
            ">= 1",
            lambda v: v >= 1,
        ),
        (
            "fig3c_noisy_fitted_weak_opposite",
            "c",
            "not overfitting: a noisy sample ends on W_{-Y*}",
            lambda t: count(t, True, WEAK_OPPOSITE),
            ">= 1",
            lambda v: v >= 1,
        ),
        (
            "fig3c_noisy_stuck_relevant",
            "c",
            "not overfitting: a noisy sample ends on the relevant token",
            lambda t: count(t, True, RELEVANT),
            ">= 1",
            lambda v: v >= 1,
        ),
    ]
    claims = []
    for claim_id, panel, statement, measure, threshold, holds in checks:
        traj = trajectories[panel]
        value = measure(traj)
        claims.append(
            _claim(
                claim_id,
                f"Fig. 3{panel}",
                statement,
                value,
                threshold,
                holds(value),
                f"d = {int(traj['d'])}, ||mu|| = {float(traj['signal_norm']):g}, "
                f"{int(traj['steps'][-1])} steps; final argmax roles of the training samples",
            )
        )
    return claims


def grid_claims(grid: pd.DataFrame) -> list[Claim]:
    """Claims on the d x ||mu|| grid, judged over every run (cell x seed): the fraction of runs in
    which each holds, with its interval, and which failing cells fail in every seed."""
    claims = []
    runs = f"{int(grid.steps.iloc[0])} steps"

    def per_run(claim_id, figure, statement, frame, inside, measured, threshold, reason):
        stats, note = _over_runs(frame, inside)
        claims.append(
            _claim(claim_id, figure, statement, measured, threshold, reason=f"{reason}; {note}; {runs}", **stats)
        )

    def in_range(claim_id, figure, statement, frame, column, low, high):
        values = frame[column]
        lo, hi = float(values.min()), float(values.max())
        per_run(
            claim_id,
            figure,
            statement,
            frame,
            values.between(low, high),
            lo if lo < low else hi,
            f"[{low:g}, {high:g}] in every run",
            f"measured range [{lo:.3f}, {hi:.3f}]",
        )

    in_range(
        "fig5_train_loss_range",
        "Fig. 5",
        "train loss within the published range 0.41-0.54 (+-0.01)",
        grid,
        "train_loss",
        0.40,
        0.55,
    )
    in_range(
        "fig5_test_loss_range",
        "Fig. 5",
        "test loss within the published range 0.40-0.64 (+-0.01)",
        grid,
        "test_loss",
        0.39,
        0.65,
    )
    column5 = grid[grid.signal_norm == grid.signal_norm.min()]
    if len(column5):
        in_range(
            "fig5_test_loss_smallest_signal",
            "Fig. 5",
            f"test loss high (published ~0.62-0.645) at ||mu|| = {column5.signal_norm.iloc[0]:g}",
            column5,
            "test_loss",
            0.615,
            0.65,
        )
    strong = grid[(grid.signal_norm >= 40) & (grid.d >= 750)]
    if len(strong):
        per_run(
            "fig5_test_loss_low_strong_signal",
            "Fig. 5",
            "test loss <= 0.43 for ||mu|| >= 40 and d >= 750",
            strong,
            strong.test_loss <= 0.43,
            strong.test_loss.max(),
            "<= 0.43 in every run",
            "largest test loss",
        )
    clear = grid[grid.signal_norm >= 15]
    if len(clear):
        per_run(
            "test_accuracy_one_from_15",
            "beyond (accuracy)",
            "test accuracy 1.0 for ||mu|| >= 15",
            clear,
            clear.test_accuracy == 1.0,
            clear.test_accuracy.min(),
            "= 1 in every run",
            "smallest test accuracy",
        )
    weak = grid[grid.signal_norm == 5]
    if len(weak):
        in_range(
            "test_accuracy_at_5",
            "beyond (accuracy)",
            "test accuracy ~0.87-0.93 at ||mu|| = 5",
            weak,
            "test_accuracy",
            0.87,
            0.93,
        )
    # Sec. 5 on Fig. 3: where d is large against ||mu||, memorisation dominates: the noisy labels
    # are fitted (train accuracy 1) while the test accuracy drops.
    harmful = grid[(grid.signal_norm == grid.signal_norm.min()) & (grid.d >= 0.5 * grid.d.max())]
    if len(harmful):
        inside = (harmful.train_accuracy == 1.0) & (harmful.test_accuracy < 1.0)
        per_run(
            "fig3_text_large_d_memorises",
            "Fig. 3 (Sec. 5)",
            f"large d against ||mu|| (||mu|| = {harmful.signal_norm.min():g}, d >= {harmful.d.min()}): the "
            "noisy labels are fitted and generalisation suffers",
            harmful,
            inside,
            inside.mean(),
            "train accuracy 1 and test accuracy < 1 in every run",
            f"test accuracy {harmful.test_accuracy.min():.3f}-{harmful.test_accuracy.max():.3f}",
        )
    hard = grid[(grid.signal_norm >= 0.8 * grid.signal_norm.max()) & (grid.d <= 4 * grid.d.min())]
    if len(hard):
        inside = hard.train_accuracy < 1.0
        per_run(
            "fig3_text_large_signal_not_fitted",
            "Fig. 3 (Sec. 5)",
            f"large ||mu|| (>= {hard.signal_norm.min():g}, d <= {hard.d.max()}): fitting the noisy data becomes "
            "challenging (some noisy sample not fitted)",
            hard,
            inside,
            inside.mean(),
            "train accuracy < 1 in every run",
            f"train accuracy {hard.train_accuracy.min():.3f}-{hard.train_accuracy.max():.3f}",
        )

    def share(claim_id, figure, statement, inside, reason):
        value = float(np.mean(inside))
        per_run(claim_id, figure, statement, grid, inside, value, "share of runs = 1", reason)

    share(
        "fig4_eq9_ratio_above_one",
        "Fig. 4",
        "Eq. 9 ratio > 1 in all cells and runs (as defined)",
        grid.eq9_ratio > 1,
        "as defined: min_c class sum of accumulated S / max accumulated s(1-s)",
    )
    share(
        "fig4_eq9_ratio_above_one_as_coded",
        "Fig. 4 (as coded)",
        "Eq. 9 ratio > 1 in all cells (as coded)",
        grid.eq9_ratio_as_coded > 1,
        "authors' v1 running-sum quantity",
    )
    smaller_class = np.minimum(grid.n_clean_plus, grid.n_clean_minus)
    identity = (grid.eq9_ratio_as_coded - smaller_class).abs() < 0.01
    claims.append(
        documentation(
            PAPER,
            "fig4_as_coded_is_smaller_class_size",
            "Fig. 4 (as coded)",
            "as coded, the Eq. 9 value is the smaller clean-class size (within 0.01)",
            float(identity.mean()),
            "share = 1",
            bool(identity.all()),
            f"explains the published integers 2..8; share of {len(grid)} runs",
            "an identity of the authors' running sum, not a result of training",
        )
    )
    share(
        "fig6_eq10_ratio_in_band",
        "Fig. 6",
        "Eq. 10 normalised ratio within 0.5-2.5 in all cells (as defined)",
        grid.eq10_ratio.between(0.5, 2.5),
        "as defined",
    )
    share(
        "fig6_eq10_ratio_in_band_as_coded",
        "Fig. 6 (as coded)",
        "Eq. 10 normalised ratio within 0.5-2.5 in all cells (as coded)",
        grid.eq10_ratio_as_coded.between(0.5, 2.5),
        "authors' v1 quantity, first logged step",
    )
    claims.append(
        not_checkable(
            PAPER,
            "fig5_text_balance",
            "Fig. 5 (Sec. 5)",
            "The balance between the dimension and the signal norm is significant for achieving low train and "
            "test loss.",
            "qualitative; the heatmaps (fig5, seed_spread) show the losses over the grid, the range rows check them",
        )
    )
    return claims


def all_claims(grid: pd.DataFrame, fig1_frame: pd.DataFrame, trajectories: dict[str, dict]) -> list[Claim]:
    return fig1_claims(fig1_frame) + fig2_claims(trajectories["a"]) + fig3_claims(trajectories) + grid_claims(grid)
