"""The plateau tables, the escape predicted from AdamW's step, the claims and the findings on
synthetic points whose answers are known."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from replication.contract import BEYOND_THE_PAPER
from replication.papers.local_to_global import PAPER
from replication.papers.local_to_global.plateau.adamw import predicted_escape, predicted_slope
from replication.papers.local_to_global.plateau.analysis import (
    ESCAPE_FACTOR,
    SLOPE_FACTOR,
    STATIONARY,
    assumption,
    escape_law,
    join_runs,
    law_summary,
    seed_outcomes,
    slope_law,
    summarise,
)
from replication.papers.local_to_global.plateau.claims import (
    FIGURE,
    GROWTH_FIGURE,
    LAW_FIGURE,
    RESOLVED,
    escape_law_claim,
    plateau_claims,
    resolved_claim,
    slope_claims,
)
from replication.papers.local_to_global.plateau.findings import findings
from replication.papers.local_to_global.plateau.settings import BLOCKS, HeldOutSettings, HessianSettings

HESSIAN = HessianSettings(
    batches=4, batch_size=8, seed=0, tol=1e-3, significance=3.0, tolerance=1e-6,
    held_out=HeldOutSettings(least=4, most=16), preconditioned=True, dtype="float64",
)  # fmt: skip
SIGMA, LR, HORIZON, DROP = 0.02, 1e-3, 3000, 100
RATES = np.r_[np.nan, np.full(HORIZON, LR)]  # a constant schedule: the escape in closed form
CELLS = [(0.5, 0.8), (0.6, 0.7), (0.7, 0.6), (0.8, 0.5), (0.9, 0.9), (0.6, 0.9)]
VERDICTS = ["saddle"] * 4 + ["unresolved", "minimum"]


def synthetic(escape_factor=1.0, seeds=(1, 2, 3)):
    """Cells 0-3 are saddles whose AdamW mode grows at rate 2 (k + 1) per unit of lr, escaping where
    the prediction says (times ``escape_factor`` in cell 1); (0.9, 0.9) is unresolved and (0.6, 0.9)
    a minimum, neither escaping. Returns the joined points and escape.csv's sigma sweep at cell 0."""
    spectra, runs = [], []
    for k, ((p, q), verdict) in enumerate(zip(CELLS, VERDICTS)):
        rate = 2.0 * (k + 1) if verdict == "saddle" else -1.0
        for seed in seeds:
            escape = DROP + np.log(1 / SIGMA) / (LR * rate) if rate > 0 else np.nan
            escape = escape * (escape_factor if k == 1 else 1.0)
            spectra.append(
                {
                    "p": p, "q": q, "seed": seed, "step": 300, "kind": "fixed", "on_plateau": True,
                    "drop_end": DROP, "escape": escape, "loss": 0.6, "closed": 0.0, "gradient_norm": 0.01,
                    "gradient_noise": 0.01, "gradient_ratio": 1.0, "lambda_max": 30.0, "held_out_batches": 4,
                    "lambda_min": -2e-4, "noise": 1e-5, "curvature": -1e-4 if verdict == "saddle" else 1e-5,
                    "curvature_noise": 1e-5, "bias": 1e-4, "tol": 3e-5, "verdict": verdict,
                    "canonical_lambda_min": 1e-5, "canonical_noise": 1e-6, "canonical_curvature": 2e-5,
                    "canonical_curvature_noise": 1e-6, "canonical_bias": 0.0, "canonical_tol": 3e-5,
                    "canonical_verdict": "minimum", "canonical_weight": 0.1,
                    "mode_lambda_min": -rate - 1, "mode_noise": 0.1, "mode_curvature": -rate,
                    "mode_curvature_noise": 0.1,
                    "mode_bias": 1.0, "mode_tol": 1.5, "mode_verdict": "saddle" if rate > 1.5 else "minimum",
                    "mode_decay": 0.0, "mode_rate": rate, "lr": LR, "adam_step": 300, "momentum_gain": 0.95,
                    "bias_correction_m": 1.0, "bias_correction_v": 1.0,
                    **{f"weight_{b}": 1.0 if b == "W_1" else 0.0 for b in BLOCKS},
                    **{f"mode_weight_{b}": 1.0 if b == "W_Q" else 0.0 for b in BLOCKS},
                }
            )  # fmt: skip
            runs.append(
                {"p": p, "q": q, "init": "standard", "seed": seed, "plateau_length": escape - DROP,
                 "censored": not np.isfinite(escape)}
            )  # fmt: skip
    sweep = []
    for seed in seeds:
        for sigma in (0.005, 0.01, 0.02, 0.04):
            sweep.append(
                {"p": 0.5, "q": 0.8, "sweep": "sigma", "value": sigma, "seed": seed, "escaped": True,
                 "escape": DROP + np.log(1 / sigma) / (LR * 2.0)}
            )  # fmt: skip
    return join_runs(pd.DataFrame(spectra), pd.DataFrame(runs)), pd.DataFrame(sweep)


