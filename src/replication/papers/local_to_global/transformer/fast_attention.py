"""Exact causal attention for binary tokens through one batch-independent positional score matrix.

With x_n = t_n e + p_n and t_n in {0, 1}, the projections split into positional parts and the
token's share: q_n = Q_n + t_n w, k_i = K_i + t_i kappa, v_i = V_i + t_i u, with Q = p W_Q^T / sqrt(d),
w = W_Q e / sqrt(d), K = p W_K^T, kappa = W_K e, V = p W_V^T, u = W_V e. The score of query n on key i

    s_ni = q_n . k_i = S_ni + t_n c_i + t_i beta^{t_n}_n,
    S = Q K^T,   c_i = w . K_i,   beta^tau_n = (Q_n + tau w) . kappa,

so the weights of a query with symbol tau are one batch-independent N x N matrix
E_ni = exp(S_ni - m_n) (causal; the output does not depend on a row's scale, so any shift m_n that
keeps the row's largest entry near 1 will do), times gamma_i = exp(c_i - max c) on every key when
tau = 1, times exp(beta^tau_n) on keys with t_i = 1. The key factors gamma go into the right-hand
side, so one product E @ [R^0, gamma R^1] serves both query symbols: a dense GEMM whose columns are
the token-masked [value, 1] of every batch element (and, batch-shared, the row totals).

The factor exp(beta) splits the keys of a row into two groups: the "heavy" group h (factor 1,
masked explicitly) and the light one (factor lambda = exp((1 - 2h) beta), the row total minus the
heavy group). h = [beta >= -ln 2], so lambda <= 2 (nothing overflows), and rows with |beta| small,
as at initialisation, all share one group. With A_h, M_h the heavy group's sums of weights and of
weighted values and A_l, M_l the light group's,

    o_n = (M_h + lambda M_l) / (A_h + lambda A_l).

The light group is never formed by a subtraction that the division cannot absorb: with
L = total - H, the output is an affine map of the heavy sums, per row and query symbol,

    numerator = (1 - lambda) M_h + lambda (2h - 1) u A_h + lambda (total_v + (1 - h) u total_a),
    denominator = (1 - lambda) A_h + lambda total_a,

whose rounding error is at most a few eps max |v| after the division (lambda <= 2, and for
lambda < 1 either A_h or A_l is at least half the row total). Rows are sorted by their pair of
groups (one per query symbol; at most three pairs occur, since beta^1 - beta^0 is one constant)
and then by position, so the causal triangle is skipped block by block. Entries below the float
range are lost; the only limit is a query whose denominator falls below sqrt(tiny) (keys whose
factors gamma span about half the exponent range; float32: ~43), where ``binary_token_attention``
returns None and the caller uses the general kernel.

The projections are part of the function, and the backward is written out (checked against
autograd through PyTorch's kernel and with torch.autograd.gradcheck in
tests/local_to_global/transformer/test_fast_attention.py); a row's shift, and gamma's, is a
constant there. Sums are laid out (query symbol, value entry, batch column, position) with
positions contiguous, so that every per-row and per-query factor broadcasts along long rows and
the choice of a query's symbol is a product with a 0/1 mask.
On the CPU (attention_kernels.py), in float32 a block's exponential and causal mask are one numba pass,
and a block's score gradient and its two products with d columns (the queries' and keys' gradients)
another, not two narrow GEMMs; the per-query maps from the block sums to the output, and back, are
one numba pass each (attention_combine.py), and so are the right-hand sides [R^0, gamma R^1] and the
reduction of their gradients (attention_columns.py), and the projections, the rows' order and the
score product's operands (attention_projections.py). The path runs on the CPU; elsewhere the model
takes PyTorch's kernel.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .attention_columns import right_hand_side, right_hand_side_backward
from .attention_combine import combine, combine_backward
from .attention_kernels import causal_exp, score_gradients
from .attention_projections import projections, projections_backward, row_order, score_operands

# Rows of E per GEMM: the blocks cover the causal triangle with 6% to spare (128 rows: 12%), and at
# N = 1024 a training step took 0.5-1.0 ms less than with 128 rows (32, 48 and 96: slower than 64).
BLOCK_ROWS = 64
LOG_MAX_LIGHT_WEIGHT = math.log(2)  # keys of the light group weigh at most 2x the heavy group's
SHIFT_BOUND_LIMIT = 4.0  # rows shifted by a score bound up to this shrink by at most exp(-8) ~ 3e-4


class ScoresOutOfRange(ArithmeticError):
    """A query's attention weights sum to below sqrt(tiny): its keys lie beyond the float range."""


