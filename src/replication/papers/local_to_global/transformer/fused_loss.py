"""The model's loss around its attention, forward and backward in one numba pass (CPU, "fast" path).

``model.loss`` with the fast attention computes the function of ``model.logits`` followed by the
mean binary cross-entropy, but everything after the attention output a,

    x = t e + p;  x += W_O a;  z = <x, e> + <W_2^T e, ReLU(W_1 x)> + b;  mean BCE(z, y),

is one pass over tiles of positions instead of some thirty tensor operations, each streaming
(B, N, d) or (B, N, 4d) tensors through memory for products only d = 8 wide. (The second residual
branch enters only through the logit, so <x + W_2 ReLU(W_1 x), e> is written with W_2^T e.) The
loss is a mean over positions, so a position's gradient is known as soon as its forward is: the
pass computes the loss and, when gradients are wanted, every gradient with it; the backward only
scales them by the incoming gradient. The logit's gradient dz reaches x as e dz and the hidden layer
as (W_2^T e) dz, so W_2's gradient is e (sum dz ReLU(W_1 x))^T and nothing wider than the hidden
layer is stored.

a comes in as (d, B, N), the fast attention's own layout (its (B, N, d) result is a permuted view),
and its gradient goes back in that layout: neither side copies. Checked against autograd through
the plain forward in float64 and float32 and with gradcheck (tests/.../test_fused_loss.py).
"""

from __future__ import annotations

import numba
import numpy as np
import torch

TILE = 256  # positions per tile: its arrays stay in the core's caches (64 to 1024 measured, 256 fastest)
# Reassociation and contraction only: NaN and infinity keep their IEEE meaning, so a diverging run
# still reports a non-finite loss.
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


@numba.njit(cache=True)
def _copy_columns(source, start, width, target, to_tile, accumulate):
    """Columns start.. of ``source`` (rows, columns) into the tile ``target`` (rows, TILE), or the tile
    back into them (``to_tile`` False; added with ``accumulate``). Unsigned column indices: numba
    checks a signed index for wraparound, which keeps its loops from vectorising."""
    offset = np.uint64(start)
    for k in range(source.shape[0]):
        for r in range(width):
            column = offset + np.uint64(r)
            if to_tile:
                target[k, r] = source[k, column]
            elif accumulate:
                target[k, column] += source[k, r]
            else:
                target[k, column] = source[k, r]


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _tile_forward(attended, tokens, positional, e, W_O, W_1, readout, width, zero, residual, hidden, logits):
    """One tile of positions (its columns): the residual stream x after the attention (d, width), the
    MLP's pre-activations W_1 x (4d, width) and the logits without the bias; ``readout`` is W_2^T e."""
    d = residual.shape[0]
    for k in range(d):
        for r in range(width):
            residual[k, r] = tokens[0, r] * e[k] + positional[k, r]
        for j in range(d):
            weight = W_O[k, j]
            for r in range(width):
                residual[k, r] += weight * attended[j, r]
    for h in range(W_1.shape[0]):
        for r in range(width):
            hidden[h, r] = zero
        for k in range(d):
            weight = W_1[h, k]
            for r in range(width):
                hidden[h, r] += weight * residual[k, r]
    for r in range(width):
        logits[r] = zero
    for k in range(d):
        for r in range(width):
            logits[r] += e[k] * residual[k, r]
    for h in range(W_1.shape[0]):
        for r in range(width):
            logits[r] += readout[h] * max(hidden[h, r], zero)


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _tile_backward(attended, tokens, e, W_O, W_1, readout, width, zero, residual, hidden, dz, grads):
    """The gradients of one tile, given the logits' ``dz``: the weights' accumulated into ``grads``
    (e through x, e through the readout, W_O, W_1, W_2 through the readout); x's gradient (also the
    positional embeddings') replaces ``residual``, the attention output's replaces ``attended``."""
    grad_e, grad_e_readout, grad_W_O, grad_W_1, grad_hidden_sum = grads
    d = residual.shape[0]
    for k in range(d):  # <x, e>: e's gradient (the token embedding's share comes below)
        total = zero
        for r in range(width):
            total += dz[r] * residual[k, r]
        grad_e_readout[k] += total
    for h in range(W_1.shape[0]):  # ReLU(W_1 x) -> its gradient readout[h] dz where W_1 x > 0
        total = zero
        for r in range(width):
            active = max(hidden[h, r], zero)
            total += dz[r] * active
            hidden[h, r] = readout[h] * dz[r] if active > zero else zero
        grad_hidden_sum[h] += total
        for k in range(d):
            total = zero
            for r in range(width):
                total += hidden[h, r] * residual[k, r]
            grad_W_1[h, k] += total
    for k in range(d):  # the residual stream's gradient replaces it
        for r in range(width):
            residual[k, r] = e[k] * dz[r]
        for h in range(W_1.shape[0]):
            weight = W_1[h, k]
            for r in range(width):
                residual[k, r] += weight * hidden[h, r]
    for k in range(d):
        total = zero
        for r in range(width):
            total += residual[k, r] * tokens[0, r]
        grad_e[k] += total
        for j in range(d):
            total = zero
            for r in range(width):
                total += residual[k, r] * attended[j, r]
            grad_W_O[k, j] += total
    for j in range(d):
        for r in range(width):
            attended[j, r] = zero
        for k in range(d):
            weight = W_O[k, j]
            for r in range(width):
                attended[j, r] += weight * residual[k, r]


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _loss_pass(attended, symbols, positional, e, W_O, W_1, readout, bias, scale, with_grad, grads, grad_b):
    """The mean loss over every position (float64 sum) of ``attended`` (d, B N) and ``symbols``
    (2, B N: tokens, targets); with ``with_grad`` also every gradient of the mean: the attention
    output's into the first of ``grads`` (every entry written), the positional embeddings' and then
    the weights' added to the others (zeroed)."""
    d, columns = attended.shape
    length = positional.shape[1]
    attended_tile, positional_tile, residual = (
        np.empty((d, TILE), dtype=e.dtype),
        np.empty((d, TILE), dtype=e.dtype),
        np.empty((d, TILE), dtype=e.dtype),
    )
    symbol_tile, hidden = np.empty((2, TILE), dtype=e.dtype), np.empty((W_1.shape[0], TILE), dtype=e.dtype)
    logits = np.empty(TILE, dtype=e.dtype)
    zero = np.zeros(1, dtype=e.dtype)[0]  # typed constants: float32 stays float32 (a literal is a float64)
    one = zero + 1
    loss, bias_total = 0.0, 0.0
    for start in range(0, columns, length):  # one batch element, then tiles of its positions
        for n0 in range(0, length, TILE):
            width = min(TILE, length - n0)
            _copy_columns(attended, start + n0, width, attended_tile, True, False)
            _copy_columns(symbols, start + n0, width, symbol_tile, True, False)
            _copy_columns(positional, n0, width, positional_tile, True, False)
            forward = (attended_tile, symbol_tile, positional_tile, e, W_O, W_1, readout, width, zero)
            _tile_forward(*forward, residual, hidden, logits)
            for r in range(width):
                logit, target = logits[r] + bias[0], symbol_tile[1, r]
                # BCE(z, y) = max(z, 0) - z y + log(1 + exp(-|z|)), and its gradient sigmoid(z) - y
                tail = np.exp(-abs(logit))
                loss += max(logit, zero) - logit * target + np.log1p(tail)
                logits[r] = ((one if logit >= 0 else tail) / (one + tail) - target) * scale[0]
                bias_total += logits[r]
            if with_grad:
                backward = (attended_tile, symbol_tile, e, W_O, W_1, readout, width, zero)
                _tile_backward(*backward, residual, hidden, logits, grads[2:])
                _copy_columns(attended_tile, start + n0, width, grads[0], False, False)
                _copy_columns(residual, n0, width, grads[1], False, True)
    grad_b[0] = bias_total
    return loss * scale[0]