def test_summary_counts_the_verdicts_per_cell():
    cells = summarise(synthetic()[0])
    assert len(cells) == len(CELLS)
    assert cells.saddles.tolist() == [3] * 4 + [0, 0] and cells.minima.tolist() == [0] * 5 + [3]
    assert cells.canonical_minima.tolist() == [3] * 6
    assert cells.mode_saddles.tolist() == [3] * 4 + [0, 0] and cells.mode_rate.iloc[1] == pytest.approx(4.0)


def test_the_escape_predicted_from_the_mode_matches_where_it_should():
    points, sweep = synthetic()
    law = escape_law(points, sweep, RATES, SIGMA)
    assert law.escaped.sum() == 12 and law.factor.dropna().max() == pytest.approx(1.0, abs=2e-3)
    summary = law_summary(law)
    assert summary["runs"] == 12 and summary["rank_correlation"] == pytest.approx(1.0)
    broken = law_summary(escape_law(*synthetic(escape_factor=3.0), RATES, SIGMA))
    assert broken["max_factor"] == pytest.approx(3.0, rel=1e-2)
    assert predicted_escape(2.0, RATES, DROP, SIGMA) == pytest.approx(DROP + np.log(50) / 2e-3, abs=1)
    assert np.isinf(predicted_escape(-1.0, RATES, DROP, SIGMA))


def test_the_slope_against_log_sigma_is_compared_per_seed():
    points, sweep = synthetic()
    slopes = slope_law(points, sweep, RATES, SIGMA)
    assert len(slopes) == 3
    assert slopes.measured_slope.to_numpy() == pytest.approx([1 / (LR * 2.0)] * 3)
    assert slopes.predicted_slope.to_numpy() == pytest.approx([predicted_slope(2.0, LR)] * 3)
    assert slopes.factor.to_numpy() == pytest.approx([1.0] * 3)


def test_claims_fail_at_saddles_hold_at_the_minimum_and_count_what_is_resolved():
    points, sweep = synthetic()
    summary = law_summary(escape_law(points, sweep, RATES, SIGMA))
    claims = {c.claim_id: c for c in plateau_claims(points, HESSIAN, summary, slope_law(points, sweep, RATES, SIGMA))}
    assert claims["3m (p=0.5, q=0.8) iteration 300"].holds is False
    assert claims["3m (p=0.6, q=0.9) iteration 300"].holds is True
    unresolved = claims["3m (p=0.9, q=0.9) iteration 300"]
    assert unresolved.kind == "not checkable" and "seed 1 unresolved" in unresolved.reason
    assert claims["3r"].measured == pytest.approx(15 / 18) and claims["3r"].holds is False
    assert claims["3r canonical"].holds is True
    assert claims["5t"].holds is True and claims["5s (p=0.5, q=0.8)"].holds is True
    broken_points, _ = synthetic(escape_factor=3.0)
    broken = law_summary(escape_law(broken_points, sweep, RATES, SIGMA))
    claims = {c.claim_id: c for c in plateau_claims(broken_points, HESSIAN, broken, pd.DataFrame(columns=["p", "q"]))}
    assert claims["5t"].holds is False


def test_the_findings_name_the_saddles_and_the_minima():
    points, sweep = synthetic()
    law = escape_law(points, sweep, RATES, SIGMA)
    text = findings(summarise(points), points, law_summary(law), slope_law(points, sweep, RATES, SIGMA))
    assert "a saddle in every seed at 4 of 6 cells ((0.5, 0.8), (0.6, 0.7), (0.7, 0.6), (0.8, 0.5))" in text
    assert "a minimum in every seed at 1 ((0.6, 0.9)); unresolved in every seed at 1 ((0.9, 0.9))" in text
    assert "15 of 18 (cell, seed) verdicts on the full model (83%)" in text
    assert "the largest blocks are W_1 1.00" in text and "it lies in W_Q 1.00" in text
    assert "Over 12 escaping runs" in text and "seed 1 500 vs 500" in text


def test_each_escaping_run_names_the_assumption_its_data_show_broken():
    """Where the prediction holds, ``holds``; at escape 3x later than predicted with a clean mode,
    ``slower than linear``; the same run with a sliding point, a mode whose fitted and held-out
    curvature disagree, or a stable mode names that instead (tested in that order)."""
    points, sweep = synthetic(escape_factor=3.0)
    law = escape_law(points, sweep, RATES, SIGMA)
    cell = np.isclose(law.p, 0.6) & np.isclose(law.q, 0.7)
    assert set(law.assumption[law.escaped & ~cell]) == {"holds"}
    assert set(law.assumption[cell]) == {"slower than linear"}
    summary = law_summary(law)
    assert summary["assumption holds"] == 9 and summary["assumption slower than linear"] == 3
    row = points[np.isclose(points.p, 0.6) & np.isclose(points.q, 0.7)].iloc[0]
    late = {**row.to_dict(), "factor": 3.0, "predicted_escape": 100.0, "escape": 300.0}
    assert assumption(pd.Series(late)) == "slower than linear"
    assert assumption(pd.Series({**late, "escape": 30.0})) == "faster than linear"
    assert assumption(pd.Series({**late, "mode_lambda_min": 10 * late["mode_curvature"]})) == "not an eigenvector"
    assert assumption(pd.Series({**late, "gradient_ratio": 5.0})) == "not stationary"
    assert assumption(pd.Series({**late, "mode_rate": -1.0, "gradient_ratio": 5.0})) == "stable mode"
    assert assumption(pd.Series({**late, "factor": 1.5, "mode_rate": -1.0})) == "holds"
    text = findings(summarise(points), points, summary, slope_law(points, sweep, RATES, SIGMA))
    assert "- slower than linear: 3 runs" in text and "- holds: 9 runs" in text


