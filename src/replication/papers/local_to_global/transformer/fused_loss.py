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

from .attention_kernels import exp_nonpositive

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
def _add_dots(row, rows, width, zero, totals):
    """totals[k] += sum_r row[r] rows[k, r] for r < width: four rows of ``rows`` a pass over ``row``."""
    count = rows.shape[0]
    k = 0
    while k + 4 <= count:
        t0, t1, t2, t3 = zero, zero, zero, zero
        r0, r1, r2, r3 = rows[k], rows[k + 1], rows[k + 2], rows[k + 3]
        for r in range(width):
            v = row[r]
            t0 += v * r0[r]
            t1 += v * r1[r]
            t2 += v * r2[r]
            t3 += v * r3[r]
        totals[k] += t0
        totals[k + 1] += t1
        totals[k + 2] += t2
        totals[k + 3] += t3
        k += 4
    while k < count:
        total, source = zero, rows[k]
        for r in range(width):
            total += row[r] * source[r]
        totals[k] += total
        k += 1


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _add_rows(out, coefficients, rows, width):
    """out[r] += sum_k coefficients[k] rows[k, r] for r < width: four rows a pass over ``out``."""
    count = coefficients.shape[0]
    k = 0
    while k + 4 <= count:
        c0, c1, c2, c3 = coefficients[k], coefficients[k + 1], coefficients[k + 2], coefficients[k + 3]
        r0, r1, r2, r3 = rows[k], rows[k + 1], rows[k + 2], rows[k + 3]
        for r in range(width):
            out[r] += (c0 * r0[r] + c1 * r1[r]) + (c2 * r2[r] + c3 * r3[r])
        k += 4
    while k < count:
        c, source = coefficients[k], rows[k]
        for r in range(width):
            out[r] += c * source[r]
        k += 1


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _tile_backward(attended, tokens, e, W_O_t, W_1_t, readout, width, zero, residual, hidden, dz, grads):
    """The gradients of one tile, given the logits' ``dz``: the weights' accumulated into ``grads``
    (e through x, e through the readout, W_O, W_1, W_2 through the readout); x's gradient (also the
    positional embeddings') replaces ``residual``, the attention output's replaces ``attended``.
    ``W_O_t`` and ``W_1_t`` are the transposed weights (contiguous columns)."""
    grad_e, grad_e_readout, grad_W_O, grad_W_1, grad_hidden_sum = grads
    d = residual.shape[0]
    _add_dots(dz, residual, width, zero, grad_e_readout)  # <x, e>: e's gradient (the token's share below)
    for h in range(hidden.shape[0]):  # ReLU(W_1 x) -> its gradient readout[h] dz where W_1 x > 0
        total = zero
        row = hidden[h]
        for r in range(width):
            active = max(row[r], zero)
            total += dz[r] * active
            row[r] = readout[h] * dz[r] if active > zero else zero
        grad_hidden_sum[h] += total
        _add_dots(row, residual, width, zero, grad_W_1[h])
    for k in range(d):  # the residual stream's gradient replaces it
        row = residual[k]
        for r in range(width):
            row[r] = e[k] * dz[r]
        _add_rows(row, W_1_t[k], hidden, width)
    _add_dots(tokens[0], residual, width, zero, grad_e)
    for k in range(d):
        _add_dots(residual[k], attended, width, zero, grad_W_O[k])
    for j in range(d):
        row = attended[j]
        for r in range(width):
            row[r] = zero
        _add_rows(row, W_O_t[j], residual, width)


