"""The claims on the d x ||mu|| grid (Figs. 3-6 and the accuracy heatmaps), one function each.

Each check says per run whether its claim holds and which grid column it reads: the claim row
judges it per cell over the seeds (``replication.claims.cell_holds``), then over the cells, and the
heatmap of that column outlines the cells that fail (``cell_verdicts``), so the figure and the
report give one verdict per cell. Thresholds and the cells read are the ``claims`` settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from replication.claims import Claim, cell_holds, documentation, not_checkable, over_runs
from replication.contract import BEYOND_THE_PAPER

from . import PAPER
from .settings import ClaimSettings, Published


@dataclass(frozen=True)
class GridCheck:
    """One claim over the runs ``runs`` of the grid: ``inside`` per run whether it holds; ``column``
    the grid column it reads, whose heatmap outlines the cells where it fails."""

    claim_id: str
    figure: str
    statement: str
    column: str
    runs: pd.DataFrame
    inside: pd.Series
    measured: float
    threshold: str
    reason: str
    spec: str = field(kw_only=True)  # the spec claim it reports (Claim.spec)


def _number(value: float) -> str:
    """A published value as the paper writes it: two decimals at least (0.40, 0.645)."""
    return f"{value:.2f}" if round(value, 2) == value else f"{value:g}"


def _published(range_: Published) -> str:
    return "-".join(_number(v) for v in range_.published)


def _in_range(claim_id, figure, statement, runs, column, low, high, *, spec) -> GridCheck:
    """Every run's ``column`` within [low, high]; measured: the extreme value out of it, if any."""
    low, high = round(low, 12), round(high, 12)  # a published value +- its margin, without float residue
    values = runs[column]
    lo, hi = float(values.min()), float(values.max())
    return GridCheck(
        claim_id,
        figure,
        statement,
        column,
        runs,
        values.between(low, high),
        lo if lo < low else hi,
        f"[{low:g}, {high:g}] in every run",
        f"measured range [{lo:.3f}, {hi:.3f}]",
        spec=spec,
    )


