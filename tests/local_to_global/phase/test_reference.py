"""The committed phase reference set (figures/reference/phase, the full default grid): its figures'
data agree with each other and with its claims report, and the findings docs/phase-diagram.md
states in words hold in it. A re-blessed set that changes a finding fails here until the words do."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from helpers import ROOT
from replication.claims import cell_holds
from replication.papers.local_to_global.phase.grid import off_the_line

REFERENCE = ROOT / "figures" / "reference" / "phase"


@pytest.fixture(scope="module")
def grid() -> dict:
    return yaml.safe_load((REFERENCE / "settings.yaml").read_text())["settings"]["local_to_global"]["phase"]


@pytest.fixture(scope="module")
def cells() -> pd.DataFrame:
    """One row per (init, p, q): the three heatmap measures side by side."""
    long = pd.read_csv(REFERENCE / "local_to_global" / "phase_heatmaps.csv")
    return long.pivot_table(index=["init", "p", "q"], columns="measure", values="value").reset_index()


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "local_to_global" / "phase_plateau.csv")


@pytest.fixture(scope="module")
def claims() -> pd.DataFrame:
    table = pd.read_csv(REFERENCE / "claims.csv")
    parts = table.claim_id.str.extract(r"^(?P<check>\w+) \((?:p=(?P<p>[\d.]+), q=(?P<q>[\d.]+)|all cells)\)$")
    table = table.join(parts)
    table["p"], table["q"] = table.p.astype(float), table.q.astype(float)
    # A cell's verdict by the rule in force, from its fraction of seeds: the same whichever rule
    # the set was blessed with.
    per_cell = table.p.notna() & (table.kind == "checked")
    table["holds"] = table.holds.where(~per_cell, table.holds_fraction.map(cell_holds))
    return table


def per_cell(claims: pd.DataFrame, kind: str) -> pd.DataFrame:
    return claims[(claims.check == kind) & claims.p.notna()]


def test_the_reference_is_the_whole_default_grid(grid, cells, runs):
    expected = {(p, q) for p in grid["p"] for q in grid["q"] if off_the_line(p, q)}
    assert len(expected) == 72
    for init in grid["inits"]:
        assert set(zip(*cells[cells.init == init][["p", "q"]].values.T)) == expected
        assert len(runs[runs.init == init]) == len(expected) * len(grid["seeds"])
    seeds = len(grid["seeds"])
    for measure in ("on_plateau_window", "on_plateau_horizon"):
        assert set((cells[measure] * seeds).round(9)) <= set(range(seeds + 1))
    assert runs.plateau_length.between(0, grid["horizon"]).all()


def test_the_heatmaps_agree_with_the_runs_they_summarise(grid, cells, runs):
    """Two computations of each cell's fate: the heatmap's fraction on the plateau at the horizon
    and the share of the cell's runs that never escaped (censored) in the plateau scatter."""
    never = runs.groupby(["init", "p", "q"]).censored.mean().rename("never").reset_index()
    joined = cells.merge(never, on=["init", "p", "q"], validate="one_to_one")
    assert (joined.on_plateau_horizon - joined.never).abs().max() < 1e-9
    # Plateaus on the window's far side cannot have ended inside it
    assert (joined.on_plateau_window >= joined.on_plateau_horizon - 1e-9).all()


def test_the_claims_verdicts_are_those_of_the_figure_data(cells, claims):
    """Each cell's fraction of seeds on the plateau in the heatmap data is its claim's fraction, and
    so its verdict; a seed that reached the entropy rate left the plateau."""
    standard = cells[cells.init == "standard"].set_index(["p", "q"])
    for kind, measure in (("5w", "on_plateau_window"), ("5h", "on_plateau_horizon")):
        rows = per_cell(claims, kind).set_index(["p", "q"])
        assert len(rows) == 36
        for cell, row in rows.iterrows():
            assert abs(row.holds_fraction - standard.loc[cell, measure]) < 1e-9, (kind, cell)
            assert bool(row.holds) == cell_holds(standard.loc[cell, measure]), (kind, cell)
    for cell, row in per_cell(claims, "5r").set_index(["p", "q"]).iterrows():
        assert row.holds_fraction <= 1 - standard.loc[cell, "on_plateau_horizon"] + 1e-9, cell


def test_the_findings_in_words_hold(cells, runs, claims):
    """The bullets of docs/phase-diagram.md, "Results at the default grid", one check each."""
    verdict = {kind: per_cell(claims, kind) for kind in ("5w", "5h", "5r", "5o", "6g")}
    # Below the line: the entropy rate in every cell; above: on the plateau at 600 in every cell,
    # and in most cells all seeds leave it by the horizon.
    assert verdict["5r"].holds.all() and verdict["5w"].holds.all()
    assert (~verdict["5h"].holds.astype(bool)).mean() > 0.5
    standard = cells[(cells.init == "standard") & (cells.p + cells.q > 1)]
    stuck = standard[standard.on_plateau_horizon == 1]
    next_to_line = (stuck.p + stuck.q - 1).round(9) <= 0.2
    both_large = stuck[["p", "q"]].min(axis=1) >= 0.7
    assert len(stuck) and (next_to_line | both_large).all() and next_to_line.any() and both_large.any()
    # No candidate orders the plateau lengths: at the line's nearest distance they span from
    # under a third of the horizon to beyond it.
    nearest = runs[(runs.init == "standard") & (runs.side == "p+q>1")]
    nearest = nearest[nearest.switching_distance == nearest.switching_distance.min()]
    assert nearest.censored.any() and nearest.plateau_length.min() < runs.plateau_length.max() / 3
    # Our init above the line: reaches the entropy rate in a majority of cells, and wherever p < q
    # but next to the line; fails in most cells with p > q; where a seed never leaves the plateau,
    # p > q, and the mirrored chain escaped in every seed.
    reached = verdict["5o"].holds.astype(bool)
    assert reached.mean() > 0.5
    failed = verdict["5o"][~reached]
    assert ((failed.p > failed.q) | ((failed.p + failed.q - 1).round(9) <= 0.1)).all()
    assert ((failed.p + failed.q - 1).round(9) <= 0.1).any()
    assert (~reached[verdict["5o"].p > verdict["5o"].q]).mean() > 0.5
    ours = cells[(cells.init == "ours") & (cells.p + cells.q > 1)].set_index(["p", "q"])
    never = ours[ours.on_plateau_horizon > 0]
    assert len(never)
    for p, q in never.index:
        assert p > q and ours.loc[(q, p), "on_plateau_horizon"] == 0, (p, q)
    # Rank one at the end: a minority of cells, all below the line.
    holds = verdict["6g"][verdict["6g"].holds.astype(bool)]
    assert 0 < len(holds) < len(verdict["6g"]) / 2 and (holds.p + holds.q < 1).all()
