"""Figure data and claims of Benign overfitting: shapes, values and the claims they support."""

import numpy as np
import pandas as pd
import pytest

from helpers import ROOT, bo_claim_settings, bo_model, shared_scope
from replication.config import validate_config
from replication.errors import ConfigError
from replication.papers.benign_overfitting import plots
from replication.papers.benign_overfitting.claims import all_claims, fig2_claims, fig3_claims, grid_claims
from replication.papers.benign_overfitting.data import IRRELEVANT, RELEVANT, WEAK_OPPOSITE
from replication.papers.benign_overfitting.grid import GRID_COLUMNS
from replication.papers.benign_overfitting.runs import fig1_selections, trajectory
from replication.plotting import apply_style

CLAIMS = bo_claim_settings()

SCALES = {"benign": 0.06, "harmful": 1.0, "not_overfitting": 0.001}


@pytest.fixture(scope=shared_scope)
def fig1_frame():
    return fig1_selections(10000, 20.0, 100, 100, bo_model(), SCALES, seed=1)


def test_fig1_paper_setting_accuracies(fig1_frame):
    """Spec: 1.0/1.0, 1.0/~0.58 (0.53-0.70), 0.8/1.0 at d = 10000, ||mu|| = 20."""
    acc = fig1_frame.groupby(["scenario", "split"]).correct.mean()
    assert acc["benign", "train"] == 1.0 and acc["benign", "test"] == 1.0
    assert acc["harmful", "train"] == 1.0 and 0.53 <= acc["harmful", "test"] <= 0.70
    assert acc["not_overfitting", "train"] == 0.8 and acc["not_overfitting", "test"] == 1.0
    # benign: noisy training samples are fitted through their opposite-class weak token
    benign = fig1_frame[(fig1_frame.scenario == "benign") & (fig1_frame.split == "train")]
    assert benign.noisy.any() and (~benign.noisy).any(), "both kinds of training sample are present"
    assert (benign[benign.noisy].selected_role == WEAK_OPPOSITE).all()
    assert (benign[~benign.noisy].selected_role == RELEVANT).all()
    apply_style()
    fig, data = plots.fig1(fig1_frame)
    assert len(data) == 600 and len(fig.axes) == 6
    recorded = data.groupby(["scenario", "split"]).accuracy.first()
    assert recorded["harmful", "test"] == acc["harmful", "test"] and recorded["benign", "train"] == 1.0


def _synthetic_trajectory(final_roles_noisy):
    """4 clean (end on R) + noisy samples ending on the given roles' tokens."""
    n, T, steps = 4 + len(final_roles_noisy), 8, np.arange(0, 101, 10)
    roles = np.tile([RELEVANT, 1, WEAK_OPPOSITE] + [IRRELEVANT] * 5, (n, 1))
    ends = [0] * 4 + [{RELEVANT: 0, WEAK_OPPOSITE: 2, IRRELEVANT: 6}[r] for r in final_roles_noisy]
    probabilities = np.full((len(steps), n, T), 1 / T)
    for i, token in enumerate(ends):
        probabilities[-1, i] = 0.02
        probabilities[-1, i, token] = 1 - 0.02 * (T - 1)
    return {
        "probabilities": probabilities,
        "steps": steps,
        "y": np.ones(n),
        "clean_y": np.ones(n),
        "noisy": np.arange(n) >= 4,
        "roles": roles,
        "d": np.array(100),
        "signal_norm": np.array(5.0),
    }


def test_fig3_picks_samples_by_final_argmax():
    traj = _synthetic_trajectory([RELEVANT, WEAK_OPPOSITE, IRRELEVANT])
    apply_style()
    for panel, expected in (("a", [0, 5]), ("b", [0, 6]), ("c", [0, 5, 4])):
        fig, data = plots.fig3(traj, panel)
        picked = data.drop_duplicates("row")
        assert picked["sample"].tolist() == expected and picked.matched.all()
        assert len(data) == len(expected) * 11 * 8
    # no noisy sample ends on an irrelevant token: flagged, not hidden
    fig, data = plots.fig3(_synthetic_trajectory([RELEVANT]), "b")
    assert not data[data.row == "Noisy sample"].matched.any()
    claims = {c.claim_id: c for c in fig3_claims({p: _synthetic_trajectory([RELEVANT]) for p in "abc"})}
    assert not claims["fig3b_noisy_select_irrelevant"].holds and claims["fig3c_noisy_stuck_relevant"].holds


