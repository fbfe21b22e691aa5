"""The Hessian of the full transformer's loss at a plateau point, and AdamW's preconditioned
Hessian there: their lowest eigenvalues and directions, a verdict for each (``verdict.py``: saddle,
minimum or unresolved, from held-out batches), where the bottom direction lies, the Hessian
restricted to the canonical model's directions, and the optimiser's rates (``adamw.py``).

Every run of a cell sees the same batches (common random numbers): ``batches`` fitted batches, on
whose union the bottom eigenvectors are found, and a stream of held-out batches drawn independently
of them, added one at a time until the verdicts are decided. Three directions are judged: the
bottom eigenvector v of the loss' Hessian, the canonical restriction's and the bottom eigenvector w
of D^-1/2 H D^-1/2, AdamW's view. Each is judged against the rate that would leave the plateau
before the horizon (``adamw.horizon_rate``): a mode slower than log(1/sigma) / sum_{t > point} eta_t
cannot end the plateau within the run, under gradient steps at the schedule's learning rates (v and
the canonical direction; ``tolerance`` may instead state a fraction of lambda_max) or under AdamW's
preconditioned step (w).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from scipy.sparse.linalg import LinearOperator

from ..data import sample_sequences
from ..markov import MarkovChain
from ..phase.measures import chain_cross_entropy, unigram_cross_entropy
from ..transformer.settings import RunSettings
from .adamw import OptimiserView, PreconditionedOperator, horizon_rate, learning_rates
from .hessian import (
    FlatParameters,
    HessianOperator,
    largest_eigenvalue,
    lowest_eigenpair,
    restricted_matrix,
    transformer_loss,
)
from .settings import HessianSettings
from .verdict import Evidence, decide, sequential_curvature, standard_error


def _batches(chain: MarkovChain, context: int, hessian: HessianSettings, count: int, *stream: int) -> list[tuple]:
    """``count`` batches (x, y) drawn from ``hessian.seed``, the cell's (p, q) and ``stream``."""
    entropy = [hessian.seed, round(chain.p * 10**6), round(chain.q * 10**6), *stream]
    seed = int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint64)[0] >> 1)
    generator = torch.Generator().manual_seed(seed)
    sequences = sample_sequences(chain, (count, hessian.batch_size), context + 1, generator)
    return [(batch[:, :context], batch[:, 1:]) for batch in sequences]


def hessian_batches(chain: MarkovChain, context: int, hessian: HessianSettings) -> list[tuple]:
    """The cell's fitted batches (x, y), drawn from ``hessian.seed`` and the cell's (p, q)."""
    return _batches(chain, context, hessian, hessian.batches)


def _held_out_batch(chain: MarkovChain, context: int, hessian: HessianSettings, index: int):
    """Held-out batch ``index`` of the cell's stream (independent of the fitted batches)."""
    return _batches(chain, context, hessian, 1, 1, index)[0]


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


class MeanOperator:
    """The Hessian of the mean loss over equal batches, as the mean of each batch's Hessian-vector
    product: the same cost as one product on their union, and each batch's product at hand for the
    spread over batches."""

    def __init__(self, operators: list[HessianOperator]):
        self.operators = operators

    @property
    def size(self) -> int:
        return self.operators[0].size

    def per_batch(self, vector) -> list[np.ndarray]:
        return [operator(vector) for operator in self.operators]

    def __call__(self, vector) -> np.ndarray:
        return np.mean(self.per_batch(vector), axis=0)

    def linear_operator(self) -> LinearOperator:
        return LinearOperator((self.size, self.size), matvec=self, dtype=np.float64)

    @property
    def products(self) -> int:
        return sum(operator.products for operator in self.operators) // len(self.operators)


def _loss_operator(flat: FlatParameters, x, y) -> HessianOperator:
    return HessianOperator(lambda theta: transformer_loss(flat.unflatten(theta), x, y), flat.vector)


def _fit(chain: MarkovChain, batches, fitted: MeanOperator) -> dict:
    """The model's loss on the fitted batches and the fraction of the gap from the unigram loss to
    the chain's own cross-entropy it has closed."""
    x, y = torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches])
    model = float(np.mean([float(operator.loss.detach()) for operator in fitted.operators]))
    own, unigram = float(chain_cross_entropy(chain, x, y)), float(unigram_cross_entropy(chain, y))
    return {"loss": model, "closed": (unigram - model) / (unigram - own)}


def _stationarity(fitted: MeanOperator) -> dict:
    """The fitted batches' mean gradient norm, the norm of its standard error (the batches' noise)
    and their ratio: near 1 or below, the gradient is what the noise alone would give."""
    gradients = np.stack([operator.gradient.detach().double().numpy() for operator in fitted.operators])
    noise = float(np.sqrt(np.sum(np.var(gradients, axis=0, ddof=1)) / len(gradients)))
    norm = float(np.linalg.norm(gradients.mean(0)))
    return {"gradient_norm": norm, "gradient_noise": noise, "gradient_ratio": norm / noise}