# --- the claim records ---------------------------------------------------------------------------

FIGURES = {"3m": FIGURE, "3c": FIGURE, "3r": FIGURE, "5t": LAW_FIGURE, "5s": LAW_FIGURE, "5g": GROWTH_FIGURE}
OUT_OF_ORDER = [(0.8, 0.5), (0.5, 0.8)]  # cells listed against their sorted order


def per_seed(cells, **columns):
    """One row per (cell, seed 1-2) of ``cells``; ``columns``: name -> one value per row."""
    rows = [{"p": p, "q": q, "seed": seed} for p, q in cells for seed in (1, 2)]
    return pd.DataFrame(rows).assign(**columns)


GROWTH = per_seed(OUT_OF_ORDER, factor=[1.0, SLOPE_FACTOR, 3.0, np.nan], fitted_rate=[2.0, 3.0, 6.0, np.nan],
                  checkpoints_fitted=[5, 6, 7, 0], predicted_rate=[2.0, 2.0, 2.0, 2.0])  # fmt: skip
SLOPES = per_seed(OUT_OF_ORDER, factor=[SLOPE_FACTOR, 1.2, np.nan, np.nan], measured_slope=[750.0, 600.0, 1.0, 2.0],
                  predicted_slope=[500.0, 500.0, np.nan, np.nan])  # fmt: skip


def all_claims(hessian=HESSIAN, growth=GROWTH):
    points, sweep = synthetic()
    summary = law_summary(escape_law(points, sweep, RATES, SIGMA))
    return plateau_claims(points, hessian, summary, slope_law(points, sweep, RATES, SIGMA), growth)


def test_every_plateau_claim_names_the_paper_its_figure_and_that_it_goes_beyond_the_paper():
    claims = all_claims()
    for claim in claims:
        assert claim.paper == PAPER.name and claim.spec == BEYOND_THE_PAPER
        assert claim.figure == FIGURES[claim.claim_id.split()[0]], claim.claim_id
        assert claim.statement.startswith("Standard init") and claim.reason
    cells = [f"(p={p:g}, q={q:g}) iteration 300" for p, q in CELLS]  # in the table's order, not sorted
    growth = [f"5g (p={p:g}, q={q:g})" for p, q in OUT_OF_ORDER]
    expected = [f"3m {c}" for c in cells] + [f"3c {c}" for c in cells] + ["3r", "3r canonical", "5t"]
    assert [c.claim_id for c in claims] == [*expected, "5s (p=0.5, q=0.8)", *growth]


def test_the_cell_claims_judge_their_own_directions_per_seed():
    claims = {c.claim_id: c for c in all_claims()}
    saddle, minimum = claims["3m (p=0.5, q=0.8) iteration 300"], claims["3m (p=0.6, q=0.9) iteration 300"]
    assert "a local minimum of the full model up to the stated tolerance" in saddle.statement
    assert "(p, q) = (0.5, 0.8)" in saddle.statement and saddle.statement.endswith("(Thm 1).")
    assert (saddle.holds, saddle.n_runs, saddle.measured) == (False, 3, pytest.approx(-1e-4))
    assert (minimum.holds, minimum.holds_fraction, minimum.measured) == (True, 1.0, pytest.approx(1e-5))
    assert minimum.rule.startswith("per seed where it can be told; ")
    assert "held-out curvature: seed 1 1e-05, seed 2 1e-05, seed 3 1e-05;" in minimum.reason
    assert "verdicts: seed 1 minimum, seed 2 minimum, seed 3 minimum" in minimum.reason
    assert minimum.reason.endswith("; gradient norm over its noise seed 1 1, seed 2 1, seed 3 1")
    canonical = claims["3c (p=0.5, q=0.8) iteration 300"]  # a saddle of the full model, a canonical minimum
    assert "of the full loss restricted to the canonical directions" in canonical.statement
    assert canonical.holds and canonical.measured == pytest.approx(2e-5) and "gradient norm" not in canonical.reason
    assert "verdicts: seed 1 minimum, seed 2 minimum" in canonical.reason
    unresolved = claims["3m (p=0.9, q=0.9) iteration 300"]
    assert (unresolved.kind, unresolved.figure, unresolved.paper, unresolved.spec) == (
        "not checkable", FIGURE, PAPER.name, BEYOND_THE_PAPER)  # fmt: skip
    assert "(p, q) = (0.9, 0.9)" in unresolved.statement


