"""Last-bit perturbations for numerical-noise ensembles: off by default, a few ulps when on."""

import numpy as np
import pytest

from helpers import training_settings
from replication.papers.benign_overfitting.data import sample_gram_data
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import train
from replication.perturbation import VARIABLE, Perturbation, parse, perturb

SETTINGS = {
    **training_settings(),
    "model": {"d": 8, "context": 16, "mlp_ratio": 4},
    "batch_size": 8,
    "chunk": 8,
    "steps": 8,
    "eval_every": 4,
    "checkpoints": [0, 8],
    "chain": {"p": 0.2, "q": 0.3},
    "inits": ["standard"],
    "seeds": [1],
}


def test_parse():
    assert parse(None) is None and parse("") is None and parse("0") is None
    assert parse("3") == Perturbation(3, 4.0) and parse(" 2:8 ") == Perturbation(2, 8.0)
    for bad in ("x", "-1", "2:0", "2:abc", "2:-1", "2:1048576.5", "0:0", "0:x"):
        with pytest.raises(ValueError, match=f"{VARIABLE}.*allowed"):
            parse(bad)
    # The bounds of ulps: any positive number up to 2^20.
    assert parse("2:0.5") == Perturbation(2, 0.5) and parse("2:100") == Perturbation(2, 100.0)
    assert parse("2:1048576") == Perturbation(2, 2.0**20)
    with pytest.raises(ValueError, match="0 < ulps <= 2"):
        parse("2:1048577")


@pytest.mark.parametrize("text", ["0:8", "00", " 0:4 ", "+0"])
def test_member_zero_is_off_whatever_its_ulps(monkeypatch, text):
    assert parse(text) is None
    monkeypatch.setenv(VARIABLE, text)
    values = np.linspace(0.5, 1.5, 5)
    assert perturb(values, "x") is values


def test_the_documented_formula(monkeypatch):
    """values x (1 + ulps eps u), u ~ U(-1, 1) from the stream seeded by (member, crc32(name)):
    every element its own u, each moved up where its u is positive."""
    import zlib

    monkeypatch.setenv(VARIABLE, "3:8")
    values = np.full((4, 25), 1.5)  # one value: any spread in the result comes from u
    u = np.random.default_rng([3, zlib.crc32(b"layer/w")]).uniform(-1.0, 1.0, size=(4, 25))
    eps = np.finfo(np.float64).eps
    moved = perturb(values, "layer/w")
    assert moved.shape == values.shape and len(np.unique(moved)) > 10  # about 25 steps of one ulp
    np.testing.assert_allclose(moved, 1.5 * (1 + 8 * eps * u), rtol=eps, atol=0)  # 8 ulps away: a sign flip fails
    clear = np.abs(u) > 0.2  # moves of more than one ulp of 1.5, so the rounding cannot hide the direction
    assert (np.sign(moved - values)[clear] == np.sign(u)[clear]).all()


def test_off_returns_the_same_array(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    values = np.linspace(-1, 1, 7)
    assert perturb(values, "x") is values


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_on_moves_every_value_by_at_most_the_ulps(monkeypatch, dtype):
    values = np.random.default_rng(0).standard_normal(10_000).astype(dtype)
    monkeypatch.setenv(VARIABLE, "5:4")
    moved = perturb(values, "x")
    assert moved.dtype == dtype
    relative = np.abs(moved.astype(float) - values) / np.abs(values)
    eps = np.finfo(dtype).eps
    assert 0.5 < np.mean(moved != values) and relative.max() <= 4.5 * eps  # 4 ulps and the rounding of the product
    assert np.array_equal(perturb(values, "x"), moved)  # same member and name: same numbers
    assert not np.array_equal(perturb(values, "y"), moved)
    monkeypatch.setenv(VARIABLE, "6:4")
    assert not np.array_equal(perturb(values, "x"), moved)


def test_transformer_member_starts_a_few_ulps_away_and_repeats(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    base = train(run_settings(SETTINGS), "standard", 1, progress=False)
    monkeypatch.setenv(VARIABLE, "1")
    member = train(run_settings(SETTINGS), "standard", 1, progress=False)
    again = train(run_settings(SETTINGS), "standard", 1, progress=False)
    for name in ("W_V", "W_1", "e"):
        first, moved = base.checkpoints[name][0], member.checkpoints[name][0]
        assert np.any(first != moved)
        np.testing.assert_allclose(moved, first, rtol=5 * np.finfo(np.float32).eps, atol=0)
        assert np.array_equal(moved, again.checkpoints[name][0])
    loss, moved_loss = base.losses.test_loss.dropna(), member.losses.test_loss.dropna()
    np.testing.assert_allclose(moved_loss, loss, rtol=1e-4)
    assert np.array_equal(moved_loss, again.losses.test_loss.dropna())


def test_benign_overfitting_gram_moves_in_the_last_bits(monkeypatch):
    def gram():
        return sample_gram_data(np.random.default_rng(3), 20, 8, 500, 20.0, 0.2, 0.2).gram

    monkeypatch.delenv(VARIABLE, raising=False)
    base = gram()
    monkeypatch.setenv(VARIABLE, "2")
    moved = gram()
    assert np.any(moved != base)
    np.testing.assert_allclose(moved, base, rtol=0, atol=1e-13 * np.abs(base).max())  # sums: absolute scale