class _FusedLoss(torch.autograd.Function):
    """The mean loss (0-d) from the attention output (B, N, d), the parameters it meets after the
    attention, and tokens and targets (B, N) as floats; the gradients are computed in the forward."""

    @staticmethod
    def forward(ctx, attended, e, p, W_O, W_1, W_2, b, tokens, targets, with_grad):
        layout = attended.permute(2, 0, 1).contiguous()  # (d, B, N): a view of the fast attention's output
        readout = W_2.T @ e
        d, length = e.shape[0], tokens.shape[1]
        operands = (layout.view(d, -1), torch.stack((tokens, targets)).view(2, -1), p[:length].T.contiguous())
        operands += (e, W_O, W_1, readout)
        if with_grad:  # the attention output's gradient is written in full, the others are sums
            grads = (torch.empty_like(operands[0]), *(torch.zeros_like(t) for t in (operands[2], e, *operands[3:])))
        else:  # never read: empty arrays of the same kinds, so that one compiled pass serves both
            grads = tuple(t.new_empty((0,) * t.dim()) for t in (operands[0], operands[2], e, *operands[3:]))
        grad_b = torch.zeros_like(b)
        scale = torch.full((1,), 1.0 / tokens.numel(), dtype=e.dtype)
        arrays = [t.detach().numpy() for t in (*operands, b, scale)]
        loss = _loss_pass(*arrays, with_grad, tuple(g.numpy() for g in grads), grad_b.numpy())
        if with_grad:
            grad_layout, grad_positional, grad_e, grad_e_readout, grad_W_O, grad_W_1, grad_hidden_sum = grads
            # <x, e> and <W_2^T e, h>: e's readout gradient is sum dz x + W_2 (sum dz h); W_2's is e (sum dz h)^T
            grad_e += grad_e_readout + W_2 @ grad_hidden_sum
            grad_W_2 = torch.outer(e, grad_hidden_sum)
            grad_p = torch.zeros_like(p)
            grad_p[:length] = grad_positional.T
            ctx.grads = (
                grad_layout.view(layout.shape).permute(1, 2, 0),
                grad_e,
                grad_p,
                grad_W_O,
                grad_W_1,
                grad_W_2,
                grad_b,
            )
        return torch.tensor(loss, dtype=e.dtype)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_loss):
        return *(grad * grad_loss for grad in ctx.grads), None, None, None


def fused_loss(parameters, tokens: torch.Tensor, targets: torch.Tensor, attended: torch.Tensor) -> torch.Tensor:
    """``model.loss`` for symbols ``tokens`` and next symbols ``targets`` (B, N) given the attention
    output ``attended`` (B, N, d) of the same parameters (by name); CPU tensors."""
    P, dtype = parameters, parameters["e"].dtype
    operands = (P["e"], P["p"], P["W_O"], P["W_1"], P["W_2"], P["b"])
    with_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (attended, *operands))
    return _FusedLoss.apply(attended, *operands, tokens.to(dtype), targets.to(dtype), with_grad)
