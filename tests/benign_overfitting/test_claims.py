"""The claims of Benign overfitting on hand-made inputs: which cells each grid claim reads, where its
threshold lies, how the per-cell majority over seeds decides, and what each row says."""

import re

import numpy as np
import pandas as pd
import pytest

from helpers import bo_claim_settings
from replication.papers.benign_overfitting.claims import all_claims, fig1_claims, fig2_claims, fig3_claims, grid_claims
from replication.papers.benign_overfitting.data import IRRELEVANT, RELEVANT, WEAK_OPPOSITE
from replication.papers.benign_overfitting.grid import GRID_COLUMNS

CLAIMS = bo_claim_settings()

DIMS = (250, 500, 750, 1000)
NORMS = (5.0, 10.0, 15.0, 40.0, 80.0, 100.0)
GRID_IDS = [
    "fig5_train_loss_range",
    "fig5_test_loss_range",
    "fig5_test_loss_smallest_signal",
    "fig5_test_loss_low_strong_signal",
    "test_accuracy_one_from_15",
    "test_accuracy_at_5",
    "fig3_text_large_d_memorises",
    "fig3_text_large_signal_not_fitted",
    "fig4_eq9_ratio_above_one",
    "fig4_eq9_ratio_above_one_as_coded",
    "fig4_as_coded_is_smaller_class_size",
    "fig6_eq10_ratio_in_band",
    "fig6_eq10_ratio_in_band_as_coded",
    "fig5_text_balance",
]
# The criterion each row states: the spec's ranges (section 4, 5) with the +-0.01 margins of the range rows.
THRESHOLDS = {
    "fig5_train_loss_range": "[0.4, 0.55] in every run",
    "fig5_test_loss_range": "[0.39, 0.65] in every run",
    "fig5_test_loss_smallest_signal": "[0.615, 0.65] in every run",
    "fig5_test_loss_low_strong_signal": "<= 0.43 in every run",
    "test_accuracy_one_from_15": "= 1 in every run",
    "test_accuracy_at_5": "[0.87, 0.93] in every run",
    "fig3_text_large_d_memorises": "train accuracy 1 and test accuracy < 1 in every run",
    "fig3_text_large_signal_not_fitted": "train accuracy < 1 in every run",
    "fig4_eq9_ratio_above_one": "share of runs = 1",
    "fig4_eq9_ratio_above_one_as_coded": "share of runs = 1",
    "fig4_as_coded_is_smaller_class_size": "share = 1",
    "fig6_eq10_ratio_in_band": "share of runs = 1",
    "fig6_eq10_ratio_in_band_as_coded": "share of runs = 1",
    "fig5_text_balance": "",
}


def expected_figure(claim_id: str) -> str:
    """The figure a claim id names: fig<N><panel>_... -> "Fig. N<panel>", with "(as coded)" for the
    authors' variant and "(Sec. 5)" for the statements of the text; the accuracy rows go beyond."""
    if claim_id.startswith("test_accuracy"):
        return "beyond (accuracy)"
    number = re.match(r"fig(\d[a-c]?)_", claim_id).group(1)
    if "_text_" in claim_id:
        return f"Fig. {number} (Sec. 5)"
    return f"Fig. {number}" + (" (as coded)" if "as_coded" in claim_id else "")


def cell_values(d: float, m: float) -> dict:
    """Values under which every grid claim holds, by the cells the spec names."""
    hard = m >= 0.8 * max(NORMS) and d <= 4 * min(DIMS)  # large ||mu||: a noisy sample not fitted
    return {
        "train_loss": 0.45,
        "test_loss": 0.63 if m == 5 else (0.41 if m >= 40 and d >= 750 else 0.5),
        "train_accuracy": 0.95 if hard else 1.0,
        "test_accuracy": 0.9 if m == 5 else (1.0 if m >= 15 else 0.95),
        "eq9_ratio": 2.0,
        "eq9_ratio_as_coded": 6.0,
        "eq10_ratio": 1.0,
        "eq10_ratio_as_coded": 1.2,
        "n_clean_plus": 6,
        "n_clean_minus": 10,
    }


