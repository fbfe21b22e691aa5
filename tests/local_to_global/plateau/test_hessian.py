"""The Hessian machinery on a tiny transformer (d = 3, N = 12): the twice-differentiable binary
attention equals the explicit softmax and the model's own forward; Hessian-vector products equal
the full Hessian (torch.autograd.functional.hessian) and finite differences of the gradient; the
Lanczos eigenvalues equal numpy.linalg.eigh of the full Hessian."""

import numpy as np
import pytest
import torch

from helpers import full_hessian, random_transformer_parameters
from replication.papers.local_to_global.plateau.hessian import (
    AttentionOutOfRange,
    FlatParameters,
    HessianOperator,
    binary_attention,
    explicit_attention,
    largest_eigenvalue,
    lowest_eigenpair,
    restricted_matrix,
    transformer_loss,
)
from replication.papers.local_to_global.plateau.spectrum import canonical_basis
from replication.papers.local_to_global.transformer.model import MarkovTransformer, TransformerConfig

D, CONTEXT, BATCH = 3, 12, 4


def tiny_parameters(scale: float, seed: int = 0) -> dict[str, np.ndarray]:
    return random_transformer_parameters(scale, seed, D, CONTEXT)


def tiny_batch(seed: int = 1):
    tokens = torch.randint(0, 2, (BATCH, CONTEXT + 1), generator=torch.Generator().manual_seed(seed))
    return tokens[:, :CONTEXT], tokens[:, 1:]


@pytest.fixture(scope="module")
def point():
    flat = FlatParameters.of(tiny_parameters(scale=0.7))
    x, y = tiny_batch()
    return flat, x, y


@pytest.mark.parametrize("scale", [0.1, 1.0, 2.0])
def test_binary_attention_equals_the_explicit_softmax(scale):
    parameters = {k: torch.as_tensor(v) for k, v in tiny_parameters(scale).items()}
    x, _ = tiny_batch()
    h = x.unsqueeze(-1).double() * parameters["e"] + parameters["p"]
    explicit = explicit_attention(x, h, parameters["W_Q"], parameters["W_K"], parameters["W_V"])
    binary = binary_attention(x, *(parameters[k] for k in ("e", "p", "W_Q", "W_K", "W_V")))
    assert torch.allclose(binary, explicit, rtol=1e-12, atol=1e-12)


def test_scores_beyond_the_float_range_raise_instead_of_giving_a_wrong_answer():
    parameters = {k: torch.as_tensor(v) for k, v in tiny_parameters(scale=8.0).items()}
    x, _ = tiny_batch()
    with pytest.raises(AttentionOutOfRange):
        binary_attention(x, *(parameters[k] for k in ("e", "p", "W_Q", "W_K", "W_V")))


@pytest.mark.parametrize("attention", ["sdpa", "fast"])
def test_the_loss_is_the_models_own(attention):
    parameters = tiny_parameters(scale=0.7)
    model = MarkovTransformer(TransformerConfig(d=D, context=CONTEXT, mlp_ratio=4, attention=attention)).double()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            parameter.copy_(torch.as_tensor(parameters[name]))
    x, y = tiny_batch()
    flat = FlatParameters.of(parameters)
    ours = transformer_loss(flat.unflatten(flat.vector), x, y)
    assert float(ours) == pytest.approx(float(model.loss(x, y).detach()), rel=1e-12)


def test_hessian_vector_products_equal_the_full_hessian_and_finite_differences(point):
    flat, x, y = point
    operator = HessianOperator(lambda theta: transformer_loss(flat.unflatten(theta), x, y), flat.vector)
    hessian = full_hessian(flat, x, y)
    assert np.allclose(hessian, full_hessian(flat, x, y, "explicit"), rtol=1e-9, atol=1e-12)
    assert np.allclose(hessian, hessian.T, atol=1e-12)
    rng = np.random.default_rng(0)
    epsilon = 1e-5
    for _ in range(3):
        v = rng.standard_normal(operator.size)
        product = operator(v)
        assert np.allclose(product, hessian @ v, rtol=1e-9, atol=1e-11)

        def gradient(theta):
            theta = theta.clone().requires_grad_(True)
            return torch.autograd.grad(transformer_loss(flat.unflatten(theta), x, y), theta)[0].numpy()

        shift = torch.as_tensor(epsilon * v)
        central = (gradient(flat.vector + shift) - gradient(flat.vector - shift)) / (2 * epsilon)
        assert np.allclose(product, central, rtol=1e-5, atol=1e-8 * np.abs(product).max())


