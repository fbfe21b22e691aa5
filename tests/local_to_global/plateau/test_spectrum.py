"""A point's spectrum on the tiny transformer, against the full Hessian by autograd: the batches are
the cell's own reproducible draws (fitted and held-out from separate streams); the row's loss,
closed gap, gradient against its noise, canonical restriction, fitted bias and block weights are
what their definitions give; ``cell_spectra`` judges every point of a cell with the schedule's
horizon as tolerance and names each direction by seed and step."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch

from helpers import full_hessian
from replication.papers.local_to_global.data import sample_sequences
from replication.papers.local_to_global.plateau.adamw import OptimiserView, learning_rates
from replication.papers.local_to_global.plateau.hessian import FlatParameters, HessianOperator, transformer_loss
from replication.papers.local_to_global.plateau.spectrum import (
    MeanOperator,
    _held_out_batch,
    canonical_basis,
    cell_spectra,
    hessian_batches,
    point_spectrum,
)
from replication.papers.local_to_global.plateau.verdict import Evidence, decide

CONTEXT = 6  # the tiny model's (conftest.py)


def drawn(chain, hessian, count, *stream):
    """The batches the cell's seed gives: one 63-bit seed from (seed, p, q in millionths, stream)."""
    entropy = [hessian.seed, round(chain.p * 1e6), round(chain.q * 1e6), *stream]
    seed = int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0]) // 2
    sequences = sample_sequences(chain, (count, hessian.batch_size), CONTEXT + 1, torch.Generator().manual_seed(seed))
    return [(batch[:, :CONTEXT], batch[:, 1:]) for batch in sequences]


def same_batches(first, second) -> bool:
    return len(first) == len(second) and all(
        torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for a, b in zip(first, second)
    )


def test_the_fitted_and_held_out_batches_are_the_cells_own_draws(tiny_chain, tiny_hessian):
    fitted = hessian_batches(tiny_chain, CONTEXT, tiny_hessian)
    assert len(fitted) == tiny_hessian.batches
    for x, y in fitted:
        assert x.shape == y.shape == (tiny_hessian.batch_size, CONTEXT)
        assert torch.equal(x[:, 1:], y[:, :-1])  # y is x shifted by one: the next symbol
    assert same_batches(fitted, drawn(tiny_chain, tiny_hessian, tiny_hessian.batches))
    held_out = [_held_out_batch(tiny_chain, CONTEXT, tiny_hessian, k) for k in range(3)]
    for k, batch in enumerate(held_out):
        assert same_batches([batch], drawn(tiny_chain, tiny_hessian, 1, 1, k))
        assert not any(torch.equal(batch[0], x) for x, _ in fitted)
    assert not torch.equal(held_out[0][0], held_out[1][0])
    nearby = type(tiny_chain)(tiny_chain.p + 1e-6, tiny_chain.q)  # another cell: other batches
    assert not same_batches(hessian_batches(nearby, CONTEXT, tiny_hessian), fitted)


def test_the_mean_operator_averages_the_batches_products(tiny_parameters, tiny_chain, tiny_hessian, hessian_product):
    parameters = tiny_parameters(0.7, 0)
    flat = FlatParameters.of(parameters)
    batches = hessian_batches(tiny_chain, CONTEXT, tiny_hessian)
    operators = [
        HessianOperator(lambda theta, x=x, y=y: transformer_loss(flat.unflatten(theta), x, y), flat.vector)
        for x, y in batches
    ]
    mean = MeanOperator(operators)
    v = np.random.default_rng(0).standard_normal(mean.size)
    products = [hessian_product(parameters, x, y, v) for x, y in batches]
    assert mean.size == flat.vector.numel()
    assert np.allclose(mean(v), np.mean(products, axis=0), rtol=1e-9, atol=1e-12)
    for product, expected in zip(mean.per_batch(v), products, strict=True):
        assert np.allclose(product, expected, rtol=1e-9, atol=1e-12)
    assert np.allclose(mean.linear_operator().matvec(v), mean(v))
    assert mean.products == 4  # products per batch: two means, one per-batch pass, one matvec


def fitted_gradients(parameters, batches) -> np.ndarray:
    flat = FlatParameters.of(parameters)
    gradients = []
    for x, y in batches:
        theta = flat.vector.clone().requires_grad_(True)
        gradients.append(torch.autograd.grad(transformer_loss(flat.unflatten(theta), x, y), theta)[0].numpy())
    return np.stack(gradients)


