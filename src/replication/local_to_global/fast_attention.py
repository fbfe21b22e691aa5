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
    """sums[r] = exp(S_r - max S_r) @ rhs_{group(r)}, S_r = queries[r] . key[:position_r + 1], in row blocks.

    ``blocks`` lists (rows, width, group) of row blocks in the causal staircase order. The backward is
    written out (dS = E * dE; no mask is needed there since E is zero above the diagonal) so that the
    blocks' probabilities are reused instead of recomputed or routed through autograd's masked ops.
    """

    @staticmethod
    def forward(ctx, queries, key, rhs0, rhs1, blocks, positions):
        rhs = (rhs0, rhs1)
        sums = queries.new_empty(queries.shape[0], rhs0.shape[1])
        probabilities = []
        for rows, width, group in blocks:
            scores = queries[rows] @ key[:width].T
            scores.masked_fill_(torch.arange(width, device=key.device) > positions[rows].unsqueeze(1), float("-inf"))
            scores.sub_(scores.amax(1, keepdim=True)).exp_()
            sums[rows] = scores @ rhs[group][:width]
            probabilities.append(scores)
        ctx.blocks = blocks
        ctx.probabilities = probabilities
        ctx.save_for_backward(queries, key, rhs0, rhs1)
        return sums

    @staticmethod
    def backward(ctx, grad_sums):
        queries, key, rhs0, rhs1 = ctx.saved_tensors
        rhs = (rhs0, rhs1)
        grad_queries, grad_key = torch.zeros_like(queries), torch.zeros_like(key)
        grad_rhs = (torch.zeros_like(rhs0), torch.zeros_like(rhs1))
        for (rows, width, group), weights in zip(ctx.blocks, ctx.probabilities):
            grad = grad_sums[rows]
            grad_rhs[group][:width].addmm_(weights.T, grad)
            grad_scores = (grad @ rhs[group][:width].T).mul_(weights)
            grad_queries[rows] = grad_scores @ key[:width]
            grad_key[:width].addmm_(grad_scores.T, queries[rows])
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

    rows = torch.arange(2 * length, device=device)
    position = rows % length
    heavy = beta.detach() >= 0
    # Sort by (heavy group, position, tau): each group's rows then climb the causal staircase.
    order = torch.argsort(heavy.long() * (2 * length) + position * 2 + rows // length, stable=True)
    group_sizes = [int(heavy.numel() - heavy.sum()), int(heavy.sum())]

    is_one = tokens.to(value.dtype).T  # (T, B)
    ones = torch.ones(length, 1, dtype=value.dtype, device=device)
    totals_rhs = torch.cat((value, ones), 1)  # row total and sum of E PV, shared by the batch
    rhs = []
    for group in (0, 1):
        mask = is_one if group else 1 - is_one
        heavy_values = torch.cat((value + shift if group else value, ones), 1)  # (T, d+1)
        rhs.append(torch.cat(((mask.unsqueeze(-1) * heavy_values.unsqueeze(1)).reshape(length, batch * (d + 1)), totals_rhs), 1))
    blocks, start = [], 0
    for group, size in enumerate(group_sizes):
        for block in range(start, start + size, BLOCK_ROWS):
            rows = order[block : min(block + BLOCK_ROWS, start + size)]
            blocks.append((rows, int(position[rows[-1]]) + 1, group))
        start += size
    sums = _CausalBlockProduct.apply(queries, key, rhs[0], rhs[1], blocks, position)  # (2T, B (d+1) + d + 1)

    # Each query (b, n) reads row r = t_bn T + n.
    pick = (tokens.T.long() * length + torch.arange(length, device=device).unsqueeze(1))  # (T, B)
    per_batch = sums[:, : batch * (d + 1)].view(2 * length, batch, d + 1)
    chosen = per_batch.gather(0, pick.unsqueeze(-1).expand(-1, -1, d + 1)).transpose(0, 1)  # (B, T, d+1)
    pick = pick.T  # (B, T)
    row_total, row_values = sums[pick, -1], sums[pick, -(d + 1) : -1]  # (B, T), (B, T, d): sum E, sum E PV
    group = heavy[pick]  # (B, T)
    heavy_total, heavy_sum = chosen[..., d], chosen[..., :d]
    light_total = row_total - heavy_total
    # sum E PV over the light group, plus its shift u when the light group is t = 1
    heavy_shift = torch.where(group.unsqueeze(-1), shift, torch.zeros_like(shift))
    light_sum = row_values - (heavy_sum - heavy_shift * heavy_total.unsqueeze(-1)) + (shift - heavy_shift) * light_total.unsqueeze(-1)
    light_weight = torch.exp(-beta[pick].abs())

    counts_one = tokens.long().cumsum(1)
    heavy_present = torch.where(group, counts_one > 0, torch.arange(1, length + 1, device=device) - counts_one > 0)
    if bool((heavy_present & (heavy_total < torch.finfo(heavy_total.dtype).tiny)).any()):
        return None
    numerator = torch.where(heavy_present.unsqueeze(-1), heavy_sum + light_weight.unsqueeze(-1) * light_sum, light_sum)
    denominator = torch.where(heavy_present, heavy_total + light_weight * light_total, light_total)
    return numerator / denominator.unsqueeze(-1)
