"""The fast attention's per-query maps from its block sums to its output, and their backward, as
one numba pass each (fast_attention.py's ``_attention`` and ``_attention_backward``).

For query symbol tau, batch element b and position n, with the heavy group's sums H_v (d,) and
H_a of the block products and the row coefficients of fast_attention.py (1 - lambda, a, c_v, c_a),

    numerator = c_v + a H_a + (1 - lambda) H_v,   denominator = c_a + (1 - lambda) H_a,
    o = numerator / denominator   (only for tau = the query's own symbol).

Written as some fifteen tensor operations over (2, d, B, N) tensors, each streams them through
memory once; here each (tau, b) row of positions is read once, its loops running along the
contiguous positions. The per-row coefficients (2, d, N) stay tensor operations.
"""

from __future__ import annotations

import numba
import numpy as np

# Reassociation and contraction only: NaN and infinity keep their IEEE meaning (and, with numpy's
# error model, a division by zero is infinite, not an exception).
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def combine(sums, offset, mix, heavy_weight, light_total, is_one, limit, scale, out):
    """out (d, B, N) = numerator / denominator of each query's own symbol and scale (2, B, N) = 1 /
    denominator there, 0 in the other symbol's slot, from the block sums (2, d + 1, B + 1, N),
    c_v = ``offset`` (2, d, N), a = ``mix`` (2, d, N), 1 - lambda = ``heavy_weight`` (2, N) and
    c_a = ``light_total`` (2, N). True if an own denominator is below ``limit``."""
    d, batch, length = out.shape
    underflow = False
    one = np.ones(1, dtype=out.dtype)[0]
    for tau in range(2):
        for b in range(batch):
            for n in range(length):
                own = is_one[b, n] if tau else one - is_one[b, n]
                denominator = light_total[tau, n] + heavy_weight[tau, n] * sums[tau, d, b, n]
                underflow |= (own > 0) & (denominator < limit)
                scale[tau, b, n] = own / (denominator if own > 0 else one)
            for c in range(d):
                for n in range(length):
                    numerator = offset[tau, c, n] + mix[tau, c, n] * sums[tau, d, b, n]
                    value = (numerator + heavy_weight[tau, n] * sums[tau, c, b, n]) * scale[tau, b, n]
                    out[c, b, n] = out[c, b, n] + value if tau else value
    return underflow


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def combine_backward(grad, out, scale, sums, heavy_weight, mix, grad_sums, row_grads, grad_mix, grad_offset):
    """Given the output's gradient ``grad`` (d, B, N): the gradients of the heavy sums into the batch
    columns of ``grad_sums`` (2, d + 1, B + 1, N), and, summed over the batch, those of 1 - lambda and
    c_a into ``row_grads`` (2, 2, N), of a into ``grad_mix`` and of c_v into ``grad_offset`` (2, d, N);
    the three sums zeroed."""
    d, batch, length = out.shape
    projection = np.empty(length, dtype=out.dtype)  # <grad, o> per position
    grad_denominator, mixed, heavy = (
        np.empty(length, out.dtype),
        np.empty(length, out.dtype),
        np.empty(length, out.dtype),
    )
    for b in range(batch):
        for n in range(length):
            projection[n] = 0
        for c in range(d):
            for n in range(length):
                projection[n] += grad[c, b, n] * out[c, b, n]
        for tau in range(2):
            for n in range(length):
                grad_denominator[n] = -projection[n] * scale[tau, b, n]
                row_grads[tau, 1, n] += grad_denominator[n]
                mixed[n] = 0
                heavy[n] = 0
            for c in range(d):
                for n in range(length):
                    entry = grad[c, b, n]
                    scaled = entry * scale[tau, b, n]
                    grad_sums[tau, c, b, n] = scaled * heavy_weight[tau, n]
                    mixed[n] += entry * mix[tau, c, n]
                    heavy[n] += entry * sums[tau, c, b, n]
                    grad_mix[tau, c, n] += scaled * sums[tau, d, b, n]
                    grad_offset[tau, c, n] += scaled
            for n in range(length):
                grad_sums[tau, d, b, n] = mixed[n] * scale[tau, b, n] + grad_denominator[n] * heavy_weight[tau, n]
                row_grads[tau, 0, n] += heavy[n] * scale[tau, b, n] + grad_denominator[n] * sums[tau, d, b, n]
