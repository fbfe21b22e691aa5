"""The token-selection data model (Definition 3.1), as the authors' code realises it.

Token roles are fixed by position: 0 is the relevant token R (signal mu_{Y*}), 1 the weakly
relevant token aligned with the clean label (rho mu_{Y*}), 2 the weakly relevant token of the
opposite class (rho mu_{-Y*}), 3..T-1 irrelevant (pure noise). Signals are the first two axes:
mu_{+1} = ||mu|| e_0, mu_{-1} = ||mu|| e_1. Exactly ceil(n eta) labels are flipped.
The paper's variant (``noise="bernoulli"``) flips each label with probability eta and places
the two weakly relevant tokens in random order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from replication.perturbation import perturb

# Token roles (also the colour groups of Fig. 3).
RELEVANT, WEAK_ALIGNED, WEAK_OPPOSITE, IRRELEVANT = 0, 1, 2, 3
ROLE_NAMES = {
    RELEVANT: "Relevant R",
    WEAK_ALIGNED: "Weakly relevant W_{Y*}",
    WEAK_OPPOSITE: "Weakly relevant W_{-Y*}",
    IRRELEVANT: "Irrelevant I",
}
NOISE_MODELS = ("exact", "bernoulli")


@dataclass(frozen=True)
class TokenData:
    """n sequences of T tokens in R^d with their labels.

    ``x``: (n, T, d); ``y``: observed labels (n,); ``clean_y``: Y* (n,); ``noisy``: y != Y*;
    ``roles``: (n, T) token roles.
    """

    x: np.ndarray
    y: np.ndarray
    clean_y: np.ndarray
    noisy: np.ndarray
    roles: np.ndarray
    signal_norm: float

    @property
    def n(self) -> int:
        return self.x.shape[0]

    @property
    def T(self) -> int:
        return self.x.shape[1]

    @property
    def d(self) -> int:
        return self.x.shape[2]


def head(d: int, signal_norm: float) -> np.ndarray:
    """The fixed head nu = (mu_{+1} - mu_{-1}) / ||mu_{+1} - mu_{-1}|| / ||mu||."""
    nu = np.zeros(d)
    nu[0], nu[1] = 1.0, -1.0
    return nu / (math.sqrt(2.0) * signal_norm)


def signal_coefficients(clean_y: np.ndarray, roles: np.ndarray, rho: float) -> np.ndarray:
    """(n, T, 2) coefficients of each token's signal on (e_0, e_1), in units of ||mu||."""
    own = np.where(clean_y[:, None] == 1, 0, 1)  # axis of mu_{Y*}
    coef = np.zeros(roles.shape + (2,))
    strength = np.select([roles == RELEVANT, roles == WEAK_ALIGNED, roles == WEAK_OPPOSITE], [1.0, rho, rho], 0.0)
    axis = np.where(roles == WEAK_OPPOSITE, 1 - own, own)
    np.put_along_axis(coef, axis[..., None], strength[..., None], axis=-1)
    return coef


def sample_labels(rng: np.random.Generator, n: int, eta: float, noise: str = "exact"):
    """Clean labels Y* ~ Uniform{+-1} and the flip mask (exactly ceil(n eta), or Bernoulli(eta))."""
    if noise not in NOISE_MODELS:
        raise ValueError(f"noise must be one of {NOISE_MODELS}, got {noise!r}")
    clean_y = rng.integers(0, 2, size=n) * 2 - 1
    if noise == "exact":
        noisy = np.zeros(n, dtype=bool)
        noisy[rng.permutation(n)[: math.ceil(n * eta)]] = True
    else:
        noisy = rng.random(n) < eta
    return clean_y, noisy


def sample_roles(rng: np.random.Generator, n: int, T: int, noise: str = "exact") -> np.ndarray:
    roles = np.full((n, T), IRRELEVANT)
    roles[:, 0] = RELEVANT
    roles[:, 1], roles[:, 2] = WEAK_ALIGNED, WEAK_OPPOSITE
    if noise == "bernoulli":  # the paper's model: the two weak tokens in random order
        swap = rng.random(n) < 0.5
        roles[swap, 1], roles[swap, 2] = WEAK_OPPOSITE, WEAK_ALIGNED
    return roles