def train_loss_in_range(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck:
    published = claims.train_loss
    statement = f"train loss within the published range {_published(published)} (+-{published.margin:g})"
    return _in_range(
        "fig5_train_loss_range", "Fig. 5", statement, grid, "train_loss", *published.judged, spec="BO-fig5"
    )


def test_loss_in_range(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck:
    published = claims.test_loss
    statement = f"test loss within the published range {_published(published)} (+-{published.margin:g})"
    return _in_range("fig5_test_loss_range", "Fig. 5", statement, grid, "test_loss", *published.judged, spec="BO-fig5")


def high_test_loss_at_weakest_signal(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck | None:
    runs = grid[grid.signal_norm == grid.signal_norm.min()]
    if not len(runs):
        return None
    published = claims.smallest_signal_test_loss
    statement = f"test loss high (published ~{_published(published)}) at ||mu|| = {runs.signal_norm.iloc[0]:g}"
    return _in_range(
        "fig5_test_loss_smallest_signal", "Fig. 5", statement, runs, "test_loss", *published.judged, spec="BO-fig5"
    )


def low_test_loss_at_strong_signal(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck | None:
    runs = grid[(grid.signal_norm >= claims.strong_signal) & (grid.d >= claims.strong_d)]
    if not len(runs):
        return None
    most = claims.strong_test_loss
    return GridCheck(
        "fig5_test_loss_low_strong_signal",
        "Fig. 5",
        f"test loss <= {most:g} for ||mu|| >= {claims.strong_signal:g} and d >= {claims.strong_d}",
        "test_loss",
        runs,
        runs.test_loss <= most,
        runs.test_loss.max(),
        f"<= {most:g} in every run",
        "largest test loss",
        spec="BO-fig5",
    )


def accuracy_clear_signal(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck | None:
    runs = grid[grid.signal_norm >= claims.clear_signal]
    if not len(runs):
        return None
    return GridCheck(
        "test_accuracy_one_from_15",
        "beyond (accuracy)",
        f"test accuracy 1.0 for ||mu|| >= {claims.clear_signal:g}",
        "test_accuracy",
        runs,
        runs.test_accuracy == 1.0,
        runs.test_accuracy.min(),
        "= 1 in every run",
        "smallest test accuracy",
        spec=BEYOND_THE_PAPER,
    )


def accuracy_weak_signal(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck | None:
    runs = grid[grid.signal_norm == claims.weak_signal]
    if not len(runs):
        return None
    low, high = claims.weak_test_accuracy
    statement = f"test accuracy ~{_number(low)}-{_number(high)} at ||mu|| = {claims.weak_signal:g}"
    return _in_range(
        "test_accuracy_at_5", "beyond (accuracy)", statement, runs, "test_accuracy", low, high, spec=BEYOND_THE_PAPER
    )


def large_d_memorises(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck | None:
    """Sec. 5 on Fig. 3: where d is large against ||mu||, memorisation dominates: the noisy labels
    are fitted (train accuracy 1) while the test accuracy drops."""
    runs = grid[(grid.signal_norm == grid.signal_norm.min()) & (grid.d >= claims.memorising_d * grid.d.max())]
    if not len(runs):
        return None
    inside = (runs.train_accuracy == 1.0) & (runs.test_accuracy < 1.0)
    return GridCheck(
        "fig3_text_large_d_memorises",
        "Fig. 3 (Sec. 5)",
        f"large d against ||mu|| (||mu|| = {runs.signal_norm.min():g}, d >= {runs.d.min()}): the "
        "noisy labels are fitted and generalisation suffers",
        "test_accuracy",
        runs,
        inside,
        inside.mean(),
        "train accuracy 1 and test accuracy < 1 in every run",
        f"test accuracy {runs.test_accuracy.min():.3f}-{runs.test_accuracy.max():.3f}",
        spec="BO-fig3",
    )


def large_signal_not_fitted(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck | None:
    runs = grid[
        (grid.signal_norm >= claims.hard_signal * grid.signal_norm.max()) & (grid.d <= claims.hard_d * grid.d.min())
    ]
    if not len(runs):
        return None
    inside = runs.train_accuracy < 1.0
    return GridCheck(
        "fig3_text_large_signal_not_fitted",
        "Fig. 3 (Sec. 5)",
        f"large ||mu|| (>= {runs.signal_norm.min():g}, d <= {runs.d.max()}): fitting the noisy data becomes "
        "challenging (some noisy sample not fitted)",
        "train_accuracy",
        runs,
        inside,
        inside.mean(),
        "train accuracy < 1 in every run",
        f"train accuracy {runs.train_accuracy.min():.3f}-{runs.train_accuracy.max():.3f}",
        spec="BO-fig3",
    )


def _share(claim_id, figure, statement, grid, column, inside, reason, *, spec) -> GridCheck:
    share = float(np.mean(inside))
    return GridCheck(claim_id, figure, statement, column, grid, inside, share, "share of runs = 1", reason, spec=spec)


def eq9_above_one(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck:
    statement = f"Eq. 9 ratio > {claims.eq9_least:g} in all cells and runs (as defined)"
    reason = "as defined: min_c class sum of accumulated S / max accumulated s(1-s)"
    inside = grid.eq9_ratio > claims.eq9_least
    return _share("fig4_eq9_ratio_above_one", "Fig. 4", statement, grid, "eq9_ratio", inside, reason, spec="BO-fig4")


def eq9_above_one_as_coded(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck:
    statement = f"Eq. 9 ratio > {claims.eq9_least:g} in all cells (as coded)"
    inside = grid.eq9_ratio_as_coded > claims.eq9_least
    return _share(
        "fig4_eq9_ratio_above_one_as_coded",
        "Fig. 4 (as coded)",
        statement,
        grid,
        "eq9_ratio_as_coded",
        inside,
        "authors' v1 running-sum quantity",
        spec="BO-fig4",
    )


def eq10_in_band(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck:
    low, high = claims.eq10_band
    statement = f"Eq. 10 normalised ratio within {low:g}-{high:g} in all cells (as defined)"
    inside = grid.eq10_ratio.between(low, high)
    return _share(
        "fig6_eq10_ratio_in_band", "Fig. 6", statement, grid, "eq10_ratio", inside, "as defined", spec="BO-fig6"
    )


def eq10_in_band_as_coded(grid: pd.DataFrame, claims: ClaimSettings) -> GridCheck:
    low, high = claims.eq10_band
    statement = f"Eq. 10 normalised ratio within {low:g}-{high:g} in all cells (as coded)"
    return _share(
        "fig6_eq10_ratio_in_band_as_coded",
        "Fig. 6 (as coded)",
        statement,
        grid,
        "eq10_ratio_as_coded",
        grid.eq10_ratio_as_coded.between(low, high),
        "authors' v1 quantity, first logged step",
        spec="BO-fig6",
    )


# In the order of the claims table.
GRID_CHECKS: tuple[Callable[[pd.DataFrame, ClaimSettings], GridCheck | None], ...] = (
    train_loss_in_range,
    test_loss_in_range,
    high_test_loss_at_weakest_signal,
    low_test_loss_at_strong_signal,
    accuracy_clear_signal,
    accuracy_weak_signal,
    large_d_memorises,
    large_signal_not_fitted,
    eq9_above_one,
    eq9_above_one_as_coded,
    eq10_in_band,
    eq10_in_band_as_coded,
)


def grid_checks(grid: pd.DataFrame, claims: ClaimSettings) -> list[GridCheck]:
    """The checks whose cells the grid has."""
    return [check for check in (make(grid, claims) for make in GRID_CHECKS) if check is not None]


def per_cell(check: GridCheck) -> pd.DataFrame:
    """One row per cell the check reads: d, signal_norm, the fraction of its seeds in which the
    claim holds and the cell's verdict over them."""
    fraction = check.inside.astype(bool).groupby([check.runs.d, check.runs.signal_norm]).mean()
    return fraction.rename("holds_fraction").reset_index().assign(holds=lambda f: f.holds_fraction.map(cell_holds))


def cell_verdicts(grid: pd.DataFrame, claims: ClaimSettings) -> pd.DataFrame:
    """Per check and cell read: claim_id, column, d, signal_norm, holds_fraction, holds."""
    frames = [
        per_cell(check).assign(claim_id=check.claim_id, column=check.column) for check in grid_checks(grid, claims)
    ]
    return pd.concat(frames, ignore_index=True)


def _listed(cells: pd.DataFrame) -> str:
    if not len(cells):
        return ""
    shown = "; ".join(f"({int(r.d)}, {r.signal_norm:g})" for r in cells.head(6).itertuples())
    return f" [{shown}{' ...' if len(cells) > 6 else ''}]"


def _claim(check: GridCheck, steps: str) -> Claim:
    """The claim row of a check: holds when every cell it reads holds; the fraction and its
    interval over every run; the note lists the failing cells by how many seeds fail."""
    cells = per_cell(check)
    stats = over_runs(check.inside)
    stats["holds"] = bool(len(cells) and cells.holds.all())
    stats["rule"] = (
        f"every cell in a majority of its seeds ({check.runs.seed.nunique()} per cell); fraction over all runs"
    )
    always = cells[cells.holds_fraction == 0]
    mostly = cells[~cells.holds & (cells.holds_fraction > 0)]
    sometimes = cells[cells.holds & (cells.holds_fraction < 1)]
    note = (
        f"{len(cells)} cells: {len(always)} fail in every seed{_listed(always)}, {len(mostly)} in half or more"
        f"{_listed(mostly)}, {len(sometimes)} in a minority of seeds only (seed noise){_listed(sometimes)}"
    )
    reason = f"{check.reason}; {note}; {steps}"
    return Claim(
        PAPER.name,
        check.claim_id,
        check.figure,
        check.statement,
        float(check.measured),
        check.threshold,
        reason=reason,
        spec=check.spec,
        **stats,
    )


def class_size_identity(grid: pd.DataFrame, claims: ClaimSettings) -> Claim:
    """As coded, the Eq. 9 value is the smaller clean-class size: an identity, kept as documentation."""
    tolerance = claims.class_size_tolerance
    smaller_class = np.minimum(grid.n_clean_plus, grid.n_clean_minus)
    identity = (grid.eq9_ratio_as_coded - smaller_class).abs() < tolerance
    return documentation(
        PAPER.name,
        "fig4_as_coded_is_smaller_class_size",
        "Fig. 4 (as coded)",
        f"as coded, the Eq. 9 value is the smaller clean-class size (within {tolerance:g})",
        float(identity.mean()),
        "share = 1",
        bool(identity.all()),
        f"explains the published integers 2..8; share of {len(grid)} runs",
        "an identity of the authors' running sum, not a result of training",
        spec="BO-fig4",
    )


def grid_claims(grid: pd.DataFrame, claims: ClaimSettings) -> list[Claim]:
    """The grid's claim rows: each check judged over every run (cell x seed), the as-coded identity
    after the Eq. 9 rows, and the sentence on the balance of d and ||mu|| (not checkable)."""
    steps = f"{int(grid.steps.iloc[0])} steps"
    rows = []
    for check in grid_checks(grid, claims):
        rows.append(_claim(check, steps))
        if check.claim_id == "fig4_eq9_ratio_above_one_as_coded":
            rows.append(class_size_identity(grid, claims))
    rows.append(
        not_checkable(
            PAPER.name,
            "fig5_text_balance",
            "Fig. 5 (Sec. 5)",
            "The balance between the dimension and the signal norm is significant for achieving low train and "
            "test loss.",
            "qualitative; the heatmaps (fig5, seed_spread) show the losses over the grid, the range rows check them",
            spec="BO-fig5",
        )
    )
    return rows
