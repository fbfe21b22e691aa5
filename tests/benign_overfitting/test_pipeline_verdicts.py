"""In the built smoke tree, every grid heatmap's red outline (its tidy data's ``<column>_claims_hold``)
agrees cell for cell with the claims the tree's settings judge there, and each claim row of the
claims table holds exactly when none of its cells fails."""

from __future__ import annotations

import pandas as pd
import pytest

from replication.papers.benign_overfitting.grid_claims import cell_verdicts
from replication.papers.benign_overfitting.plots import HEATMAPS
from replication.papers.benign_overfitting.settings import settings as benign_settings
from replication.variants import read_record


@pytest.mark.pipeline
def test_outlines_and_claim_rows_agree_in_the_built_tree(smoke_run):
    section = read_record(smoke_run)["settings"]["benign_overfitting"]
    grid = pd.read_csv(smoke_run / "results" / "benign_overfitting" / "grid.csv")
    verdicts = cell_verdicts(grid, benign_settings(section).claims)
    claims = pd.read_csv(smoke_run / "results" / "benign_overfitting" / "claims.csv").set_index("claim_id")
    outlined = 0
    for name, spec in HEATMAPS.items():
        data = pd.read_csv(smoke_run / "figures" / "benign_overfitting" / f"{name}.csv")
        for panel in spec["panels"]:
            flag = f"{panel['column']}_claims_hold"
            on_column = verdicts[verdicts.column == panel["column"]]
            if spec.get("statistic") == "std" or on_column.empty:
                assert flag not in data, (name, flag)  # nothing judges it, nothing is outlined
                continue
            drawn = data.groupby(["d", "signal_norm"])[flag].first().dropna().astype(bool)
            judged = on_column.groupby(["d", "signal_norm"]).holds.all()
            assert drawn.to_dict() == judged.to_dict(), (name, panel["column"])
            outlined += int((~drawn).sum())
    for claim_id, cells in verdicts.groupby("claim_id"):
        assert bool(claims.loc[claim_id, "holds"]) == bool(cells.holds.all()), claim_id
    assert len(verdicts) and outlined == int((~verdicts.groupby(["column", "d", "signal_norm"]).holds.all()).sum())
