"""Claims of the phase diagram on constructed measures: per cell over seeds, unresolvable cells
never pass or fail, the row over the cells."""

import numpy as np
import pandas as pd

from helpers import l2g_transformer
from replication.papers.local_to_global.phase.claims import phase_claims
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
