"""The paper's checkable statements (spec section 4), measured on this pipeline's outputs."""

from __future__ import annotations

import pandas as pd

from replication.claims import Claim

from . import PAPER
from .data import IRRELEVANT, RELEVANT, WEAK_OPPOSITE
from .grid_claims import grid_claims
from .metrics import final_roles, relevant_probability
from .settings import ClaimSettings, SplitRanges


def _claim(claim_id, figure, statement, measured, threshold, holds, reason, *, spec, **stats) -> Claim:
    return Claim(
        PAPER.name, claim_id, figure, statement, float(measured), threshold, bool(holds), reason, spec=spec, **stats
    )


def fig1_claims(frame: pd.DataFrame, expected: dict[str, SplitRanges]) -> list[Claim]:
    """Fig. 1: each scenario's train and test accuracy within its ``expected`` range (spec section 4)."""
    acc = frame.groupby(["scenario", "split"]).correct.mean()
    claims = []
    for scenario, ranges in expected.items():
        for split, (low, high) in (("train", ranges.train), ("test", ranges.test)):
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
                    spec="BO-fig1",
                )
            )
    return claims


def fig2_claims(traj: dict, clean_least: float, noisy_most: float) -> list[Claim]:
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
            spec="BO-fig2",
        ),
        _claim(
            "fig2_noisy_r_to_zero",
            "Fig. 2",
            "noisy samples' relevant-token probability r goes to 0",
            noisy,
            f"<= {noisy_most:g}",
            noisy <= noisy_most,
            f"largest final r over noisy samples; {run}",
            spec="BO-fig2",
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
                spec="BO-fig3",
            )
        )
    return claims


def all_claims(
    grid: pd.DataFrame, fig1_frame: pd.DataFrame, trajectories: dict[str, dict], claims: ClaimSettings
) -> list[Claim]:
    fig2 = fig2_claims(trajectories["a"], claims.fig2_clean_least, claims.fig2_noisy_most)
    return fig1_claims(fig1_frame, claims.fig1_accuracy) + fig2 + fig3_claims(trajectories) + grid_claims(grid, claims)
