"""Claims of the phase diagram on constructed measures: per cell over seeds, unresolvable cells
never pass or fail, the row over the cells."""

import dataclasses

import numpy as np
import pandas as pd

from helpers import l2g_transformer
from replication.contract import BEYOND_THE_PAPER
from replication.papers.local_to_global import PAPER
from replication.papers.local_to_global.phase.claims import FIGURE, phase_claims
from replication.papers.local_to_global.phase.settings import MeasureSettings, PhaseSettings, StopSettings

PHASE = PhaseSettings(
    p=(0.2, 0.8),
    q=(0.3, 0.7),
    inits=("standard", "ours"),
    seeds=(1, 2),
    horizon=1000,
    eval_every=10,
    window=600,
    stop=StopSettings(closed=0.9, patience=100),
    measures=MeasureSettings(escape=0.5, drop=0.5, smooth=5, resolution=10.0),
)
CLAIMS = l2g_transformer({}).claims


def _runs(escapes, reached, shares=0.99, cos=0.95):
    """Two seeds per (cell, init): ``escapes[(p, q, init)]`` their escape iterations (NaN: never)."""
    rows = []
    for (p, q, init), pair in escapes.items():
        for seed, escape in zip((1, 2), pair):
            rows.append(
                {
                    "p": p,
                    "q": q,
                    "init": init,
                    "seed": seed,
                    "escaped": not np.isnan(escape),
                    "escape": escape,
                    "last_step": 1000,
                    "on_plateau_window": bool(np.isnan(escape) or escape > 600),
                    "on_plateau_horizon": bool(np.isnan(escape)),
                    "final_closed": 1.0 if reached[(p, q, init)] else 0.0,
                    "reached": reached[(p, q, init)],
                    "share_W_1": shares,
                    "share_W_V": shares,
                    "cos_e_W_1": cos,
                    "cos_e_W_V": cos,
                }
            )
    return pd.DataFrame(rows)


def _cells(resolvable):
    return pd.DataFrame(
        [
            {
                "p": p,
                "q": q,
                "init": init,
                "side": "p+q>1" if p + q > 1 else "p+q<1",
                "gap": 0.05,
                "noise_gap": 0.002,
                "resolvable": resolvable.get((p, q), True),
            }
            for p, q in ((0.2, 0.3), (0.8, 0.7), (0.8, 0.3))
            for init in ("standard", "ours")
        ]
    )


ESCAPES = {
    (0.2, 0.3, "standard"): (200.0, 250.0),
    (0.2, 0.3, "ours"): (300.0, 300.0),
    (0.8, 0.7, "standard"): (np.nan, 800.0),  # stays through the window, one seed leaves before the horizon
    (0.8, 0.7, "ours"): (100.0, 120.0),
    (0.8, 0.3, "standard"): (np.nan, np.nan),
    (0.8, 0.3, "ours"): (np.nan, np.nan),
}
REACHED = {key: not np.isnan(pair).any() for key, pair in ESCAPES.items()}


def _by_id(claims):
    return {claim.claim_id: claim for claim in claims}


def test_claims_per_cell_and_over_the_cells():
    claims = _by_id(phase_claims(_runs(ESCAPES, REACHED), _cells({(0.8, 0.3): False}), PHASE, CLAIMS))
    window, horizon = claims["5w (p=0.8, q=0.7)"], claims["5h (p=0.8, q=0.7)"]
    assert window.kind == "checked" and window.holds and window.n_runs == 2
    assert horizon.kind == "checked" and not horizon.holds and horizon.holds_fraction == 0.5
    assert 0 < horizon.ci_low < 0.5 < horizon.ci_high < 1
    assert claims["5r (p=0.2, q=0.3)"].holds and claims["5o (p=0.8, q=0.7)"].holds
    # The unresolvable cell: neither a pass nor a fail, whatever its runs did.
    for claim in ("5w", "5h", "5o", "6g"):
        row = claims[f"{claim} (p=0.8, q=0.3)"]
        assert row.kind == "not checkable" and not row.holds and "unresolvable" in row.reason
    over = claims["5h (all cells)"]
    assert over.kind == "checked" and not over.holds and over.n_runs == 1  # one resolvable cell above the line
    assert claims["6g (all cells)"].holds and claims["6g (all cells)"].n_runs == 2
    assert "(p=0.2, q=0.3)" not in " ".join(k for k in claims if k.startswith(("5w", "5h", "5o")))


