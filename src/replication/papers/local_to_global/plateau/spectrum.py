"""The Hessian of the full transformer's loss at a plateau point: its extreme eigenvalues, their
noise over the batches, where the bottom eigenvector lies, and the Hessian restricted to the
canonical model's directions.

The loss is the mean over ``batches`` independent batches, the same for every run of a cell
(common random numbers). Its lowest eigenvalue lambda_min is biased low by the batches' noise: the
lowest eigenvalue of a noisy matrix lies below the noise-free one (the findings count the cells
where the fitted batches alone would call a saddle). So a saddle is not read from it. With v the
bottom eigenvector, the curvature along v on as many *held-out* batches, drawn independently of the
ones v was found on, is an unbiased estimate of the noise-free curvature along v, which is >= the
noise-free lambda_min: a held-out curvature below minus ``significance`` times its standard error
(the std of v^T H_b v over the held-out batches over sqrt(batches)) is a negative direction of the
noise-free loss, a saddle (``saddle``). ``noise`` is the same spread on the fitted batches; the
verdicts with both are ``analysis.point_verdicts``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..data import sample_sequences
from ..markov import MarkovChain
from ..phase.measures import chain_cross_entropy, unigram_cross_entropy
from .hessian import FlatParameters, HessianOperator, extreme_eigenpairs, transformer_loss
from .settings import HessianSettings


def hessian_batches(
    chain: MarkovChain, context: int, hessian: HessianSettings, held_out: bool = False
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The cell's fixed batches (x, y), drawn from ``hessian.seed`` and the cell's (p, q): the ones
    the eigenvectors are found on, or (``held_out``) as many others, independent of them."""
    entropy = [hessian.seed, round(chain.p * 10**6), round(chain.q * 10**6)] + ([1] if held_out else [])
    seed = int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0] >> 1)
    generator = torch.Generator().manual_seed(seed)
    sequences = sample_sequences(chain, (hessian.batches, hessian.batch_size), context + 1, generator)
    return [(batch[:, :context], batch[:, 1:]) for batch in sequences]


def _standard_error(values) -> float:
    return float(np.std(values, ddof=1) / np.sqrt(len(values)))


def canonical_basis(flat: FlatParameters) -> np.ndarray:
    """Orthonormal columns spanning the canonical family's directions at the point (spec §2, §4):
    with alpha the unit direction of the embedding e, the family is e = s alpha, p_n = -s alpha / 2,
    W_1 = w alpha^T, W_2 = alpha w^T, b. Its tangent directions: s (e and every p_n together), each
    hidden unit's w_j (W_1's row j and W_2's column j together) and b."""
    parts = flat.unflatten(flat.vector)
    alpha = parts["e"] / parts["e"].norm()
    zero = {name: torch.zeros_like(value) for name, value in parts.items()}

    def direction(**changes) -> np.ndarray:
        vector = torch.cat([changes.get(name, zero[name]).reshape(-1) for name in flat.names]).double().numpy()
        return vector / np.linalg.norm(vector)

    columns = [direction(e=alpha, p=(-alpha / 2).expand_as(parts["p"]))]
    for j in range(parts["W_1"].shape[0]):
        unit = torch.zeros(parts["W_1"].shape[0], dtype=alpha.dtype)
        unit[j] = 1
        columns.append(direction(W_1=torch.outer(unit, alpha), W_2=torch.outer(alpha, unit)))
    columns.append(direction(b=torch.ones(1, dtype=alpha.dtype)))
    return np.stack(columns, axis=1)


def _curvatures(flat: FlatParameters, batches, vectors) -> list[list[float]]:
    """v^T H_b v for each of ``vectors`` (rows) on each batch b (columns)."""
    operators = [
        HessianOperator(lambda theta, xb=xb, yb=yb: transformer_loss(flat.unflatten(theta), xb, yb), flat.vector)
        for xb, yb in batches
    ]
    return [[float(v @ single(v)) for single in operators] for v in vectors]


