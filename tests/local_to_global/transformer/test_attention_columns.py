"""The right-hand sides of the fast attention's block products (attention_columns.py): the forward
bit for bit the tensor operations it replaces, the backward their gradients by autograd."""

import numpy as np
import pytest
import torch

from replication.papers.local_to_global.transformer.attention_columns import right_hand_side, right_hand_side_backward

D, BATCH, LENGTH = 3, 4, 37
PAIRS = [(0, 0), (1, 0), (0, 1), (1, 1)]  # the group (h_0, h_1) of each query symbol


def operands(dtype, seed=0):
    """Values (d, N), value shift u (d,), tokens (B, N) as 0/1 floats, key factors gamma (N,) in (0, 1]."""
    g = torch.Generator().manual_seed(seed)
    value_t, shift = torch.randn(D, LENGTH, generator=g, dtype=dtype), torch.randn(D, generator=g, dtype=dtype)
    is_one = (torch.rand(BATCH, LENGTH, generator=g) < 0.5).to(dtype)
    gamma = torch.rand(LENGTH, generator=g, dtype=dtype) + 0.1
    return value_t, shift, is_one, gamma


def tensor_operations(value_t, shift, is_one, gamma, groups):
    """The right-hand side as tensor operations: per query symbol s with group h, R_h = the masked
    [value (+ u for h = 1), 1] of each batch column, then the row totals' [value, 1]; side 1 times gamma."""
    sides = []
    for side, h in enumerate(groups):
        mask = is_one if h else 1 - is_one
        batch_values = ((value_t + shift[:, None]) if h else value_t).unsqueeze(1) * mask  # (d, B, N)
        values = torch.cat((batch_values, value_t.unsqueeze(1)), 1)
        ones = torch.cat((mask, torch.ones_like(mask[:1])), 0).unsqueeze(0)
        matrix = torch.cat((values, ones), 0)  # (d + 1, B + 1, N)
        sides.append(matrix * gamma if side else matrix)
    return torch.stack(sides)


@pytest.mark.parametrize("groups", PAIRS)
def test_the_forward_is_the_tensor_operations_bit_for_bit(groups):
    columns = operands(torch.float32)
    out = torch.full((LENGTH, 2, D + 1, BATCH + 1), float("nan"))  # keys first
    right_hand_side(*(t.numpy() for t in columns), np.array(groups), out.numpy())
    assert torch.equal(out.permute(1, 2, 3, 0), tensor_operations(*columns, groups))


@pytest.mark.parametrize("groups", PAIRS)
def test_the_backward_is_the_gradient_of_the_forward(groups):
    columns = [t.requires_grad_() for t in operands(torch.float64, seed=1)]
    grad = torch.randn(2, D + 1, BATCH + 1, LENGTH, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    value_t, shift, is_one, gamma = columns
    forward = tensor_operations(*columns, groups)
    expected = torch.autograd.grad(forward, (value_t, shift, gamma), grad, allow_unused=True, materialize_grads=True)
    # Accumulated into what the caller passes in: start from ones, as a second pair would find them.
    grads = [torch.ones_like(t) for t in expected]
    arrays = (grad, *(t.detach() for t in columns))
    right_hand_side_backward(*(t.numpy() for t in arrays), np.array(groups), *(t.numpy() for t in grads))
    for got, want in zip(grads, expected, strict=True):
        torch.testing.assert_close(got - 1, want, rtol=1e-12, atol=1e-12)
    assert expected[1].abs().min() > 0 if 1 in groups else torch.equal(expected[1], torch.zeros(D, dtype=torch.float64))
