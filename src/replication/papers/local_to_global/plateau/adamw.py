"""The plateau seen by the optimiser: AdamW's linearised step at a point, and the escape it predicts.

Near a stationary point theta*, with delta = theta - theta*, gradient g = H delta and AdamW's state
(m, v) after ``step`` steps, one step is

    delta <- delta - eta_t ( m_hat / (sqrt(v_hat) + eps) + wd M delta ),

M the diagonal mask of the decayed parameters. v_hat is set by the batches' gradient noise, not by
the slow mode, so D = diag(sqrt(v_hat) + eps) is a constant of the linear map, and for a mode slow
against the momentum's ~1 / (1 - beta_1) steps m_hat = g. The map is then delta <- delta - eta_t
(D^-1 H + wd M) delta: its eigenvalues are those of D^-1/2 H D^-1/2 + wd M (D and M are diagonal),
so the unstable mode of the preconditioned Hessian P = D^-1/2 H D^-1/2, eigenvalue mu < 0 and unit
eigenvector w, grows by eta_t (|mu| - wd_v) per step, wd_v = wd sum over decayed i of w_i^2
(``decay_share``). From an amplitude a_0 ~ sigma (the init's scale) to an order-one amplitude:

    sum_{t = t_0 + 1}^{T} eta_t (|mu| - wd_v) = log(1 / sigma),

so the escape iteration T moves with log(1/sigma) at the slope 1 / (eta_T (|mu| - wd_v)), eta_T the
learning rate at the escape (``predicted_slope``), and T itself follows from the schedule
(``predicted_escape``). No constant is fitted. ``momentum_gain`` and ``bias_corrections`` measure
what the two simplifications leave out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse.linalg import LinearOperator

from ..transformer.schedule import schedule_rates
from ..transformer.settings import RunSettings

if TYPE_CHECKING:  # the figure and table jobs that read the predictions run without torch
    from .hessian import FlatParameters


@dataclass(frozen=True)
class AdamState:
    """AdamW's state at a point, flat in ``FlatParameters`` order (train.optimizer_snapshot)."""

    exp_avg_sq: np.ndarray  # v
    step: int
    lr: float  # the learning rate of the step that led to the point
    beta1: float
    beta2: float
    eps: float
    weight_decay: float
    decayed: np.ndarray  # bool mask of the decayed coordinates

    @classmethod
    def of(cls, parameters: dict[str, np.ndarray], flat: FlatParameters, settings: RunSettings) -> AdamState:
        opt = settings.optimizer
        v = np.concatenate([np.asarray(parameters[f"exp_avg_sq.{name}"], float).reshape(-1) for name in flat.names])
        decayed = np.concatenate(
            [np.full(size, name not in opt.no_decay) for name, size in zip(flat.names, flat.sizes, strict=True)]
        )
        beta1, beta2 = (float(b) for b in opt.betas)
        step, lr = int(parameters["adam_step"]), float(parameters["adam_lr"])
        return cls(v, step, lr, beta1, beta2, 1e-8, opt.weight_decay, decayed)

    @property
    def preconditioner(self) -> np.ndarray:
        """D: sqrt(v_hat) + eps per coordinate, v_hat = v / (1 - beta_2^step)."""
        return np.sqrt(self.exp_avg_sq / (1 - self.beta2**self.step)) + self.eps

    def decay_share(self, w: np.ndarray) -> float:
        """wd_v: the decoupled weight decay's rate along the unit vector w of the preconditioned space."""
        return float(self.weight_decay * np.sum(np.square(w[self.decayed])))

    def bias_corrections(self) -> tuple[float, float]:
        """1 / (1 - beta^step) for m and v at the point: how far from 1 the bias corrections are."""
        return 1 / (1 - self.beta1**self.step), 1 / (1 - self.beta2**self.step)


class PreconditionedOperator:
    """x -> D^-1/2 H D^-1/2 x for a Hessian operator H (anything with ``size`` and products) and AdamW's D."""

    def __init__(self, hessian, state: AdamState):
        self.hessian = hessian
        self.scale = 1 / np.sqrt(state.preconditioner)

    @property
    def size(self) -> int:
        return self.hessian.size

    def __call__(self, vector) -> np.ndarray:
        return self.scale * self.hessian(self.scale * np.asarray(vector).reshape(-1))

    def linear_operator(self) -> LinearOperator:
        return LinearOperator((self.size, self.size), matvec=self, dtype=np.float64)

    def parameter_direction(self, w: np.ndarray) -> np.ndarray:
        """The mode's direction in parameter space: D^-1/2 w, normalised (a right eigenvector of D^-1 H)."""
        direction = self.scale * w
        return direction / np.linalg.norm(direction)