def test_the_row_of_a_point_without_the_optimiser(tiny_parameters, tiny_chain, tiny_hessian, hessian_product):
    """The loss and closed gap on the fitted batches, the gradient against its noise, each judged
    direction (the bottom eigenvector and the canonical restriction's) with its fitted spread, bias,
    held-out curvature and verdict, the bottom direction's weights; no AdamW columns."""
    parameters = tiny_parameters(0.7, 0)
    flat = FlatParameters.of(parameters)
    batches = hessian_batches(tiny_chain, CONTEXT, tiny_hessian)
    asked = []

    def held_out_batch(k):
        asked.append(k)
        return _held_out_batch(tiny_chain, CONTEXT, tiny_hessian, k)

    row, directions = point_spectrum(parameters, tiny_chain, batches, tiny_hessian, 0, held_out_batch, 1.0)
    assert set(directions) == {"bottom", "canonical"} and not any(key.startswith("mode") for key in row)
    n = row["held_out_batches"]
    assert asked[:n] == list(range(n)) and tiny_hessian.held_out.least <= n <= tiny_hessian.held_out.most

    losses = [float(transformer_loss(flat.unflatten(flat.vector), x, y)) for x, y in batches]
    assert row["loss"] == pytest.approx(np.mean(losses), rel=1e-12)
    x, y = (torch.cat([b[i] for b in batches]).numpy() for i in (0, 1))
    p, q = tiny_chain.p, tiny_chain.q
    kernel, pi = np.array([[1 - p, p], [q, 1 - q]]), np.array([q, p]) / (p + q)
    own, unigram = -np.mean(np.log(kernel[x, y])), -np.mean(np.log(pi[y]))
    assert row["closed"] == pytest.approx((unigram - np.mean(losses)) / (unigram - own), rel=1e-9)

    gradients = fitted_gradients(parameters, batches)
    noise = np.sqrt(np.sum(np.var(gradients, axis=0, ddof=1)) / len(gradients))
    assert row["gradient_norm"] == pytest.approx(np.linalg.norm(gradients.mean(0)), rel=1e-9)
    assert row["gradient_noise"] == pytest.approx(noise, rel=1e-9)
    assert row["gradient_ratio"] == pytest.approx(row["gradient_norm"] / noise, rel=1e-9)

    fitted = [full_hessian(FlatParameters.of(parameters), *batch) for batch in batches]
    held_out = [_held_out_batch(tiny_chain, CONTEXT, tiny_hessian, k) for k in range(n)]
    full = np.mean(fitted, axis=0)
    values, vectors = np.linalg.eigh(full)
    assert row["lambda_max"] == pytest.approx(values[-1], rel=1e-8)
    tol = 1e-3 * values[-1]
    basis = canonical_basis(flat)
    restricted, restricted_vectors = np.linalg.eigh(basis.T @ full @ basis)
    expected = {"": (values[0], vectors[:, 0]), "canonical_": (restricted[0], basis @ restricted_vectors[:, 0])}
    assert restricted[0] > values[0] + 1e-6  # the restriction sees less than the full model
    for prefix, (value, vector) in expected.items():
        name = "canonical" if prefix else "bottom"
        assert abs(directions[name] @ vector) == pytest.approx(1, abs=1e-6), name
        along = [vector @ h @ vector for h in fitted]
        curvatures = [vector @ hessian_product(parameters, *batch, vector) for batch in held_out]
        assert row[f"{prefix}lambda_min"] == pytest.approx(value, rel=1e-7, abs=1e-12)
        assert row[f"{prefix}noise"] == pytest.approx(np.std(along, ddof=1) / np.sqrt(2), rel=1e-5)
        assert row[f"{prefix}curvature"] == pytest.approx(np.mean(curvatures), rel=1e-6, abs=1e-12)
        assert row[f"{prefix}curvature_noise"] == pytest.approx(np.std(curvatures, ddof=1) / np.sqrt(n), rel=1e-5)
        assert row[f"{prefix}bias"] == pytest.approx(np.mean(curvatures) - np.mean(along), rel=1e-5, abs=1e-12)
        assert row[f"{prefix}tol"] == pytest.approx(tol, rel=1e-8)
        evidence = Evidence(value, np.std(along, ddof=1) / np.sqrt(2), np.mean(along), tuple(curvatures))
        assert row[f"{prefix}verdict"] == decide(evidence, tol, tiny_hessian.significance)
    assert row["canonical_weight"] == pytest.approx(np.sum((basis.T @ vectors[:, 0]) ** 2), rel=1e-6)
    assert 0 < row["canonical_weight"] < 1
    for name, share in flat.block_weights(vectors[:, 0]).items():
        assert row[f"weight_{name}"] == pytest.approx(share, rel=1e-5, abs=1e-9)
    assert isinstance(row["products"], int) and row["products"] > basis.shape[1]