def _row_blocks(heavy: np.ndarray) -> tuple[torch.Tensor, list[tuple]]:
    """Rows sorted by (group pair, position), given the heavy group of each query symbol (2, T), and
    cut into blocks of at most BLOCK_ROWS rows of one pair: the order, and per block (start, stop,
    pair, first position, width = last position + 1, positions (rows,), a NumPy array)."""
    order, counts = row_order(heavy)
    blocks, first = [], 0
    for group_pair, count in enumerate(counts.tolist()):
        for start in range(first, first + count, BLOCK_ROWS):
            positions = order[start : min(start + BLOCK_ROWS, first + count)]
            first_position, width = int(positions[0]), int(positions[-1]) + 1
            blocks.append((start, start + positions.shape[0], group_pair, first_position, width, positions))
        first += count
    return torch.from_numpy(order), blocks


def _later_keys(first: int, width: int, positions: np.ndarray) -> torch.Tensor:
    """The causal mask of a block's keys first.. against its rows' ``positions``: key i after row r."""
    return torch.arange(first, width).unsqueeze(1) > torch.from_numpy(positions)


def _block_products(queries, key, rhs, blocks, keep):
    """sums[:, r] = rhs[pair(r)]^T @ E_r with E_r = exp(S_r - m_r) over keys up to position_r (a column
    of the (keys, rows) block), and the E blocks when ``keep``. Cauchy-Schwarz gives the shift
    m_r = |q_r| max_i |k_i| >= S_ri, folded into the score GEMM through a row of ones, so one exp
    pass replaces softmax's three. Where that bound is loose enough to shrink a row by more than
    exp(-2 SHIFT_BOUND_LIMIT), the row maximum is used."""
    length, d = key.shape
    sums = queries.new_empty(next(iter(rhs.values())).shape[1], queries.shape[0])
    probabilities = []
    shifted_queries, key_rows = queries.new_empty(d + 1, queries.shape[0]), key.new_empty(length, d + 1)
    bounds = score_operands(queries.numpy(), key.numpy(), shifted_queries.numpy(), key_rows.numpy())
    block_bounds = [bounds[start:stop].max() for start, stop, *_ in blocks]
    fused_exp = queries.dtype == torch.float32
    for (start, stop, group_pair, first, width, positions), largest in zip(blocks, block_bounds):
        if largest <= SHIFT_BOUND_LIMIT:
            weights = torch.mm(key_rows[:width], shifted_queries[:, start:stop])  # entries <= 0 (up to rounding)
            if fused_exp:
                causal_exp(positions, weights.numpy())
            else:
                weights.exp_()  # entries in (0, 1]
                if width > first:  # the causal mask touches only the keys past the block's first position
                    weights[first:].masked_fill_(_later_keys(first, width, positions), 0.0)
        else:
            weights = torch.mm(key_rows[:width, :d], shifted_queries[:d, start:stop])
            if width > first:
                weights[first:].masked_fill_(_later_keys(first, width, positions), float("-inf"))
            weights = torch.softmax(weights, 0)
        torch.mm(rhs[group_pair][:width].T, weights, out=sums[:, start:stop])
        if keep:
            probabilities.append(weights)
    return sums, probabilities


def _block_products_backward(grad_sums, queries, key, rhs, blocks, probabilities):
    """Gradients of the block products for queries, key and each pair's right-hand side (dS = E * dE).
    The right-hand side is laid out (keys, columns), so the product for dE reads it as it is."""
    grad_queries, grad_key = torch.empty_like(queries), torch.zeros_like(key)
    grad_rhs = {group_pair: matrix.new_zeros(matrix.shape[1], matrix.shape[0]) for group_pair, matrix in rhs.items()}
    # NumPy views for the kernel, taken once: slicing them costs a fraction of a tensor's slice
    queries_t, key_array = queries.T.contiguous().numpy(), key.numpy()
    grad_queries_array, grad_key_array = grad_queries.numpy(), grad_key.numpy()
    for (start, stop, group_pair, _, width, *_), weights in zip(blocks, probabilities):
        grad = grad_sums[:, start:stop]
        grad_rhs[group_pair][:, :width].addmm_(grad, weights.T)
        grad_weights = torch.mm(rhs[group_pair][:width], grad)  # (keys, rows)
        # One pass over the block for both products (two GEMMs with d columns read it twice)
        arrays = (grad_weights.numpy(), weights.numpy(), key_array, queries_t, start, grad_queries_array)
        score_gradients(*arrays, grad_key_array)
    return grad_queries, grad_key, grad_rhs