def make_grid(changes: dict | None = None, seeds=(1,), dims=DIMS, norms=NORMS, steps=100) -> pd.DataFrame:
    """One row per (d, ||mu||, seed); ``changes`` maps (d, ||mu||) or (d, ||mu||, seed) to new values."""
    changes = changes or {}
    rows = []
    for d in dims:
        for m in norms:
            for seed in seeds:
                row = {col: 0.0 for col in GRID_COLUMNS} | {"d": d, "signal_norm": m, "seed": seed, "steps": steps}
                row |= cell_values(d, m) | changes.get((d, m), {}) | changes.get((d, m, seed), {})
                rows.append(row)
    return pd.DataFrame(rows)


def claims_of(grid: pd.DataFrame) -> dict:
    return {c.claim_id: c for c in grid_claims(grid, CLAIMS)}


def failing(grid: pd.DataFrame) -> set[str]:
    return {k for k, c in claims_of(grid).items() if c.kind == "checked" and not c.holds}


def test_every_grid_claim_holds_on_the_reference_grid_and_names_its_figure_and_criterion():
    claims = grid_claims(make_grid(), CLAIMS)
    assert [c.claim_id for c in claims] == GRID_IDS
    for claim in claims:
        assert claim.figure == expected_figure(claim.claim_id), claim.claim_id
        assert claim.threshold == THRESHOLDS[claim.claim_id], claim.claim_id
        assert claim.paper == "Benign overfitting"
        if claim.kind == "checked":
            assert claim.holds, claim.claim_id
            assert claim.reason.endswith("; 100 steps"), claim.claim_id
    by_id = {c.claim_id: c for c in claims}
    assert by_id["fig5_text_balance"].kind == "not checkable" and by_id["fig5_text_balance"].statement
    assert by_id["fig4_as_coded_is_smaller_class_size"].kind == "documentation"


def test_the_statements_carry_the_spec_numbers():
    by_id = claims_of(make_grid())
    spec_numbers = {
        "fig5_train_loss_range": ["0.41-0.54"],
        "fig5_test_loss_range": ["0.40-0.64"],
        "fig5_test_loss_smallest_signal": ["0.62-0.645", "||mu|| = 5"],
        "fig5_test_loss_low_strong_signal": ["0.43", "||mu|| >= 40", "d >= 750"],
        "test_accuracy_one_from_15": ["1.0", "||mu|| >= 15"],
        "test_accuracy_at_5": ["0.87-0.93", "||mu|| = 5"],
        "fig3_text_large_d_memorises": ["||mu|| = 5", "d >= 500"],
        "fig3_text_large_signal_not_fitted": [">= 80", "d <= 1000"],
        "fig4_eq9_ratio_above_one": ["Eq. 9", "> 1", "as defined"],
        "fig4_eq9_ratio_above_one_as_coded": ["Eq. 9", "> 1", "as coded"],
        "fig4_as_coded_is_smaller_class_size": ["Eq. 9", "smaller clean-class size", "0.01"],
        "fig6_eq10_ratio_in_band": ["Eq. 10", "0.5-2.5", "as defined"],
        "fig6_eq10_ratio_in_band_as_coded": ["Eq. 10", "0.5-2.5", "as coded"],
    }
    for claim_id, numbers in spec_numbers.items():
        for number in numbers:
            assert number in by_id[claim_id].statement, (claim_id, number)


