"""Binary first-order Markov chains and the loss of any model whose logit gap is D.

Kernel ``P = [[1-p, p], [q, 1-q]]`` with ``p = P(1|0)`` and ``q = P(0|1)``. Every canonical model
of the paper predicts logit ``c`` after a 0 and ``D + c`` after a 1; with the bias at its
closed-form optimum the population loss is a function ``F(D)`` of the gap alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np


@cache
def _special():
    """scipy.special, imported at first use: the workflow builds chains from the config while it
    parses, which every Snakemake start pays for (0.18 CPU-s)."""
    import scipy.special

    return scipy.special


def binary_entropy(x: float) -> float:
    """h(x) in nats."""
    return float(-(x * np.log(x) + (1 - x) * np.log1p(-x)))


@dataclass(frozen=True)
class MarkovChain:
    p: float  # P(1 | 0)
    q: float  # P(0 | 1)

    def __post_init__(self):
        if not (0 < self.p < 1 and 0 < self.q < 1):
            raise ValueError(f"p and q must lie in (0, 1), got p={self.p}, q={self.q}")

    @property
    def switching(self) -> float:
        return self.p + self.q

    @property
    def stationary(self) -> tuple[float, float]:
        """pi = (pi0, pi1) = (q, p) / (p + q)."""
        total = self.p + self.q
        return self.q / total, self.p / total

    @property
    def unigram_loss(self) -> float:
        """H(pi): the loss of the best marginal predictor (every non-global critical point)."""
        return binary_entropy(self.stationary[1])

    @property
    def bigram_loss(self) -> float:
        """The entropy rate (q h(p) + p h(q)) / (p + q): the global optimum."""
        pi0, pi1 = self.stationary
        return pi0 * binary_entropy(self.p) + pi1 * binary_entropy(self.q)

    @property
    def optimal_gap(self) -> float:
        """D* = log[(1-p)(1-q)/(pq)], the logit gap of the Bayes predictor."""
        p, q = self.p, self.q
        return float(np.log((1 - p) * (1 - q) / (p * q)))

    def optimal_offset(self, gap):
        """Loss-minimising logit after a 0, ``c = b* - e^2/2``, given the gap D (Lemma 5).

        ``c = log[(p - q + sqrt((p-q)^2 + 4pqA)) / (2qA)]``, ``A = exp(D)``; the p < q branch is
        rewritten without cancellation as ``log[2p / (sqrt(.) + q - p)]``. Logarithms of the root
        are taken with ``logaddexp`` so that gaps far beyond exp's range (D > 709) stay finite.
        """
        p, q = self.p, self.q
        gap = np.asarray(gap, dtype=float)
        with np.errstate(divide="ignore"):  # log 0 = -inf when p = q is exact in logaddexp
            log_root = 0.5 * np.logaddexp(2 * np.log(abs(p - q)), np.log(4 * p * q) + gap)
            if p >= q:
                return np.logaddexp(np.log(p - q), log_root) - np.log(2 * q) - gap
            return np.log(2 * p) - np.logaddexp(log_root, np.log(q - p))

    def loss_of_gap(self, gap):
        """F(D): population cross-entropy at the optimal bias."""
        pi0, pi1 = self.stationary
        p, q = self.p, self.q
        z0 = self.optimal_offset(gap)
        z1 = np.asarray(gap, dtype=float) + z0
        log_expit = _special().log_expit
        return -pi1 * ((1 - q) * log_expit(z1) + q * log_expit(-z1)) - pi0 * (
            p * log_expit(z0) + (1 - p) * log_expit(-z0)
        )

    def loss_slope(self, gap):
        """F'(D) = pi1 (sigmoid(z1) - (1 - q)); the bias term vanishes at its optimum."""
        return self._slope(np.asarray(gap, dtype=float) + self.optimal_offset(gap))

    def loss_curvature(self, gap):
        """F''(D) = 1 / (1/(pi1 s'(z1)) + 1/(pi0 s'(z0))), s' = sigmoid (1 - sigmoid).

        Differentiating the optimality condition of the offset gives dz1/dD = pi0 s'(z0) /
        (pi1 s'(z1) + pi0 s'(z0)); the harmonic form is taken in log space because both terms
        underflow for large |D|.
        """
        z0 = self.optimal_offset(gap)
        return self._curvature(z0, np.asarray(gap, dtype=float) + z0)

    def slope_and_curvature(self, gap):
        """(F'(D), F''(D)) from one optimal offset: what a clocked flow needs at every evaluation."""
        z0 = self.optimal_offset(gap)
        z1 = np.asarray(gap, dtype=float) + z0
        return self._slope(z1), self._curvature(z0, z1)

    def _slope(self, z1):
        return self.stationary[1] * (_special().expit(z1) - (1 - self.q))

    def _curvature(self, z0, z1):
        pi0, pi1 = self.stationary
        log_one = np.log(pi1) + log_sigmoid_slope(z1)
        log_zero = np.log(pi0) + log_sigmoid_slope(z0)
        return np.exp(-np.logaddexp(-log_one, -log_zero))


def log_sigmoid_slope(z):
    """log s'(z) = log sigmoid(z) + log sigmoid(-z) = -|z| - 2 log(1 + exp(-|z|)): finite for any z."""
    magnitude = np.abs(z)
    return -magnitude - 2.0 * np.log1p(np.exp(-magnitude))
