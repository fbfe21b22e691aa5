"""AdamW's view of the plateau: the state kept at the points is the optimiser's own, the schedule's
learning rates are the run's, and the linearised step's prediction holds where its assumptions do:
torch's AdamW on a noisy quadratic saddle grows its unstable mode at eta (|mu| - wd_v) per step,
mu the preconditioned Hessian's lowest eigenvalue, momentum's small correction included."""

import dataclasses

import numpy as np
import pytest
import torch

from helpers import small_run_settings
from replication.papers.local_to_global.plateau.adamw import (
    AdamState,
    OptimiserView,
    PreconditionedOperator,
    learning_rates,
    momentum_gain,
    predicted_escape,
    predicted_slope,
)
from replication.papers.local_to_global.plateau.hessian import (
    FlatParameters,
    HessianOperator,
    largest_eigenvalue,
    transformer_loss,
)
from replication.papers.local_to_global.transformer.optimizers import AdamW
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import train


@pytest.fixture(scope="module")
def small_run():
    settings = run_settings({**small_run_settings(), "steps": 30, "eval_every": 10, "checkpoints": [10, 30]})
    return settings, train(settings, "standard", seed=1, progress=False, optimizer_state=True)


def test_the_points_keep_the_optimisers_own_state(small_run):
    """Training again to step 30 and reading torch's AdamW state there gives the checkpoint's."""
    settings, result = small_run
    assert result.checkpoints["adam_step"].tolist() == [10.0, 30.0]
    lrs = result.losses.set_index("step").lr
    assert result.checkpoints["adam_lr"].tolist() == pytest.approx([lrs[10], lrs[30]])
    again = dataclasses.replace(settings, steps=30, checkpoints=(30,))
    from replication.papers.local_to_global.transformer import train as training

    captured = {}
    original = training.optimizer_snapshot

    def spy(optimizer, model, lr):
        captured.update({name: optimizer.state[p]["exp_avg_sq"].clone() for name, p in model.named_parameters()})
        return original(optimizer, model, lr)

    training.optimizer_snapshot = spy
    try:
        train(again, "standard", seed=1, progress=False, optimizer_state=True)
    finally:
        training.optimizer_snapshot = original
    for name, value in captured.items():
        assert np.array_equal(result.checkpoints[f"exp_avg_sq.{name}"][1], value.numpy())


def test_the_learning_rates_are_the_runs(small_run):
    settings, result = small_run
    rates = learning_rates(settings)
    assert np.isnan(rates[0])
    assert rates[1:] == pytest.approx(result.losses.lr.to_numpy()[1:], rel=1e-12)
    constant = dataclasses.replace(
        settings,
        optimizer=dataclasses.replace(settings.optimizer, lr=0.05),
        schedule=dataclasses.replace(settings.schedule, name="constant"),
    )
    assert learning_rates(constant)[1:].tolist() == [0.05] * settings.steps  # the run's own lr, every step


def test_the_state_reads_back_in_the_flat_order(small_run):
    settings, result = small_run
    parameters = {name: values[1] for name, values in result.checkpoints.items() if name != "step"}
    flat = FlatParameters.of(parameters)
    state = AdamState.of(parameters, flat, settings)
    assert state.step == 30 and state.exp_avg_sq.size == flat.vector.numel()
    first = flat.names[0]
    assert state.exp_avg_sq[: flat.sizes[0]] == pytest.approx(parameters[f"exp_avg_sq.{first}"].reshape(-1))
    decayed_names = {n for n in flat.names if n not in settings.optimizer.no_decay}
    assert int(state.decayed.sum()) == sum(s for n, s in zip(flat.names, flat.sizes) if n in decayed_names)
    assert state.exp_avg_sq.dtype == np.float64  # D in double precision, as the preconditioned operator
    assert state.lr == float(parameters["adam_lr"]) and state.lr > 0
    assert (state.beta1, state.beta2) == tuple(settings.optimizer.betas)
    assert state.weight_decay == settings.optimizer.weight_decay > 0
    # the run's AdamW is built without an eps (train.make_optimizer): torch.optim.AdamW's default is its own
    assert state.eps == AdamW([], lr=1e-3, betas=(0.9, 0.95)).eps == torch.optim.AdamW([torch.zeros(1)]).defaults["eps"]


