"""Exact causal attention for binary tokens through batch-independent positional score matrices.

With x_n = t_n e + p_n and t_n in {0, 1}, the projections are q_n = Q^{t_n}_n, k_i = K^{t_i}_i and
v_i = V^{t_i}_i = PV_i + t_i u, where Q^0 = p W_Q^T, Q^1 = Q^0 + W_Q e, K^0 = p W_K^T, PV = p W_V^T,
u = W_V e. The score of query n on key i

    s_ni = Q^{t_n}_n . K^{t_i}_i / sqrt(d) = S^{t_n}_ni + t_i beta^{t_n}_n,
    S^tau = Q^tau (K^0)^T / sqrt(d),   beta^tau = Q^tau . W_K e / sqrt(d),

is an entry of one of two N x N matrices that do not depend on the batch, plus a per-row offset on
keys with t_i = 1. So each of the 2N rows (tau, n) of the batch-independent matrix
E_ni = exp(S_ni - m_n) (causal; the output does not depend on a row's scale, so any shift m_n that
keeps the row's largest entry near 1 will do) splits the softmax by key value sigma into two groups
whose weights differ by the factor exp(beta): the "heavy" group h has factor 1, the light one w = exp((1 - 2h) beta).
h = [beta >= -ln 2], so w <= 2 (nothing overflows), and rows with |beta| small, as at initialisation,
all share one group, which keeps row blocks short in position. For the heavy group, dense GEMMs of E
with the token-masked values of the whole batch give A_h = sum_{t_i = h} E_ni and
M_h = sum_{t_i = h} E_ni v_i; the light group is the row total minus the heavy one, and

    o_n = (M_h + w M_l) / (A_h + w A_l).

The subtraction is stable: its rounding error, w eps sum_i E_ni |v_i|, is at most 2 eps max |v| after
the division (for w >= 1 the denominator is at least the row total; for w < 1 either A_h or A_l is
at least half of it).
Rows are sorted by (group, position), so the causal triangle is skipped block by block. The only
limit is a row of S spanning about half the floating-point exponent range (float32: ~43), where the
heavy group's sum nears underflow: ``binary_token_attention`` then returns None and the caller uses
the general kernel. The backward is written out (checked against autograd through PyTorch's kernel and
with torch.autograd.gradcheck in tests/test_l2g_fast_attention.py); a row's shift is a constant there
(the output does not depend on a row's scale). Per-query quantities live in a (d, queries) layout, so
that a query's scalars broadcast along contiguous rows.
"""

from __future__ import annotations

import math

import torch

BLOCK_ROWS = 128  # rows of E per GEMM: small enough to skip most of the causal triangle
LOG_MAX_LIGHT_WEIGHT = math.log(2)  # keys of the light group weigh at most 2x the heavy group's
SHIFT_BOUND_LIMIT = 4.0  # rows shifted by a score bound up to this shrink by at most exp(-8) ~ 3e-4


class ScoresOutOfRange(ArithmeticError):
    """A row of positional scores spans more than the floating-point exponent range."""


def _block_products(queries, key, rhs, blocks, keep):
    """sums[r] = E_r @ rhs_{group(r)} with E_r = exp(S_r - m_r) over keys up to position_r, and the E
    blocks when ``keep``. The output does not depend on a row's scale, so any shift m_r that keeps the
    largest entry near 1 will do: Cauchy-Schwarz gives m_r = |q_r| max_i |k_i| >= S_ri, folded into the
    score GEMM through a column of ones, and one exp pass replaces softmax's three. Where that bound is
    loose enough to shrink a row by more than exp(-2 SHIFT_BOUND_LIMIT), the row maximum is used."""
    d = key.shape[1]
    sums = queries.new_empty(queries.shape[0], rhs[0].shape[1])
    probabilities = []
    columns = torch.arange(key.shape[0], device=key.device)
    bound = torch.linalg.vector_norm(queries, dim=1) * torch.linalg.vector_norm(key, dim=1).max()
    shifted_queries = torch.cat((queries, -bound.unsqueeze(1)), 1)
    # (d + 1, T): the score GEMM then reads keys along its long dimension
    key_columns = torch.cat((key, torch.ones_like(key[:, :1])), 1).T.contiguous()
    block_bounds = torch.stack([bound[start:stop].max() for start, stop, *_ in blocks]).tolist() if blocks else []
    for (start, stop, group, first, width, positions), largest in zip(blocks, block_bounds):
        if largest <= SHIFT_BOUND_LIMIT:
            weights = torch.mm(shifted_queries[start:stop], key_columns[:, :width]).exp_()  # entries in (0, 1]
            if width > first:  # the causal mask touches only the columns past the block's first position
                weights[:, first:].masked_fill_(columns[first:width] > positions, 0.0)
        else:
            weights = torch.mm(queries[start:stop], key_columns[:d, :width])
            if width > first:
                weights[:, first:].masked_fill_(columns[first:width] > positions, float("-inf"))
            weights = torch.softmax(weights, 1)
        torch.mm(weights, rhs[group][:width], out=sums[start:stop])
        if keep:
            probabilities.append(weights)
    return sums, probabilities


