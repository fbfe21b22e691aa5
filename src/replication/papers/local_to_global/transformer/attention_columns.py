"""The right-hand sides of the fast attention's block products and their gradients, one numba pass
each (fast_attention.py's ``_attention`` and ``_attention_backward``).

For a pair of groups (h_0, h_1), one per query symbol, the right-hand side is (N, 2, d + 1, B + 1),
keys first (its gradient, which the backward's products write, is laid out (2, d + 1, B + 1, N)):
for query symbol s with group h = h_s, the token-masked [value, 1] of every key with t_i = h in batch
column b < B (the value plus u when h = 1), then in column B the batch-shared [value, 1] of the row
totals; symbol 1's side is multiplied by the key factors gamma. As tensor operations that is a dozen
broadcasts over (d + 1, B + 1, N), forward and back, each streaming the whole right-hand side through
memory; here every entry is written once, and read once on the way back. The forward is the same
arithmetic as those operations ((value + u) mask gamma, in that order), so its bits are theirs.
"""

from __future__ import annotations

import numba
import numpy as np

# The backward's sums may be reassociated (its rounding is that of any order); the forward is exact.
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


@numba.njit(cache=True, error_model="numpy")
def right_hand_side(value_t, shift, is_one, gamma, groups, out):
    """``out`` (N, 2, d + 1, B + 1), keys first, from the values (d, N), the value shift u (d,), the
    tokens (B, N) as 0/1 floats, the key factors gamma (N,) and the group of each query symbol
    (``groups``, 2). Keys first: the block products read it as (keys, columns) for dE and as its
    transpose for the forward, at the same speed, so no transposed copy is made."""
    d, length = value_t.shape
    batch = is_one.shape[0]
    one = np.ones(1, dtype=out.dtype)[0]
    for i in range(length):
        for side in range(2):
            h = groups[side]
            entries = out[i, side]  # (d + 1, B + 1)
            for b in range(batch):  # the group's 0/1 mask: the ones entry of column b
                entries[d, b] = is_one[b, i] if h else one - is_one[b, i]
            for c in range(d):
                value = value_t[c, i]
                masked = (value + shift[c]) if h else value
                for b in range(batch):
                    entries[c, b] = masked * entries[d, b]
                entries[c, batch] = value
            entries[d, batch] = one
            if side:
                factor = gamma[i]
                for c in range(d + 1):
                    for b in range(batch + 1):
                        entries[c, b] = entries[c, b] * factor


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def right_hand_side_backward(grad, value_t, shift, is_one, gamma, groups, grad_value_t, grad_shift, grad_gamma):
    """Adds to the gradients of the values (d, N), of u (d,) and of gamma (N,) those of one right-hand
    side, given its gradient ``grad`` (2, d + 1, B + 1, N) and the forward's operands."""
    d, length = value_t.shape
    batch = is_one.shape[0]
    one = np.ones(1, dtype=grad.dtype)[0]
    zero = one - one
    weight = np.empty(length, dtype=grad.dtype)  # the gradient of an entry before gamma
    for side in range(2):
        h = groups[side]
        for c in range(d + 1):
            for b in range(batch + 1):
                source = grad[side, c, b]
                for i in range(length):
                    weight[i] = source[i] * gamma[i] if side else source[i]
                if b < batch:  # token-masked entries: (value (+ u)) mask below the ones row, mask in it
                    if c < d:
                        total = zero
                        for i in range(length):
                            mask = is_one[b, i] if h else one - is_one[b, i]
                            masked = weight[i] * mask
                            grad_value_t[c, i] += masked
                            total += masked
                            if side:
                                entry = ((value_t[c, i] + shift[c]) if h else value_t[c, i]) * mask
                                grad_gamma[i] += source[i] * entry
                        if h:
                            grad_shift[c] += total
                    elif side:
                        for i in range(length):
                            grad_gamma[i] += source[i] * (is_one[b, i] if h else one - is_one[b, i])
                elif c < d:  # the row totals' values
                    for i in range(length):
                        grad_value_t[c, i] += weight[i]
                        if side:
                            grad_gamma[i] += source[i] * value_t[c, i]
                elif side:  # the row totals' ones
                    for i in range(length):
                        grad_gamma[i] += source[i]
