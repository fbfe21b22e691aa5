"""The verdict rule on a Hessian whose spectrum is known, seen through sampled batches: H_b = H + noise
(a symmetric Gaussian matrix of spread ``noise``), the bottom direction found on fitted batches and
judged on held-out ones added one at a time, as point_spectrum does. Over many draws the rule calls
saddles and minima at the error rates it claims (z = 3, one-sided, up to 16 looks: at most 5% on
the tolerance's line, 1% half a tolerance from it), resolves clear cases, and never calls a minimum
where the noise exceeds the tolerance."""

import numpy as np
import pytest

from replication.papers.local_to_global.plateau.verdict import (
    MINIMUM,
    SADDLE,
    UNRESOLVED,
    Evidence,
    decide,
    decided,
    sequential_curvature,
    standard_error,
)

SIZE, BATCHES, LEAST, MOST, Z, TOL = 40, 4, 4, 16, 3.0, 1.0
DRAWS = 300


def hessian_with(lowest: float, rng) -> np.ndarray:
    """A random symmetric matrix whose spectrum is ``lowest`` and the rest spread over [2, 20]."""
    basis, _ = np.linalg.qr(rng.standard_normal((SIZE, SIZE)))
    spectrum = np.r_[lowest, np.linspace(2, 20, SIZE - 1)]
    return basis @ np.diag(spectrum) @ basis.T


def batch(hessian: np.ndarray, noise: float, rng) -> np.ndarray:
    a = rng.standard_normal((SIZE, SIZE))
    return hessian + noise * (a + a.T) / np.sqrt(2 * SIZE)


def verdict_of(lowest: float, noise: float, seed: int) -> tuple[str, Evidence]:
    rng = np.random.default_rng(seed)
    hessian = hessian_with(lowest, rng)
    fitted = [batch(hessian, noise, rng) for _ in range(BATCHES)]
    values, vectors = np.linalg.eigh(np.mean(fitted, axis=0))
    v = vectors[:, 0]
    held_out = sequential_curvature(lambda k: (v @ batch(hessian, noise, rng) @ v,), (TOL,), Z, LEAST, MOST)
    along = [v @ h @ v for h in fitted]
    evidence = Evidence(values[0], np.std(along, ddof=1) / np.sqrt(BATCHES), np.mean(along), tuple(held_out[:, 0]))
    return decide(evidence, TOL, Z), evidence


def rates(lowest: float, noise: float) -> dict[str, float]:
    calls = [verdict_of(lowest, noise, seed)[0] for seed in range(DRAWS)]
    return {kind: calls.count(kind) / DRAWS for kind in (SADDLE, MINIMUM, UNRESOLVED)}


@pytest.mark.parametrize(("lowest", "rate"), [(-1.0, 0.05), (-0.5, 0.01), (0.0, 0.01), (0.5, 0.01)])
def test_no_saddle_is_called_where_no_direction_lies_below_minus_tol(lowest, rate):
    """A true lowest eigenvalue at or above -tol: a saddle only by the held-out mean's error. A
    fixed-sample test at z = 3 errs 0.13% of the time; up to 16 looks raise that to about 4% on the
    line itself (measured: 3.7% of 300 draws), and under 1% half a tolerance inside it."""
    assert rates(lowest, noise=1.0)[SADDLE] <= rate


@pytest.mark.parametrize("lowest", [-1.5, -3.0, -10.0])
def test_no_minimum_is_called_where_a_direction_lies_below_minus_tol(lowest):
    assert rates(lowest, noise=1.0)[MINIMUM] <= 0.01


def test_clear_cases_are_resolved():
    """Noise well under the tolerance: a saddle at -5 tol and a minimum at +0.5 tol are decided."""
    assert rates(-5.0, noise=0.1)[SADDLE] >= 0.95
    assert rates(0.5, noise=0.1)[MINIMUM] >= 0.95


@pytest.mark.parametrize("lowest", [0.0, 0.5, 3.0])
def test_never_a_minimum_where_the_noise_exceeds_the_tolerance(lowest):
    """Ten times the tolerance of noise: whatever the numbers, no minimum; a clear saddle is still a saddle."""
    for seed in range(60):
        call, evidence = verdict_of(lowest, noise=10.0, seed=seed)
        assert call != MINIMUM
        if max(evidence.noise, evidence.fitted_noise, evidence.bias) > TOL:
            assert call != MINIMUM


def test_a_fitted_set_lowest_eigenvalue_is_biased_low_and_the_held_out_curvature_is_not():
    """The bias the rule is built around: over draws at a minimum (lowest eigenvalue 0.5), the fitted
    lambda_min averages below 0.5, the held-out curvature along its direction does not."""
    evidence = [verdict_of(0.5, noise=3.0, seed=seed)[1] for seed in range(100)]
    assert np.mean([e.fitted for e in evidence]) < 0.5 - 0.15
    assert np.mean([e.curvature for e in evidence]) > 0.5 - 0.05


def test_held_out_batches_are_added_until_decided():
    counts = []
    for lowest in (-10.0, -1.0):
        draws = np.random.default_rng(0).standard_normal(MOST)
        held = sequential_curvature(lambda k, lowest=lowest, draws=draws: (lowest + draws[k],), (TOL,), Z, LEAST, MOST)
        counts.append(len(held))
    assert counts[0] == LEAST  # far from -tol: decided at the least number of batches
    assert counts[1] == MOST  # on the line: the cap
    assert decided([-10.0, -10.1, -9.9, -10.0], TOL, Z) and not decided([-1.0, -0.5, -1.5, -1.0], TOL, Z)