def point_spectrum(
    parameters: dict[str, np.ndarray],
    chain: MarkovChain,
    batches,
    hessian: HessianSettings,
    seed: int,
    held_out_batches,
) -> dict:
    """One point's row: loss and closed fraction on the batches, gradient norm, the lowest
    eigenvalues and the largest, lambda_min's spread over the batches, the curvature along the bottom
    eigenvector on the held-out batches with its standard error and the verdict it gives, the bottom
    eigenvector's weight per parameter block and in the canonical directions, and the same for the
    canonical restriction's lowest eigenvalue."""
    flat = FlatParameters.of(parameters, dtype=hessian.torch_dtype)
    x = torch.cat([b[0] for b in batches])
    y = torch.cat([b[1] for b in batches])
    operator = HessianOperator(lambda theta: transformer_loss(flat.unflatten(theta), x, y), flat.vector)
    values, vectors, largest = extreme_eigenpairs(operator, hessian.smallest, hessian.tol, seed)
    bottom = vectors[:, 0]
    basis = canonical_basis(flat)
    restricted, restricted_vectors = np.linalg.eigh(operator.matrix_on(basis))
    canonical_bottom = basis @ restricted_vectors[:, 0]
    noise, canonical_noise = map(_standard_error, _curvatures(flat, batches, (bottom, canonical_bottom)))
    held_out, canonical_held_out = _curvatures(flat, held_out_batches, (bottom, canonical_bottom))
    curvature, curvature_noise = float(np.mean(held_out)), _standard_error(held_out)
    canonical_curvature, canonical_curvature_noise = (
        float(np.mean(canonical_held_out)),
        _standard_error(canonical_held_out),
    )
    model, own, unigram = (
        float(operator.loss.detach()),
        float(chain_cross_entropy(chain, x, y)),
        float(unigram_cross_entropy(chain, y)),
    )
    row = {
        "loss": model,
        "closed": (unigram - model) / (unigram - own),
        "gradient_norm": float(operator.gradient.detach().norm()),
        **{f"lambda_{k + 1}": float(value) for k, value in enumerate(values)},
        "lambda_max": largest,
        "noise": noise,
        "curvature": curvature,
        "curvature_noise": curvature_noise,
        "saddle": bool(curvature < -hessian.significance * curvature_noise),
        "canonical_lambda_min": float(restricted[0]),
        "canonical_noise": canonical_noise,
        "canonical_curvature": canonical_curvature,
        "canonical_curvature_noise": canonical_curvature_noise,
        "canonical_saddle": bool(canonical_curvature < -hessian.significance * canonical_curvature_noise),
        "canonical_weight": float(np.sum((basis.T @ bottom) ** 2)),
        "products": operator.products,
    }
    row.update({f"weight_{name}": share for name, share in flat.block_weights(bottom).items()})
    return row


def cell_spectra(
    points: pd.DataFrame,
    arrays: dict[str, np.ndarray],
    chain: MarkovChain,
    context: int,
    hessian: HessianSettings,
    progress=None,
) -> pd.DataFrame:
    """``point_spectrum`` of every point of a cell (``points``: plateau_points' rows), one row each."""
    from .points import point_parameters

    batches, held_out = (hessian_batches(chain, context, hessian, held_out=part) for part in (False, True))
    rows = []
    for point in points.itertuples():
        parameters = point_parameters(arrays, point.seed, point.step)
        spectrum = point_spectrum(parameters, chain, batches, hessian, hessian.seed + point.step, held_out)
        fields = {key: value for key, value in point._asdict().items() if key != "Index"}
        rows.append({"p": chain.p, "q": chain.q, **fields, **spectrum})
        if progress is not None:
            progress(rows[-1])
    return pd.DataFrame(rows, columns=None if rows else ["p", "q", *points.columns])
