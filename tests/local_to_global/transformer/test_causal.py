"""The transformer predicts each symbol from the past only: no look-ahead; so no trained model
beats the chain's entropy rate, which a model that sees the next symbol does at once."""

import math

import numpy as np
import pytest
import torch

from helpers import training_settings
from replication.papers.local_to_global.data import sample_sequences
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.transformer import attention
from replication.papers.local_to_global.transformer.model import MarkovTransformer, TransformerConfig, initialise
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import make_model, train


def _model(init: str, seed: int = 0, attention: str = "fast") -> MarkovTransformer:
    model = MarkovTransformer(TransformerConfig(d=8, context=16, mlp_ratio=4, attention=attention)).double()
    return initialise(model, init, 0.5, torch.Generator().manual_seed(seed), "input")


@pytest.mark.parametrize("attention", ["fast", "sdpa"])
def test_future_symbols_do_not_change_earlier_logits(attention):
    tokens = torch.randint(0, 2, (6, 16), generator=torch.Generator().manual_seed(3))
    for init in ("standard", "rank_one"):
        model = _model(init, attention=attention)
        with torch.no_grad():
            logits = model(tokens)
            for k in (1, 7, 15):
                changed = tokens.clone()
                changed[:, k:] = 1 - changed[:, k:]
                other = model(changed)
                # everything before position k sees the same past: identical up to rounding
                assert torch.allclose(other[:, :k], logits[:, :k], rtol=0, atol=1e-12)
                # position k sees its own (flipped) symbol
                assert (other[:, k] - logits[:, k]).abs().min() > 1e-6


def test_each_logit_depends_on_its_whole_past():
    """Attention reaches back: flipping the first symbol changes the logits at every position."""
    model = _model("standard", seed=1)
    tokens = torch.randint(0, 2, (4, 16), generator=torch.Generator().manual_seed(4))
    changed = tokens.clone()
    changed[:, 0] = 1 - changed[:, 0]
    with torch.no_grad():
        assert ((model(changed) - model(tokens)).abs() > 1e-9).all()


CHAIN = MarkovChain(0.2, 0.3)
# Tiny runs: d = 4, context 8, 100 steps at a constant lr 0.02 from a wide standard init (0.2 s each).
RUN = {
    **training_settings(),
    "model": {"d": 4, "context": 8, "mlp_ratio": 4},
    "batch_size": 16,
    "sigma": 0.3,
    "chunk": 50,
    "steps": 100,
    "eval_every": 100,
    "checkpoints": [100],
    "chain": {"p": 0.2, "q": 0.3},
    "inits": ["standard"],
    "seeds": [1],
}
RUN["optimizer"]["lr"] = 0.02
RUN["schedule"]["name"] = "constant"


def _trained_loss(attention: str) -> tuple[float, float]:
    """Train, then the mean cross-entropy of the trained model on 4096 fresh sequences and its
    standard error (from the spread of per-sequence losses)."""
    torch.set_num_threads(1)  # as the pipeline's jobs (settings.threads); tiny matrices gain nothing from more
    settings = run_settings({**RUN, "attention": attention})
    result = train(settings, "standard", 1, progress=False)
    model = make_model(settings)
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(torch.from_numpy(result.checkpoints[name][-1]))
        s = sample_sequences(CHAIN, (4096,), 9, torch.Generator().manual_seed(99))
        x, y = s[:, :-1], s[:, 1:].to(torch.float32)
        per_sequence = torch.nn.functional.binary_cross_entropy_with_logits(model(x), y, reduction="none").mean(1)
    return float(per_sequence.mean()), float(per_sequence.std() / math.sqrt(len(per_sequence)))


@pytest.mark.parametrize("attention", ["fast", "sdpa"])
def test_a_trained_model_does_not_beat_the_entropy_rate(attention):
    """Any predictor of the next symbol from the past has expected loss >= the entropy rate (spec §1);
    the trained model learns (below H(pi)) but stays above the rate up to sampling noise."""
    loss, error = _trained_loss(attention)
    assert loss >= CHAIN.bigram_loss - 4 * error
    assert loss < CHAIN.unigram_loss - 0.05


def test_a_model_that_sees_the_next_symbol_beats_the_entropy_rate(monkeypatch):
    """The control: the same run with the causal mask removed (attention over every position) learns
    to read the target and falls far below the entropy rate, so the bound above can fail."""

    def attend_everywhere(tokens, x, P):
        q, k, v = (x @ P[name].T for name in ("W_Q", "W_K", "W_V"))
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(x.shape[-1]), dim=-1) @ v

    monkeypatch.setitem(attention.PATHS, "sdpa", attend_everywhere)  # the one forward's attention
    loss, error = _trained_loss("sdpa")
    assert loss < CHAIN.bigram_loss - 20 * error and np.isfinite(loss)