def test_the_canonical_basis_is_the_families_tangent(tiny_parameters):
    """Column 0 moves the embedding along itself and every position by minus half of it (e = s alpha,
    p_n = -s alpha / 2); columns 1..hidden move W_1's row j and W_2's column j along alpha; the last
    moves b."""
    flat = FlatParameters.of(tiny_parameters(0.7, 0))
    parts = flat.unflatten(flat.vector)
    alpha = (parts["e"] / parts["e"].norm()).numpy()
    basis = canonical_basis(flat)
    hidden = parts["W_1"].shape[0]
    assert basis.shape == (flat.vector.numel(), hidden + 2)

    def blocks(column):
        return {name: value.numpy() for name, value in flat.unflatten(torch.as_tensor(column)).items()}

    scale = blocks(basis[:, 0])
    positions = parts["p"].shape[0]
    norm = np.sqrt(1 + positions / 4)
    assert np.allclose(scale["e"], alpha / norm) and np.allclose(scale["p"], -alpha / 2 / norm)
    assert all(not scale[name].any() for name in flat.names if name not in ("e", "p"))
    for j in range(hidden):
        unit = blocks(basis[:, 1 + j])
        w_1, w_2 = np.zeros((hidden, alpha.size)), np.zeros((alpha.size, hidden))
        w_1[j], w_2[:, j] = alpha / np.sqrt(2), alpha / np.sqrt(2)
        assert np.allclose(unit["W_1"], w_1) and np.allclose(unit["W_2"], w_2), j
        assert all(not unit[name].any() for name in flat.names if name not in ("W_1", "W_2"))
    last = blocks(basis[:, -1])
    assert last["b"].tolist() == [1.0] and all(not last[name].any() for name in flat.names if name != "b")


def cell_arrays(parameters_at: dict[int, dict], rates: np.ndarray) -> dict[str, np.ndarray]:
    """Seed 1's checkpoints at the given steps as train_to_points keeps them, AdamW's state beside."""
    arrays = {}
    for step, parameters in parameters_at.items():
        generator = np.random.default_rng(step)
        for name, value in parameters.items():
            arrays[f"seed1/step{step}/{name}"] = value
            arrays[f"seed1/step{step}/exp_avg_sq.{name}"] = generator.uniform(1e-6, 1e-4, value.shape) ** 2
        arrays[f"seed1/step{step}/adam_step"] = np.float64(step)
        arrays[f"seed1/step{step}/adam_lr"] = np.float64(rates[step])
    return arrays


def test_a_cells_point_is_judged_against_the_schedules_horizon(
    tiny_parameters, tiny_chain, tiny_hessian, tiny_run_settings, hessian_product
):
    """With ``tolerance: horizon`` and AdamW's view: the loss' tol and the mode's are the rate that
    grows sigma to 1 over the schedule's remaining learning rates; the optimiser's state is the
    point's own; the row is the point's spectrum on the cell's batches, seeded by the step."""
    hessian = dataclasses.replace(tiny_hessian, tolerance="horizon", preconditioned=True)
    rates = learning_rates(tiny_run_settings)
    step, parameters = 20, tiny_parameters(0.7, 0)
    arrays = cell_arrays({step: parameters}, rates)
    points = pd.DataFrame(
        {"seed": [1], "step": [step], "kind": ["mid"], "drop_end": [10], "escape": [50.0], "on_plateau": [True]}
    )
    frame, directions = cell_spectra(points, arrays, tiny_chain, tiny_run_settings, hessian)
    assert list(frame.columns[:8]) == ["p", "q", "seed", "step", "kind", "drop_end", "escape", "on_plateau"]
    assert set(directions) == {f"seed1/step{step}/{name}" for name in ("bottom", "canonical", "mode")}
    row = frame.iloc[0]
    horizon = math.log(1 / tiny_run_settings.sigma) / np.sum(rates[step + 1 :])
    assert row.tol == pytest.approx(horizon, rel=1e-12) and row.mode_tol == pytest.approx(horizon, rel=1e-12)
    assert (row.lr, row.adam_step) == (pytest.approx(rates[step]), step)
    batches = hessian_batches(tiny_chain, CONTEXT, hessian)
    bottom = directions[f"seed1/step{step}/bottom"]  # an eigenvector of the fitted batches' mean Hessian
    product = np.mean([hessian_product(parameters, *batch, bottom) for batch in batches], axis=0)
    assert np.allclose(product, row.lambda_min * bottom, atol=1e-6 * row.lambda_max)
    own = {key.split("/")[-1]: value for key, value in arrays.items()}
    optimiser = OptimiserView.at(own, FlatParameters.of(parameters), tiny_run_settings, rates, step)
    alone, vectors = point_spectrum(
        parameters, tiny_chain, batches, hessian, hessian.seed + step,
        lambda k: _held_out_batch(tiny_chain, CONTEXT, hessian, k), horizon, optimiser,
    )  # fmt: skip
    # the same computation from the same seeded starts: equal to the last bit
    numbers = {key: value for key, value in alone.items() if not isinstance(value, str)}
    assert {key: row[key] for key in numbers} == pytest.approx(numbers, rel=0, abs=0, nan_ok=True)
    assert all(row[key] == value for key, value in alone.items() if isinstance(value, str))
    for name, vector in vectors.items():
        assert np.array_equal(directions[f"seed1/step{step}/{name}"], vector), name
    # the mode's fitted spread and bias: w^T (D^-1/2 H_b D^-1/2) w over the fitted batches
    scale = 1 / np.sqrt(optimiser.state.preconditioner)
    mode = directions[f"seed1/step{step}/mode"]
    w = mode / scale / np.linalg.norm(mode / scale)
    along = [w @ (scale * hessian_product(parameters, *batch, scale * w)) for batch in batches]
    assert row.mode_noise == pytest.approx(np.std(along, ddof=1) / np.sqrt(len(along)), rel=1e-5)
    assert row.mode_bias == pytest.approx(row.mode_curvature - np.mean(along), rel=1e-5)
    basis = canonical_basis(FlatParameters.of(parameters))
    assert row.mode_canonical_weight == pytest.approx(np.sum((basis.T @ mode) ** 2), rel=1e-9)
    assert 0 < row.mode_canonical_weight < 1


