"""The exact Gram-matrix trainer, batched over independent runs (cells).

Gradient descent from p(0) = 0 keeps p in the span of the N = nT training tokens: with
p = X^T a the update p <- p - alpha sum c_j x_j is a <- a - alpha c, and the logits are
X p = K a with K = X X^T. A step costs O(N^2) whatever d is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .data import GramData, TokenData, sample_dataset, sample_labels, sample_roles, signal_coefficients, token_outputs
from .model import logistic_loss, softmax


@dataclass(frozen=True)
class GramProblem:
    """What training needs of one data set: K = X X^T (N, N), gamma_j = nu^T x_j (n, T),
    the tokens' first two coordinates (N, 2) (their parts along e_0, e_1) and the labels (n,)."""

    gram: np.ndarray
    gamma: np.ndarray
    coords: np.ndarray
    y: np.ndarray

    @classmethod
    def from_gram_data(cls, data: GramData) -> GramProblem:
        n, T = data.roles.shape
        return cls(
            gram=data.gram,
            gamma=token_outputs(data.coords, data.signal_norm).reshape(n, T),
            coords=data.coords,
            y=data.y.astype(float),
        )

    @classmethod
    def from_data(cls, data: TokenData) -> GramProblem:
        return cls.from_gram_data(GramData.from_tokens(data))


@dataclass
class GramRun:
    """Result of a batch of B runs.

    a: (B, N) coefficients, p = X^T a. final_s: (B, n, T) probabilities after the last step.
    pair_sum: (B, n, T) sum over steps tau = 0..steps-1 of s_t (1 - s_t) (scores before each
    update, as the authors log them). first_q, last_q: (B, n) sum_t s_t (1 - s_t) at the first
    and the last step. trajectory: (B, records, n, T) probabilities at ``record_steps`` 0, k, ..., steps.
    """

    a: np.ndarray
    final_s: np.ndarray
    pair_sum: np.ndarray
    first_q: np.ndarray
    last_q: np.ndarray
    steps: int
    trajectory: np.ndarray | None = None
    record_steps: np.ndarray | None = None