@pytest.mark.parametrize(
    "tolerance, tol",
    [(1e-6, "-tol (1e-06 x lambda_max)"), ("horizon", "-tol (log(1/sigma) / sum of the learning rates after the")],
)
def test_the_threshold_says_what_tol_is_and_the_significance(tolerance, tol):
    hessian = dataclasses.replace(HESSIAN, tolerance=tolerance)
    claim = next(c for c in all_claims(hessian) if c.claim_id.startswith("3m"))
    assert claim.threshold.startswith(f"a saddle: held-out curvature along the lowest eigenvector + 3 SE < {tol}")
    assert "fitted lambda_min - 3 SE > -tol" in claim.threshold and "4-16 held-out batches of 8" in claim.threshold


def test_the_resolved_share_is_one_count_over_the_points_on_the_plateau():
    claims = {c.claim_id: c for c in all_claims()}
    full, canonical = claims["3r"], claims["3r canonical"]
    assert (full.measured, full.holds, full.n_runs, full.reason) == (
        pytest.approx(15 / 18),
        False,
        18,
        "15 of 18 resolved",
    )
    assert (canonical.measured, canonical.holds, canonical.n_runs) == (1.0, True, 18)
    assert full.rule == "one count over the points" and full.threshold == f"resolved share >= {RESOLVED:g}"
    assert "the verdict on the full model (saddle" in full.statement
    assert "the verdict on the canonical restriction (saddle" in canonical.statement
    points = synthetic()[0]
    verdicts = ["unresolved"] + ["minimum"] * 9  # exactly the required share
    at = resolved_claim(points.iloc[:10].assign(verdict=verdicts), "", "3r", "the full model")
    assert at.measured == pytest.approx(RESOLVED) and at.holds


def test_no_point_on_the_plateau_leaves_the_resolved_share_not_checkable():
    claim = resolved_claim(synthetic()[0].assign(on_plateau=False), "canonical_", "3r canonical", "the restriction")
    assert (claim.paper, claim.claim_id, claim.figure, claim.spec) == (
        PAPER.name,
        "3r canonical",
        FIGURE,
        BEYOND_THE_PAPER,
    )
    assert (claim.kind, claim.reason, claim.n_runs) == ("not checkable", "no point on the plateau", 0)
    assert "the verdict on the restriction" in claim.statement


def test_the_escape_law_is_one_comparison_over_the_escaping_runs():
    summary = {"runs": 4, "beyond_schedule": 1, "rank_correlation": 0.5, "median_factor": 1.2}
    at = escape_law_claim({**summary, "max_factor": ESCAPE_FACTOR})
    assert (at.paper, at.claim_id, at.figure, at.spec) == (PAPER.name, "5t", LAW_FIGURE, BEYOND_THE_PAPER)
    assert (at.measured, at.holds, at.n_runs, at.rule) == (ESCAPE_FACTOR, True, 4, "one comparison over the runs")
    assert at.threshold == f"largest factor between predicted and measured escape <= {ESCAPE_FACTOR:g}"
    assert at.reason == (
        "4 escaping runs (1 predicted never to escape): rank correlation 0.50, median factor 1.20, largest 2.00"
    )
    assert at.statement.startswith("Standard init, every run that escaped: the escape iteration predicted from AdamW")
    assert "(growth from sigma to 1 at eta_t (|mu| - wd_v) per step" in at.statement
    assert not escape_law_claim({**summary, "max_factor": 2.01}).holds
    none = escape_law_claim({"runs": 0})
    assert (none.paper, none.claim_id, none.figure, none.spec) == (PAPER.name, "5t", LAW_FIGURE, BEYOND_THE_PAPER)
    assert none.kind == "not checkable" and none.reason == "no run escaped with its mode measured"
    assert none.statement == at.statement


def test_the_slope_claims_hold_per_seed_within_the_factor():
    claims = slope_claims(SLOPES)
    assert [c.claim_id for c in claims] == ["5s (p=0.8, q=0.5)", "5s (p=0.5, q=0.8)"]
    told, untold = claims
    assert (told.holds, told.holds_fraction, told.n_runs) == (True, 1.0, 2)  # the factor itself holds
    assert told.measured == pytest.approx(np.median([SLOPE_FACTOR, 1.2]))
    assert told.reason == "seed 1 measured 750, predicted 500; seed 2 measured 600, predicted 500"
    assert told.threshold == f"measured / predicted slope within a factor {SLOPE_FACTOR:g} (per seed)"
    assert "predicts, 1 / (eta_T (|mu| - wd_v)), within a factor 1.5" in told.statement
    assert untold.kind == "not checkable" and untold.reason.startswith("no seed can be told: seed 1 measured 1")
    for claim in claims:
        assert (claim.paper, claim.figure, claim.spec) == (PAPER.name, LAW_FIGURE, BEYOND_THE_PAPER)


def test_the_growth_claims_follow_the_cells_and_the_factor():
    claims = {c.claim_id: c for c in all_claims() if c.claim_id.startswith("5g")}
    first, second = claims["5g (p=0.8, q=0.5)"], claims["5g (p=0.5, q=0.8)"]
    assert (first.holds, first.n_runs) == (True, 2) and (second.holds, second.n_runs) == (False, 1)
    assert all(c.claim_id.startswith(("3", "5t", "5s")) for c in all_claims(growth=None))


