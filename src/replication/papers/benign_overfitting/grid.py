"""The d x ||mu|| grid of Figs. 4-6: independent data per cell, cells trained in small batches."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from . import metrics
from .data import IRRELEVANT, RELEVANT, WEAK_OPPOSITE, cell_seed, sample_gram_data, train_test_generators
from .model import logistic_loss
from .settings import RunSettings
from .train import GramProblem, evaluate, outputs, project_test_set, stack, train_gram

GRID_COLUMNS = [
    "d",
    "signal_norm",
    "seed",
    "steps",
    "train_loss",
    "test_loss",
    "train_accuracy",
    "test_accuracy",
    "eq9_ratio",
    "eq9_ratio_as_coded",
    "eq10_ratio",
    "eq10_ratio_as_coded",
    "eq10_ratio_as_coded_last",
    "n_clean_plus",
    "n_clean_minus",
    "n_noisy",
    "noisy_fitted",
    "noisy_on_weak_opposite",
    "noisy_on_irrelevant",
    "clean_on_relevant",
]


def cell_problem(d: int, signal_norm: float, seed: int, model: RunSettings):
    """Training data of one cell (drawn as its Gram matrix) and the cell's independent test stream."""
    train_rng, test_rng = train_test_generators(cell_seed(seed, d, signal_norm))
    data = sample_gram_data(train_rng, model.n, model.T, d, signal_norm, model.rho, model.eta, model.noise)
    return data, GramProblem.from_gram_data(data), test_rng


def run_cells(
    cells: Iterable[tuple[int, float, int]], model: RunSettings, steps: int, batch_cells: int, progress=None
) -> pd.DataFrame:
    """Train every cell for ``steps`` steps, ``batch_cells`` at a time; one row per cell."""
    rows = []
    cells = list(cells)
    for start in range(0, len(cells), batch_cells):
        batch = cells[start : start + batch_cells]
        built = [cell_problem(d, m, seed, model) for d, m, seed in batch]
        gram, gamma, y = stack([problem for _, problem, _ in built])
        run = train_gram(gram, gamma, y, model.lr, steps)
        rows.extend(_summaries(batch, built, run, model, steps))
        if progress is not None:
            progress.update(len(batch))
    return pd.DataFrame(rows, columns=GRID_COLUMNS)


def _summaries(batch, built, run, model: RunSettings, steps: int) -> list[dict]:
    clean = np.stack([~data.noisy for data, _, _ in built])
    y = np.stack([data.y for data, _, _ in built])
    gamma = np.stack([problem.gamma for _, problem, _ in built])
    train_loss, train_acc = evaluate_from_probabilities(run.final_s, gamma, y)
    ratios = {
        "eq9_ratio": metrics.eq9_ratio(run.pair_sum, clean, y),
        "eq9_ratio_as_coded": metrics.eq9_ratio_as_coded(run.pair_sum, run.last_q, clean, y),
        "eq10_ratio": metrics.eq10_ratio(run.pair_sum, clean, y),
        "eq10_ratio_as_coded": metrics.eq10_ratio_as_coded(run.first_q, clean, y),
        "eq10_ratio_as_coded_last": metrics.eq10_ratio_as_coded_last(run.pair_sum, run.last_q, clean, y),
    }
    roles = np.stack([data.roles for data, _, _ in built])
    chosen = np.take_along_axis(roles, run.final_s.argmax(-1)[..., None], axis=-1)[..., 0]  # role selected
    fitted = y * outputs(run.final_s, gamma) > 0
    plus, minus = metrics.class_masks(clean, y)
    rows = []
    for k, ((d, m, seed), (data, problem, test_rng)) in enumerate(zip(batch, built)):
        u, g, y_test = project_test_set(test_rng, run.a[k], problem, m, model.n_test, model.T, model.rho, model.noise)
        test_loss, test_acc = evaluate(u, g, y_test)
        noisy = data.noisy
        rows.append(
            {
                "d": d,
                "signal_norm": m,
                "seed": seed,
                "steps": steps,
                "train_loss": train_loss[k],
                "test_loss": float(test_loss),
                "train_accuracy": train_acc[k],
                "test_accuracy": float(test_acc),
                **{key: float(value[k]) for key, value in ratios.items()},
                "n_clean_plus": int(plus[k].sum()),
                "n_clean_minus": int(minus[k].sum()),
                "n_noisy": int(noisy.sum()),
                "noisy_fitted": int(fitted[k][noisy].sum()),
                "noisy_on_weak_opposite": int((chosen[k][noisy] == WEAK_OPPOSITE).sum()),
                "noisy_on_irrelevant": int((chosen[k][noisy] == IRRELEVANT).sum()),
                "clean_on_relevant": int((chosen[k][~noisy] == RELEVANT).sum()),
            }
        )
    return rows


def evaluate_from_probabilities(s: np.ndarray, gamma: np.ndarray, y: np.ndarray):
    """Loss and accuracy when the probabilities are already known."""
    margin = y * outputs(s, gamma)
    return logistic_loss(margin).mean(-1), (margin > 0).mean(-1)