def test_6g_fails_where_the_weights_are_not_aligned_with_e():
    claims = _by_id(phase_claims(_runs(ESCAPES, REACHED, cos=0.5), _cells({}), PHASE, CLAIMS))
    assert not claims["6g (p=0.2, q=0.3)"].holds and claims["6g (p=0.2, q=0.3)"].measured == 0.99
    assert not claims["6g (all cells)"].holds


def test_no_resolvable_cell_gives_no_verdict_over_the_cells():
    unresolvable = {(0.2, 0.3): False, (0.8, 0.7): False, (0.8, 0.3): False}
    claims = _by_id(phase_claims(_runs(ESCAPES, REACHED), _cells(unresolvable), PHASE, CLAIMS))
    assert all(claim.kind == "not checkable" for claim in claims.values())


def test_every_row_names_the_paper_the_figure_the_cell_and_the_criterion():
    """An unresolvable cell listed first: the cells after it still get their rows."""
    cells = _cells({(0.2, 0.3): False})
    claims = phase_claims(_runs(ESCAPES, REACHED), cells, PHASE, CLAIMS)
    for claim in claims:
        assert (claim.paper, claim.figure, claim.spec) == (PAPER.name, FIGURE, BEYOND_THE_PAPER)
    ids = [claim.claim_id for claim in claims]
    assert ids[:4] == ["6g (p=0.2, q=0.3)", "6g (p=0.8, q=0.7)", "6g (p=0.8, q=0.3)", "6g (all cells)"]
    assert ids[4:] == [
        "5w (p=0.8, q=0.7)", "5w (p=0.8, q=0.3)", "5w (all cells)", "5h (p=0.8, q=0.7)", "5h (p=0.8, q=0.3)",
        "5h (all cells)", "5r (p=0.2, q=0.3)", "5r (all cells)", "5o (p=0.8, q=0.7)", "5o (p=0.8, q=0.3)",
        "5o (all cells)",
    ]  # fmt: skip
    claims = _by_id(claims)
    skipped = claims["6g (p=0.2, q=0.3)"]
    assert skipped.statement.startswith("Standard init, (p, q) = (0.2, 0.3): W_1 and W_V end rank one")
    assert skipped.reason == "unresolvable: gap 0.05 nats against a batch-gap noise of 0.002 (measures.resolution)"
    aligned = claims["6g (p=0.8, q=0.7)"]
    assert aligned.statement.startswith("Standard init, (p, q) = (0.8, 0.7): W_1 and W_V end rank one")
    assert aligned.statement.endswith("(Sec. 5.1: 'the same conclusion holds for all (p, q)').")
    assert (
        aligned.threshold
        == f"min(share W_1, share W_V) >= {CLAIMS.share_fig3} and |cos e| >= {CLAIMS.cos_e} after the last step"
    )
    assert aligned.rule.startswith("per seed; ") and aligned.measured == 0.99
    assert aligned.reason == (
        "seed 1 shares 0.990/0.990, |cos e| 0.95/0.95 (not at the entropy rate); "
        "seed 2 shares 0.990/0.990, |cos e| 0.95/0.95 (not at the entropy rate)"
    )
    over = claims["6g (all cells)"]
    assert over.statement.startswith("Standard init, every resolvable cell (2 of 3): W_1 and W_V")
    assert (over.threshold, over.rule) == (
        "holds in every resolvable cell",
        "per cell (each over its seeds); holds in every cell",
    )
    assert over.reason == (
        "holds in 2 of 2 resolvable cells; 1 unresolvable cells not judged; the cells that fail are the rows above"
    )
    assert (over.measured, over.holds_fraction, over.n_runs) == (1.0, 1.0, 2)