def stack(problems: list[GramProblem]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batch arrays (gram, gamma, y) of several problems."""
    return (
        np.stack([p.gram for p in problems]),
        np.stack([p.gamma for p in problems]),
        np.stack([p.y for p in problems]),
    )


def train_gram(
    gram: np.ndarray, gamma: np.ndarray, y: np.ndarray, lr: float, steps: int, record_every: int = 0
) -> GramRun:
    """Full-batch gradient descent for B independent runs: gram (B, N, N), gamma (B, n, T), y (B, n).

    Compiled with Numba: each run keeps its 200 kB Gram matrix in cache for all its steps, so a
    step is one BLAS matrix-vector product plus O(N) work, with no Python in the loop. One thread;
    parallelism comes from running shards of cells side by side.
    """
    gram = np.ascontiguousarray(gram, dtype=np.float64)
    gamma = np.ascontiguousarray(gamma, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    B, n, T = gamma.shape
    record_steps = np.r_[np.arange(0, steps, record_every), steps] if record_every else np.zeros(0, dtype=int)
    out = GramRun(
        a=np.zeros((B, n * T)),
        final_s=np.empty((B, n, T)),
        pair_sum=np.zeros((B, n, T)),
        first_q=np.zeros((B, n)),
        last_q=np.zeros((B, n)),
        steps=steps,
        trajectory=np.empty((B, len(record_steps), n, T)) if record_every else None,
        record_steps=record_steps if record_every else None,
    )
    records = out.trajectory if record_every else np.empty((B, 0, n, T))
    _descent(
        gram,
        gamma,
        y,
        float(lr),
        int(steps),
        int(record_every),
        out.a,
        out.final_s,
        out.pair_sum,
        out.first_q,
        out.last_q,
        records,
    )
    return out


@numba.njit(cache=True)
def _descent(gram, gamma, y, lr, steps, record_every, a_out, final_s, pair_sum, first_q, last_q, records):
    B, n, T = gamma.shape
    for b in range(B):
        _descent_one(
            gram[b],
            gamma[b],
            y[b],
            lr,
            steps,
            record_every,
            a_out[b],
            final_s[b],
            pair_sum[b],
            first_q[b],
            last_q[b],
            records[b],
        )


@numba.njit(cache=True)
def _descent_one(gram, gamma, y, lr, steps, record_every, a, s, pair_sum, first_q, last_q, records):
    n, T = gamma.shape
    z = np.empty(n * T)
    record = 0
    for step in range(steps + 1):
        np.dot(gram, a, out=z)  # logits X p = K a
        for i in range(n):
            top = z[i * T]
            for t in range(1, T):
                top = max(top, z[i * T + t])
            total = 0.0
            for t in range(T):
                s[i, t] = np.exp(z[i * T + t] - top)
                total += s[i, t]
            for t in range(T):
                s[i, t] /= total
        if record_every > 0 and (step % record_every == 0 or step == steps):
            records[record] = s
            record += 1
        if step == steps:
            break
        for i in range(n):
            f = 0.0
            q = 0.0
            for t in range(T):
                f += s[i, t] * gamma[i, t]
                pair = s[i, t] * (1.0 - s[i, t])  # summands of Eqs. 9, 10
                pair_sum[i, t] += pair
                q += pair
            if step == 0:
                first_q[i] = q
            if step == steps - 1:
                last_q[i] = q
            # a <- a - lr c,  -c_it = y_i s_it (gamma_it - f_i) / (n (1 + e^{y_i f_i}))
            weight = lr * y[i] / (n * (1.0 + np.exp(y[i] * f)))
            for t in range(T):
                a[i * T + t] += weight * s[i, t] * (gamma[i, t] - f)


def outputs(s: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    return np.einsum("...t,...t->...", s, gamma)


def evaluate(u: np.ndarray, g: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean logistic loss and accuracy from token logits u = x.p and head values g = x.nu.

    u, g: (..., n, T); y: (..., n). Accuracy is the mean of [y f > 0].
    """
    margin = y * outputs(softmax(u), g)
    return logistic_loss(margin).mean(-1), (margin > 0).mean(-1)


def project_test_set(
    rng: np.random.Generator,
    a: np.ndarray,
    problem: GramProblem,
    signal_norm: float,
    n_test: int,
    T: int,
    rho: float,
    noise: str = "exact",
):
    """Draw a fresh clean test set through its two projections per token, exactly in distribution.

    A test token is x = m + eps with signal m in span(e_0, e_1) and eps ~ N(0, I_d) independent of
    the trained p = X^T a. The model sees x only through u = x.p and g = x.nu; given m these are
    (m.p, m.nu) plus the jointly Gaussian (eps.p, eps.nu) with covariance
    [[|p|^2, p.nu], [p.nu, |nu|^2]], |p|^2 = a^T K a, p.nu = a.gamma, |nu|^2 = 1/||mu||^2.
    So 2 normals per token replace d. Returns u, g (n_test, T) and the labels (n_test,).
    """
    clean_y, _ = sample_labels(rng, n_test, 0.0, noise)
    roles = sample_roles(rng, n_test, T, noise)
    coef = signal_coefficients(clean_y, roles, rho)  # (n_test, T, 2) in units of ||mu||
    p01 = problem.coords.T @ a  # p's coordinates along e_0, e_1
    pp = float(a @ problem.gram @ a)
    pn = float(a @ problem.gamma.ravel())
    nn = 1.0 / signal_norm**2
    # Cholesky factor of the 2 x 2 covariance (p = 0 leaves only the eps.nu part)
    l11 = np.sqrt(pp)
    l21 = pn / l11 if l11 > 0 else 0.0
    l22 = np.sqrt(max(nn - l21**2, 0.0))
    z1, z2 = rng.standard_normal((2, n_test, T))
    u = signal_norm * (coef @ p01) + l11 * z1
    g = (coef[..., 0] - coef[..., 1]) / np.sqrt(2.0) + l21 * z1 + l22 * z2
    return u, g, clean_y.astype(float)


def materialise_test_set(
    rng: np.random.Generator,
    p: np.ndarray,
    nu: np.ndarray,
    signal_norm: float,
    n_test: int,
    T: int,
    rho: float,
    noise: str = "exact",
):
    """The same draw with the test tokens in d dimensions (the reference for the projection)."""
    data = sample_dataset(rng, n_test, T, p.shape[0], signal_norm, rho, 0.0, noise)
    return data.x @ p, data.x @ nu, data.y.astype(float)