def test_range_claims_report_the_extreme_out_of_range_and_the_measured_range():
    by_id = claims_of(make_grid())
    train = by_id["fig5_train_loss_range"]
    assert train.measured == 0.45 and train.reason.startswith("measured range [0.450, 0.450]; ")
    test = by_id["fig5_test_loss_range"]
    assert test.measured == 0.63 and test.reason.startswith("measured range [0.410, 0.630]; ")
    # a value below the range is the one reported, however far above the others lie
    low = claims_of(make_grid({(500, 10.0): {"train_loss": 0.3}}))["fig5_train_loss_range"]
    assert low.measured == 0.3 and not low.holds
    # at the lower end exactly, nothing lies below: the largest value is reported
    edge = claims_of(make_grid({(500, 10.0): {"train_loss": 0.4}}))["fig5_train_loss_range"]
    assert edge.measured == 0.45 and edge.holds
    # the upper ends of the range rows, with their margins
    assert failing(make_grid({(500, 10.0): {"train_loss": 0.56}})) == {"fig5_train_loss_range"}
    assert failing(make_grid({(500, 10.0): {"test_loss": 0.66}})) == {"fig5_test_loss_range"}
    assert failing(make_grid({(500, 5.0): {"test_loss": 0.66}})) == {
        "fig5_test_loss_range",
        "fig5_test_loss_smallest_signal",
    }
    assert failing(make_grid({(500, 5.0): {"test_loss": 0.649}})) == set()
    assert failing(make_grid({(500, 5.0): {"test_loss": 0.6}})) == {"fig5_test_loss_smallest_signal"}
    assert failing(make_grid({(500, 5.0): {"test_accuracy": 0.94}})) == {"test_accuracy_at_5"}
    assert failing(make_grid({(500, 5.0): {"test_accuracy": 0.86}})) == {"test_accuracy_at_5"}


def test_each_claim_reads_the_cells_the_spec_names():
    # low test loss for ||mu|| >= 40 and d >= 750: both ends included, cells outside ignored
    strong = "fig5_test_loss_low_strong_signal"
    assert failing(make_grid({(750, 40.0): {"test_loss": 0.5}})) == {strong}
    assert failing(make_grid({(500, 40.0): {"test_loss": 0.5}, (750, 15.0): {"test_loss": 0.5}})) == set()
    assert failing(make_grid({(1000, 100.0): {"test_loss": 0.43}})) == set()  # <= 0.43
    by_id = claims_of(make_grid({(1000, 100.0): {"test_loss": 0.42}}))
    assert by_id[strong].measured == 0.42 and by_id[strong].reason.startswith("largest test loss; ")
    # test accuracy 1 from ||mu|| = 15 on
    clear = "test_accuracy_one_from_15"
    assert failing(make_grid({(250, 15.0): {"test_accuracy": 0.99}})) == {clear}
    assert failing(make_grid({(250, 10.0): {"test_accuracy": 0.9}})) == set()
    by_id = claims_of(make_grid({(250, 40.0): {"test_accuracy": 0.97}}))
    assert by_id[clear].measured == 0.97 and by_id[clear].reason.startswith("smallest test accuracy; ")
    # memorisation at the smallest ||mu|| and d >= half the largest d (500 of 1000)
    memorises = "fig3_text_large_d_memorises"
    assert failing(make_grid({(500, 5.0): {"train_accuracy": 0.95}})) == {memorises}
    assert failing(make_grid({(1000, 5.0): {"test_accuracy": 1.0}})) == {memorises, "test_accuracy_at_5"}
    assert failing(make_grid({(250, 5.0): {"train_accuracy": 0.95}})) == set()  # d below half
    assert failing(make_grid({(500, 10.0): {"train_accuracy": 1.0, "test_accuracy": 1.0}})) == set()
    by_id = claims_of(make_grid({(1000, 5.0): {"test_accuracy": 0.88}}))
    assert by_id[memorises].measured == 1.0 and "test accuracy 0.880-0.900" in by_id[memorises].reason
    # a noisy sample not fitted at ||mu|| >= 0.8 x the largest (80) and d <= 4 x the smallest (1000)
    not_fitted = "fig3_text_large_signal_not_fitted"
    assert failing(make_grid({(1000, 80.0): {"train_accuracy": 1.0}})) == {not_fitted}
    assert failing(make_grid({(250, 100.0): {"train_accuracy": 1.0}})) == {not_fitted}
    assert failing(make_grid({(250, 40.0): {"train_accuracy": 0.95}})) == set()
    by_id = claims_of(make_grid({(250, 100.0): {"train_accuracy": 0.9}}))
    assert "train accuracy 0.900-0.950" in by_id[not_fitted].reason
    # beyond 4 x the smallest d the cells are left out
    wide = make_grid({(1250, 80.0): {"train_accuracy": 1.0}}, dims=(250, 500, 1000, 1250))
    assert not_fitted not in failing(wide)


