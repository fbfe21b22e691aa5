"""The fast attention's numba passes over one block of E (keys, rows) on the CPU (fast_attention.py):
in the forward, the exponential of the block's scores with the causal mask; in the backward, the
score gradient dS = E * dE with its two products with d columns (the queries' and keys' gradients).
Each reads the block once where PyTorch's operations would stream it through memory two or three times.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, fastmath=True)
def score_gradients(grad_weights, weights, key, queries_t, start, grad_queries, grad_key):
    """dS = E * dE (keys, rows) for the block of rows start..; grad_queries[start + r] = dS[:, r]^T key
    (d,); grad_key[:keys] += dS queries_t[:, start:]^T, from the queries Q^T (d, T). Two keys a pass:
    each pass over a row of the queries' sums reads and writes it once for both."""
    keys, rows = weights.shape
    d = key.shape[1]
    first = np.uint64(start)  # unsigned: numba checks a signed index for wraparound, which keeps loops scalar
    accumulated = np.zeros((d, rows), dtype=grad_queries.dtype)
    scores = np.empty(rows, dtype=grad_queries.dtype)
    others = np.empty(rows, dtype=grad_queries.dtype)
    zero = np.zeros(1, dtype=grad_queries.dtype)[0]  # sums in the blocks' own precision
    i = 0
    while i + 2 <= keys:
        for r in range(rows):
            scores[r] = grad_weights[i, r] * weights[i, r]
            others[r] = grad_weights[i + 1, r] * weights[i + 1, r]
        for k in range(d):
            key_entry, other_entry = key[i, k], key[i + 1, k]
            total, other_total = zero, zero
            row, query = accumulated[k], queries_t[k]
            for r in range(rows):
                row[r] += scores[r] * key_entry + others[r] * other_entry
                column = first + np.uint64(r)
                total += scores[r] * query[column]
                other_total += others[r] * query[column]
            grad_key[i, k] += total
            grad_key[i + 1, k] += other_total
        i += 2
    if i < keys:
        for r in range(rows):
            scores[r] = grad_weights[i, r] * weights[i, r]
        for k in range(d):
            key_entry = key[i, k]
            total = zero
            for r in range(rows):
                accumulated[k, r] += scores[r] * key_entry
                total += scores[r] * queries_t[k, first + np.uint64(r)]
            grad_key[i, k] += total
    for r in range(rows):
        for k in range(d):
            grad_queries[first + np.uint64(r), k] = accumulated[k, r]


# exp(s) in float32 for the scores of ``causal_exp``: s = n ln 2 + x with |x| <= ln(2) / 2 (Cody and
# Waite: ln 2 in two parts, the first exact in a product with n), exp(x) by the minimax polynomial of
# Cephes' expf, 2^n built in the exponent bits. At most 1.4 ulp from exp over [-87, 0] (PyTorch's 1.05).
_F32 = np.float32
_LOG2E, _ONE = _F32(1.4426950408889634), _F32(1.0)
_LN2_HIGH, _LN2_LOW = _F32(0.693359375), _F32(-2.12194440e-4)
_ROUNDING = _F32(12582912.0)  # 1.5 * 2^23: adding and subtracting it rounds to the nearest integer
_LOWEST = _F32(-87.0)  # exp(-87) ~ 1.6e-38: just above float32's smallest normal number; below, 0
_EXP_POLYNOMIAL = tuple(
    _F32(c)
    for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
)


# No reassociation: it would undo the rounding to an integer and the two-part ln 2.
_EXP_FASTMATH = {"contract", "nsz", "arcp"}


@numba.njit(cache=True, fastmath=_EXP_FASTMATH, error_model="numpy")
def _exp_parts(values, width, polynomial, exponent_bits):
    """For the float32 ``values[:width]`` (at most 0): exp = polynomial * 2^n, the polynomial and the
    bits of 2^n (an int32 array whose float32 view is 2^n) into the two arrays; below -87, those of -87."""
    c0, c1, c2, c3, c4, c5 = _EXP_POLYNOMIAL
    for r in range(width):
        s = max(values[r], _LOWEST)
        n = (s * _LOG2E + _ROUNDING) - _ROUNDING
        x = (s - n * _LN2_HIGH) - n * _LN2_LOW
        polynomial[r] = (((((c0 * x + c1) * x + c2) * x + c3) * x + c4) * x + c5) * (x * x) + x + _ONE
        exponent_bits[r] = (np.int32(n) + np.int32(127)) << np.int32(23)


@numba.njit(cache=True, fastmath=_EXP_FASTMATH, error_model="numpy")
def causal_exp(positions, weights):
    """In place on a float32 block of scores (keys, rows): exp, and 0 where key i comes after row r's
    position (``positions``, ascending) or the score is below -87. One pass instead of PyTorch's exp
    (about 0.85 ns an entry on AVX-512 against 0.3 here) and its mask; vectorised along the rows."""
    keys, rows = weights.shape
    polynomial = np.empty(rows, np.float32)
    exponent_bits = np.empty(rows, np.int32)
    power = exponent_bits.view(np.float32)  # 2^n
    earlier = 0  # rows whose position comes before key i: the first ones, as positions ascend
    for i in range(keys):
        scores = weights[i]
        _exp_parts(scores, rows, polynomial, exponent_bits)
        while earlier < rows and positions[earlier] < i:
            earlier += 1
        for r in range(rows):
            scores[r] = polynomial[r] * power[r] if (r >= earlier) & (scores[r] >= _LOWEST) else 0


@numba.njit(cache=True, fastmath=_EXP_FASTMATH, error_model="numpy")
def exp_nonpositive(values, width, polynomial, exponent_bits):
    """In place on float32 ``values[:width]``, each at most 0: exp, 0 below -87 (``causal_exp``'s
    arithmetic, vectorised where the C library's exp is a scalar call); the last two are scratch
    arrays (float32, int32) of at least ``width`` entries."""
    _exp_parts(values, width, polynomial, exponent_bits)
    power = exponent_bits.view(np.float32)
    for r in range(width):
        values[r] = polynomial[r] * power[r] if values[r] >= _LOWEST else 0