@dataclass(frozen=True)
class OptimiserView:
    """One run's AdamW at one point: its state, and the schedule's learning rates (``learning_rates``)."""

    state: AdamState
    rates_of_run: np.ndarray
    step: int
    sigma: float

    @classmethod
    def at(cls, parameters: dict[str, np.ndarray], flat: FlatParameters, settings: RunSettings, rates, step: int):
        return cls(AdamState.of(parameters, flat, settings), rates, step, settings.sigma)

    @property
    def escape_rate(self) -> float:
        """|mu| - wd_v that grows a mode from sigma to 1 between the point and the end of the
        schedule: a slower mode cannot end the plateau within the run (the tolerance of its verdict)."""
        return horizon_rate(self.rates_of_run, self.step, self.sigma)

    def rates(self, mu: float, w: np.ndarray) -> dict:
        """The mode's rates from its curvature ``mu`` (held out) and unit vector ``w``: the weight
        decay's share, the growth per unit of lr, the learning rate at the point, the momentum's gain
        on the growth per step there and the bias corrections."""
        decay = self.state.decay_share(w)
        rate = -mu - decay
        m, v = self.state.bias_corrections()
        return {
            "mode_decay": decay,
            "mode_rate": rate,
            "lr": self.state.lr,
            "adam_step": self.state.step,
            "momentum_gain": momentum_gain(rate, self.state.lr, self.state.beta1),
            "bias_correction_m": m,
            "bias_correction_v": v,
        }


def learning_rates(settings: RunSettings) -> np.ndarray:
    """eta_t for t = 0..steps (eta_0 = NaN): the learning rate of every step of a run (transformer.schedule)."""
    return schedule_rates(settings, settings.steps)


def horizon_rate(rates: np.ndarray, step: int, sigma: float) -> float:
    """The growth rate per unit of learning rate that takes a mode from ``sigma`` to 1 between
    ``step`` and the end of the schedule (``rates``: learning_rates): log(1/sigma) / sum_{t > step} eta_t.
    A slower direction cannot end the plateau within the run, whatever the optimiser's scaling."""
    return math.log(1 / sigma) / float(np.nansum(rates[step + 1 :]))


def predicted_slope(rate: float, lr_at_escape: float) -> float:
    """Iterations per unit of log(1/sigma) of a mode growing at ``rate`` (|mu| - wd_v) per unit of lr."""
    return 1 / (lr_at_escape * rate) if rate > 0 else math.inf


def predicted_escape(rate: float, rates: np.ndarray, start: int, sigma: float) -> float:
    """The first iteration T > ``start`` by which sum_{t=start+1}^{T} eta_t x ``rate`` reaches
    log(1/sigma) (``rates``: learning_rates); inf if not by the end of the schedule."""
    if rate <= 0:
        return math.inf
    grown = np.cumsum(np.nan_to_num(rates[start + 1 :])) * rate
    reached = np.flatnonzero(grown >= math.log(1 / sigma))
    return float(start + 1 + reached[0]) if len(reached) else math.inf


def momentum_gain(rate: float, lr: float, beta1: float) -> float:
    """The growth per step with AdamW's momentum over the growth without it, for a mode of ``rate``
    at learning rate ``lr``: with m an EMA of g, a mode delta ~ e^(lambda t) has m = g (1 - beta_1) /
    (1 - beta_1 e^-lambda), so e^lambda - 1 = lr rate (1 - beta_1) / (1 - beta_1 e^-lambda);
    without momentum e^lambda0 - 1 = lr rate. Solved by fixed point (the map contracts for a slow mode)."""
    if rate <= 0:
        return math.nan
    plain = math.log1p(lr * rate)
    growth = plain
    for _ in range(200):
        growth = math.log1p(lr * rate * (1 - beta1) / (1 - beta1 * math.exp(-growth)))
    return growth / plain


__all__ = [
    "AdamState",
    "OptimiserView",
    "PreconditionedOperator",
    "horizon_rate",
    "learning_rates",
    "momentum_gain",
    "predicted_escape",
    "predicted_slope",
]