def test_share_claims_at_their_thresholds():
    eq9 = "fig4_eq9_ratio_above_one"
    assert failing(make_grid({(250, 10.0): {"eq9_ratio": 1.0}})) == {eq9}  # > 1, not >= 1
    assert failing(make_grid({(250, 10.0): {"eq9_ratio_as_coded": 1.0}})) == {eq9 + "_as_coded"}
    # an as-coded value of 1.5 is above 1 (the claim holds) but not the smaller class size 6
    by_id = claims_of(make_grid({(250, 10.0): {"eq9_ratio_as_coded": 1.5}}))
    assert by_id[eq9 + "_as_coded"].holds
    identity = by_id["fig4_as_coded_is_smaller_class_size"]
    assert not identity.holds and identity.measured == pytest.approx(23 / 24)
    assert identity.reason.startswith("explains the published integers 2..8; share of 24 runs; documentation: ")
    near = claims_of(make_grid({(250, 10.0): {"eq9_ratio_as_coded": 6.005}}))
    assert near["fig4_as_coded_is_smaller_class_size"].holds
    far = claims_of(make_grid({(250, 10.0): {"eq9_ratio_as_coded": 6.5}}))
    assert not far["fig4_as_coded_is_smaller_class_size"].holds
    eq10 = "fig6_eq10_ratio_in_band"
    assert failing(make_grid({(250, 10.0): {"eq10_ratio": 2.6}})) == {eq10}
    assert failing(make_grid({(250, 10.0): {"eq10_ratio": 0.5}, (500, 10.0): {"eq10_ratio": 2.5}})) == set()
    assert failing(make_grid({(250, 10.0): {"eq10_ratio_as_coded": 0.4}})) == {eq10 + "_as_coded"}
    share = claims_of(make_grid({(250, 10.0): {"eq9_ratio": 0.5}}))[eq9]
    assert share.measured == pytest.approx(23 / 24) and share.reason.startswith("as defined: ")


def test_a_cell_holds_when_a_strict_majority_of_its_seeds_do():
    eq9 = "fig4_eq9_ratio_above_one"
    seeds = (1, 2, 3, 4)
    half = claims_of(make_grid({(250, 10.0, 1): {"eq9_ratio": 0.5}, (250, 10.0, 2): {"eq9_ratio": 0.5}}, seeds))
    assert not half[eq9].holds  # 2 of 4 is not a majority
    quarter = claims_of(make_grid({(250, 10.0, 1): {"eq9_ratio": 0.5}}, seeds))[eq9]
    assert quarter.holds and quarter.n_runs == 96 and quarter.holds_fraction == pytest.approx(95 / 96)
    assert quarter.rule == "every cell in a majority of its seeds (4 per cell); fraction over all runs"
    assert quarter.measured == pytest.approx(95 / 96)