def _block_products_backward(grad_sums, queries, key, rhs, blocks, probabilities):
    """Gradients of the block products for queries, key and both right-hand sides (dS = E * dE)."""
    grad_queries, grad_key = torch.empty_like(queries), torch.zeros_like(key)
    grad_rhs = (torch.zeros_like(rhs[0]), torch.zeros_like(rhs[1]))
    for (start, stop, group, _, width, _), weights in zip(blocks, probabilities):
        grad = grad_sums[start:stop]
        grad_rhs[group][:width].addmm_(weights.T, grad)
        grad_scores = (grad @ rhs[group][:width].T).mul_(weights)
        torch.mm(grad_scores, key[:width], out=grad_queries[start:stop])
        grad_key[:width].addmm_(grad_scores.T, queries[start:stop])
    return grad_queries, grad_key, grad_rhs


class _BinaryTokenAttention(torch.autograd.Function):
    """Attention output (B, T, d) from queries (2T, d) of rows (tau, n), keys (T, d), values (T, d), the
    value shift u (d,) and beta (2T,); tokens (B, T). See the module docstring for the algebra.

    Per-query quantities are kept as (d, K) and (K,) with K = b T + n, so that the scalars of a query
    broadcast along contiguous rows (a (K, d) layout with d = 8 leaves the vector units idle)."""

    @staticmethod
    def forward(ctx, queries, key, value, shift, beta, tokens):
        batch, length = tokens.shape
        d = value.shape[1]
        device = value.device
        # Sort the rows by (heavy group, position, tau): each group's rows then climb the causal staircase.
        rows = torch.arange(2 * length, device=device)
        heavy = beta >= -LOG_MAX_LIGHT_WEIGHT
        order = torch.argsort(heavy.long() * (2 * length) + (rows % length) * 2 + rows // length)
        positions = (order % length).unsqueeze(1)
        ones_in_group = int(heavy.sum())
        blocks, ends = [], positions.squeeze(1).tolist()
        for group, (first, last) in enumerate(
            ((0, 2 * length - ones_in_group), (2 * length - ones_in_group, 2 * length))
        ):
            for start in range(first, last, BLOCK_ROWS):
                stop = min(start + BLOCK_ROWS, last)
                blocks.append((start, stop, group, ends[start] + 1, ends[stop - 1] + 1, positions[start:stop]))

        # Right-hand sides: the heavy group's token-masked [value, 1] per batch element, then the
        # batch-shared [value, 1] for the row totals.
        is_one = tokens.T.to(value.dtype)  # (T, B)
        masks = (1 - is_one, is_one)
        ones = torch.ones(length, 1, dtype=value.dtype, device=device)
        shared = torch.cat((value, ones), 1)
        heavy_values = (shared, torch.cat((value + shift, ones), 1))
        rhs = tuple(
            torch.cat((masks[g].unsqueeze(-1) * heavy_values[g].unsqueeze(1), shared.unsqueeze(1)), 1).view(
                length, (batch + 1) * (d + 1)
            )
            for g in (0, 1)
        )
        sorted_queries = queries.index_select(0, order)
        keep = any(ctx.needs_input_grad)  # False for an evaluation without gradients: save nothing
        sums, probabilities = _block_products(sorted_queries, key, rhs, blocks, keep)

        # Query k = b T + n reads row r = t_bn T + n: its own batch block and the shared one.
        position = torch.arange(length, device=device).repeat(batch)
        row = tokens.flatten() * length + position
        rank = torch.empty_like(order).index_copy_(0, order, rows)  # the inverse permutation of the sort
        sorted_row = rank.index_select(0, row)
        # Flat indices of the (d + 1, K) entries: one gather straight into the query-major layout.
        entry = torch.arange(d + 1, device=device).unsqueeze(1)
        totals_index = ((sorted_row * (batch + 1) + batch) * (d + 1)).unsqueeze(0) + entry
        chosen_index = totals_index - ((batch - torch.arange(batch, device=device)) * (d + 1)).repeat_interleave(length)
        flat_sums = sums.view(-1)
        chosen = flat_sums.index_select(0, chosen_index.view(-1)).view(d + 1, -1)  # (d + 1, K)
        totals = flat_sums.index_select(0, totals_index.view(-1)).view(d + 1, -1)
        group = heavy.index_select(0, row).to(value.dtype)  # (K,): 1 where the heavy group is t = 1
        heavy_total, heavy_sum = chosen[d], chosen[:d]
        light_total = totals[d] - heavy_total
        # sum E value over the light group: total minus the heavy group's (without its shift u),
        # plus u if light is t = 1
        shift_weight = light_total + group * (heavy_total - light_total)
        light_sum = torch.addr(totals[:d] - heavy_sum, shift, shift_weight)

        ones_so_far = tokens.cumsum(1).flatten()
        present = torch.where(group.bool(), ones_so_far > 0, position + 1 > ones_so_far)
        # Heavy-group entries below the float range are lost; relative to a heavy total above
        # sqrt(tiny) they are below N sqrt(tiny) (float32: 1e-16), so only smaller totals fall back.
        if bool((present & (heavy_total < math.sqrt(torch.finfo(value.dtype).tiny))).any()):
            raise ScoresOutOfRange
        # An absent heavy group has exactly zero sums; the light group then carries the whole row (weight 1).
        light_weight = torch.exp(((1 - 2 * group) * beta.index_select(0, row)).mul_(present))
        denominator = torch.addcmul(heavy_total, light_weight, light_total)
        out = torch.addcmul(heavy_sum, light_sum, light_weight).div_(denominator)  # (d, K)
        if keep:
            ctx.blocks, ctx.probabilities = blocks, probabilities
            ctx.indices = (order, row, chosen_index, totals_index)
            ctx.save_for_backward(
                sorted_queries,
                key,
                shift,
                is_one,
                rhs[0],
                rhs[1],
                group,
                present,
                light_total,
                light_sum,
                shift_weight,
                light_weight,
                denominator,
                out,
            )
        return out.T.view(batch, length, d)

    @staticmethod
    def backward(ctx, grad_out):
        (
            sorted_queries,
            key,
            shift,
            is_one,
            rhs0,
            rhs1,
            group,
            present,
            light_total,
            light_sum,
            shift_weight,
            light_weight,
            denominator,
            out,
        ) = ctx.saved_tensors
        order, row, chosen_index, totals_index = ctx.indices
        length, batch = is_one.shape
        d = key.shape[1]
        grad_numerator = grad_out.reshape(-1, d).T.contiguous().div_(denominator)  # (d, K)
        grad_denominator = -(grad_numerator * out).sum(0)
        grad_light_sum = grad_numerator * light_weight
        grad_light_weight = torch.addcmul((grad_numerator * light_sum).sum(0), grad_denominator, light_total)
        # light_sum = totals_v - heavy_sum + shift_weight u, shift_weight = g heavy_total + (1 - g) light_total
        grad_shift_weight = torch.mv(grad_light_sum.T, shift)
        grad_shift = torch.mv(grad_light_sum, shift_weight)
        grad_light_total = light_weight * grad_denominator + (1 - group) * grad_shift_weight
        grad_heavy_total = grad_denominator + group * grad_shift_weight - grad_light_total  # light = total - heavy
        grad_heavy_sum = grad_numerator - grad_light_sum
        # w = exp((1 - 2h) beta): dw/dbeta = (1 - 2h) w; 0 without a heavy group
        grad_beta_k = ((1 - 2 * group) * light_weight * grad_light_weight).mul_(present)
        grad_beta = torch.zeros(2 * length, dtype=key.dtype, device=key.device).index_add_(0, row, grad_beta_k)

        grad_sums = torch.zeros(2 * length * (batch + 1) * (d + 1), dtype=key.dtype, device=key.device)
        # one query per (row, batch element); the row totals are shared by the queries of a row
        grad_sums.index_copy_(
            0, chosen_index.view(-1), torch.cat((grad_heavy_sum, grad_heavy_total.unsqueeze(0))).view(-1)
        )
        grad_sums.index_add_(
            0, totals_index.view(-1), torch.cat((grad_light_sum, grad_light_total.unsqueeze(0))).view(-1)
        )
        grad_sorted, grad_key, grad_rhs = _block_products_backward(
            grad_sums.view(2 * length, -1), sorted_queries, key, (rhs0, rhs1), ctx.blocks, ctx.probabilities
        )
        grad_queries = torch.empty_like(grad_sorted).index_copy_(0, order, grad_sorted)

        grad_value = torch.zeros_like(key)
        for g, grad in enumerate(grad_rhs):
            grad = grad.view(length, batch + 1, d + 1)[..., :d]
            mask = is_one if g else 1 - is_one
            per_batch = torch.bmm(mask.unsqueeze(1), grad[:, :batch]).squeeze(1)  # (T, d)
            grad_value += per_batch + grad[:, batch]
            if g:
                grad_shift = grad_shift + per_batch.sum(0)
        return grad_queries, grad_key, grad_value, grad_shift, grad_beta, None


def binary_token_attention(
    tokens: torch.Tensor, e: torch.Tensor, p: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor, W_V: torch.Tensor
) -> torch.Tensor | None:
    """softmax(q k^T / sqrt d, causal) v of shape (B, T, d) for tokens (B, T) in {0, 1}; None on underflow."""
    length = tokens.shape[1]
    d = e.shape[0]
    p = p[:length]
    query = p @ W_Q.T
    queries = torch.cat((query, query + W_Q @ e)) * (1.0 / math.sqrt(d))  # (2T, d): row r = (tau, n) = divmod(r, T)
    key = p @ W_K.T
    beta = queries @ (W_K @ e)  # (2T,): the score offset of keys with t_i = 1
    try:
        return _BinaryTokenAttention.apply(queries, key, p @ W_V.T, W_V @ e, beta, tokens.long())
    except ScoresOutOfRange:
        return None
