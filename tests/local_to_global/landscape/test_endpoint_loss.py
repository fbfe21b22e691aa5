"""Claim 3 measured (endpoint_loss.py): the sampled cross-entropy of each flow endpoint's predictor
against H(pi) or the entropy rate, and the closed-form rows turned into documentation."""

import numpy as np
import pandas as pd
import pytest

from helpers import basin_settings
from replication.claims import Claim
from replication.papers.local_to_global.landscape import canonical, canonical3d, endpoint_loss
from replication.papers.local_to_global.landscape.settings import BasinSettings
from replication.papers.local_to_global.markov import MarkovChain

COLUMNS = [
    "p",
    "q",
    "model",
    "endpoint",
    "reference",
    "gap",
    "sampled_loss",
    "standard_error",
    "reference_loss",
    "z",
]


def _settings(chains, starts=6, sigma=1.0, seed=3, flow_time=300.0, rounds=4) -> BasinSettings:
    return basin_settings(
        {"sigma": sigma, "starts": starts, "sequences": 200, "length": 64, "z": 4.0},
        chains=chains,
        sigmas=[1.0],
        n_starts=4,
        flow_time=flow_time,
        rounds=rounds,
        grid={"points": 2, "extent": 1.0, "margin": 0.05},
        seed=seed,
    )


def _h(x):
    return -(x * np.log(x) + (1 - x) * np.log(1 - x))


def _references(p, q):
    """H(pi) and the entropy rate written out from the kernel (spec §1)."""
    pi0, pi1 = q / (p + q), p / (p + q)
    return _h(pi1), pi0 * _h(p) + pi1 * _h(q)


def _check_rows(frame):
    """What every row must satisfy whatever the flows did: the reference of its kind, the gap of a
    minimum of that kind, z consistent with the columns and small for a true minimum."""
    assert list(frame.columns) == COLUMNS
    for row in frame.itertuples():
        unigram, entropy_rate = _references(row.p, row.q)
        optimal_gap = np.log((1 - row.p) * (1 - row.q) / (row.p * row.q))
        if row.endpoint == canonical.LOCAL_MIN:
            assert row.reference == "H(pi)" and row.reference_loss == pytest.approx(unigram, rel=1e-12)
            assert abs(row.gap) < 1e-6  # e = 0
        else:
            assert row.endpoint == canonical.GLOBAL_MIN
            assert row.reference == "entropy rate" and row.reference_loss == pytest.approx(entropy_rate, rel=1e-12)
            assert row.gap == pytest.approx(optimal_gap, abs=1e-3)
        assert row.standard_error > 0
        assert row.z == pytest.approx((row.sampled_loss - row.reference_loss) / row.standard_error, rel=1e-12)
        assert abs(row.z) < 4.5


def test_endpoints_of_real_flows_have_the_reference_losses():
    """p = q = 0.9 from N(0, 1) starts: both kinds of minimum are reached in 2-D and 3-D."""
    settings = _settings([{"p": 0.9, "q": 0.9}], starts=4)
    frame = endpoint_loss.sampled_endpoint_losses(settings)
    _check_rows(frame)
    assert list(zip(frame.model, frame.endpoint)) == [
        ("2d", canonical.LOCAL_MIN),
        ("2d", canonical.GLOBAL_MIN),
        ("3d", canonical.LOCAL_MIN),
        ("3d", canonical.GLOBAL_MIN),
    ]
    assert (frame.p == 0.9).all() and (frame.q == 0.9).all()


def _fake_flows(monkeypatch, ends_of):
    """Replace the flows by ``ends_of(chain, model, starts)``; record every call."""
    calls = []

    def flow_endpoints(chain, model, starts, flow_time, rounds):
        calls.append({"chain": chain, "model": model, "starts": starts, "flow_time": flow_time, "rounds": rounds})
        return ends_of(chain, model, starts)

    monkeypatch.setattr(endpoint_loss, "flow_endpoints", flow_endpoints)
    return calls


def _on_global_min(chain, w, a=None):
    """A point (e, w[, a]) on the global-minimum set, e from the gap equation."""
    factor = canonical.signed_square(w)
    if a is None:
        return np.sqrt(chain.optimal_gap / factor)
    # e^2 (1 + a e^2) s = D*: a quadratic in e^2 with a > 0
    u = (-1 + np.sqrt(1 + 4 * a * chain.optimal_gap / factor)) / (2 * a)
    return np.sqrt(u)