def sample_dataset(
    rng: np.random.Generator,
    n: int,
    T: int,
    d: int,
    signal_norm: float,
    rho: float,
    eta: float,
    noise: str = "exact",
) -> TokenData:
    """Draw one data set; eps ~ N(0, I_d) for every token."""
    clean_y, noisy = sample_labels(rng, n, eta, noise)
    roles = sample_roles(rng, n, T, noise)
    x = perturb(rng.standard_normal((n, T, d)), "tokens")
    x[..., :2] += signal_norm * signal_coefficients(clean_y, roles, rho)
    return TokenData(
        x=x,
        y=np.where(noisy, -clean_y, clean_y),
        clean_y=clean_y,
        noisy=noisy,
        roles=roles,
        signal_norm=float(signal_norm),
    )


def cell_seed(base_seed: int, d: int, signal_norm: float) -> np.random.SeedSequence:
    """The seed of one grid cell, derived from the base seed and the cell (d, ||mu||)."""
    return np.random.SeedSequence([int(base_seed), int(d), int(round(signal_norm * 1000))])


def train_test_generators(seed: np.random.SeedSequence) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent streams for the training set and the test set of one run."""
    train, test = seed.spawn(2)
    return np.random.default_rng(train), np.random.default_rng(test)


@dataclass(frozen=True)
class GramData:
    """A data set as the trainer sees it: the Gram matrix K = X X^T of the N = nT tokens (rows
    in sample-major order) and each token's first two coordinates (N, 2), with the labels."""

    gram: np.ndarray
    coords: np.ndarray
    y: np.ndarray
    clean_y: np.ndarray
    noisy: np.ndarray
    roles: np.ndarray
    signal_norm: float

    @classmethod
    def from_tokens(cls, data: TokenData) -> GramData:
        flat = data.x.reshape(-1, data.d)
        return cls(
            gram=flat @ flat.T,
            coords=flat[:, :2].copy(),
            y=data.y,
            clean_y=data.clean_y,
            noisy=data.noisy,
            roles=data.roles,
            signal_norm=data.signal_norm,
        )


def sample_gram_data(
    rng: np.random.Generator, n: int, T: int, d: int, signal_norm: float, rho: float, eta: float, noise: str = "exact"
) -> GramData:
    """The same data model drawn without its d coordinates: exact in distribution.

    Split each token into its first two coordinates (signal plus noise, kept) and the other d - 2
    (pure noise E, N x (d - 2)). Then K = C C^T + E E^T with E E^T ~ Wishart_N(d - 2, I), drawn by
    Bartlett's decomposition E E^T = L L^T (L lower triangular, L_ii^2 ~ chi2(d - 2 - i),
    L_ij ~ N(0, 1) below the diagonal). Costs O(N^3) whatever d is; needs d - 2 >= N.
    """
    N = n * T
    if d - 2 < N:
        return GramData.from_tokens(sample_dataset(rng, n, T, d, signal_norm, rho, eta, noise))
    clean_y, noisy = sample_labels(rng, n, eta, noise)
    roles = sample_roles(rng, n, T, noise)
    coords = rng.standard_normal((N, 2)) + signal_norm * signal_coefficients(clean_y, roles, rho).reshape(N, 2)
    bartlett = np.tril(rng.standard_normal((N, N)), -1)
    bartlett[np.diag_indices(N)] = np.sqrt(rng.chisquare(d - 2 - np.arange(N)))
    coords, bartlett = perturb(coords, "coords"), perturb(bartlett, "bartlett")  # no-op unless an ensemble
    return GramData(
        gram=coords @ coords.T + bartlett @ bartlett.T,
        coords=coords,
        y=np.where(noisy, -clean_y, clean_y),
        clean_y=clean_y,
        noisy=noisy,
        roles=roles,
        signal_norm=float(signal_norm),
    )


def token_outputs(coords: np.ndarray, signal_norm: float) -> np.ndarray:
    """gamma_j = nu^T x_j from the first two coordinates (nu lies in span(e_0, e_1))."""
    return (coords[..., 0] - coords[..., 1]) / (math.sqrt(2.0) * signal_norm)
