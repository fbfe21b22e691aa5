"""The fast attention's per-query maps from its block sums to its output, and their backward, as
one numba pass each (fast_attention.py's ``_attention`` and ``_attention_backward``).

For query symbol tau, batch element b and position n, with the heavy group's sums H_v (d,) and
H_a of the block products, the row totals T_v, T_a (batch column B), the heavy group h of the row
and lambda = exp((1 - 2h) beta) (fast_attention.py),

    numerator = c_v + a H_a + (1 - lambda) H_v,   denominator = c_a + (1 - lambda) H_a,
    a = lambda (2h - 1) u,   c_v = lambda (T_v + (1 - h) u T_a),   c_a = lambda T_a,
    o = numerator / denominator   (only for tau = the query's own symbol).

Written as tensor operations, that is some twenty-five of them over (2, d, N) and (2, d, B, N)
tensors, each a call and a stream through memory; here the row coefficients are computed once per
row and each (tau, b) row of positions is read once, the loops running along the contiguous
positions. The backward ends in beta's, u's and the row totals' gradients, so that nothing of this
map is left to tensor operations.
"""

from __future__ import annotations

import numba
import numpy as np

# Reassociation and contraction only: NaN and infinity keep their IEEE meaning (and, with numpy's
# error model, a division by zero is infinite, not an exception).
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _row_coefficients(sums, heavy, shift, tau, light_weight, mix_weight, mix, offset):
    """For query symbol ``tau``, given lambda (``light_weight``, 2 x N): lambda (2h - 1) (N,), a (d, N)
    and c_v (d, N) into the last three."""
    d, length = mix.shape
    batch = sums.shape[2] - 1
    one = np.ones(1, dtype=mix.dtype)[0]
    for n in range(length):
        mix_weight[n] = light_weight[tau, n] if heavy[tau, n] else -light_weight[tau, n]
    for c in range(d):
        for n in range(length):
            light_of_ones = one - one if heavy[tau, n] else light_weight[tau, n]  # lambda (1 - h)
            mix[c, n] = mix_weight[n] * shift[c]
            offset[c, n] = (
                light_weight[tau, n] * sums[tau, c, batch, n] + light_of_ones * sums[tau, d, batch, n] * shift[c]
            )


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _row_coefficients_backward(
    sums, heavy, shift, tau, light_weight, mix_weight, row_grads, grad_sums, grad_beta, grad_shift
):
    """For query symbol ``tau``, from the gradients of the row coefficients summed over the batch,
    ``row_grads`` = (1 - lambda's (N,), c_a's (N,), a's (d, N), c_v's (d, N)): the row totals' into
    the batch column B of ``grad_sums``, beta's into ``grad_beta`` (2, N), u's added to ``grad_shift``."""
    grad_heavy, grad_light_total, grad_mix, grad_offset = row_grads
    d, length = grad_mix.shape
    batch = sums.shape[2] - 1
    one = np.ones(1, dtype=grad_mix.dtype)[0]
    zero = one - one
    for c in range(d):  # a = lambda (2h - 1) u, c_v = lambda T_v + lambda (1 - h) u T_a
        total = zero
        for n in range(length):
            light_of_ones = zero if heavy[tau, n] else light_weight[tau, n]
            total += grad_mix[c, n] * mix_weight[n] + grad_offset[c, n] * light_of_ones * sums[tau, d, batch, n]
            grad_sums[tau, c, batch, n] = light_weight[tau, n] * grad_offset[c, n]
        grad_shift[c] += total
    for n in range(length):
        h = one if heavy[tau, n] else zero
        weight, total_ones = light_weight[tau, n], sums[tau, d, batch, n]
        offset_shift, mix_shift, offset_totals = zero, zero, zero
        for c in range(d):
            offset_shift += grad_offset[c, n] * shift[c]
            mix_shift += grad_mix[c, n] * shift[c]
            offset_totals += grad_offset[c, n] * sums[tau, c, batch, n]
        grad_sums[tau, d, batch, n] = weight * (grad_light_total[n] + (one - h) * offset_shift)
        # lambda's gradient, then beta's: dlambda/dbeta = (1 - 2h) lambda
        grad_weight = (2 * h - one) * mix_shift + offset_totals
        grad_weight += ((one - h) * offset_shift + grad_light_total[n]) * total_ones - grad_heavy[n]
        grad_beta[tau, n] = (one - 2 * h) * weight * grad_weight


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def combine(sums, beta, heavy, shift, is_one, limit, light_weight, scale, out):
    """out (d, B, N) = numerator / denominator of each query's own symbol and scale (2, B, N) = 1 /
    denominator there, 0 in the other symbol's slot, from the block sums (2, d + 1, B + 1, N), beta
    (2, N), the heavy group (2, N, booleans) and u (d,); lambda into ``light_weight`` (2, N). True if
    an own denominator is below ``limit``."""
    d, batch, length = out.shape
    underflow = False
    one = np.ones(1, dtype=out.dtype)[0]
    mix_weight = np.empty(length, dtype=out.dtype)
    mix, offset = np.empty((d, length), dtype=out.dtype), np.empty((d, length), dtype=out.dtype)
    for tau in range(2):
        for n in range(length):  # lambda = exp((1 - 2h) beta)
            light_weight[tau, n] = np.exp(-beta[tau, n] if heavy[tau, n] else beta[tau, n])
        _row_coefficients(sums, heavy, shift, tau, light_weight, mix_weight, mix, offset)
        for b in range(batch):
            for n in range(length):
                own = is_one[b, n] if tau else one - is_one[b, n]
                heavy_weight = one - light_weight[tau, n]
                light_total = light_weight[tau, n] * sums[tau, d, batch, n]
                denominator = light_total + heavy_weight * sums[tau, d, b, n]
                underflow |= (own > 0) & (denominator < limit)
                scale[tau, b, n] = own / (denominator if own > 0 else one)
            for c in range(d):
                for n in range(length):
                    numerator = offset[c, n] + mix[c, n] * sums[tau, d, b, n]
                    value = (numerator + (one - light_weight[tau, n]) * sums[tau, c, b, n]) * scale[tau, b, n]
                    out[c, b, n] = out[c, b, n] + value if tau else value
    return underflow


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def combine_backward(grad, out, scale, sums, heavy, shift, light_weight, grad_sums, grad_beta, grad_shift):
    """Given the output's gradient ``grad`` (d, B, N) and the forward's operands and results: the
    gradients of the block sums into ``grad_sums`` (2, d + 1, B + 1, N, every entry written), of beta
    into ``grad_beta`` (2, N), and u's added to ``grad_shift`` (d,)."""
    d, batch, length = out.shape
    dtype = out.dtype
    one = np.ones(1, dtype=dtype)[0]
    zero = one - one
    projection = np.empty((batch, length), dtype=dtype)  # <grad, o> per query
    for b in range(batch):
        for n in range(length):
            projection[b, n] = zero
        for c in range(d):
            for n in range(length):
                projection[b, n] += grad[c, b, n] * out[c, b, n]
    mix_weight = np.empty(length, dtype=dtype)
    mix, offset = np.empty((d, length), dtype=dtype), np.empty((d, length), dtype=dtype)
    # Summed over the batch: the gradients of 1 - lambda, c_a, a and c_v.
    grad_heavy, grad_light_total = np.empty(length, dtype=dtype), np.empty(length, dtype=dtype)
    grad_mix, grad_offset = np.empty((d, length), dtype=dtype), np.empty((d, length), dtype=dtype)
    grad_denominator, mixed, heavy_sum = np.empty(length, dtype), np.empty(length, dtype), np.empty(length, dtype)
    for tau in range(2):
        _row_coefficients(sums, heavy, shift, tau, light_weight, mix_weight, mix, offset)
        grad_heavy[:] = zero
        grad_light_total[:] = zero
        grad_mix[:] = zero
        grad_offset[:] = zero
        for b in range(batch):
            for n in range(length):
                grad_denominator[n] = -projection[b, n] * scale[tau, b, n]
                grad_light_total[n] += grad_denominator[n]
                mixed[n] = zero
                heavy_sum[n] = zero
            for c in range(d):
                for n in range(length):
                    entry = grad[c, b, n]
                    scaled = entry * scale[tau, b, n]
                    grad_sums[tau, c, b, n] = scaled * (one - light_weight[tau, n])
                    mixed[n] += entry * mix[c, n]
                    heavy_sum[n] += entry * sums[tau, c, b, n]
                    grad_mix[c, n] += scaled * sums[tau, d, b, n]
                    grad_offset[c, n] += scaled
            for n in range(length):
                heavy_weight = one - light_weight[tau, n]
                grad_sums[tau, d, b, n] = mixed[n] * scale[tau, b, n] + grad_denominator[n] * heavy_weight
                grad_heavy[n] += heavy_sum[n] * scale[tau, b, n] + grad_denominator[n] * sums[tau, d, b, n]
        row_grads = (grad_heavy, grad_light_total, grad_mix, grad_offset)
        _row_coefficients_backward(
            sums, heavy, shift, tau, light_weight, mix_weight, row_grads, grad_sums, grad_beta, grad_shift
        )