def test_each_prediction_is_judged_at_its_own_iteration_and_measure():
    claims = _by_id(phase_claims(_runs(ESCAPES, REACHED), _cells({}), PHASE, CLAIMS))
    window, horizon = claims["5w (p=0.8, q=0.7)"], claims["5h (p=0.8, q=0.7)"]
    assert "up to iteration 600 (the paper's window)" in window.statement
    assert window.threshold == "closed fraction < 0.5 through iteration 600"
    assert "up to iteration 1000 (the horizon)" in horizon.statement
    assert horizon.threshold == "closed fraction < 0.5 through iteration 1000"
    assert window.measured == 800.0 and np.isnan(claims["5w (p=0.8, q=0.3)"].measured)  # the first escape
    assert window.reason == "escape at seed 1 nan, seed 2 800; NaN: never escaped by 1000"
    reached = claims["5r (p=0.2, q=0.3)"]
    assert reached.threshold == "final closed fraction >= 0.9 (by iteration 1000)"
    assert reached.reason == "final closed fraction seed 1 1.000, seed 2 1.000" and reached.measured == 1.0
    assert claims["5o (p=0.8, q=0.3)"].measured == 0.0  # the least closed seed
    assert claims["6g (p=0.2, q=0.3)"].reason.endswith("seed 2 shares 0.990/0.990, |cos e| 0.95/0.95")  # reached


def test_a_cell_holds_6g_by_its_seeds_each_judged_on_both_weights():
    runs = _runs(ESCAPES, REACHED)
    at = runs.assign(share_W_1=CLAIMS.share_fig3, cos_e_W_V=CLAIMS.cos_e)  # exactly at the thresholds: holds
    assert _by_id(phase_claims(at, _cells({}), PHASE, CLAIMS))["6g (p=0.2, q=0.3)"].holds_fraction == 1.0
    low_share = runs.assign(share_W_V=np.where(runs.seed == 2, 0.5, 0.99))
    low_cos = runs.assign(cos_e_W_1=np.where(runs.seed == 2, 0.1, 0.95))
    for frame in (low_share, low_cos):  # one seed of two fails: half the seeds hold
        assert _by_id(phase_claims(frame, _cells({}), PHASE, CLAIMS))["6g (p=0.2, q=0.3)"].holds_fraction == 0.5


def test_the_claims_do_not_depend_on_the_cells_table_index():
    cells = _cells({})
    shifted = cells.set_axis(cells.index + 10)
    runs = _runs(ESCAPES, REACHED)
    table = [pd.DataFrame(map(dataclasses.asdict, phase_claims(runs, c, PHASE, CLAIMS))) for c in (shifted, cells)]
    pd.testing.assert_frame_equal(*table)


def test_no_resolvable_cell_says_how_many_were_not():
    unresolvable = {(0.2, 0.3): False, (0.8, 0.7): False, (0.8, 0.3): False}
    over = _by_id(phase_claims(_runs(ESCAPES, REACHED), _cells(unresolvable), PHASE, CLAIMS))["6g (all cells)"]
    assert (over.paper, over.figure, over.spec) == (PAPER.name, FIGURE, BEYOND_THE_PAPER)
    assert over.reason == "no resolvable cell (3 unresolvable)"
    assert over.statement.startswith("Standard init, every resolvable cell (0 of 3): W_1")


def test_a_grid_of_the_standard_init_alone_gets_its_6g_rows():
    cells, runs = _cells({}), _runs(ESCAPES, REACHED)
    claims = _by_id(phase_claims(runs[runs.init == "standard"], cells[cells.init == "standard"], PHASE, CLAIMS))
    assert claims["6g (all cells)"].n_runs == 3 and claims["6g (p=0.2, q=0.3)"].kind == "checked"
    assert claims["5o (all cells)"].kind == "not checkable"  # no cell of our init


def test_a_seed_without_a_closed_fraction_reads_nan_in_the_reason():
    runs = _runs(ESCAPES, REACHED)
    undefined = (runs.p == 0.2) & (runs.init == "standard") & (runs.seed == 1)  # 0 / 0: no gap on its batches
    runs.loc[undefined, "final_closed"] = np.nan
    reached = _by_id(phase_claims(runs, _cells({}), PHASE, CLAIMS))["5r (p=0.2, q=0.3)"]
    assert reached.reason == "final closed fraction seed 1 nan, seed 2 1.000"