def test_first_endpoint_of_each_kind_is_measured_and_missing_kinds_skipped(monkeypatch):
    first, second = MarkovChain(0.2, 0.3), MarkovChain(0.9, 0.9)

    def ends_of(chain, model, starts):
        # D* > 0 for p + q < 1 (global minima at 1 + 2w|w| > 0), D* < 0 for p + q > 1
        w, w_later = (0.5, 1.0) if chain.switching < 1 else (-1.0, -1.5)
        if model == "2d":
            rows = [
                (0.4, 0.4, canonical.UNCONVERGED),
                (0.0, 0.8, canonical.LOCAL_MIN),
                (_on_global_min(chain, w), w, canonical.GLOBAL_MIN),
                (0.0, 0.2, canonical.LOCAL_MIN),
                (_on_global_min(chain, w_later), w_later, canonical.GLOBAL_MIN),
            ]
            return pd.DataFrame(rows, columns=["e", "w", "endpoint"])
        # 3-D: no local minimum at all for the first chain; only one global minimum
        rows = [(_on_global_min(chain, w, a=0.3), w, 0.3, canonical.GLOBAL_MIN)]
        if chain == second:
            rows.insert(0, (0.0, 0.6, 2.0, canonical.LOCAL_MIN))
        return pd.DataFrame(rows, columns=["e", "w", "a", "endpoint"])

    calls = _fake_flows(monkeypatch, ends_of)
    settings = _settings([{"p": 0.2, "q": 0.3}, {"p": 0.9, "q": 0.9}], starts=500, sigma=0.3, flow_time=7.0, rounds=2)
    frame = endpoint_loss.sampled_endpoint_losses(settings)
    _check_rows(frame)
    assert [(row.p, row.q, row.model, row.endpoint) for row in frame.itertuples()] == [
        (0.2, 0.3, "2d", canonical.LOCAL_MIN),
        (0.2, 0.3, "2d", canonical.GLOBAL_MIN),
        (0.2, 0.3, "3d", canonical.GLOBAL_MIN),
        (0.9, 0.9, "2d", canonical.LOCAL_MIN),
        (0.9, 0.9, "2d", canonical.GLOBAL_MIN),
        (0.9, 0.9, "3d", canonical.LOCAL_MIN),
        (0.9, 0.9, "3d", canonical.GLOBAL_MIN),
    ]
    # the gap is that of the first endpoint of the kind, in the model's own formula
    globals_ = frame[frame.endpoint == canonical.GLOBAL_MIN]
    for row, chain in zip(globals_.itertuples(), (first, first, second, second)):
        assert row.gap == pytest.approx(chain.optimal_gap, rel=1e-12)
    assert (frame[frame.endpoint == canonical.LOCAL_MIN].gap == 0).all()

    # the flows: one call per chain and model, from N(0, sigma^2 I_k) starts
    assert [(c["chain"], c["model"]) for c in calls] == [(first, "2d"), (first, "3d"), (second, "2d"), (second, "3d")]
    for call in calls:
        k = 2 if call["model"] == "2d" else 3
        assert call["starts"].shape == (500, k)
        assert call["flow_time"] == 7.0 and call["rounds"] == 2
        assert np.abs(call["starts"].mean(axis=0)).max() < 4 * 0.3 / np.sqrt(500)
        assert np.allclose(call["starts"].std(axis=0), 0.3, rtol=0.15)
    # every chain draws its own starts
    assert not np.allclose(calls[0]["starts"], calls[2]["starts"])
    # seeded: the same settings, the same starts and samples
    again = endpoint_loss.sampled_endpoint_losses(settings)
    pd.testing.assert_frame_equal(again, frame)
    assert np.array_equal(calls[4]["starts"], calls[0]["starts"])


def test_a_mislabelled_endpoint_is_caught(monkeypatch):
    """An endpoint labelled a global minimum that is not one (half the optimal gap) is many
    standard errors above the entropy rate; a "local minimum" with e != 0 predicts better than the
    marginal, many standard errors below H(pi)."""
    chain = MarkovChain(0.2, 0.3)

    def ends_of(chain, model, starts):
        half = np.sqrt(0.5 * chain.optimal_gap / canonical.signed_square(0.5))
        if model == "2d":
            return pd.DataFrame([(half, 0.5, canonical.GLOBAL_MIN)], columns=["e", "w", "endpoint"])
        return pd.DataFrame([(1.0, 0.5, 0.0, canonical.LOCAL_MIN)], columns=["e", "w", "a", "endpoint"])

    _fake_flows(monkeypatch, ends_of)
    frame = endpoint_loss.sampled_endpoint_losses(_settings([{"p": 0.2, "q": 0.3}], starts=2))
    assert list(frame.endpoint) == [canonical.GLOBAL_MIN, canonical.LOCAL_MIN]
    assert frame.gap.tolist() == pytest.approx(
        [0.5 * chain.optimal_gap, float(canonical3d.gap(1.0, 0.5, 0.0))], rel=1e-12
    )
    assert frame.z[0] > 5 and frame.z[1] < -10
    assert not endpoint_loss.sampled_loss_claim(frame, 4.0).holds


