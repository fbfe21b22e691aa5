"""Exact causal attention for binary tokens through batch-independent positional score matrices.

With x_n = t_n e + p_n and t_n in {0, 1}, the projections are q_n = Q^{t_n}_n, k_i = K^{t_i}_i and
v_i = V^{t_i}_i = PV_i + t_i u, where Q^0 = p W_Q^T, Q^1 = Q^0 + W_Q e, K^0 = p W_K^T, PV = p W_V^T,
u = W_V e. The score of query n on key i

    s_ni = Q^{t_n}_n . K^{t_i}_i / sqrt(d) = S^{t_n}_ni + t_i beta^{t_n}_n,
    S^tau = Q^tau (K^0)^T / sqrt(d),   beta^tau = Q^tau . W_K e / sqrt(d),

is an entry of one of two N x N matrices that do not depend on the batch, plus a per-row offset on
keys with t_i = 1. So each of the 2N rows (tau, n) of the batch-independent matrix E = exp(S - row
max) (causal, row max 1) splits the softmax by key value sigma into two groups whose weights differ
by the factor exp(beta): the "heavy" group h = [beta >= 0] has factor 1, the light one
w = exp(-|beta|) <= 1. For the heavy group, dense GEMMs of E with the token-masked values of the
whole batch give A_h = sum_{t_i = h} E_ni and M_h = sum_{t_i = h} E_ni v_i; the light group is the
row total minus the heavy one, and

    o_n = (M_h + w M_l) / (A_h + w A_l).

No exponential exceeds 1 and the subtraction is stable: its rounding error, eps * sum_i E_ni |v_i|,
is at most 2 eps max |v| after the division (either A_h or A_l is at least half the row total).
Rows are sorted by (group, position), so the causal triangle is skipped block by block. The only
limit is a row of S spanning more than the floating-point exponent range (float32: ~87), where the
heavy group's sum underflows: ``binary_token_attention`` then returns None and the caller uses the
general kernel. Gradients come from autograd; the row max is detached (the output does not depend
on it).
"""
from __future__ import annotations

import math

import torch

BLOCK_ROWS = 128  # rows of E per GEMM: small enough to skip most of the causal triangle


class _CausalBlockProduct(torch.autograd.Function):
    """sums[r] = exp(S_r - max S_r) @ rhs_{group(r)}[:position_r + 1], S_r = queries[r] . key[:position_r + 1].

    Rows come sorted by (group, position), so each block of rows is a dense GEMM over the keys up
    to its last position; only the columns past its first position need the causal mask. ``blocks``
    lists (start, stop, group) of those row blocks. The backward is written out (dS = E * dE; no mask
    is needed there since E is zero above the diagonal) and reuses the blocks' probabilities.
    """

    @staticmethod
    def forward(ctx, queries, key, rhs0, rhs1, blocks, positions):
        rhs = (rhs0, rhs1)
        sums = queries.new_empty(queries.shape[0], rhs0.shape[1])
        probabilities = []
        columns = torch.arange(key.shape[0], device=key.device)
        for start, stop, group in blocks:
            first, width = int(positions[start]) + 1, int(positions[stop - 1]) + 1
            scores = queries[start:stop] @ key[:width].T
            if width > first:  # the causal mask touches only the columns past the block's first position
                scores[:, first:].masked_fill_(columns[first:width] > positions[start:stop, None], float("-inf"))
            scores.sub_(scores.amax(1, keepdim=True)).exp_()
            torch.mm(scores, rhs[group][:width], out=sums[start:stop])
            probabilities.append(scores)
        ctx.blocks = blocks
        ctx.probabilities = probabilities
        ctx.save_for_backward(queries, key, rhs0, rhs1)
        return sums

    @staticmethod
    def backward(ctx, grad_sums):
        queries, key, rhs0, rhs1 = ctx.saved_tensors
        rhs = (rhs0, rhs1)
        grad_queries, grad_key = torch.empty_like(queries), torch.zeros_like(key)
        grad_rhs = (torch.zeros_like(rhs0), torch.zeros_like(rhs1))
        for (start, stop, group), weights in zip(ctx.blocks, ctx.probabilities):
            width = weights.shape[1]
            grad = grad_sums[start:stop]
            grad_rhs[group][:width].addmm_(weights.T, grad)
            grad_scores = (grad @ rhs[group][:width].T).mul_(weights)
            torch.mm(grad_scores, key[:width], out=grad_queries[start:stop])
            grad_key[:width].addmm_(grad_scores.T, queries[start:stop])
        return grad_queries, grad_key, grad_rhs[0], grad_rhs[1], None, None


