"""The fast attention's projections and their backward, one numba pass each (fast_attention.py's
``_BinaryTokenAttention``).

From e (d,), the positional embeddings p (N, d) and W_Q, W_K, W_V (d, d), with s = 1 / sqrt(d):

    Q = s p W_Q^T,  w = s W_Q e,  K = p W_K^T,  kappa = W_K e,  V = p W_V^T,  u = W_V e,
    c = K w,  gamma = exp(c - max c),  beta^tau = Q kappa + tau (w . kappa),

and the heavy group of each row (beta >= the limit, fast_attention.py) with the rows' order by
(group pair, position). Each is a product only d = 8 wide over N positions: as tensor operations
some twenty calls a direction, each paying a call's overhead and, inside a training step whose
block products have just filled the caches, its code's and data's cache misses; here one call.
"""

from __future__ import annotations

import numba
import numpy as np

_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def projections(e, p, W_Q, W_K, W_V, scale, limit, queries, key, value_t, tokens_shares, gamma, beta, heavy):
    """Q, K (N, d), V^T (d, N), the token's shares (w, kappa, u) as the rows of ``tokens_shares``
    (3, d), gamma (N,), beta (2, N) and the heavy group beta >= ``limit`` (2, N, booleans), written
    into the arrays given; ``scale`` is s, a scalar of the arrays' type."""
    length, d = p.shape
    zero = np.zeros(1, dtype=p.dtype)[0]
    for k in range(d):
        w, kappa, shift = zero, zero, zero
        for j in range(d):
            w += W_Q[k, j] * e[j]
            kappa += W_K[k, j] * e[j]
            shift += W_V[k, j] * e[j]
        tokens_shares[0, k], tokens_shares[1, k], tokens_shares[2, k] = w * scale, kappa, shift
    w, kappa = tokens_shares[0], tokens_shares[1]
    shares = zero
    for k in range(d):
        shares += w[k] * kappa[k]
    for n in range(length):
        key_offset, query_offset = zero, zero
        for k in range(d):
            q, c, v = zero, zero, zero
            for j in range(d):
                q += p[n, j] * W_Q[k, j]
                c += p[n, j] * W_K[k, j]
                v += p[n, j] * W_V[k, j]
            queries[n, k], key[n, k], value_t[k, n] = q * scale, c, v
            key_offset += c * w[k]
            query_offset += q * scale * kappa[k]
        gamma[n] = key_offset
        beta[0, n], beta[1, n] = query_offset, query_offset + shares
        heavy[0, n], heavy[1, n] = beta[0, n] >= limit, beta[1, n] >= limit
    largest = gamma.max()
    for n in range(length):  # in (0, 1]; a constant shift cancels in the softmax
        gamma[n] = np.exp(gamma[n] - largest)


@numba.njit(cache=True)
def row_order(heavy):
    """The rows sorted by (group pair h_0 + 2 h_1, position), a counting sort (stable), and the
    number of rows of each pair (4,)."""
    length = heavy.shape[1]
    counts = np.zeros(4, dtype=np.int64)
    for n in range(length):
        counts[np.int64(heavy[0, n]) + 2 * np.int64(heavy[1, n])] += 1
    following = np.zeros(4, dtype=np.int64)  # the next slot of each pair
    for pair in range(1, 4):
        following[pair] = following[pair - 1] + counts[pair - 1]
    order = np.empty(length, dtype=np.int64)
    for n in range(length):
        pair = np.int64(heavy[0, n]) + 2 * np.int64(heavy[1, n])
        order[following[pair]] = n
        following[pair] += 1
    return order, counts


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def projections_backward(grads, e, p, W_Q, W_K, W_V, scale, queries, key, tokens_shares, gamma, parameter_grads):
    """Given the gradients (Q's (N, d), K's (N, d), V^T's (d, N), u's (d,), gamma's (N,), beta's
    (2, N)) and the forward's operands and results: those of e (d,), p (N, d), W_Q, W_K and W_V
    (d, d), written into ``parameter_grads``. Q's and K's gradients are overwritten."""
    grad_queries, grad_key, grad_value_t, grad_shift, grad_gamma, grad_beta = grads
    grad_e, grad_p, grad_W_Q, grad_W_K, grad_W_V = parameter_grads
    length, d = p.shape
    zero = np.zeros(1, dtype=p.dtype)[0]
    w, kappa = tokens_shares[0], tokens_shares[1]
    # beta^tau = (Q + tau w) . kappa, c = K . w, gamma = exp(c - max c) (the shift is a constant)
    grad_w, grad_kappa = np.zeros(d, dtype=p.dtype), np.zeros(d, dtype=p.dtype)
    shares = zero
    for n in range(length):
        shares += grad_beta[1, n]
    for n in range(length):
        key_offset, beta_total = grad_gamma[n] * gamma[n], grad_beta[0, n] + grad_beta[1, n]
        for k in range(d):
            grad_w[k] += key[n, k] * key_offset
            grad_kappa[k] += queries[n, k] * beta_total
            grad_queries[n, k] += beta_total * kappa[k]
            grad_key[n, k] += key_offset * w[k]
    for k in range(d):
        grad_w[k] += kappa[k] * shares
        grad_kappa[k] += w[k] * shares
    # Q = s p W_Q^T, w = s W_Q e, K = p W_K^T, kappa = W_K e, V = p W_V^T, u = W_V e
    for k in range(d):
        for j in range(d):
            grad_W_Q[k, j] = grad_w[k] * e[j]
            grad_W_K[k, j] = grad_kappa[k] * e[j]
            grad_W_V[k, j] = grad_shift[k] * e[j]
    for n in range(length):
        for j in range(d):
            grad_p[n, j] = zero
        for k in range(d):
            q, c, v = grad_queries[n, k], grad_key[n, k], grad_value_t[k, n]
            for j in range(d):
                grad_p[n, j] += q * W_Q[k, j] * scale + c * W_K[k, j] + v * W_V[k, j]
                grad_W_Q[k, j] += q * p[n, j]
                grad_W_K[k, j] += c * p[n, j]
                grad_W_V[k, j] += v * p[n, j]
    for j in range(d):
        total = zero
        for k in range(d):
            total += (W_Q[k, j] * grad_w[k]) * scale + W_K[k, j] * grad_kappa[k] + W_V[k, j] * grad_shift[k]
        grad_e[j] = total
    for k in range(d):
        for j in range(d):
            grad_W_Q[k, j] *= scale


@numba.njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def score_operands(queries, key, shifted_queries, key_rows):
    """The score product's operands with each row's shift folded in: ``key_rows`` (N, d + 1) = [K, 1]
    and ``shifted_queries`` (d + 1, N) = [Q^T; -m], m_r = |q_r| max_i |k_i| (Cauchy-Schwarz: m_r >=
    every score of row r). Returns m (N,)."""
    length, d = key.shape
    one = np.ones(1, dtype=key.dtype)[0]
    largest = one - one
    for i in range(length):
        total = one - one
        for k in range(d):
            total += key[i, k] * key[i, k]
            key_rows[i, k] = key[i, k]
        key_rows[i, d] = one
        largest = max(largest, total)
    key_norm = np.sqrt(largest)
    bound = np.empty(queries.shape[0], dtype=key.dtype)
    for n in range(queries.shape[0]):
        total = one - one
        for k in range(d):
            total += queries[n, k] * queries[n, k]
            shifted_queries[k, n] = queries[n, k]
        bound[n] = np.sqrt(total) * key_norm
        shifted_queries[d, n] = -bound[n]
    return bound
