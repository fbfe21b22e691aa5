"""The canonical model's prediction over the grid and the checks of it: where it predicts the
standard init (or ours) to stay on the unigram plateau, and which claim judges a cell at which step."""

from __future__ import annotations

from dataclasses import dataclass


def canonical_prediction(init: str, p: float, q: float) -> bool | None:
    """Whether the canonical model predicts ``init`` to stay on the unigram plateau at (p, q):
    standard: p + q > 1 stays (the local minimum), p + q < 1 reaches the entropy rate; ours (region
    I* of Fig. 1): reaches it for p + q > 1, no prediction below the line."""
    above = p + q > 1
    if init == "standard":
        return above
    if init == "ours":
        return False if above else None
    return None


@dataclass(frozen=True)
class PredictionCheck:
    """One claim on the canonical prediction: for the cells where it predicts ``on_plateau`` for
    ``init``, the claim ``claim`` judges at ``step`` ("window" or "horizon") the column ``column``:
    true for a run (measures.csv) that agrees with the prediction; its mean over the seeds is the
    cell's column in cells.csv."""

    claim: str
    init: str
    on_plateau: bool
    step: str
    column: str


PREDICTION_CHECKS = (
    PredictionCheck("5w", "standard", True, "window", "on_plateau_window"),
    PredictionCheck("5h", "standard", True, "horizon", "on_plateau_horizon"),
    PredictionCheck("5r", "standard", False, "horizon", "reached"),
    PredictionCheck("5o", "ours", False, "horizon", "reached"),
)


def prediction_check(init: str, p: float, q: float, step: str) -> PredictionCheck | None:
    """The check that judges the cell (init, p, q) at ``step``; None where the canonical model
    predicts nothing there (the entropy rate is a fate, not a promise for the window)."""
    predicted = canonical_prediction(init, p, q)
    for check in PREDICTION_CHECKS:
        if (check.init, check.on_plateau, check.step) == (init, predicted, step):
            return check
    return None