def test_sampled_cross_entropy_of_the_bayes_predictor_and_of_the_marginal():
    """At D* the best offset on the sample gives the entropy rate; at D = 0 the marginal's H(pi);
    the standard error is that of a mean over the sequences."""
    chain = MarkovChain(0.5, 0.8)
    unigram, entropy_rate = _references(0.5, 0.8)
    bayes, error = endpoint_loss.sampled_cross_entropy(chain, chain.optimal_gap, 200, 128, seed=11)
    assert abs(bayes - entropy_rate) < 4 * error
    # per-sequence losses over 128 correlated predictions spread by order 0.5/sqrt(128)
    assert 0.1 / np.sqrt(128 * 200) < error < 3.0 / np.sqrt(128 * 200)
    marginal, error = endpoint_loss.sampled_cross_entropy(chain, 0.0, 200, 128, seed=11)
    assert abs(marginal - unigram) < 4 * error
    # the same seed, the same sample; another seed, another one
    assert endpoint_loss.sampled_cross_entropy(chain, 0.0, 200, 128, seed=11) == (marginal, error)
    assert endpoint_loss.sampled_cross_entropy(chain, 0.0, 200, 128, seed=12)[0] != marginal


def test_sampled_cross_entropy_minimises_the_offset_on_the_sample():
    """For the optimal offset the loss cannot be lowered by moving it: the mean of the predicted
    probability equals the frequency of ones among the targets (zero derivative)."""
    import torch

    from replication.papers.local_to_global.data import sample_sequences

    chain, gap = MarkovChain(0.2, 0.3), 1.3
    loss, _ = endpoint_loss.sampled_cross_entropy(chain, gap, 50, 40, seed=5)
    x = sample_sequences(chain, (50,), 41, torch.Generator().manual_seed(5)).numpy()
    current, following = x[:, :-1], x[:, 1:]

    def mean_loss(offset):
        logit = gap * current + offset
        return np.mean(np.logaddexp(0, logit) - following * logit)

    coarse = np.linspace(-4, 4, 81)
    best = coarse[np.argmin([mean_loss(c) for c in coarse])]
    fine = np.linspace(best - 0.1, best + 0.1, 201)
    best = fine[np.argmin([mean_loss(c) for c in fine])]
    assert loss == pytest.approx(mean_loss(best), abs=1e-6)
    assert loss <= min(mean_loss(best - 0.01), mean_loss(best + 0.01))


def test_documentation_rows_keep_the_claim_and_say_why():
    claims = [
        Claim(
            "Local to Global",
            "3",
            "Figs. 1, 2",
            "endpoint losses",
            0.25,
            "<= 1e-6",
            True,
            "max error 0.25",
            spec="L2G-3",
        ),
        Claim("Local to Global", "4a", "Figs. 2, 5", "s", 1.0, "t", True, "r", spec="L2G-4"),
        Claim("Local to Global", "4b", "Figs. 2, 5", "small sigma", 0.0, "<= 0.01", False, "fraction 0", spec="L2G-4"),
    ]
    out = {c.claim_id: c for c in endpoint_loss.reclassify(claims, 0.05)}
    assert list(out) == ["3-closed-form", "4a", "4b"]
    assert out["4a"] == claims[1]
    three, four = out["3-closed-form"], out["4b"]
    assert (three.paper, three.figure, three.statement, three.measured, three.threshold, three.holds) == (
        "Local to Global",
        "Figs. 1, 2",
        "endpoint losses",
        0.25,
        "<= 1e-6",
        True,
    )
    assert three.kind == four.kind == "documentation" and three.rule == "not a test"
    assert (three.spec, four.spec) == ("L2G-3", "L2G-4")  # still the spec claims they report
    assert three.reason == (
        "max error 0.25; documentation: the closed-form loss at the endpoint equals H(pi) / the entropy rate "
        "by construction (F(0) = H(pi)); the sampled cross-entropy row checks it"
    )
    assert (four.paper, four.figure, four.statement, four.measured, four.threshold, four.holds) == (
        "Local to Global",
        "Figs. 2, 5",
        "small sigma",
        0.0,
        "<= 0.01",
        False,
    )
    assert four.reason == (
        "fraction 0; documentation: at sigma <= 0.05, Thm 8 makes a local-minimum endpoint from p+q<1 a "
        "many-sigma event, so the row cannot fail"
    )