def test_the_note_sorts_failing_cells_by_how_many_seeds_fail():
    eq9 = "fig4_eq9_ratio_above_one"
    seeds = (1, 2, 3, 4)
    bad = {"eq9_ratio": 0.5}
    changes = {(250, 5.0, s): bad for s in seeds}  # fails in every seed
    changes |= {(250, 10.0, s): bad for s in (1, 2)}  # fails in half
    changes |= {(500, 10.0, s): bad for s in (1, 2, 3)}  # fails in three of four
    changes |= {(750, 15.0, 4): bad}  # fails in one of four
    claim = claims_of(make_grid(changes, seeds))[eq9]
    assert not claim.holds
    assert claim.reason == (
        "as defined: min_c class sum of accumulated S / max accumulated s(1-s); 24 cells: 1 fail in every seed "
        "[(250, 5)], 2 in half or more [(250, 10); (500, 10)], 1 in a minority of seeds only (seed noise) "
        "[(750, 15)]; 100 steps"
    )
    # more than six cells of a kind: the first six, then an ellipsis; exactly six: no ellipsis
    six = {(d, m): bad for d in (250, 500) for m in (5.0, 10.0, 15.0)}
    listed = claims_of(make_grid(six))[eq9].reason
    assert "6 fail in every seed [(250, 5); (250, 10); (250, 15); (500, 5); (500, 10); (500, 15)], 0 in" in listed
    seven = six | {(750, 5.0): bad}
    listed = claims_of(make_grid(seven))[eq9].reason
    assert "7 fail in every seed [(250, 5); (250, 10); (250, 15); (500, 5); (500, 10); (500, 15) ...], 0 in" in listed


def test_a_one_cell_grid():
    grid = make_grid(dims=(500,), norms=(5.0,), steps=40)
    claims = claims_of(grid)
    assert claims["fig5_test_loss_smallest_signal"].statement.endswith("at ||mu|| = 5")
    assert claims["fig5_train_loss_range"].reason.endswith(
        "1 cells: 0 fail in every seed, 0 in half or more, 0 in a minority of seeds only (seed noise); 40 steps"
    )


def _fig1_frame(accuracy: dict) -> pd.DataFrame:
    """Selections of 100 samples per (scenario, split) with the given accuracies."""
    frames = []
    for (scenario, split), value in accuracy.items():
        correct = np.arange(100) < round(100 * value)
        frames.append(pd.DataFrame({"scenario": scenario, "split": split, "correct": correct}))
    return pd.concat(frames, ignore_index=True)


SPEC_FIG1 = {
    ("benign", "train"): 1.0,
    ("benign", "test"): 1.0,
    ("harmful", "train"): 1.0,
    ("harmful", "test"): 0.6,
    ("not_overfitting", "train"): 0.8,
    ("not_overfitting", "test"): 1.0,
}


def test_fig1_claims_state_the_spec_ranges():
    claims = fig1_claims(_fig1_frame(SPEC_FIG1), CLAIMS.fig1_accuracy)
    ranges = ["[1, 1]", "[1, 1]", "[1, 1]", "[0.53, 0.7]", "[0.8, 0.8]", "[1, 1]"]
    assert [c.threshold for c in claims] == ranges
    for claim, (scenario, split) in zip(claims, SPEC_FIG1):
        assert claim.claim_id == f"fig1_{scenario}_{split}_accuracy"
        assert claim.figure == "Fig. 1" and claim.holds and claim.spec == "BO-fig1"
        assert claim.statement.startswith(f"{scenario.replace('_', ' ')} token selection: {split} accuracy")
        assert claim.statement.endswith(claim.threshold)
        assert claim.reason.startswith(f"{split} accuracy {SPEC_FIG1[scenario, split]:.3f} ")
    assert "not overfitting" in claims[4].statement


@pytest.mark.parametrize(
    "cell, value",
    [(("not_overfitting", "train"), 0.79), (("not_overfitting", "train"), 0.9), (("harmful", "test"), 0.71)]
    + [(("harmful", "test"), 0.52), (("benign", "test"), 0.99), (("harmful", "train"), 0.99)],
)
def test_fig1_claims_fail_outside_their_range(cell, value):
    claims = {c.claim_id: c for c in fig1_claims(_fig1_frame(SPEC_FIG1 | {cell: value}), CLAIMS.fig1_accuracy)}
    failed = {k for k, c in claims.items() if not c.holds}
    assert failed == {f"fig1_{cell[0]}_{cell[1]}_accuracy"}
    assert claims[f"fig1_{cell[0]}_{cell[1]}_accuracy"].measured == pytest.approx(value)