def binary_token_attention(
    tokens: torch.Tensor, e: torch.Tensor, p: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor, W_V: torch.Tensor
) -> torch.Tensor | None:
    """softmax(q k^T / sqrt d, causal) v of shape (B, T, d) for tokens (B, T) in {0, 1}; None on underflow."""
    batch, length = tokens.shape
    d = e.shape[0]
    device = tokens.device
    p = p[:length]
    query = p @ W_Q.T
    queries = torch.cat((query, query + W_Q @ e)) * (1.0 / math.sqrt(d))  # (2T, d): row r = (tau, n) = divmod(r, T)
    key = p @ W_K.T
    beta = queries @ (W_K @ e)  # (2T,)
    value = p @ W_V.T
    shift = W_V @ e  # u: the value of a key with t_i = 1 is value_i + u

    # Sort the rows by (heavy group, position, tau): each group's rows then climb the causal staircase.
    rows = torch.arange(2 * length, device=device)
    heavy = beta.detach() >= 0
    order = torch.argsort(heavy.long() * (2 * length) + (rows % length) * 2 + rows // length)
    positions = (order % length).contiguous()
    ones_in_group = int(heavy.sum())
    blocks = []
    for group, (first, last) in enumerate(((0, 2 * length - ones_in_group), (2 * length - ones_in_group, 2 * length))):
        blocks += [(start, min(start + BLOCK_ROWS, last), group) for start in range(first, last, BLOCK_ROWS)]

    # Right-hand sides: the heavy group's token-masked values and indicators per batch element, then
    # the row total and sum of E value shared by the batch.
    is_one = tokens.T.to(value.dtype)  # (T, B)
    ones = torch.ones(length, 1, dtype=value.dtype, device=device)
    shared = torch.cat((value, ones), 1)  # (T, d+1)
    rhs = []
    for group in (0, 1):
        mask = is_one if group else 1 - is_one
        heavy_values = torch.cat((value + shift, ones), 1) if group else shared
        rhs.append(torch.cat(((mask.unsqueeze(-1) * heavy_values.unsqueeze(1)).reshape(length, batch * (d + 1)), shared), 1))
    sums = _CausalBlockProduct.apply(queries[order], key, rhs[0], rhs[1], blocks, positions)
    # Each query (n, b) reads row r = t_bn T + n of its own symbol: its batch block and the shared one.
    row = (tokens.T.long() * length + torch.arange(length, device=device).unsqueeze(1)).flatten()  # (T B,)
    sorted_row = torch.argsort(order)[row]
    blocks_per_row = sums.view(-1, d + 1)  # (2T (B+1), d+1)
    chosen = blocks_per_row.index_select(0, sorted_row * (batch + 1) + torch.arange(batch, device=device).repeat(length))
    totals = blocks_per_row.index_select(0, sorted_row * (batch + 1) + batch)
    beta = beta.index_select(0, row)  # (T B,): flat (T, B) layout from here on
    group = (beta.detach() >= 0).unsqueeze(-1).to(value.dtype)
    heavy_total, heavy_sum = chosen[:, d], chosen[:, :d]
    light_total = totals[:, d] - heavy_total
    # sum E value over the light group: total minus the heavy group's (without its shift u), plus u if light is t = 1
    heavy_shift = group * shift
    light_sum = totals[:, :d] - heavy_sum + heavy_shift * heavy_total.unsqueeze(-1) + (shift - heavy_shift) * light_total.unsqueeze(-1)

    ones_so_far = tokens.T.long().cumsum(0).flatten()
    heavy_present = torch.where(group.squeeze(-1).bool(), ones_so_far > 0, row % length + 1 > ones_so_far)
    if bool((heavy_present & (heavy_total < torch.finfo(heavy_total.dtype).tiny)).any()):
        return None
    # An absent heavy group has exactly zero sums; the light group then carries the whole row (weight 1).
    light_weight = torch.where(heavy_present, torch.exp(-beta.abs()), torch.ones_like(beta)).unsqueeze(-1)
    numerator = heavy_sum + light_weight * light_sum
    denominator = heavy_total.unsqueeze(-1) + light_weight * light_total.unsqueeze(-1)
    return (numerator / denominator).view(length, batch, d).transpose(0, 1)