def test_sampled_loss_claim_text_and_empty_table():
    rows = [
        {"p": 0.2, "q": 0.3, "model": "2d", "endpoint": canonical.LOCAL_MIN, "reference": "H(pi)", "gap": 0.0,
         "sampled_loss": 0.674, "standard_error": 0.002, "reference_loss": 0.673, "z": 0.5},
        {"p": 0.9, "q": 0.9, "model": "3d", "endpoint": canonical.GLOBAL_MIN, "reference": "entropy rate",
         "gap": 4.39, "sampled_loss": 0.3311, "standard_error": 0.002, "reference_loss": 0.3251, "z": 3.0},
    ]  # fmt: skip
    rows.append({**rows[0], "model": "3d", "z": -4.0})  # a second local minimum, exactly on the bound
    claim = endpoint_loss.sampled_loss_claim(pd.DataFrame(rows), 4.0)
    assert (claim.paper, claim.claim_id, claim.figure, claim.kind) == ("Local to Global", "3", "Figs. 1, 2", "checked")
    assert claim.statement == (
        "Endpoint losses: H(pi) at local minima, the entropy rate at global minima (cross-entropy of the "
        "endpoint's predictor on sampled sequences, bias minimised numerically)."
    )
    assert claim.holds and claim.measured == 4.0  # |z| = 4 is within 4 standard errors
    assert claim.threshold == "|sampled - reference| <= 4 standard errors"
    assert claim.reason == (
        "largest |z| at p=0.2, q=0.3, 3d, local_min: sampled 0.67400 +- 0.00200 vs H(pi) 0.67300; "
        "2 local and 1 global minima"
    )
    assert claim.rule == "every endpoint (one per chain, model and minimum kind); holds in every run"
    assert claim.n_runs == 3
    rows.pop()
    empty = endpoint_loss.sampled_loss_claim(pd.DataFrame(columns=COLUMNS), 4.0)
    assert not empty.holds and np.isnan(empty.measured) and empty.reason == "no flow ended on a minimum"
    assert empty.n_runs == 0
    # the largest |z| is the one reported, whatever its sign
    rows[0]["z"] = -5.0
    worst = endpoint_loss.sampled_loss_claim(pd.DataFrame(rows), 4.0)
    assert not worst.holds and worst.measured == 5.0 and "p=0.2, q=0.3, 2d, local_min" in worst.reason
    assert worst.holds_fraction == 0.5


def test_settings_seed_changes_the_starts(monkeypatch):
    calls = _fake_flows(
        monkeypatch,
        lambda chain, model, starts: pd.DataFrame(columns=["e", "w", "a"][: starts.shape[1]] + ["endpoint"]),
    )
    chains = [{"p": 0.2, "q": 0.3}]
    assert endpoint_loss.sampled_endpoint_losses(_settings(chains, seed=3)).empty
    assert endpoint_loss.sampled_endpoint_losses(_settings(chains, seed=4)).empty
    assert not np.allclose(calls[0]["starts"], calls[2]["starts"])


def test_standard_error_is_that_of_the_per_sequence_mean():
    """At gap 0 the best offset is the log-odds of the targets' frequency (closed form): the
    per-sequence losses there give the mean and, with the n - 1 of a sample variance, the error."""
    import torch

    from replication.papers.local_to_global.data import sample_sequences

    chain = MarkovChain(0.2, 0.3)
    loss, error = endpoint_loss.sampled_cross_entropy(chain, 0.0, 30, 40, seed=8)
    following = sample_sequences(chain, (30,), 41, torch.Generator().manual_seed(8)).numpy()[:, 1:]
    m = following.mean()
    per_sequence = -(following * np.log(m) + (1 - following) * np.log(1 - m)).mean(axis=1)
    assert loss == pytest.approx(per_sequence.mean(), rel=1e-9)
    assert error == pytest.approx(per_sequence.std(ddof=1) / np.sqrt(30), rel=1e-6)
