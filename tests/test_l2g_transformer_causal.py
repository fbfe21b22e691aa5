"""The transformer predicts each symbol from the past only: no look-ahead."""

import torch

from replication.papers.local_to_global.model import MarkovTransformer, TransformerConfig, initialise


def _model(init: str, seed: int = 0) -> MarkovTransformer:
    model = MarkovTransformer(TransformerConfig(d=8, context=16, mlp_ratio=4, attention="fast")).double()
    return initialise(model, init, 0.5, torch.Generator().manual_seed(seed), "input")


def test_future_symbols_do_not_change_earlier_logits():
    tokens = torch.randint(0, 2, (6, 16), generator=torch.Generator().manual_seed(3))
    for init in ("standard", "rank_one"):
        model = _model(init)
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
