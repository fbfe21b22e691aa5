"""One verdict per cell: a grid heatmap's red outline (its tidy data's ``<column>_claims_hold``), the
claim rows judged on that column and the claims report agree, with cells failing in none, a
minority, a half and all of their seeds."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from helpers import squeeze_markdown
from replication.claims import write_claims
from replication.claims_report import claims_markdown, merge_claims
from replication.papers.benign_overfitting import plots
from replication.papers.benign_overfitting.grid_claims import cell_verdicts, grid_claims

from .test_claims import CLAIMS, make_grid

SEEDS = (1, 2, 3, 4)
CHANGES = {
    **{(250, 5.0, seed): {"eq9_ratio": 0.5} for seed in SEEDS},  # every seed: fails
    **{(500, 10.0, seed): {"eq9_ratio": 0.5} for seed in (1, 2)},  # half: fails
    (750, 15.0, 3): {"eq9_ratio": 0.5},  # one of four: holds
    (750, 40.0, 1): {"test_loss": 0.5},  # one of four: holds
    **{(1000, 80.0, seed): {"test_loss": 0.5} for seed in (1, 2, 3)},  # three of four: fails
    **{(500, 15.0, seed): {"test_accuracy": 0.99} for seed in (2, 3, 4)},  # fails
}


def red_boxes(figure) -> list[int]:
    """Red outlines per axis of the figure."""
    return [
        sum(1 for p in ax.patches if not p.get_fill() and matplotlib.colors.same_color(p.get_edgecolor(), "red"))
        for ax in figure.axes
    ]


def test_the_outline_the_claim_and_the_report_agree_in_every_cell(tmp_path):
    grid = make_grid(CHANGES, SEEDS)
    verdicts = cell_verdicts(grid, CLAIMS)
    claims = grid_claims(grid, CLAIMS)
    table = tmp_path / "claims.csv"
    write_claims(claims, table)
    report = merge_claims([table], complete=False)
    own = report.claim_id.str.extract(r"\((\w+)\)$")[0].fillna(report.claim_id)
    reported = dict(zip(own, report.holds))
    markdown = claims_markdown(report)

    drawn = {}
    for name, spec in plots.HEATMAPS.items():
        if spec.get("statistic") == "std":
            continue
        figure, data = plots.grid_figure(grid, name, verdicts)
        boxes = red_boxes(figure)
        plt.close(figure)
        for panel, count in zip(spec["panels"], boxes):  # the heatmap axes come before the colour bars
            column = panel["column"]
            flags = data.groupby(["d", "signal_norm"])[f"{column}_claims_hold"].first().dropna()
            drawn[column] = flags
            assert count == int((~flags.astype(bool)).sum()), (name, column)

    failing_cells = {}
    for row in verdicts.itertuples():
        # The heatmap of the claim's column marks the cell failed when this claim fails there.
        if not row.holds:
            assert not drawn[row.column][(row.d, row.signal_norm)], (row.claim_id, row.d, row.signal_norm)
            failing_cells.setdefault(row.claim_id, []).append((row.d, row.signal_norm))
    for column, flags in drawn.items():
        on_column = verdicts[verdicts.column == column]
        assert (flags == on_column.groupby(["d", "signal_norm"]).holds.all()).all(), column
    for claim in claims:
        if claim.kind != "checked":
            continue
        assert claim.holds == (claim.claim_id not in failing_cells), claim.claim_id
        assert bool(reported[claim.claim_id]) == claim.holds, claim.claim_id
    assert set(failing_cells) == {
        "fig4_eq9_ratio_above_one",
        "fig5_test_loss_low_strong_signal",
        "test_accuracy_one_from_15",
    }
    assert sorted(failing_cells["fig4_eq9_ratio_above_one"]) == [(250, 5.0), (500, 10.0)]
    checked = report[report.kind == "checked"]
    assert f"{int(checked.holds.sum())} of {len(checked)} checked claims hold" in markdown
    assert squeeze_markdown(markdown).count("| **fails** |") == len(checked) - int(checked.holds.sum())