def _trajectory(final_r: list[float], noisy: list[bool], steps=(0, 50, 120)):
    """Recorded probabilities whose last step puts r = final_r[i] on each sample's relevant token
    (token 1 here, to read the roles) and the rest on token 0."""
    n, T = len(final_r), 4
    roles = np.tile([IRRELEVANT, RELEVANT, WEAK_OPPOSITE, IRRELEVANT], (n, 1))
    probabilities = np.full((len(steps), n, T), 1 / T)
    probabilities[-1] = 0.0
    probabilities[-1, :, 1] = final_r
    probabilities[-1, :, 0] = 1 - np.array(final_r)
    return {
        "probabilities": probabilities,
        "steps": np.array(steps),
        "noisy": np.array(noisy),
        "roles": roles,
        "d": np.array(300),
        "signal_norm": np.array(12.5),
    }


def test_fig2_claims_at_their_thresholds():
    # r exactly at the thresholds (0.75, 0.25 are exact binary fractions): >= and <= hold
    traj = _trajectory([0.75, 1.0, 0.25, 0.0], [False, False, True, True])
    clean, noisy = fig2_claims(traj, clean_least=0.75, noisy_most=0.25)
    assert (clean.claim_id, noisy.claim_id) == ("fig2_clean_r_to_one", "fig2_noisy_r_to_zero")
    assert clean.holds and clean.measured == 0.75 and clean.threshold == ">= 0.75"
    assert noisy.holds and noisy.measured == 0.25 and noisy.threshold == "<= 0.25"
    assert clean.figure == noisy.figure == "Fig. 2" and clean.spec == noisy.spec == "BO-fig2"
    assert "r goes to 1" in clean.statement and "r goes to 0" in noisy.statement
    assert clean.reason == "smallest final r over clean samples; d = 300, ||mu|| = 12.5, 120 steps"
    assert noisy.reason == "largest final r over noisy samples; d = 300, ||mu|| = 12.5, 120 steps"
    clean, noisy = fig2_claims(traj, clean_least=0.8, noisy_most=0.2)
    assert not clean.holds and not noisy.holds


def test_fig2_reads_the_relevant_token_by_role():
    """The relevant token is found from the roles, not assumed to be token 0."""
    traj = _trajectory([0.95, 0.05], [False, True])
    clean, noisy = fig2_claims(traj, CLAIMS.fig2_clean_least, CLAIMS.fig2_noisy_most)
    assert clean.measured == 0.95 and noisy.measured == 0.05 and clean.holds and noisy.holds


def _ending(clean_ends: list[int], noisy_ends: list[int]):
    """A trajectory (roles R, W_{Y*}, W_{-Y*}, I, I) whose samples end on the given tokens."""
    ends = clean_ends + noisy_ends
    n, T, steps = len(ends), 5, np.array([0, 40, 90])
    probabilities = np.full((len(steps), n, T), 1 / T)
    probabilities[-1] = 0.05
    probabilities[-1, np.arange(n), ends] = 0.8
    return {
        "probabilities": probabilities,
        "steps": steps,
        "noisy": np.arange(n) >= len(clean_ends),
        "roles": np.tile([RELEVANT, 1, WEAK_OPPOSITE, IRRELEVANT, IRRELEVANT], (n, 1)),
        "d": np.array(700),
        "signal_norm": np.array(7.5),
    }