def _groups(group_pair: int) -> np.ndarray:
    """The heavy group of each query symbol, (h_0, h_1), of a pair numbered h_0 + 2 h_1."""
    return np.array([group_pair & 1, group_pair >> 1])


class _BinaryTokenAttention(torch.autograd.Function):
    """Attention output (B, T, d) from e (d,), p (T, d), W_Q, W_K, W_V and tokens (B, T) in {0, 1}.

    The projections are part of the function, forward and backward one numba pass each
    (attention_projections.py): one node instead of some twenty small ones a direction. Inside,
    ``_attention`` works on the positional queries Q (T, d), keys K, values V^T (d, T), the value
    shift u (d,), the key factors gamma (T,) of queries with symbol 1, beta (2, T) (row tau: the
    offset of keys with t_i = 1 for queries with symbol tau) and the heavy group of each row. Sums are
    laid out (tau, value entry c, column b, position): b < B the heavy group of batch element b, b = B
    the row total. Positions run along the contiguous dimension, so that every per-row and per-query
    factor broadcasts over long contiguous rows."""

    @staticmethod
    def forward(ctx, e, p, W_Q, W_K, W_V, tokens, keep):
        ctx.keep = keep  # what the backward needs is kept only for a call that records gradients
        length, d = p.shape
        queries, key, value_t = p.new_empty(length, d), p.new_empty(length, d), p.new_empty(d, length)
        tokens_shares, gamma, beta = p.new_empty(3, d), p.new_empty(length), p.new_empty(2, length)
        heavy = np.empty((2, length), dtype=np.bool_)  # the heavy group per query symbol is t_i = 1
        parameters = [t.detach().numpy() for t in (e, p, W_Q, W_K, W_V)]
        constants = _constants(parameters[0].dtype.type, d)
        results = (queries, key, value_t, tokens_shares, gamma, beta)
        projections(*parameters, *constants, *(t.numpy() for t in results), heavy)
        out = _attention(ctx, queries, key, value_t, tokens_shares[2], gamma, beta, heavy, tokens)
        if ctx.keep:
            ctx.save_for_backward(e, p, W_Q, W_K, W_V)
            ctx.projections = (constants[0], queries, key, tokens_shares, gamma)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        grads = _attention_backward(ctx, grad_out)  # of Q, K, V^T, u, gamma and beta
        scale, *projected = ctx.projections
        parameters = ctx.saved_tensors
        parameter_grads = tuple(torch.empty_like(t) for t in parameters)
        projections_backward(
            tuple(g.numpy() for g in grads),
            *(t.detach().numpy() for t in parameters),
            scale,
            *(t.numpy() for t in projected),
            tuple(g.numpy() for g in parameter_grads),
        )
        return *parameter_grads, None, None


def _constants(scalar: type, d: int) -> tuple:
    """The score scale 1 / sqrt(d) and the heavy group's threshold on beta, as scalars of the arrays'
    type (a comparison with a float64 threshold would round otherwise)."""
    return scalar(1.0 / math.sqrt(d)), scalar(-LOG_MAX_LIGHT_WEIGHT)