def test_a_cell_without_points_or_optimiser(tiny_parameters, tiny_chain, tiny_hessian, tiny_run_settings):
    """No point: an empty table with the points' columns; without the preconditioned view, no mode;
    the rows in the points' order, each passed to ``progress`` as it is made."""
    empty = pd.DataFrame(columns=["seed", "step", "kind"])
    frame, directions = cell_spectra(empty, {}, tiny_chain, tiny_run_settings, tiny_hessian)
    assert frame.empty and list(frame.columns) == ["p", "q", "seed", "step", "kind"] and directions == {}
    arrays = cell_arrays({30: tiny_parameters(0.7, 0), 10: tiny_parameters(0.6, 1)}, learning_rates(tiny_run_settings))
    points = pd.DataFrame({"seed": [1, 1], "step": [30, 10], "kind": ["fixed", "mid"]})
    seen = []
    frame, directions = cell_spectra(points, arrays, tiny_chain, tiny_run_settings, tiny_hessian, progress=seen.append)
    assert set(directions) == {f"seed1/step{step}/{name}" for step in (30, 10) for name in ("bottom", "canonical")}
    assert list(frame.columns[:5]) == ["p", "q", "seed", "step", "kind"] and "Index" not in frame
    assert frame.p.tolist() == [0.6, 0.6] and frame.q.tolist() == [0.8, 0.8] and frame.kind.tolist() == ["fixed", "mid"]
    assert [row["step"] for row in seen] == [30, 10] and seen[1]["lambda_min"] == frame.lambda_min.iloc[1]
    assert not any(column.startswith("mode") for column in frame.columns) and "lr" not in frame
    assert frame.tol.to_numpy() == pytest.approx(1e-3 * frame.lambda_max.to_numpy())
    assert frame.lambda_min.iloc[0] != frame.lambda_min.iloc[1]  # each point its own parameters


def test_float32_products_give_the_loss_in_float32(tiny_parameters, tiny_chain, tiny_hessian):
    """``dtype: float32``: the point's Hessian, and so its loss, are computed in float32. With tol as
    large as lambda_max, no direction is curved below -tol: a minimum along both."""
    held_out = dataclasses.replace(tiny_hessian.held_out, most=3)
    single = dataclasses.replace(tiny_hessian, dtype="float32", tolerance=1.0, held_out=held_out)
    parameters = tiny_parameters(0.7, 0)
    batches = hessian_batches(tiny_chain, CONTEXT, single)
    row, _ = point_spectrum(
        parameters, tiny_chain, batches, single, 0, lambda k: _held_out_batch(tiny_chain, CONTEXT, single, k), 1.0
    )
    losses = {}
    for dtype in (torch.float32, torch.float64):
        flat = FlatParameters.of(parameters, dtype=dtype)
        losses[dtype] = np.mean([float(transformer_loss(flat.unflatten(flat.vector), x, y)) for x, y in batches])
    assert row["loss"] == pytest.approx(losses[torch.float32], rel=1e-12)
    assert row["loss"] != pytest.approx(losses[torch.float64], rel=1e-12)
    assert (row["verdict"], row["canonical_verdict"]) == ("minimum", "minimum")
