"""The fused loss of the fast path (fused_loss.py) is the plain forward's loss and its gradients.

Against autograd through ``model.logits`` and PyTorch's binary cross-entropy: float64 to 1e-10
relative for every parameter, contexts that fill part of a tile, one tile and several; float32
to float rounding; finite differences (gradcheck); evaluation without gradients; a few training
steps give the same losses. A perturbed output of the kernel fails the comparison.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import small_run_settings
from replication.papers.local_to_global.transformer import fused_loss as fused
from replication.papers.local_to_global.transformer import model as model_module
from replication.papers.local_to_global.transformer.model import (
    INITS,
    MarkovTransformer,
    TransformerConfig,
    initialise,
    logits,
    loss,
)
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import train

RTOL = 1e-10
CONTEXTS = (1, 7, fused.TILE, 300)  # part of a tile, exactly one, several with a partial last one


def _parameters(init, context, dtype=torch.float64, sigma=0.3, seed=0):
    model = MarkovTransformer(TransformerConfig(d=8, context=context, mlp_ratio=4, attention="fast"))
    model = initialise(model, init, sigma, torch.Generator().manual_seed(seed), "input").to(dtype)
    return dict(model.named_parameters())


def _data(batch, length, seed):
    tokens = torch.randint(0, 2, (batch, length + 1), generator=torch.Generator().manual_seed(seed))
    return tokens[:, :-1], tokens[:, 1:]


def _plain_loss(parameters, x, y):
    """The definition: the shared forward, then PyTorch's binary cross-entropy."""
    return F.binary_cross_entropy_with_logits(logits(parameters, x, "fast"), y.to(parameters["e"].dtype))


def _loss_and_gradients(loss_function, parameters, x, y):
    value = loss_function(parameters, x, y)
    return value.detach(), torch.autograd.grad(value, list(parameters.values()))


def _largest_relative_error(parameters, x, y):
    """max over the loss and every parameter's gradient of |fused - plain| / max |plain|, floored at
    1e-5 of the largest gradient (one that is zero in exact arithmetic, such as W_Q's with one
    position, is rounding noise in both)."""
    fused_value, fused_grads = _loss_and_gradients(lambda P, x, y: loss(P, x, y, "fast"), parameters, x, y)
    plain_value, plain_grads = _loss_and_gradients(_plain_loss, parameters, x, y)
    errors = {"loss": ((fused_value - plain_value).abs() / plain_value.abs()).item()}
    floor = 1e-5 * max(grad.abs().max().item() for grad in plain_grads)
    for name, fused_grad, plain_grad in zip(parameters, fused_grads, plain_grads):
        errors[name] = (fused_grad - plain_grad).abs().max().item() / max(plain_grad.abs().max().item(), floor)
    return max(errors.values()), errors


@pytest.mark.parametrize("init", INITS)
@pytest.mark.parametrize("length", CONTEXTS)
def test_loss_and_gradients_equal_the_plain_forward_in_float64(init, length):
    error, errors = _largest_relative_error(_parameters(init, length), *_data(3, length, seed=length))
    assert error < RTOL, errors


def test_float32_matches_float64_to_float_rounding():
    parameters = _parameters("standard", 300, torch.float32, sigma=0.5)
    x, y = _data(4, 300, seed=3)
    error, errors = _largest_relative_error(parameters, x, y)
    assert error < 1e-5, errors
    exact = {name: value.detach().double().requires_grad_() for name, value in parameters.items()}
    value, grads = _loss_and_gradients(lambda P, x, y: loss(P, x, y, "fast"), parameters, x, y)
    exact_value, exact_grads = _loss_and_gradients(_plain_loss, exact, x, y)
    assert abs(value.item() - exact_value.item()) < 1e-6 * exact_value.item()
    for grad, exact_grad in zip(grads, exact_grads):
        assert (grad.double() - exact_grad).abs().max() < 1e-5 * exact_grad.abs().max()


def test_the_fused_function_passes_gradcheck():
    """Every input (the attention output and the parameters after it) against finite differences,
    over several tiles, a partial one, ReLU units on both sides and a context longer than the tokens."""
    generator = torch.Generator().manual_seed(4)
    batch, length, context, d = 2, 2 * fused.TILE + 5, 2 * fused.TILE + 9, 3

    def draw(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64).requires_grad_()

    inputs = (draw(batch, length, d), draw(d), draw(context, d), draw(d, d), draw(4 * d, d), draw(d, 4 * d), draw(1))
    tokens, targets = (torch.randint(0, 2, (batch, length), generator=generator) for _ in range(2))

    def fused_loss(*tensors):
        return fused._FusedLoss.apply(*tensors, tokens, targets, True)

    assert torch.autograd.gradcheck(fused_loss, inputs, eps=1e-6, atol=1e-8)


