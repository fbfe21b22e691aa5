"""Single runs behind Figs. 1-3: the hand-built token selections of Fig. 1 and the recorded
training trajectories of Figs. 2 and 3."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .data import RELEVANT, WEAK_OPPOSITE, cell_seed, head, sample_dataset, signal_coefficients, train_test_generators
from .settings import RunSettings
from .train import GramProblem, train_gram

SCENARIOS = ("benign", "harmful", "not_overfitting")


def fig1_selections(
    d: int, signal_norm: float, n: int, n_test: int, model: RunSettings, scales: dict, seed: int
) -> pd.DataFrame:
    """Fig. 1: hard token selection t = argmax_t x_t . p with p = mu_{+1} + mu_{-1} + c * noise.

    noise = sum over clean i of eps_0^(i) + sum over noisy j of eps_2^(j): the noise of the token
    each training sample should select (R when clean, the opposite-class weak token when noisy).
    One row per (scenario, split, sample): the selected token's coordinates along mu_{-1}
    (``x_minus``) and mu_{+1} (``x_plus``), its label and whether the fixed head gets it right.
    """
    train_rng, test_rng = train_test_generators(cell_seed(seed, d, signal_norm))
    train = sample_dataset(train_rng, n, model.T, d, signal_norm, model.rho, model.eta, model.noise)
    test = sample_dataset(test_rng, n_test, model.T, d, signal_norm, model.rho, 0.0, model.noise)
    signal = np.zeros_like(train.x)
    signal[..., :2] = signal_norm * signal_coefficients(train.clean_y, train.roles, model.rho)
    target = np.where(train.noisy, WEAK_OPPOSITE, RELEVANT)
    target_token = np.argmax(train.roles == target[:, None], axis=1)
    eps = train.x - signal
    noise = eps[np.arange(n), target_token].sum(axis=0)
    nu = head(d, signal_norm)
    frames = []
    for scenario in SCENARIOS:
        p = scales[scenario] * noise
        p[0] += signal_norm
        p[1] += signal_norm
        for split, data in (("train", train), ("test", test)):
            selected = np.argmax(data.x @ p, axis=1)
            tokens = data.x[np.arange(data.n), selected]
            prediction = np.sign(tokens @ nu)
            frames.append(
                pd.DataFrame(
                    {
                        "scenario": scenario,
                        "scale": scales[scenario],
                        "split": split,
                        "sample": np.arange(data.n),
                        "label": data.y,
                        "noisy": data.noisy,
                        "selected_token": selected,
                        "selected_role": data.roles[np.arange(data.n), selected],
                        "x_minus": tokens[:, 1],
                        "x_plus": tokens[:, 0],
                        "correct": prediction == data.y,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def trajectory(d: int, signal_norm: float, seed: int, model: RunSettings, steps: int, record_every: int) -> dict:
    """One training run with every token's probability recorded every ``record_every`` steps.

    Returns arrays for ``np.savez``: probabilities (records, n, T), the recorded steps, labels,
    noise mask and token roles.
    """
    train_rng, _ = train_test_generators(cell_seed(seed, d, signal_norm))
    data = sample_dataset(train_rng, model.n, model.T, d, signal_norm, model.rho, model.eta, model.noise)
    problem = GramProblem.from_data(data)
    run = train_gram(problem.gram[None], problem.gamma[None], problem.y[None], model.lr, steps, record_every)
    return {
        "probabilities": run.trajectory[0],
        "steps": run.record_steps,
        "y": data.y,
        "clean_y": data.clean_y,
        "noisy": data.noisy,
        "roles": data.roles,
        "d": np.array(d),
        "signal_norm": np.array(signal_norm),
    }