# --- the rule's edges, on numbers chosen by hand ---------------------------------------------------


def test_the_evidence_reads_its_mean_spread_and_bias():
    evidence = Evidence(fitted=-1.0, fitted_noise=0.5, fitted_along=-0.75, held_out=(-2.0, 0.0, -1.0))
    assert evidence.curvature == -1.0 and evidence.noise == pytest.approx(1 / np.sqrt(3))
    assert evidence.bias == -0.25  # held-out mean over the fitted curvature along v
    assert np.isinf(Evidence(0.0, 0.0, 0.0, (1.0,)).noise)  # one batch: no spread to judge by
    assert standard_error([1.0, 3.0]) == pytest.approx(np.sqrt(2) / np.sqrt(2))


def test_a_saddle_needs_the_held_out_mean_strictly_below_minus_tol():
    """Without spread the held-out mean decides: below -tol a saddle; on -tol itself neither a saddle
    nor a minimum; above it a minimum once the fitted set agrees."""
    flat = Evidence(fitted=-2.0, fitted_noise=0.0, fitted_along=-2.0, held_out=(-2.0, -2.0))
    assert decide(flat, 1.5, Z) == SADDLE
    assert decide(flat, 2.0, Z) == UNRESOLVED
    assert decide(flat, 2.5, Z) == MINIMUM


def test_the_spread_counts_z_times_against_the_verdicts():
    """Held-out mean -2 with standard error 1: a saddle at tol 0.5 needs z < 1.5; a minimum at tol 3.5
    needs z < 1.5 too (and noise and bias under tol)."""
    spread = Evidence(fitted=-2.0, fitted_noise=0.0, fitted_along=-2.0, held_out=(-3.0, -1.0))
    assert spread.noise == pytest.approx(1.0)
    assert decide(spread, 0.5, 1.4) == SADDLE and decide(spread, 0.5, 1.6) == UNRESOLVED
    assert decide(spread, 3.5, 1.4) == MINIMUM and decide(spread, 3.5, 1.6) == UNRESOLVED


def test_a_minimum_needs_the_fitted_eigenvalue_and_every_noise_within_tol():
    base = dict(fitted=-1.0, fitted_noise=0.5, fitted_along=-1.0, held_out=(-1.0, -1.0))
    assert decide(Evidence(**base), 2.0, 2.0) == UNRESOLVED  # fitted - 2 SE = -2: on -tol, not above it
    assert decide(Evidence(**base), 2.01, 2.0) == MINIMUM
    assert decide(Evidence(**{**base, "fitted": -0.5, "fitted_noise": 2.0}), 2.0, 0.1) == MINIMUM  # noise = tol
    assert decide(Evidence(**{**base, "fitted": -0.5, "fitted_noise": 2.01}), 2.0, 0.1) == UNRESOLVED
    biased = Evidence(fitted=-1.0, fitted_noise=0.0, fitted_along=-3.5, held_out=(-1.0, -1.0))  # bias 2.5
    assert decide(biased, 2.5, 2.0) == MINIMUM and decide(biased, 2.49, 2.0) == UNRESOLVED
    steep = Evidence(fitted=10.0, fitted_noise=0.0, fitted_along=10.0, held_out=(9.0, 11.0))  # held-out SE 1
    assert decide(steep, 1.0, 1.0) == MINIMUM and decide(steep, 0.5, 1.0) == UNRESOLVED
    on_line = Evidence(fitted=-1.0, fitted_noise=0.0, fitted_along=-2.0, held_out=(-2.0, -2.0))
    assert decide(on_line, 2.0, 2.0) == UNRESOLVED  # held-out curvature on -tol: not above it


def test_decided_and_the_sequence_of_held_out_batches():
    assert decided([-3.0, -3.0], 2.0, Z) and decided([-1.0, -1.0], 2.0, Z) and not decided([-2.0, -2.0], 2.0, Z)
    assert not decided([-3.0], 2.0, Z)  # one batch: no standard error yet
    assert decided([-3.0, -1.0], 0.5, 1.4) and not decided([-3.0, -1.0], 0.5, 1.6)  # mean -2, SE 1
    assert decided([-3.0, -1.0], 3.5, 1.4) and not decided([-3.0, -1.0], 3.5, 1.6)
    asked = []

    def far(k):
        asked.append(k)
        return (-10.0 - 0.01 * k, 5.0 + 0.01 * k)  # both far from -tol from the second batch on

    held = sequential_curvature(far, (1.0, 1.0), Z, 2, 5)
    assert held.shape == (2, 2) and asked == [0, 1]
    assert held[:, 0].tolist() == [-10.0, -10.01] and held[:, 1].tolist() == [5.0, 5.01]
    assert sequential_curvature(far, (1.0, 1.0), Z, 4, 5).shape == (4, 2)  # at least ``least``

    def on_the_line(k):
        return (-10.0 - 0.01 * k, -1.0 + 0.5 * (-1) ** k)  # the second's mean stays on its -tol

    assert sequential_curvature(on_the_line, (1.0, 1.0), Z, 2, 5).shape == (5, 2)  # every direction decides
    assert sequential_curvature(lambda k: (k % 2,), (1.0,), Z, 2, 3).dtype == np.float64  # whole numbers too