def _attention(ctx, queries, key, value_t, shift, gamma, beta, heavy, tokens):
    batch, length = tokens.shape
    d = value_t.shape[0]
    dtype = value_t.dtype
    order, blocks = _row_blocks(heavy)
    pairs = sorted({block[2] for block in blocks})

    # rhs[pair] = (R_{h0}, gamma R_{h1}) for the two query symbols, keys first (attention_columns.py)
    is_one = tokens.to(dtype)
    columns = tuple(t.numpy() for t in (value_t, shift, is_one, gamma))
    rhs = {}
    for group_pair in pairs:
        matrix = value_t.new_empty(length, 2 * (d + 1) * (batch + 1))
        right_hand_side(*columns, _groups(group_pair), matrix.view(length, 2, d + 1, batch + 1).numpy())
        rhs[group_pair] = matrix
    sorted_rows = len(pairs) > 1  # with one group pair the order is the positions' own
    sorted_queries = queries.index_select(0, order) if sorted_rows else queries
    keep = ctx.keep
    sums, probabilities = _block_products(sorted_queries, key, rhs, blocks, keep)
    rank = None
    if sorted_rows:
        rank = torch.empty_like(order).index_copy_(0, order, torch.arange(length, device=order.device))
        sums = sums.index_select(1, rank)
    sums = sums.view(2, d + 1, batch + 1, length)

    # Per query symbol and row (2, T): with L = total - H and lambda = exp((1 - 2h) beta), the output
    # o = (H_v + lambda L_v) / (H_a + lambda L_a) is an affine map of the heavy sums H = (H_v, H_a)
    # (attention_combine.py). Entries below the float range are lost; relative to a denominator above
    # sqrt(tiny) they are below N sqrt(tiny) (float32: 1e-16), so only smaller denominators fall back.
    out, scale = value_t.new_empty(d, batch, length), value_t.new_empty(2, batch, length)
    light_weight = value_t.new_empty(2, length)
    arrays = (sums.numpy(), beta.numpy(), heavy, shift.numpy(), is_one.numpy())
    if combine(*arrays, math.sqrt(torch.finfo(dtype).tiny), light_weight.numpy(), scale.numpy(), out.numpy()):
        raise ScoresOutOfRange
    if keep:
        ctx.blocks, ctx.probabilities, ctx.rhs, ctx.value_t = blocks, probabilities, rhs, value_t
        ctx.sorted_rows = sorted_rows
        ctx.core = (sorted_queries, key, shift, gamma, order, rank, is_one, sums, heavy, light_weight, scale, out)
    return out.permute(1, 2, 0)  # (B, T, d)


def _attention_backward(ctx, grad_out):
    sorted_queries, key, shift, gamma, order, rank, is_one, sums, heavy, light_weight, scale, out = ctx.core
    batch, length = is_one.shape
    d = key.shape[1]
    # combine_backward: the block sums' gradients (the heavy sums' and the row totals'), beta's and u's
    grad = grad_out.permute(2, 0, 1).contiguous()  # (d, B, T): a view of the fused loss's gradient
    grad_sums, grad_beta = grad_out.new_empty(2, d + 1, batch + 1, length), grad_out.new_empty(2, length)
    grad_shift = torch.zeros_like(shift)
    operands = (grad, out, scale, sums)
    grads = (grad_sums.numpy(), grad_beta.numpy(), grad_shift.numpy())
    combine_backward(*(t.numpy() for t in operands), heavy, shift.numpy(), light_weight.numpy(), *grads)
    grad_sums = grad_sums.view(-1, length)
    if ctx.sorted_rows:
        grad_sums = grad_sums.index_select(1, order)
    grad_sorted, grad_key, grad_rhs = _block_products_backward(
        grad_sums, sorted_queries, key, ctx.rhs, ctx.blocks, ctx.probabilities
    )
    grad_queries = grad_sorted.index_select(0, rank) if ctx.sorted_rows else grad_sorted

    # rhs[pair] = (R_{h0}, gamma R_{h1}); R_h = mask_h * [value (+ u for h = 1 in the batch columns), 1]
    grad_value, grad_gamma = torch.zeros_like(ctx.value_t), torch.zeros_like(gamma)
    columns = tuple(t.numpy() for t in (ctx.value_t, shift, is_one, gamma))
    grads = (grad_value.numpy(), grad_shift.numpy(), grad_gamma.numpy())
    for group_pair, grad in grad_rhs.items():
        right_hand_side_backward(grad.view(2, d + 1, batch + 1, length).numpy(), *columns, _groups(group_pair), *grads)
    return grad_queries, grad_key, grad_value, grad_shift, grad_gamma, grad_beta


def binary_token_attention(
    tokens: torch.Tensor, e: torch.Tensor, p: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor, W_V: torch.Tensor
) -> torch.Tensor | None:
    """softmax(q k^T / sqrt d, causal) v of shape (B, T, d) for tokens (B, T) in {0, 1}; None on underflow."""
    try:
        # Under torch.no_grad (an evaluation) ctx.needs_input_grad still says True: ask the grad mode.
        keep = torch.is_grad_enabled() and any(t.requires_grad for t in (e, p, W_Q, W_K, W_V))
        return _BinaryTokenAttention.apply(e, p[: tokens.shape[1]], W_Q, W_K, W_V, tokens.long(), keep)
    except ScoresOutOfRange:
        return None