def test_fig2_claims_read_the_final_relevant_probability():
    # Clean samples end with r = 0.86; noisy ones on W_{-Y*} (r = 0.02) or stuck on R (r = 0.86).
    fitted = {
        c.claim_id: c
        for c in fig2_claims(_synthetic_trajectory([WEAK_OPPOSITE]), clean_least=0.8, noisy_most=CLAIMS.fig2_noisy_most)
    }
    assert fitted["fig2_clean_r_to_one"].holds and fitted["fig2_noisy_r_to_zero"].holds
    assert fitted["fig2_noisy_r_to_zero"].measured == pytest.approx(0.02)
    stuck = {
        c.claim_id: c
        for c in fig2_claims(
            _synthetic_trajectory([WEAK_OPPOSITE, RELEVANT]), CLAIMS.fig2_clean_least, CLAIMS.fig2_noisy_most
        )
    }
    assert not stuck["fig2_noisy_r_to_zero"].holds and not stuck["fig2_clean_r_to_one"].holds


@pytest.mark.heavy
def test_real_trajectory_and_fig2():
    traj = trajectory(300, 20.0, 1, bo_model(lr=1e-2), 300, 10)
    assert traj["probabilities"].shape == (31, 20, 8)
    assert np.allclose(traj["probabilities"][0], 1 / 8)
    assert np.allclose(traj["probabilities"].sum(-1), 1)
    apply_style()
    fig, data = plots.fig2(traj)
    assert len(data) == 31 * 20 and data.S.between(0, 0.25).all()
    assert np.allclose(data.S, data.r * (1 - data.r))
    end = data[data.step == 300]
    # clean samples move to r -> 1, noisy ones away from R
    assert end[~end.noisy].r.mean() > 1 / 8 > end[end.noisy].r.mean()


def _grid(eq9):
    rows = []
    for k, (d, m) in enumerate([(d, m) for d in (250, 1000) for m in (5.0, 40.0)]):
        rows.append(
            {col: 0.0 for col in GRID_COLUMNS}
            | {
                "d": d,
                "signal_norm": m,
                "seed": 1,
                "steps": 100,
                "train_loss": 0.45,
                "test_loss": 0.63 if m == 5 else 0.41,
                "train_accuracy": 1.0,
                "test_accuracy": 0.9 if m == 5 else 1.0,
                "eq9_ratio": eq9[k],
                "eq9_ratio_as_coded": 6.0,
                "eq10_ratio": 1.0,
                "eq10_ratio_as_coded": 1.2,
                "n_clean_plus": 6,
                "n_clean_minus": 10,
            }
        )
    return pd.DataFrame(rows)


def test_heatmap_data():
    grid = _grid([2.0, 0.5, 3.0, 4.0])
    apply_style()
    for name in plots.HEATMAPS:
        fig, data = plots.grid_figure(grid, name)
        assert len(data) == 4 and {"d", "signal_norm"} <= set(data.columns)
    table = plots._pivot(grid, "eq9_ratio")
    assert list(table.index) == [1000, 250]  # 250 at the bottom


def test_failing_grid_claims_are_reported():
    grid = _grid([2.0, 0.5, 3.0, 4.0])
    claims = {c.claim_id: c for c in grid_claims(grid, CLAIMS)}
    assert not claims["fig4_eq9_ratio_above_one"].holds and claims["fig4_eq9_ratio_above_one"].measured == 0.75
    assert claims["fig4_eq9_ratio_above_one_as_coded"].holds and claims["fig4_as_coded_is_smaller_class_size"].holds
    assert claims["fig5_test_loss_low_strong_signal"].holds and claims["test_accuracy_one_from_15"].holds


