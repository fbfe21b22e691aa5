"""One verdict per cell: the phase heatmaps' red outline (their tidy data's ``claim_holds``), the
claim row of that cell and the claims report agree, on a constructed measures table with every
count of seeds agreeing (the committed reference set: test_reference.py)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from replication.claims import cell_holds, write_claims
from replication.claims_report import claims_markdown, merge_claims, summary_line
from replication.papers.local_to_global.phase.claims import phase_claims
from replication.papers.local_to_global.phase.plots import PANEL_STEPS, phase_heatmaps
from replication.papers.local_to_global.phase.prediction import PREDICTION_CHECKS, prediction_check
from replication.papers.local_to_global.phase.tables import summarise_cells

from .test_claims import CLAIMS, PHASE

SEEDS = (1, 2, 3)
# (p, q) -> how many of the three seeds escape before the window, escape between window and
# horizon, and reach the entropy rate: every count from none to all on both sides of the line.
CELLS = {
    (0.8, 0.7): (0, 0, 0),
    (0.9, 0.7): (0, 1, 1),
    (0.7, 0.9): (1, 1, 2),
    (0.9, 0.9): (2, 1, 3),
    (0.2, 0.3): (3, 0, 3),
    (0.3, 0.2): (1, 1, 2),
    (0.1, 0.3): (1, 0, 1),
    (0.3, 0.1): (0, 0, 0),
}


def measures_table() -> pd.DataFrame:
    """measures.csv of the cells above (both inits alike), with the final structure columns."""
    rows = []
    for (p, q), (early, late, reached) in CELLS.items():
        for init in ("standard", "ours"):
            for k, seed in enumerate(SEEDS):
                escape = 300.0 if k < early else 800.0 if k < early + late else np.nan
                rows.append(
                    {
                        "p": p,
                        "q": q,
                        "init": init,
                        "seed": seed,
                        "side": "p+q>1" if p + q > 1 else "p+q<1",
                        "switching_distance": abs(p + q - 1),
                        "gap": 0.05,
                        "noise_gap": 0.002,
                        "escaped": not np.isnan(escape),
                        "escape": escape,
                        "plateau_length": 1000.0 if np.isnan(escape) else escape,
                        "censored": bool(np.isnan(escape)),
                        "last_step": 1000,
                        "on_plateau_window": bool(np.isnan(escape) or escape > PHASE.window),
                        "on_plateau_horizon": bool(np.isnan(escape)),
                        "reached": k < reached,
                        "final_closed": 1.0 if k < reached else 0.3,
                        "final_excess": 0.0,
                        "noise_closed": 0.01,
                        "noise_closed_fixed": 0.01,
                        "steps_run": 1000,
                        "share_W_1": 0.99,
                        "share_W_V": 0.99 if k < reached else 0.5,
                        "cos_e_W_1": 0.95,
                        "cos_e_W_V": 0.95,
                    }
                )
    return pd.DataFrame(rows)


def test_the_outline_the_claim_and_the_report_agree_in_every_cell(tmp_path):
    runs = measures_table()
    cells = summarise_cells(runs, PHASE)
    assert cells.resolvable.all()
    figure, drawn = phase_heatmaps(cells, PHASE.window, PHASE.horizon)
    plt.close(figure)
    claims = phase_claims(runs, cells, PHASE, CLAIMS)
    table = tmp_path / "claims.csv"
    write_claims(claims, table)
    report = merge_claims([table], complete=False)
    by_id = report.set_index("claim_id")
    markdown = claims_markdown(report)

    outlined = drawn[drawn.claim.notna()]
    assert set(outlined.claim) == {check.claim for check in PREDICTION_CHECKS}
    for row in outlined.itertuples():
        reported = by_id.loc[f"{row.claim} (p={row.p:g}, q={row.q:g})"]
        assert bool(reported.holds) is row.claim_holds, (row.claim, row.p, row.q)
        assert cell_holds(reported.holds_fraction) is row.claim_holds
    # Every cell with a prediction at a panel's step has its outline and its claim row, no more.
    for (p, q), _ in CELLS.items():
        for init in ("standard", "ours"):
            for measure, step in PANEL_STEPS.items():
                check = prediction_check(init, p, q, step)
                row = drawn[(drawn.init == init) & (drawn.p == p) & (drawn.q == q) & (drawn.measure == measure)]
                assert (row.claim.iloc[0] if check else None) == (check.claim if check else None)
    # Both the outcomes of the rule occur, and the report counts the rows it judged.
    assert set(outlined.claim_holds) == {True, False}
    assert summary_line(report).replace(". ", ".** ", 1) in markdown
    checked = report[report.kind == "checked"]
    assert f"{int(checked.holds.sum())} of {len(checked)} checked claims hold" in markdown
    red = sum(
        1
        for ax in figure.axes
        for patch in ax.patches
        if not patch.get_fill() and matplotlib.colors.same_color(patch.get_edgecolor(), "red")
    )
    assert red == int((~outlined.claim_holds.astype(bool)).sum())
