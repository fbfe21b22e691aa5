"""One forward pass, four attention paths: the module and ``model.logits`` over a dict of parameters
are one computation, and every path of attention.py gives the same attention, logits and gradients
(float64, so that the comparison is of the algebra, not of rounding)."""

import pytest
import torch

from replication.papers.local_to_global.transformer.attention import PATHS, attend
from replication.papers.local_to_global.transformer.model import (
    MarkovTransformer,
    TransformerConfig,
    initialise,
    logits,
    loss,
)

D, CONTEXT, BATCH = 4, 24, 3


def model_and_tokens(attention: str, init: str, seed: int):
    model = MarkovTransformer(TransformerConfig(d=D, context=CONTEXT, mlp_ratio=4, attention=attention)).double()
    initialise(model, init, 0.8, torch.Generator().manual_seed(seed), "input")
    tokens = torch.randint(0, 2, (BATCH, CONTEXT + 1), generator=torch.Generator().manual_seed(seed + 1))
    return model, tokens[:, :-1], tokens[:, 1:]


@pytest.mark.parametrize("attention", ["fast", "sdpa"])
def test_the_module_runs_the_shared_forward(attention):
    model, x, y = model_and_tokens(attention, "standard", 0)
    parameters = dict(model.named_parameters())
    assert torch.equal(model(x), logits(parameters, x, attention))
    assert torch.equal(model.loss(x, y), loss(parameters, x, y, attention))


@pytest.mark.parametrize("init", ["standard", "ours", "rank_one"])
def test_every_attention_path_gives_the_same_attention_loss_and_gradients(init):
    model, x, y = model_and_tokens("sdpa", init, 3)
    parameters = dict(model.named_parameters())
    embedded = x.unsqueeze(-1).double() * model.e + model.p[:CONTEXT]
    reference = attend("explicit", x, embedded, parameters)
    reference_loss = loss(parameters, x, y, "explicit")
    reference_gradients = torch.autograd.grad(reference_loss, list(parameters.values()))
    assert set(PATHS) == {"fast", "sdpa", "binary", "explicit"}
    for attention in PATHS:
        assert torch.allclose(attend(attention, x, embedded, parameters), reference, rtol=1e-10, atol=1e-12), attention
        value = loss(parameters, x, y, attention)
        assert float(value) == pytest.approx(float(reference_loss), rel=1e-12), attention
        gradients = torch.autograd.grad(value, list(parameters.values()))
        for name, ours, expected in zip(parameters, gradients, reference_gradients, strict=True):
            assert torch.allclose(ours, expected, rtol=1e-9, atol=1e-12), (attention, name)


def test_an_unknown_attention_path_is_refused_naming_the_paths():
    model, x, _ = model_and_tokens("sdpa", "standard", 0)
    with pytest.raises(ValueError, match="unknown attention 'flash'; allowed: fast, sdpa, binary, explicit"):
        logits(dict(model.named_parameters()), x, "flash")