def test_all_claims_table(fig1_frame):
    trajectories = {p: _synthetic_trajectory([RELEVANT, WEAK_OPPOSITE, IRRELEVANT]) for p in "abc"}
    claims = all_claims(_grid([2.0] * 4), fig1_frame, trajectories, CLAIMS)
    assert len({c.claim_id for c in claims}) == len(claims) >= 24
    assert all(c.paper == "Benign overfitting" for c in claims)
    # claim id -> (measured, holds), worked out from the inputs: clean samples end at r = 1 - 7 * 0.02 = 0.86,
    # one noisy sample per final role, the grid of _grid (losses 0.45 / 0.63 / 0.41, accuracies 0.9 / 1.0).
    expected = {
        "fig1_benign_train_accuracy": (1.0, True),
        "fig1_benign_test_accuracy": (1.0, True),
        "fig1_harmful_train_accuracy": (1.0, True),
        "fig1_harmful_test_accuracy": (0.62, True),
        "fig1_not_overfitting_train_accuracy": (0.8, True),
        "fig1_not_overfitting_test_accuracy": (1.0, True),
        "fig2_clean_r_to_one": (0.86, False),
        "fig2_noisy_r_to_zero": (0.86, False),
        "fig3a_clean_select_relevant": (1.0, True),
        "fig3a_noisy_select_weak_opposite": (1.0, True),
        "fig3b_noisy_select_irrelevant": (1.0, True),
        "fig3c_noisy_fitted_weak_opposite": (1.0, True),
        "fig3c_noisy_stuck_relevant": (1.0, True),
        "fig5_train_loss_range": (0.45, True),
        "fig5_test_loss_range": (0.63, True),
        "fig5_test_loss_smallest_signal": (0.63, True),
        "fig5_test_loss_low_strong_signal": (0.41, True),
        "test_accuracy_one_from_15": (1.0, True),
        "test_accuracy_at_5": (0.9, True),
        "fig4_eq9_ratio_above_one": (1.0, True),
        "fig4_eq9_ratio_above_one_as_coded": (1.0, True),
        "fig4_as_coded_is_smaller_class_size": (1.0, True),
        "fig6_eq10_ratio_in_band": (1.0, True),
        "fig6_eq10_ratio_in_band_as_coded": (1.0, True),
    }
    by_id = {c.claim_id: c for c in claims}
    assert set(expected) <= set(by_id)
    for claim_id, (measured, holds) in expected.items():
        assert np.isclose(by_id[claim_id].measured, measured) and by_id[claim_id].holds is holds, claim_id
    assert by_id["fig1_harmful_test_accuracy"].threshold == "[0.53, 0.7]"
    assert by_id["fig2_clean_r_to_one"].threshold == ">= 0.9" and by_id["fig2_noisy_r_to_zero"].threshold == "<= 0.1"
    assert by_id["fig5_test_loss_range"].reason == (
        "measured range [0.410, 0.630]; 4 cells: 0 fail in every seed, 0 in half or more, "
        "0 in a minority of seeds only (seed noise); 100 steps"
    )
    assert by_id["fig3b_noisy_select_irrelevant"].figure == "Fig. 3b"
    # the same grid with one Eq. 9 cell below 1: three of four cells is a share of 0.75, not all
    failing = {c.claim_id: c for c in all_claims(_grid([2.0, 0.5, 2.0, 2.0]), fig1_frame, trajectories, CLAIMS)}
    assert failing["fig4_eq9_ratio_above_one"].measured == 0.75 and not failing["fig4_eq9_ratio_above_one"].holds


def test_bad_config_is_one_clear_error():
    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    with pytest.raises(ConfigError, match="benign_overfitting.model.noise.*allowed: one of 'exact', 'bernoulli'"):
        validate_config({"benign_overfitting": {"model": {"noise": "gaussian"}}}, schema)
    with pytest.raises(ConfigError, match="benign_overfitting.grid.steps"):
        validate_config({"benign_overfitting": {"grid": {"steps": 0}}}, schema)
    config = validate_config({}, schema)
    assert config["benign_overfitting"]["grid"]["steps"] == 20000
    assert config["benign_overfitting"]["trajectories"]["runs"]["b"] == {"d": 4500, "signal_norm": 5.0}
