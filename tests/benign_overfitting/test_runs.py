"""The recorded trajectory behind Figs. 2 and 3 at small sizes (fast; the paper-size run is heavy)."""

import numpy as np
import pytest

from helpers import bo_model
from replication.papers.benign_overfitting.data import (
    RELEVANT,
    WEAK_ALIGNED,
    WEAK_OPPOSITE,
    cell_seed,
    sample_dataset,
    train_test_generators,
)
from replication.papers.benign_overfitting.runs import fig1_selections, trajectory

SETTINGS = bo_model(n=8, T=4, lr=0.5)  # the schema's defaults otherwise


def test_trajectory_records_every_token_probability_from_uniform():
    run = trajectory(40, 6.0, 3, SETTINGS, 30, 10)
    np.testing.assert_array_equal(run["steps"], [0, 10, 20, 30])
    probabilities = run["probabilities"]
    assert probabilities.shape == (4, SETTINGS.n, SETTINGS.T)
    np.testing.assert_allclose(probabilities[0], 1 / SETTINGS.T, rtol=1e-12)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-12)
    assert int(run["d"]) == 40 and float(run["signal_norm"]) == 6.0
    # The data are the training set of the cell (seed 3, d 40, ||mu|| 6): its labels, noise and roles.
    rng, _ = train_test_generators(cell_seed(3, 40, 6.0))
    data = sample_dataset(rng, SETTINGS.n, SETTINGS.T, 40, 6.0, SETTINGS.rho, SETTINGS.eta, SETTINGS.noise)
    for key in ("y", "clean_y", "noisy", "roles"):
        np.testing.assert_array_equal(run[key], getattr(data, key))
    # Training moves attention of the clean samples onto their relevant token.
    clean = ~run["noisy"]
    relevant = run["roles"][clean] == RELEVANT
    first, last = probabilities[0][clean][relevant], probabilities[-1][clean][relevant]
    assert last.mean() > first.mean() + 0.05


def test_trajectory_is_deterministic_per_seed():
    one, again, other = (trajectory(40, 6.0, seed, SETTINGS, 10, 5) for seed in (3, 3, 4))
    for key in one:
        np.testing.assert_array_equal(one[key], again[key])
    assert not np.array_equal(one["probabilities"], other["probabilities"])


def test_trajectory_draws_the_paper_noise_model_when_asked():
    model = bo_model(n=12, T=4, lr=0.5, noise="bernoulli")
    run = trajectory(40, 6.0, 3, model, 10, 5)
    rng, _ = train_test_generators(cell_seed(3, 40, 6.0))
    data = sample_dataset(rng, model.n, model.T, 40, 6.0, model.rho, model.eta, "bernoulli")
    for key in ("y", "clean_y", "noisy", "roles"):
        np.testing.assert_array_equal(run[key], getattr(data, key))
    # the paper's variant puts the two weak tokens in random order
    assert (run["roles"][:, 1] == WEAK_OPPOSITE).any() and (run["roles"][:, 1] == WEAK_ALIGNED).any()


@pytest.mark.parametrize("noise", ["exact", "bernoulli"])
def test_fig1_selections_by_a_second_implementation(noise):
    """Fig. 1 recomputed from the cell's data sets: p = mu_+ + mu_- + c (sum of the noise of each
    training sample's target token: R when clean, W_{-Y*} when noisy), t = argmax_t x_t . p."""
    d, norm, n, n_test, seed = 40, 2.0, 12, 10, 2
    model = bo_model(noise=noise, eta=0.25)
    scales = {"benign": 0.06, "harmful": 1.0, "not_overfitting": 0.001}
    frame = fig1_selections(d, norm, n, n_test, model, scales, seed)
    train_rng, test_rng = train_test_generators(cell_seed(seed, d, norm))
    train = sample_dataset(train_rng, n, model.T, d, norm, model.rho, model.eta, noise)
    test = sample_dataset(test_rng, n_test, model.T, d, norm, model.rho, 0.0, noise)
    noise_sum = np.zeros(d)
    for i in range(n):
        own, other = (0, 1) if train.clean_y[i] == 1 else (1, 0)
        if train.noisy[i]:
            token, signal = list(train.roles[i]).index(WEAK_OPPOSITE), model.rho * norm * np.eye(d)[other]
        else:
            token, signal = list(train.roles[i]).index(RELEVANT), norm * np.eye(d)[own]
        noise_sum += train.x[i, token] - signal
    nu = np.zeros(d)
    nu[:2] = np.array([1.0, -1.0]) / (np.sqrt(2) * norm)
    assert len(frame) == 3 * (n + n_test) and list(frame.index) == list(range(len(frame)))
    for scenario, c in scales.items():
        p = c * noise_sum
        p[:2] += norm
        for split, data in (("train", train), ("test", test)):
            rows = frame[(frame.scenario == scenario) & (frame.split == split)]
            selected = np.array([np.argmax(data.x[i] @ p) for i in range(data.n)])
            chosen = data.x[np.arange(data.n), selected]
            np.testing.assert_array_equal(rows["sample"], np.arange(data.n))
            np.testing.assert_array_equal(rows["selected_token"], selected)
            np.testing.assert_array_equal(rows["selected_role"], data.roles[np.arange(data.n), selected])
            np.testing.assert_array_equal(rows["label"], data.y)
            np.testing.assert_array_equal(rows["noisy"], data.noisy)
            np.testing.assert_allclose(rows["x_minus"], chosen[:, 1], rtol=1e-15)
            np.testing.assert_allclose(rows["x_plus"], chosen[:, 0], rtol=1e-15)
            np.testing.assert_array_equal(rows["correct"], np.sign(chosen @ nu) == data.y)
            assert (rows["scale"] == c).all()
    if noise == "bernoulli":
        assert (train.roles[:, 1] == WEAK_OPPOSITE).any()