def test_closed_forms():
    rates = np.r_[np.nan, np.full(1000, 2e-3)]
    assert predicted_escape(5.0, rates, 100, np.exp(-3)) == pytest.approx(100 + 3 / (2e-3 * 5), abs=1)
    assert predicted_slope(5.0, 2e-3) == pytest.approx(100.0)
    assert np.isinf(predicted_escape(1e-4, rates, 0, 0.01))  # too slow for the schedule
    assert momentum_gain(1.0, 1e-4, 0.9) == pytest.approx(1.0, abs=1e-3)  # a slow mode: momentum is moot
    assert momentum_gain(50.0, 1e-2, 0.9) < 0.8  # a fast one: it lags


def test_adamw_grows_the_preconditioned_unstable_mode_at_the_predicted_rate():
    """A quadratic saddle with gradient noise of a different scale per coordinate (so v_hat, and D,
    are set by the noise and differ by 50x) and decoupled weight decay on some coordinates, in 1000
    independent copies (torch's AdamW acts element by element): started near the saddle along w, the
    lowest eigenvector of D^-1/2 H D^-1/2, the copies' mean grows along w at eta (|mu| - wd_v) per
    step times momentum's gain, within 5%; plain gradient descent's rate is far off. The amplitude
    stays small against the noise, so v_hat stays put: the prediction's own assumption."""
    rng = np.random.default_rng(0)
    size, copies, lr, weight_decay = 6, 1000, 1e-3, 0.5
    rotation, _ = np.linalg.qr(np.eye(size) + 0.05 * rng.standard_normal((size, size)))
    hessian = rotation @ np.diag([-0.04, 1.0, 2.0, 0.5, 3.0, 1.5]) @ rotation.T
    noise = np.array([0.02, 0.5, 1.0, 0.1, 0.05, 0.3])
    decayed = torch.as_tensor([True, False, True, True, False, True])
    x = torch.zeros(copies, size, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.AdamW([x], lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    generator = torch.Generator().manual_seed(1)
    h, scales = torch.as_tensor(hessian), torch.as_tensor(noise)

    def step():
        optimizer.zero_grad()
        x.grad = x.detach() @ h.T + scales * torch.randn(copies, size, generator=generator, dtype=torch.float64)
        optimizer.step()
        with torch.no_grad():  # decoupled weight decay on the decayed coordinates only
            x[:, decayed] *= 1 - lr * weight_decay

    for _ in range(300):  # v_hat settles on the noise
        step()
    v = optimizer.state[x]["exp_avg_sq"].numpy().mean(0)
    state = AdamState(v, 300, lr, 0.9, 0.95, 1e-8, weight_decay, decayed.numpy())
    scale = 1 / np.sqrt(state.preconditioner)
    values, vectors = np.linalg.eigh(scale[:, None] * hessian * scale[None, :])
    mu, w = values[0], vectors[:, 0]
    rate = -mu - state.decay_share(w)
    assert 1.0 < -mu < 3.0  # unstable for AdamW, although the raw Hessian alone would grow 40 times slower
    with torch.no_grad():
        x.copy_(torch.as_tensor(0.01 * w / scale).expand(copies, size))  # along the mode: D^-1/2 w
    amplitude = []
    for _ in range(1500):
        step()
        amplitude.append(float(np.mean(x.detach().numpy() / scale @ w)))
    t = np.arange(len(amplitude))
    measured = np.polyfit(t[300:], np.log(amplitude[300:]), 1)[0]
    predicted = np.log1p(lr * rate) * momentum_gain(rate, lr, 0.9)
    assert measured == pytest.approx(predicted, rel=0.05)
    raw = -np.linalg.eigvalsh(hessian)[0]
    assert abs(measured - lr * raw) > 0.5 * measured  # plain gradient descent's rate is not AdamW's


def test_the_horizon_rate_grows_sigma_to_one_by_the_end_of_the_schedule():
    """horizon_rate: a mode at exactly this rate reaches amplitude 1 from sigma on the schedule's last
    step (predicted_escape, an independent sum), a slightly slower one never; the loss' tolerance is it
    under ``tolerance: horizon`` and the stated fraction of lambda_max otherwise."""
    from replication.papers.local_to_global.plateau.adamw import horizon_rate, predicted_escape
    from replication.papers.local_to_global.plateau.settings import HeldOutSettings, HessianSettings

    rates = np.r_[np.nan, np.linspace(1e-3, 2e-4, 400)]
    rate = horizon_rate(rates, 100, 0.02)
    assert predicted_escape(rate * (1 + 1e-9), rates, 100, 0.02) == 400
    assert predicted_escape(rate * (1 - 1e-6), rates, 100, 0.02) == np.inf
    common = dict(batches=1, batch_size=1, seed=0, tol=1e-3, significance=3.0, dtype="float32", preconditioned=False)
    held_out = HeldOutSettings(least=2, most=2)
    horizon = HessianSettings(**common, tolerance="horizon", held_out=held_out)
    fraction = HessianSettings(**common, tolerance=1e-4, held_out=held_out)
    assert horizon.loss_tolerance(50.0, rate) == rate
    assert fraction.loss_tolerance(50.0, rate) == pytest.approx(5e-3)


def preconditioned_point(parameters, batch):
    flat = FlatParameters.of(parameters)
    hessian = HessianOperator(lambda theta: transformer_loss(flat.unflatten(theta), *batch), flat.vector)
    size = flat.vector.numel()
    v = np.random.default_rng(0).uniform(1e-4, 1e-2, size) ** 2
    state = AdamState(v, 40, 1e-3, 0.9, 0.95, 1e-8, 0.1, np.arange(size) % 2 == 0)
    return hessian, state


def test_the_preconditioned_operator_takes_any_shape_of_vector_and_counts_only_its_products(
    tiny_parameters, tiny_chain, tiny_hessian
):
    """D^-1/2 H D^-1/2 x for x flat or as a column; making its linear operator for Lanczos costs no
    Hessian-vector product (the count is what the eigensolvers spent)."""
    from replication.papers.local_to_global.plateau.spectrum import hessian_batches

    batch = hessian_batches(tiny_chain, 6, tiny_hessian)[0]
    hessian, state = preconditioned_point(tiny_parameters(0.7, 0), batch)
    operator = PreconditionedOperator(hessian, state)
    operator.linear_operator()
    hessian.linear_operator()
    assert hessian.products == 0
    x = np.random.default_rng(1).standard_normal(operator.size)
    scale = 1 / np.sqrt(np.sqrt(state.exp_avg_sq / (1 - 0.95**40)) + 1e-8)
    flat_product = operator(x)
    assert np.allclose(flat_product, scale * hessian(scale * x))
    assert np.array_equal(operator(x[:, None]), flat_product)
    assert hessian.products == 3
    assert np.array_equal(hessian(x[:, None]), hessian(x))  # the Hessian's own products flatten too
    # Lanczos from the seeded start: the same eigenvalue to the last bit on every call
    assert largest_eigenvalue(hessian, 1e-6, 0) == largest_eigenvalue(hessian, 1e-6, 0)


def test_the_bias_corrections_and_the_momentums_gain_are_the_points_own():
    state = AdamState(np.ones(4), 10, 2e-3, 0.8, 0.9, 1e-8, 0.1, np.array([True, False, True, False]))
    view = OptimiserView(state, np.r_[np.nan, np.full(50, 2e-3)], step=10, sigma=0.02)
    w = np.array([0.6, 0.0, 0.0, 0.8])
    rates = view.rates(-3.0, w)
    assert rates["bias_correction_m"] == pytest.approx(1 / (1 - 0.8**10))
    assert rates["bias_correction_v"] == pytest.approx(1 / (1 - 0.9**10))
    assert rates["mode_decay"] == pytest.approx(0.1 * 0.36) and rates["mode_rate"] == pytest.approx(3.0 - 0.036)
    assert rates["momentum_gain"] == pytest.approx(momentum_gain(3.0 - 0.036, 2e-3, 0.8))
    assert (rates["lr"], rates["adam_step"]) == (2e-3, 10)