def test_lanczos_eigenvalues_equal_eigh_of_the_full_hessian(point):
    flat, x, y = point
    operator = HessianOperator(lambda theta: transformer_loss(flat.unflatten(theta), x, y), flat.vector)
    lowest, bottom = lowest_eigenpair(operator, tol=1e-10, seed=0)
    largest = largest_eigenvalue(operator, tol=1e-10, seed=0)
    exact, exact_vectors = np.linalg.eigh(full_hessian(flat, x, y))
    assert exact[0] < 0  # a point with negative curvature: the check has a sign to get right
    assert lowest == pytest.approx(exact[0], rel=1e-7)
    assert largest == pytest.approx(exact[-1], rel=1e-8)
    assert abs(bottom @ exact_vectors[:, 0]) == pytest.approx(1, abs=1e-6)
    assert sum(flat.block_weights(bottom).values()) == pytest.approx(1)


def test_the_canonical_restriction_is_the_projected_full_hessian(point):
    flat, x, y = point
    basis = canonical_basis(flat)
    assert basis.shape == (flat.vector.numel(), 1 + 4 * D + 1)
    assert np.allclose(basis.T @ basis, np.eye(basis.shape[1]), atol=1e-12)
    operator = HessianOperator(lambda theta: transformer_loss(flat.unflatten(theta), x, y), flat.vector)
    hessian = full_hessian(flat, x, y)
    assert np.allclose(restricted_matrix(operator, basis), basis.T @ hessian @ basis, rtol=1e-9, atol=1e-12)


def test_float32_products_give_the_float64_eigenvalues_to_float32_precision():
    """The precision setting (``hessian.dtype``): products in float32, Lanczos in float64, the same
    spectrum as float64 within float32's resolution of the Hessian's largest eigenvalue."""
    parameters = tiny_parameters(scale=0.7)
    x, y = tiny_batch()
    spectra = {}
    for dtype in (torch.float64, torch.float32):
        flat = FlatParameters.of(parameters, dtype=dtype)
        operator = HessianOperator(lambda theta, flat=flat: transformer_loss(flat.unflatten(theta), x, y), flat.vector)
        assert operator(np.ones(flat.vector.numel())).dtype == np.float64
        spectra[dtype] = lowest_eigenpair(operator, tol=1e-8, seed=0)[0], largest_eigenvalue(operator, 1e-8, 0)
    (low64, top64), (low32, top32) = spectra[torch.float64], spectra[torch.float32]
    resolution = float(1e3 * np.finfo(np.float32).eps * abs(top64))
    assert np.allclose(low32, low64, rtol=0, atol=resolution)
    assert top32 == pytest.approx(top64, abs=resolution)
    assert not np.allclose(low32, low64, rtol=0, atol=1e-3 * np.finfo(np.float32).eps * abs(top64))  # float32 it is


