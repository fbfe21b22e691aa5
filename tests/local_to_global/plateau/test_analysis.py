"""The plateau tables, the saddle law's fit, the claims and the findings on synthetic points whose
answers are known."""

import numpy as np
import pandas as pd
import pytest

from replication.papers.local_to_global.plateau.analysis import join_runs, saddle_law, summarise
from replication.papers.local_to_global.plateau.claims import plateau_claims
from replication.papers.local_to_global.plateau.findings import findings
from replication.papers.local_to_global.plateau.hessian import BLOCKS
from replication.papers.local_to_global.plateau.settings import HessianSettings

HESSIAN = HessianSettings(batches=4, batch_size=8, seed=0, smallest=2, tol=1e-3, significance=2.0, dtype="float64")
SIGMA = 0.02
CELLS = [(0.5, 0.8), (0.6, 0.7), (0.7, 0.6), (0.8, 0.5), (0.9, 0.9), (0.6, 0.9)]


def synthetic(law_factor=None, seeds=(1, 2, 3)):
    """Spectra and measures: cell k has a held-out curvature -(k + 1) 1e-3 (a saddle, noise 1e-4) in
    every seed but the last cell, a minimum; lambda_min on the fitted batches 5e-4 below it (their
    bias, which no verdict or law may read); plateau lengths follow the law with constant 0.5, times
    ``law_factor`` in the second cell when given."""
    spectra, runs = [], []
    for k, (p, q) in enumerate(CELLS):
        minimum = k == len(CELLS) - 1
        for seed in seeds:
            lam = 2e-4 if minimum else -(k + 1) * 1e-3
            spectra.append(
                {
                    "p": p, "q": q, "seed": seed, "step": 300, "kind": "fixed", "on_plateau": True,
                    "lambda_1": lam - 5e-4, "noise": 1e-4, "curvature": lam, "curvature_noise": 1e-4,
                    "saddle": lam < -2e-4, "gradient_norm": 0.01,
                    "canonical_lambda_min": -4e-4, "canonical_noise": 1e-4, "canonical_curvature": 1e-5,
                    "canonical_curvature_noise": 1e-4, "canonical_saddle": False,
                    "canonical_weight": 0.1,
                    **{f"weight_{b}": 1.0 if b == "W_1" else 0.0 for b in BLOCKS},
                }
            )  # fmt: skip
            plateau = 0.5 * np.log(1 / SIGMA) / abs(lam) * (law_factor if law_factor and k == 1 else 1)
            runs.append(
                {"p": p, "q": q, "init": "standard", "seed": seed, "plateau_length": plateau, "censored": minimum}
            )
    return join_runs(pd.DataFrame(spectra), pd.DataFrame(runs))


def test_summary_counts_the_saddles_per_cell():
    cells = summarise(synthetic())
    assert len(cells) == len(CELLS)
    assert cells.saddles.tolist() == [3] * (len(CELLS) - 1) + [0]
    assert cells.curvature.iloc[0] == pytest.approx(-1e-3) and cells.lambda_min.iloc[0] == pytest.approx(-1.5e-3)
    assert cells.canonical_curvature.iloc[0] == pytest.approx(1e-5) and cells.curvature_noise.iloc[0] == 1e-4


def test_the_saddle_law_fits_on_half_and_checks_the_other():
    law, fit = saddle_law(synthetic(), SIGMA, "iteration 300")
    assert fit["constant"] == pytest.approx(0.5)
    assert fit["max_factor"] == pytest.approx(1.0)
    assert fit["rank_correlation"] == pytest.approx(1.0)
    assert set(law.half) == {"fit", "check"}
    assert len(law) == 3 * (len(CELLS) - 1)  # the minimum's runs never escaped a saddle

    _, broken = saddle_law(synthetic(law_factor=3.0), SIGMA, "iteration 300")  # a checked cell 3x off
    assert broken["max_factor"] == pytest.approx(3.0)
    claims = {c.claim_id: c for c in plateau_claims(synthetic(law_factor=3.0), HESSIAN, [broken])}
    assert claims["5s iteration 300"].holds is False


def test_claims_fail_at_saddles_and_hold_at_the_minimum():
    points = synthetic()
    _, fit = saddle_law(points, SIGMA, "iteration 300")
    claims = {c.claim_id: c for c in plateau_claims(points, HESSIAN, [fit])}
    assert claims["3m (p=0.5, q=0.8) iteration 300"].holds is False
    assert claims["3m (p=0.6, q=0.9) iteration 300"].holds is True
    assert all(claims[f"3c (p={p:g}, q={q:g}) iteration 300"].holds for p, q in CELLS)
    assert claims["5s iteration 300"].holds is True


def test_the_findings_name_the_saddles_and_the_minima():
    points = synthetic()
    _, fit = saddle_law(points, SIGMA, "iteration 300")
    text = findings(summarise(points), pd.DataFrame([fit]), HESSIAN.significance)
    assert f"{len(CELLS) - 1} of {len(CELLS)} cells: (0.5, 0.8)" in text
    assert "**A minimum within the noise in every seed**: 1 of 6 cells: (0.6, 0.9)." in text
    # Every cell's lambda_min is 5e-4 below its curvature: a fitted-batch saddle, the minimum's cell too.
    assert "below -2 x its spread there in 6 of 6 cells (medians over seeds); 1 of them are not a saddle" in text
    assert "the largest blocks are W_1 1.00" in text