def test_the_outcome_of_a_seed_is_one_at_a_minimum_zero_at_a_saddle_and_unknown_otherwise():
    points = pd.DataFrame({"verdict": ["minimum", "saddle", "unresolved"], "mode_verdict": ["saddle"] * 3})
    outcomes = seed_outcomes(points)
    assert outcomes.dtype == float and outcomes.iloc[:2].tolist() == [1.0, 0.0] and np.isnan(outcomes.iloc[2])
    assert seed_outcomes(points, "mode_").tolist() == [0.0] * 3


def test_the_summary_keeps_the_gradient_and_the_plateau_per_cell():
    points = synthetic()[0]
    cells = summarise(points)
    assert cells.gradient_norm.tolist() == pytest.approx([0.01] * len(CELLS))
    assert cells.gradient_ratio.tolist() == pytest.approx([1.0] * len(CELLS))
    expected = points.groupby(["p", "q"], sort=False).plateau_length.median()
    assert cells.median_plateau.to_numpy() == pytest.approx(expected.to_numpy(), nan_ok=True)
    assert list(zip(cells.p, cells.q)) == CELLS


def varied_points():
    """The synthetic points at two point kinds (listed against their sorted order), with distinct
    block weights, one seed exactly at the sign test's bound and unresolved modes whose bias is 0.5
    and 3 x tol."""
    points = synthetic()[0].reset_index(drop=True)
    weights = {"W_1": 0.5, "W_Q": 0.3, "W_K": 0.15, "e": 0.05}
    points = points.assign(**{f"weight_{b}": weights.get(b, 0.0) for b in BLOCKS})
    points = points.assign(**{f"mode_weight_{b}": weights.get(b, 0.0) for b in BLOCKS})
    bound = (points.p == 0.6) & (points.q == 0.9) & (points.seed == 1)
    points.loc[bound, ["curvature", "curvature_noise"]] = [-3 * 2.0**-16, 2.0**-16]  # + 3 SE is exactly 0
    unresolved = (points.p == 0.9) & (points.q == 0.9)
    points.loc[unresolved, "mode_verdict"] = "unresolved"
    points.loc[unresolved, "mode_bias"] = np.where(points.seed[unresolved] == 1, 0.75, 4.5)  # tol 1.5
    points.loc[unresolved, "mode_curvature"] = [-0.25, 0.5, 0.125]
    points.loc[bound, "gradient_ratio"] = STATIONARY  # at the bound: near-stationary
    points["mode_decay"] = 0.25 * points.mode_curvature.abs()
    return pd.concat([points, points.assign(point="at the drop")], ignore_index=True)


def test_the_findings_list_the_cells_points_and_numbers_behind_each_verdict():
    points = varied_points()
    slopes = pd.DataFrame({"p": [0.8, 0.5], "q": [0.5, 0.8], "seed": [1, 1], "measured_slope": [3.0, 4.0],
                           "predicted_slope": [2.0, 2.0]})  # fmt: skip
    growth = pd.DataFrame({"p": [0.8, 0.5], "q": [0.5, 0.8], "seed": [1, 2], "fitted_rate": [2.5, np.nan],
                           "checkpoints_fitted": [5, 0], "predicted_rate": [2.0, 2.0]})  # fmt: skip
    text = findings(summarise(points), points, {"runs": 0}, slopes, growth)
    assert text.index("## iteration 300") < text.index("## at the drop")
    section = text.split("## at the drop")[1]
    assert "- **full model**: a saddle in every seed at 4 of 6 cells" in section
    assert "unresolved in every seed at 1 ((0.9, 0.9)); seeds differ at 0 (none)." in section
    assert "- **canonical directions**: a saddle in every seed at 0 of 6 cells (none);" in section
    assert "the stated fraction of lambda_max, median 30" in section and "(83%)" in section
    assert "below 0 by 3 standard errors at 12 of 18 points ((0.5, 0.8) seed 1," in section  # not the bound seed
    assert "(0.8, 0.5) seed 3), at 3.3 to 3.3 x tol." in section
    assert "the largest blocks are W_1 0.50, W_Q 0.30, W_K 0.15." in section
    assert "it lies in W_1 0.50, W_Q 0.30, W_K 0.15 (medians)" in section
    assert "Weight decay's share of its rate: median 0.25;" in section
    assert "the mode grows fast enough to end the plateau within the run at 12 of 18 points" in section
    assert "within 3 x the norm of its noise at 18 of 18 points (median ratio 1)" in section
    unresolved = (
        "- **Unresolved in AdamW's view**: 3 of 18 points ((0.9, 0.9) seed 1, (0.9, 0.9) seed 2, (0.9, 0.9) seed 3); "
        "the held-out curvature there is -0.25 to 0.5, but the fitted set's bias is 0.5 to 3 x tol, so no minimum "
        "can be called: a fitted set 1 to 3 times larger would be needed if the bias falls as 1/sequences, 1 to 9 "
        "times if as 1/sqrt(sequences)."
    )
    assert unresolved in section
    above = points.assign(
        mode_bias=np.where(points.mode_verdict == "unresolved", 1.5 * points.mode_tol, points.mode_bias)
    )
    above.loc[above.mode_verdict.eq("unresolved") & above.seed.eq(2), "mode_bias"] = 4.5  # 3 x tol
    needed = "a fitted set 1.5 to 3 times larger would be needed if the bias falls as 1/sequences, 2.25 to 9 times"
    assert needed in findings(summarise(above), above, {}, slopes)
    assert "- No escaping run with its mode measured: nothing to compare." in text
    assert text.index("at (0.8, 0.5), measured vs predicted: seed 1 3 vs 2.") < text.index("at (0.5, 0.8)")
    assert "## The instability seen growing" in text and text.startswith("# Minimum or saddle: findings\n")
    mode = "the projection on AdamW's unstable mode"
    assert (
        f"- (0.8, 0.5) seed 1: {mode} grows at 2.5 per unit of learning rate over 5 checkpoints; predicted 2." in text
    )
    assert f"- (0.5, 0.8) seed 2: {mode} never outgrows its noise before the loss moves; predicted 2." in text
    tied = points.assign(mode_tol=points.tol)  # tol from the schedule's horizon: the mode's tolerance
    assert "(the curvature that would grow a direction from sigma to 1" in findings(summarise(tied), tied, {}, slopes)