def test_the_verdicts_read_the_curvatures_on_held_out_batches():
    """point_spectrum's lambda_min is eigh's on the fitted batches; its curvature is v^T H_b v of that
    eigenvector averaged over the held-out batches, each H_b the full Hessian of one held-out batch;
    AdamW's mode is eigh's of D^-1/2 H D^-1/2 built from the full Hessian and the state's D; the
    verdicts are ``verdict.decide`` of those numbers, not of lambda_min."""
    from replication.papers.local_to_global.markov import MarkovChain
    from replication.papers.local_to_global.plateau.adamw import AdamState, OptimiserView
    from replication.papers.local_to_global.plateau.settings import HeldOutSettings, HessianSettings
    from replication.papers.local_to_global.plateau.spectrum import point_spectrum
    from replication.papers.local_to_global.plateau.verdict import Evidence, decide

    parameters = tiny_parameters(scale=0.7)
    flat = FlatParameters.of(parameters)
    fitted, held_out = [tiny_batch(seed) for seed in (1, 2)], [tiny_batch(seed) for seed in (3, 4, 5)]
    hessian = HessianSettings(
        batches=2, batch_size=BATCH, seed=0, tol=1e-10, significance=2.0, tolerance=1e-3,
        held_out=HeldOutSettings(least=3, most=3), preconditioned=True, dtype="float64",
    )  # fmt: skip
    size = flat.vector.numel()
    v = np.random.default_rng(0).uniform(1e-6, 1e-2, size) ** 2
    decayed = np.arange(size) % 3 > 0
    state = AdamState(v, step=50, lr=1e-3, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1, decayed=decayed)
    rates = np.r_[np.nan, np.full(200, 1e-3)]
    optimiser = OptimiserView(state, rates, step=50, sigma=0.02)
    row, directions = point_spectrum(
        parameters, MarkovChain(0.6, 0.8), fitted, hessian, 0, lambda k: held_out[k], optimiser.escape_rate, optimiser
    )
    per_batch = {id(batch): full_hessian(flat, *batch) for batch in fitted + held_out}  # each batch's once
    full = np.mean([per_batch[id(batch)] for batch in fitted], axis=0)  # equal batches: the union's Hessian
    values, vectors = np.linalg.eigh(full)
    assert row["lambda_min"] == pytest.approx(values[0], rel=1e-6)
    assert row["lambda_max"] == pytest.approx(values[-1], rel=1e-6)
    assert row["held_out_batches"] == 3
    curvatures = [vectors[:, 0] @ per_batch[id(batch)] @ vectors[:, 0] for batch in held_out]
    assert row["curvature"] == pytest.approx(np.mean(curvatures), rel=1e-5)
    assert row["curvature_noise"] == pytest.approx(np.std(curvatures, ddof=1) / np.sqrt(3), rel=1e-5)
    assert row["curvature"] != pytest.approx(row["lambda_min"], rel=1e-3)  # the two estimates differ
    fitted_along = [vectors[:, 0] @ per_batch[id(batch)] @ vectors[:, 0] for batch in fitted]
    evidence = Evidence(values[0], np.std(fitted_along, ddof=1) / np.sqrt(2), np.mean(fitted_along), tuple(curvatures))
    assert row["verdict"] == decide(evidence, 1e-3 * values[-1], 2.0)
    scale = 1 / np.sqrt(np.sqrt(v / (1 - 0.95**50)) + 1e-8)
    preconditioned_values, preconditioned_vectors = np.linalg.eigh(scale[:, None] * full * scale[None, :])
    assert row["mode_lambda_min"] == pytest.approx(preconditioned_values[0], rel=1e-6)
    w = preconditioned_vectors[:, 0]
    modes = [w @ (scale[:, None] * per_batch[id(batch)] * scale[None, :]) @ w for batch in held_out]
    assert row["mode_curvature"] == pytest.approx(np.mean(modes), rel=1e-5)
    assert row["mode_decay"] == pytest.approx(0.1 * np.sum(w[decayed] ** 2), rel=1e-6)
    assert row["mode_rate"] == pytest.approx(-np.mean(modes) - row["mode_decay"], rel=1e-5)
    assert row["mode_tol"] == pytest.approx(np.log(50) / (150 * 1e-3))
    direction = directions["mode"]
    assert abs(direction @ (scale * w) / np.linalg.norm(scale * w)) == pytest.approx(1, abs=1e-6)


def test_block_weights_are_shares_of_any_vectors_squared_norm(point):
    """Shares of the squared norm per block, whatever the vector's length."""
    flat, _, _ = point
    parts = {name: np.zeros(size) for name, size in zip(flat.names, flat.sizes, strict=True)}
    parts["e"][:] = 2.0
    parts["b"][:] = 4.0
    weights = flat.block_weights(np.concatenate([parts[name] for name in flat.names]))
    total = 4.0 * D + 16.0
    assert weights["e"] == pytest.approx(4.0 * D / total) and weights["b"] == pytest.approx(16.0 / total)
    assert sum(weights.values()) == pytest.approx(1.0) and weights["W_1"] == 0.0