def test_evaluation_without_gradients_gives_the_same_loss():
    parameters = _parameters("standard", 300)
    x, y = _data(3, 300, seed=2)
    with torch.no_grad():
        evaluated = loss(parameters, x, y, "fast")
    assert not evaluated.requires_grad
    assert abs(evaluated.item() - _plain_loss(parameters, x, y).item()) < RTOL * evaluated.item()


@pytest.mark.parametrize("slot", range(9))
def test_a_perturbed_kernel_output_fails_the_comparison(monkeypatch, slot):
    """The tolerance catches a relative error of 1e-8 in any one gradient the kernel writes (slots
    0-6: attention output, positional, e through x, e through the logit, W_O, W_1, W_2 through the
    logit; 7: b) or in the loss (8)."""
    original = fused._loss_pass

    def perturbed(*args):
        value = original(*args)
        if slot == 8:
            return value * (1 + 1e-8)
        grad = (*args[-2], args[-1])[slot].reshape(-1)
        grad[np.argmax(np.abs(grad))] *= 1 + 1e-8
        return value

    monkeypatch.setattr(fused, "_loss_pass", perturbed)
    error, errors = _largest_relative_error(_parameters("standard", 7), *_data(3, 7, seed=1))
    assert error > RTOL, errors


@pytest.mark.heavy
def test_training_steps_give_the_losses_of_the_plain_forward(monkeypatch):
    settings = run_settings({**small_run_settings(), "attention": "fast", "steps": 24, "checkpoints": [24]})
    fused_run = train(settings, "standard", 1, progress=False)
    monkeypatch.setattr(model_module, "fused_loss", lambda P, x, y, attended: _plain_loss(P, x, y))
    plain_run = train(settings, "standard", 1, progress=False)
    fused_losses, plain_losses = fused_run.losses, plain_run.losses
    np.testing.assert_allclose(fused_losses.train_loss.iloc[1:], plain_losses.train_loss.iloc[1:], rtol=2e-6)
    np.testing.assert_allclose(fused_losses.test_loss.dropna(), plain_losses.test_loss.dropna(), rtol=2e-6)
    for name in ("e", "W_O", "W_1", "W_2"):
        np.testing.assert_allclose(fused_run.final[name], plain_run.final[name], rtol=0, atol=1e-5)


def test_the_float32_exp_and_log1p_are_within_two_eps_of_float64():
    """The loss's vectorised float32 forms against float64, relative errors in float32's eps: exp over
    [-100, 0] (0 below -87, the float range's limit) within 1 (measured 0.58), log1p over [0, 1]
    (from 1e-30 up) within 2 (measured 1.41; NumPy's float32 log1p: 1.54)."""
    from replication.papers.local_to_global.transformer.attention_kernels import exp_nonpositive

    rng = np.random.default_rng(7)
    width = 1001  # not a multiple of the vector width: the loops' remainders run too
    values = np.concatenate(([0.0, -87.0, -87.5], -100 * rng.random(width - 3) ** 3)).astype(np.float32)
    exact = np.exp(values.astype(np.float64))
    got = values.copy()
    exp_nonpositive(got, width, np.empty(width, np.float32), np.empty(width, np.int32))
    kept = values >= -87
    assert (got[~kept] == 0).all() and kept.sum() > width // 2
    errors = np.abs(got[kept] - exact[kept]) / (np.finfo(np.float32).eps * exact[kept])
    assert errors.max() <= 1, errors.max()

    tails = np.concatenate(([0.0, 1.0, 1e-30, 1e-8], rng.random(996), 10.0 ** -rng.uniform(0, 20, 1000)))
    tails = tails.astype(np.float32)
    exact = np.log1p(tails.astype(np.float64))
    series = np.array([fused._log1p_series(t) for t in tails], dtype=np.float32)
    errors = np.abs(series - exact)[1:] / (np.finfo(np.float32).eps * exact[1:])
    assert series[0] == 0 and errors.max() <= 2, errors.max()