def test_the_resolved_share_of_a_single_point_and_the_sign_line_without_negative_curvature():
    points = synthetic(seeds=(1,))[0]
    one = points[(points.p == 0.6) & (points.q == 0.9)]
    text = findings(summarise(one), one, {}, pd.DataFrame(columns=["p", "q"]))
    assert "- **Resolved**: 1 of 1 (cell, seed) verdicts on the full model (100%)" in text
    assert "below 0 by 3 standard errors at 0 of 1 points (none)." in text
    assert "Where the negative direction lies" not in text and "Unresolved in" not in text
    assert "below 0 by 4 standard errors" in findings(summarise(one), one, {}, pd.DataFrame(columns=["p", "q"]), z=4.0)


def test_a_cell_whose_seeds_differ_is_listed_as_such_and_the_mode_is_optional():
    """One seed a saddle, one a minimum, one unresolved: neither every seed's verdict nor unresolved
    in all; points without AdamW's view (no mode measured) get the full model's lines alone."""
    points = synthetic()[0].reset_index(drop=True)
    mixed = (points.p == 0.6) & (points.q == 0.7)
    points.loc[mixed, "verdict"] = ["saddle", "minimum", "unresolved"]
    points = points.drop(columns=[c for c in points if c.startswith("mode_")])
    text = findings(summarise(points), points, {}, pd.DataFrame(columns=["p", "q"]))
    assert "a saddle in every seed at 3 of 6 cells ((0.5, 0.8), (0.7, 0.6), (0.8, 0.5))" in text
    assert "unresolved in every seed at 1 ((0.9, 0.9)); seeds differ at 1 ((0.6, 0.7))." in text
    assert "(the stated fraction of lambda_max, median 30)" in text and "AdamW's" not in text.split("## The")[0]


def test_the_findings_are_sections_of_markdown_in_a_fixed_layout():
    """The title and the tables read, one section per point kind, the escape law's and the growth's
    sections, blank lines between them and one newline at the end."""
    points = varied_points()
    slopes = pd.DataFrame({"p": [0.5, 0.5], "q": [0.8, 0.8], "seed": [1, 2], "measured_slope": [3.0, 4.0],
                           "predicted_slope": [2.0, 2.0]})  # fmt: skip
    growth = pd.DataFrame({"p": [0.8], "q": [0.5], "seed": [1], "fitted_rate": [2.5], "checkpoints_fitted": [5],
                           "predicted_rate": [2.0]})  # fmt: skip
    tied = points.assign(mode_tol=points.tol)
    text = findings(summarise(tied), tied, {"runs": 0}, slopes, growth)
    assert text.startswith(
        "# Minimum or saddle: findings\n\nWritten by the pipeline from `results/local_to_global/plateau/cells.csv`, "
        "`points.csv`, `fits.csv` and `slopes.csv`.\n\n## iteration 300\n\n- **full model**: "
    )
    assert (
        "(the curvature that would grow a direction from sigma to 1 under gradient steps at the schedule's learning "
        "rates before the run ends)"
    ) in text
    assert (
        "; elsewhere the point still moves along the gradient, and its Hessian describes a slope, not a critical "
        "point.\n"
    ) in text
    assert ".\n\n## at the drop\n\n- **full model**" in text
    assert (
        ".\n\n## The escape predicted from AdamW's step\n\n- No escaping run with its mode measured: nothing to "
        "compare.\n- Slope against log(1/sigma) at (0.5, 0.8), measured vs predicted: seed 1 3 vs 2, seed 2 4 vs 2."
        "\n\n## The instability seen growing\n\n- (0.8, 0.5) seed 1: "
    ) in text
    assert text.endswith("; predicted 2.\n")