def test_fig3_claims_count_final_roles():
    panels = {"a": _ending([0], [2]), "b": _ending([0, 0], [4]), "c": _ending([0], [2, 0])}
    claims = {c.claim_id: c for c in fig3_claims(panels)}
    expected = {  # id -> (figure, threshold, measured, words of the statement)
        "fig3a_clean_select_relevant": ("Fig. 3a", "= 1", 1.0, ["benign", "clean", "relevant"]),
        "fig3a_noisy_select_weak_opposite": ("Fig. 3a", ">= 1", 1, ["benign", "noisy", "W_{-Y*}"]),
        "fig3b_noisy_select_irrelevant": ("Fig. 3b", ">= 1", 1, ["harmful", "noisy", "irrelevant"]),
        "fig3c_noisy_fitted_weak_opposite": ("Fig. 3c", ">= 1", 1, ["not overfitting", "noisy", "W_{-Y*}"]),
        "fig3c_noisy_stuck_relevant": ("Fig. 3c", ">= 1", 1, ["not overfitting", "noisy", "relevant"]),
    }
    assert list(claims) == list(expected)
    for claim_id, (figure, threshold, measured, words) in expected.items():
        claim = claims[claim_id]
        assert (claim.figure, claim.threshold, claim.measured, claim.holds) == (figure, threshold, measured, True)
        assert all(word in claim.statement for word in words), claim_id
        assert claim.reason == "d = 700, ||mu|| = 7.5, 90 steps; final argmax roles of the training samples"
    # one clean sample of two on an irrelevant token: a share of 1/2, which fails "= 1"
    half = {c.claim_id: c for c in fig3_claims(panels | {"a": _ending([0, 3], [2])})}
    assert half["fig3a_clean_select_relevant"].measured == 0.5 and not half["fig3a_clean_select_relevant"].holds
    # no noisy sample on the named role: the count is 0 and the claim fails
    none = {
        c.claim_id: c for c in fig3_claims({"a": _ending([0], [0]), "b": _ending([0], [2]), "c": _ending([0], [3])})
    }
    assert [k for k, c in none.items() if not c.holds] == [
        "fig3a_noisy_select_weak_opposite",
        "fig3b_noisy_select_irrelevant",
        "fig3c_noisy_fitted_weak_opposite",
        "fig3c_noisy_stuck_relevant",
    ]
    assert none["fig3b_noisy_select_irrelevant"].measured == 0


def test_all_claims_in_order_with_fig2_from_the_run_of_fig3a():
    panels = {"a": _ending([0], [2]), "b": _ending([0, 0], [4]), "c": _ending([0], [2, 0])}
    panels["b"]["d"] = np.array(4500)
    claims = all_claims(make_grid(), _fig1_frame(SPEC_FIG1), panels, CLAIMS)
    ids = [c.claim_id for c in claims]
    assert ids[:6] == [f"fig1_{scenario}_{split}_accuracy" for scenario, split in SPEC_FIG1]
    assert ids[6:8] == ["fig2_clean_r_to_one", "fig2_noisy_r_to_zero"]
    assert ids[8:13] == [c.claim_id for c in fig3_claims(panels)] and ids[13:] == GRID_IDS
    assert "d = 700," in claims[6].reason  # the run of panel a, not b (d = 4500)


def test_the_rows_say_which_variant_of_eqs_9_and_10_they_check():
    """The spec asks the figure data to say plainly which quantity is the paper's formula and which
    the authors' code: the reasons of the Eq. 9 / 10 rows name it."""
    by_id = claims_of(make_grid())
    for claim_id in ("fig4_eq9_ratio_above_one", "fig6_eq10_ratio_in_band"):
        assert by_id[claim_id].reason.startswith("as defined"), claim_id
    for claim_id in ("fig4_eq9_ratio_above_one_as_coded", "fig6_eq10_ratio_in_band_as_coded"):
        assert by_id[claim_id].reason.startswith("authors' v1"), claim_id
    assert "first logged step" in by_id["fig6_eq10_ratio_in_band_as_coded"].reason
    assert "identity of the authors' running sum" in by_id["fig4_as_coded_is_smaller_class_size"].reason
    qualitative = by_id["fig5_text_balance"]
    assert isinstance(qualitative.reason, str) and "qualitative" in qualitative.reason
    # the as-coded Eq. 10 band has the same upper end
    assert failing(make_grid({(250, 10.0): {"eq10_ratio_as_coded": 2.6}})) == {"fig6_eq10_ratio_in_band_as_coded"}
    assert failing(make_grid({(250, 10.0): {"eq10_ratio_as_coded": 2.5}})) == set()