def point_spectrum(
    parameters: dict[str, np.ndarray],
    chain: MarkovChain,
    batches,
    hessian: HessianSettings,
    seed: int,
    held_out_batch,
    horizon: float,
    optimiser: OptimiserView | None = None,
) -> tuple[dict, dict[str, np.ndarray]]:
    """One point's row and its directions. ``batches``: the fitted batches; ``held_out_batch(k)``:
    the k-th held-out batch; ``horizon``: the escape rate within the run from the point
    (``adamw.horizon_rate``); ``optimiser``: the run's AdamW view at the point (None: the loss only).

    The row: loss and closed fraction on the fitted batches, the gradient against its noise, and per
    direction judged (v: the loss' bottom eigenvector, ``canonical_``: the canonical restriction's,
    ``mode_``: AdamW's preconditioned one) the fitted lowest eigenvalue, its standard error, the
    held-out curvature with its standard error, the fitted set's bias, the tolerance and the
    verdict; v's weight per parameter block and in the canonical directions; the optimiser's rates.
    The directions: v, the canonical one and the mode's parameter-space direction D^-1/2 w."""
    flat = FlatParameters.of(parameters, dtype=hessian.torch_dtype)
    fitted = MeanOperator([_loss_operator(flat, xb, yb) for xb, yb in batches])
    lowest, bottom = lowest_eigenpair(fitted, hessian.tol, seed)
    largest = largest_eigenvalue(fitted, hessian.tol, seed)
    basis = canonical_basis(flat)
    restricted, restricted_vectors = np.linalg.eigh(restricted_matrix(fitted, basis))
    canonical = basis @ restricted_vectors[:, 0]
    tol = hessian.loss_tolerance(largest, horizon)
    # Per direction judged: its fitted eigenvalue, unit vector, tolerance and the scale s of its
    # quadratic form v^T (s H s) v: 1 for the loss, D^-1/2 for AdamW's preconditioned Hessian.
    judged = {"": (lowest, bottom, tol, 1.0), "canonical_": (float(restricted[0]), canonical, tol, 1.0)}
    if optimiser is not None:
        preconditioned = PreconditionedOperator(fitted, optimiser.state)
        mu, mode = lowest_eigenpair(preconditioned, hessian.tol, seed)
        judged["mode_"] = (mu, mode, optimiser.escape_rate, preconditioned.scale)

    def curvatures_on(index: int) -> tuple[float, ...]:
        operator = _loss_operator(flat, *held_out_batch(index))
        return tuple(float(v @ (scale * operator(scale * v))) for _, v, _, scale in judged.values())

    held_out = sequential_curvature(
        curvatures_on,
        tuple(entry[2] for entry in judged.values()),
        hessian.significance,
        hessian.held_out.least,
        hessian.held_out.most,
    )
    row = {
        **_fit(chain, batches, fitted),
        **_stationarity(fitted),
        "lambda_max": largest,
        "held_out_batches": len(held_out),
    }
    for column, (prefix, (value, direction, tolerance, scale)) in enumerate(judged.items()):
        along = [float(direction @ (scale * b)) for b in fitted.per_batch(scale * direction)]
        evidence = Evidence(value, standard_error(along), float(np.mean(along)), tuple(held_out[:, column]))
        row.update(
            {
                f"{prefix}lambda_min": value,
                f"{prefix}noise": evidence.fitted_noise,
                f"{prefix}curvature": evidence.curvature,
                f"{prefix}curvature_noise": evidence.noise,
                f"{prefix}bias": evidence.bias,
                f"{prefix}tol": tolerance,
                f"{prefix}verdict": decide(evidence, tolerance, hessian.significance),
            }
        )
    row["canonical_weight"] = float(np.sum((basis.T @ bottom) ** 2))
    row.update({f"weight_{name}": share for name, share in flat.block_weights(bottom).items()})
    directions = {"bottom": bottom, "canonical": canonical}
    if optimiser is not None:
        row.update(optimiser.rates(row["mode_curvature"], mode))
        direction = preconditioned.parameter_direction(mode)
        row["mode_canonical_weight"] = float(np.sum((basis.T @ direction) ** 2))
        row.update({f"mode_weight_{name}": share for name, share in flat.block_weights(direction).items()})
        directions["mode"] = direction
    row["products"] = fitted.products
    return row, directions


def cell_spectra(
    points: pd.DataFrame,
    arrays: dict[str, np.ndarray],
    chain: MarkovChain,
    settings: RunSettings,
    hessian: HessianSettings,
    progress=None,
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """``point_spectrum`` of every point of a cell (``points``: plateau_points' rows; ``settings``:
    the runs' training settings), one row each, and the points' directions as
    ``seed<seed>/step<step>/<direction>``."""
    from .points import point_parameters

    context = settings.model.context
    batches = hessian_batches(chain, context, hessian)
    rates = learning_rates(settings)
    rows, directions = [], {}
    for point in points.itertuples():
        parameters = point_parameters(arrays, point.seed, point.step)
        optimiser = None
        if hessian.preconditioned:
            flat = FlatParameters.of(parameters)
            optimiser = OptimiserView.at(parameters, flat, settings, rates, int(point.step))
        spectrum, vectors = point_spectrum(
            parameters,
            chain,
            batches,
            hessian,
            hessian.seed + point.step,
            lambda index: _held_out_batch(chain, context, hessian, index),
            horizon_rate(rates, int(point.step), settings.sigma),
            optimiser,
        )
        fields = {key: value for key, value in point._asdict().items() if key != "Index"}
        rows.append({"p": chain.p, "q": chain.q, **fields, **spectrum})
        directions.update({f"seed{point.seed}/step{point.step}/{name}": v for name, v in vectors.items()})
        if progress is not None:
            progress(rows[-1])
    return pd.DataFrame(rows, columns=None if rows else ["p", "q", *points.columns]), directions