def test_a_growth_claim_states_the_rate_its_threshold_and_each_seeds_fit():
    claims = {c.claim_id: c for c in all_claims() if c.claim_id.startswith("5g")}
    first = claims["5g (p=0.8, q=0.5)"]
    assert first.statement == (
        "Standard init, (p, q) = (0.8, 0.5): through the plateau, the parameters' projection on the unstable mode "
        "of AdamW's preconditioned Hessian grows at its predicted rate |mu| - wd_v per unit of learning rate, within "
        "a factor 1.5, before the loss moves."
    )
    assert first.threshold == (
        "fitted / predicted rate within a factor 1.5 (per seed; not checkable where the projection never outgrows "
        "its noise before the loss moves, or the mode is stable)"
    )
    assert first.reason == (
        "seed 1 fitted 2 over 5 checkpoints, predicted 2; seed 2 fitted 3 over 6 checkpoints, predicted 2"
    )


# --- the tables' edges -----------------------------------------------------------------------------


def test_the_summary_takes_each_columns_median_over_the_seeds():
    points = synthetic()[0]
    cell = (points.p == 0.5) & (points.q == 0.8)
    values = {"lambda_min": [-3.0, -1.0, -2.0], "curvature_noise": [1.0, 5.0, 3.0], "tol": [0.1, 0.3, 0.2],
              "canonical_tol": [1.0, 3.0, 2.0], "canonical_weight": [0.1, 0.5, 0.3], "weight_e": [0.2, 0.6, 0.4],
              "mode_rate": [2.0, 6.0, 4.0], "gradient_norm": [1.0, 3.0, 2.0]}  # fmt: skip
    for column, column_values in values.items():
        points.loc[cell, column] = column_values
    first = summarise(points).iloc[0]
    assert (first.p, first.q, first.point, first.seeds) == (0.5, 0.8, "iteration 300", 3)
    for column, column_values in values.items():
        assert first[column] == pytest.approx(np.median(column_values)), column
    assert "mode_rate" not in summarise(points.drop(columns="mode_rate"))
    off = summarise(points.assign(on_plateau=cell))  # only that cell's points are on the plateau
    assert len(off) == 1 and off.seeds.tolist() == [3]


@pytest.mark.filterwarnings("ignore:invalid value encountered in log")  # the factor of a negative escape, unused
def test_the_escape_law_leaves_out_midpoints_points_off_the_plateau_and_runs_that_did_not_escape():
    points, sweep = synthetic()
    points = points.reset_index(drop=True)
    points.loc[0, "kind"] = "mid"
    points.loc[1, "on_plateau"] = False
    points.loc[2, "mode_rate"] = np.nan
    points.loc[3, "censored"] = True  # the phase run stopped before its escape: not escaped
    points.loc[4, "escape"] = -1.0  # no escape measured
    law = escape_law(points, sweep, RATES, SIGMA)
    assert len(law) == len(points) - 3
    assert list(law.columns) == ["p", "q", "seed", "point", "mode_rate", "drop_end", "escape", "escaped",
                                 "predicted_escape", "factor", "assumption"]  # fmt: skip
    not_escaped = law[~law.escaped]
    assert len(not_escaped) == 2 + 6  # the two made so, and the unresolved and minimum cells' runs
    assert not_escaped.factor.isna().all() and (not_escaped.assumption == "").all()
    assert (law[law.escaped].assumption == "holds").all()
    summary = law_summary(law)
    assert summary["runs"] == 7 and summary["beyond_schedule"] == 0  # 12 saddle runs, 5 of them left out
    assert summary["median_factor"] == pytest.approx(1.0, abs=2e-3)


def test_the_law_summary_of_too_few_runs():
    points, sweep = synthetic()
    law = escape_law(points, sweep, RATES, SIGMA)
    two = law_summary(law[law.escaped].iloc[:2])
    assert two["runs"] == 2 and np.isnan(two["rank_correlation"])  # a rank correlation needs three
    three = law_summary(law[law.escaped].iloc[[0, 3, 6]])
    assert three["rank_correlation"] == pytest.approx(1.0)
    beyond = law.copy()
    beyond.loc[beyond.escaped, "predicted_escape"] = [np.inf] * 2 + list(beyond.predicted_escape[beyond.escaped][2:])
    counted = law_summary(beyond)
    assert counted["beyond_schedule"] == 2 and counted["runs"] == 12
    none = law_summary(law[~law.escaped])
    assert none["runs"] == 0 and np.isnan(none["median_factor"]) and np.isnan(none["max_factor"])