# 1 / (2k + 1) for k = 7, ..., 0, and 2, in float32: float64 literals would promote the series
_ATANH_SERIES = tuple(np.float32(1 / k) for k in (15, 13, 11, 9, 7, 5, 3, 1))
_TWO = np.float32(2)


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _log1p_series(t):
    """log(1 + t) in float32 for t in [0, 1] as 2 atanh(s), s = t / (2 + t) <= 1/3, by eight terms of
    its series in s^2 (the next term's share below 2e-9): no cancellation for small t, and a loop over
    it vectorises where the C library's log1p is a scalar call."""
    s = t / (_TWO + t)
    s2 = s * s
    c0, c1, c2, c3, c4, c5, c6, c7 = _ATANH_SERIES
    return _TWO * s * (((((((c0 * s2 + c1) * s2 + c2) * s2 + c3) * s2 + c4) * s2 + c5) * s2 + c6) * s2 + c7)


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _bce_terms(logits, targets, bias, scale, width, single, tails, terms, scratch):
    """Per position r < width of a tile, the binary cross-entropy BCE(z, y) = max(z, 0) - z y +
    log(1 + exp(-|z|)) of z = logits[r] + bias into ``terms``, and its gradient (sigmoid(z) - y) scale
    in place of the logits. With ``single`` (float32), exp and log1p vectorise (``exp_nonpositive``,
    ``_log1p_series``); in float64, the C library's."""
    zero = logits[0] - logits[0]
    one = zero + 1
    for r in range(width):
        logits[r] += bias
        tails[r] = -abs(logits[r])
    if single:
        exp_nonpositive(tails, width, scratch[0], scratch[1])
    else:
        for r in range(width):
            tails[r] = np.exp(tails[r])
    for r in range(width):
        logit, target, tail = logits[r], targets[r], tails[r]
        softplus = _log1p_series(tail) if single else np.log1p(tail)
        terms[r] = max(logit, zero) - logit * target + softplus
        logits[r] = ((one if logit >= 0 else tail) / (one + tail) - target) * scale


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _loss_pass(attended, tokens, targets, positional, e, W_O, W_1, readout, bias, scale, with_grad, grads, grad_b):
    """The mean loss over every position (float64 sum) of ``attended`` (d, B N), the symbols ``tokens``
    and their next symbols ``targets`` (B, N, integers); with ``with_grad`` also every gradient of the
    mean: the attention output's into the first of ``grads`` (every entry written), the positional
    embeddings' and then the weights' added to the others (zeroed)."""
    d, columns = attended.shape
    length = positional.shape[1]
    attended_tile, positional_tile, residual = (
        np.empty((d, TILE), dtype=e.dtype),
        np.empty((d, TILE), dtype=e.dtype),
        np.empty((d, TILE), dtype=e.dtype),
    )
    symbol_tile, hidden = np.empty((2, TILE), dtype=e.dtype), np.empty((W_1.shape[0], TILE), dtype=e.dtype)
    logits, tails, terms = np.empty(TILE, dtype=e.dtype), np.empty(TILE, dtype=e.dtype), np.empty(TILE, dtype=e.dtype)
    scratch = (np.empty(TILE, dtype=np.float32), np.empty(TILE, dtype=np.int32))  # for the float32 exp
    single = e.itemsize == 4  # float32: the vectorised exp and log1p
    zero = np.zeros(1, dtype=e.dtype)[0]  # typed constants: float32 stays float32 (a literal is a float64)
    loss, bias_total = 0.0, 0.0
    W_O_t, W_1_t = np.ascontiguousarray(W_O.T), np.ascontiguousarray(W_1.T)
    for start in range(0, columns, length):  # one batch element, then tiles of its positions
        for n0 in range(0, length, TILE):
            width = min(TILE, length - n0)
            _copy_columns(attended, start + n0, width, attended_tile, True, False)
            for r in range(width):  # the symbols as floats, for the tiles' products
                symbol_tile[0, r], symbol_tile[1, r] = tokens[start // length, n0 + r], targets[start // length, n0 + r]
            _copy_columns(positional, n0, width, positional_tile, True, False)
            forward = (attended_tile, symbol_tile, positional_tile, e, W_O, W_1, readout, width, zero)
            _tile_forward(*forward, residual, hidden, logits)
            _bce_terms(logits, symbol_tile[1], bias[0], scale[0], width, single, tails, terms, scratch)
            for r in range(width):
                loss += terms[r]
                bias_total += logits[r]
            if with_grad:
                backward = (attended_tile, symbol_tile, e, W_O_t, W_1_t, readout, width, zero)
                _tile_backward(*backward, residual, hidden, logits, grads[2:])
                _copy_columns(attended_tile, start + n0, width, grads[0], False, False)
                _copy_columns(residual, n0, width, grads[1], False, True)
    grad_b[0] = bias_total
    return loss * scale[0]


class _FusedLoss(torch.autograd.Function):
    """The mean loss (0-d) from the attention output (B, N, d), the parameters it meets after the
    attention, and tokens and targets (B, N, integers); the gradients are computed in the forward."""

    @staticmethod
    def forward(ctx, attended, e, p, W_O, W_1, W_2, b, tokens, targets, with_grad):
        layout = attended.permute(2, 0, 1).contiguous()  # (d, B, N): a view of the fast attention's output
        readout = W_2.T @ e
        d, length = e.shape[0], tokens.shape[1]
        operands = (layout.view(d, -1), p[:length].T.contiguous(), e, W_O, W_1, readout)
        # The gradients' shapes: e's twice (through x and through the readout)
        attended_like, *sums_like = (*operands[:3], e, *operands[3:])
        if with_grad:  # the attention output's gradient is written in full, the others are sums
            grads = (torch.empty_like(attended_like), *(torch.zeros_like(t) for t in sums_like))
        else:  # never read: empty arrays of the same kinds, so that one compiled pass serves both
            grads = tuple(t.new_empty((0,) * t.dim()) for t in (attended_like, *sums_like))
        grad_b = torch.zeros_like(b)
        scale = torch.full((1,), 1.0 / tokens.numel(), dtype=e.dtype)
        attended_array, *arrays = [t.detach().numpy() for t in (*operands, b, scale)]
        symbols = (tokens.numpy(), targets.numpy())
        loss = _loss_pass(attended_array, *symbols, *arrays, with_grad, tuple(g.numpy() for g in grads), grad_b.numpy())
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
    P = parameters
    operands = (P["e"], P["p"], P["W_O"], P["W_1"], P["W_2"], P["b"])
    with_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (attended, *operands))
    return _FusedLoss.apply(attended, *operands, tokens, targets, with_grad)