def test_the_slope_law_skips_seeds_without_a_point_or_an_escape_at_the_runs_sigma():
    points, sweep = synthetic()
    sweep = sweep.copy()
    sweep.loc[(sweep.seed == 1) & np.isclose(sweep.value, SIGMA), "escaped"] = False  # not at the run's sigma
    points = points[~((points.seed == 3) & np.isclose(points.p, 0.5) & np.isclose(points.q, 0.8))]  # no point
    slopes = slope_law(points, sweep, RATES, SIGMA)
    assert slopes.seed.tolist() == [2]
    row = slopes.iloc[0]
    assert row.escape == int(DROP + np.log(1 / SIGMA) / (LR * 2.0)) and row.mode_rate == 2.0
    late = sweep.assign(escape=np.where(np.isclose(sweep.value, SIGMA), 10 * HORIZON, sweep.escape))
    tail = np.r_[RATES[:-1], 2 * LR]  # the schedule's last rate differs: read where the run outlasts it
    beyond = slope_law(points, late, tail, SIGMA).iloc[0]
    assert beyond.predicted_slope == pytest.approx(predicted_slope(2.0, 2 * LR))
    flat = sweep.assign(escape=1000.0)  # the same escape at every sigma: slope 0, no factor
    assert np.isnan(slope_law(points, flat, RATES, SIGMA).factor.iloc[0])
    slow = sweep.assign(escape=1000.0 + 0.5 * np.log(1 / sweep.value))  # a slope under one iteration
    assert slope_law(points, slow, RATES, SIGMA).factor.iloc[0] == pytest.approx(predicted_slope(2.0, LR) / 0.5)
    assert list(slope_law(points.iloc[:0], sweep, RATES, SIGMA).columns) == [
        "p", "q", "seed", "mode_rate", "escape", "measured_slope", "predicted_slope", "factor"]  # fmt: skip


def test_join_runs_reads_the_standard_inits_runs_and_labels_the_points():
    spectra = pd.DataFrame(
        {"p": [0.5, 0.5], "q": [0.8, 0.8], "seed": [1, 1], "step": [300, 450], "kind": ["fixed", "mid"]}
    )
    measures = pd.DataFrame({"p": [0.5, 0.5], "q": [0.8, 0.8], "seed": [1, 1], "init": ["ours", "standard"],
                             "plateau_length": [10.0, 700.0], "censored": [False, True]})  # fmt: skip
    joined = join_runs(spectra, measures)
    assert joined.plateau_length.tolist() == [700.0, 700.0] and joined.censored.tolist() == [True, True]
    assert joined.point.tolist() == ["iteration 300", "mid-plateau"]


def test_the_cell_claims_threshold_in_full():
    claim = next(
        c for c in all_claims(dataclasses.replace(HESSIAN, tolerance="horizon")) if c.claim_id.startswith("3c")
    )
    assert claim.threshold == (
        "a saddle: held-out curvature along the lowest eigenvector + 3 SE < -tol (log(1/sigma) / sum of the learning "
        "rates after the point: a direction less curved cannot grow from sigma to 1 under gradient steps at the "
        "schedule's learning rates before the run ends); a minimum: held-out curvature - 3 SE > -tol, fitted "
        "lambda_min - 3 SE > -tol, noise and fitted bias <= tol; unresolved otherwise (per seed; 4-16 held-out "
        "batches of 8 sequences)"
    )
    assert claim.reason.startswith(
        "held-out curvature: seed 1 2e-05, seed 2 2e-05, seed 3 2e-05; its standard error: seed 1 1e-06, seed 2 "
        "1e-06, seed 3 1e-06; tol: seed 1 3e-05, seed 2 3e-05, seed 3 3e-05; fitted lambda_min: seed 1 1e-05, "
    )


def test_join_runs_keeps_spectra_without_a_run_and_refuses_two_runs_of_a_seed():
    spectra = pd.DataFrame(
        {"p": [0.5, 0.5], "q": [0.8, 0.8], "seed": [1, 2], "step": [300, 300], "kind": ["fixed"] * 2}
    )
    measures = pd.DataFrame({"p": [0.5], "q": [0.8], "seed": [1], "init": ["standard"], "plateau_length": [700.0],
                             "censored": [False]})  # fmt: skip
    joined = join_runs(spectra, measures)
    assert len(joined) == 2 and joined.plateau_length.iloc[0] == 700.0 and np.isnan(joined.plateau_length.iloc[1])
    with pytest.raises(pd.errors.MergeError):
        join_runs(spectra, pd.concat([measures, measures]))


def test_the_assumptions_edges():
    points = synthetic(escape_factor=3.0)[0]
    row = points[np.isclose(points.p, 0.6) & np.isclose(points.q, 0.7)].iloc[0]
    late = {**row.to_dict(), "factor": 3.0, "predicted_escape": 100.0, "escape": 300.0}
    assert assumption(pd.Series({**late, "factor": ESCAPE_FACTOR})) == "holds"  # within the factor: on it too
    assert assumption(pd.Series({**late, "mode_rate": 0.0})) == "stable mode"
    assert assumption(pd.Series({**late, "mode_rate": 0.5})) == "slower than linear"
    assert assumption(pd.Series({**late, "gradient_ratio": STATIONARY})) == "slower than linear"
    close = {**late, "mode_lambda_min": -1.0, "mode_curvature": -0.75}  # same sign, product under 1
    assert assumption(pd.Series(close)) == "slower than linear"


@pytest.mark.filterwarnings("ignore:divide by zero encountered")  # its factor: infinitely far from the prediction
def test_an_escape_at_iteration_zero_is_an_escape_and_the_factor_is_a_float():
    points, sweep = synthetic()
    points = points.reset_index(drop=True)
    points.loc[0, "escape"] = 0.0
    law = escape_law(points, sweep, RATES, SIGMA)
    assert bool(law.escaped.iloc[0]) and law.factor.dtype == np.float64
