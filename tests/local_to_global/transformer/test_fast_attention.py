"""The fast attention for binary symbols computes the same function as PyTorch's general kernel.

Forward and every parameter's gradient agree in float64 to 1e-10 relative, for every
initialisation, random and trained parameters, and contexts from 1 to 1024; training runs on both
paths give the same losses to float32 rounding; extreme scores stay exact.
"""

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers import schema_defaults, shared_scope, training_settings
from replication.config import validate_config
from replication.errors import ConfigError
from replication.papers.local_to_global.markov import MarkovChain
from replication.papers.local_to_global.transformer import attention_kernels, fast_attention
from replication.papers.local_to_global.transformer.attention import attend, embed, sdpa_attention
from replication.papers.local_to_global.transformer.fast_attention import binary_token_attention
from replication.papers.local_to_global.transformer.model import INITS, MarkovTransformer, TransformerConfig, initialise
from replication.papers.local_to_global.transformer.settings import run_settings
from replication.papers.local_to_global.transformer.train import train

CONTEXTS = (1, 2, 3, 7, 64, 100, pytest.param(1024, marks=pytest.mark.heavy))
RTOL = 1e-10
CHAIN = MarkovChain(0.2, 0.3)


def _models(init, sigma, seed=0, context=1024):
    """The same float64 parameters in a fast and an sdpa model."""
    fast = initialise(
        MarkovTransformer(TransformerConfig(d=8, context=context, mlp_ratio=4, attention="fast")),
        init,
        sigma,
        torch.Generator().manual_seed(seed),
        "input",
    )
    fast = fast.double()
    sdpa = MarkovTransformer(TransformerConfig(d=8, context=context, mlp_ratio=4, attention="sdpa")).double()
    sdpa.load_state_dict(fast.state_dict())
    return fast, sdpa


def _tokens(batch, length, seed):
    return torch.randint(0, 2, (batch, length + 1), generator=torch.Generator().manual_seed(seed))


def _logits_and_gradients(model, tokens):
    model.zero_grad(set_to_none=True)
    logits = model(tokens[:, :-1])
    F.binary_cross_entropy_with_logits(logits, tokens[:, 1:].double()).backward()
    return logits.detach(), {name: param.grad.clone() for name, param in model.named_parameters()}


def _relative_error(value, reference, scale):
    """max |value - reference| over max |reference|, floored at 1e-5 ``scale`` (a gradient that is zero
    in exact arithmetic, such as W_Q's with one position, is rounding noise in both paths)."""
    return (value - reference).abs().max().item() / max(reference.abs().max().item(), 1e-5 * scale)


def _assert_paths_agree(fast, sdpa, tokens):
    logits_fast, grads_fast = _logits_and_gradients(fast, tokens)
    logits_sdpa, grads_sdpa = _logits_and_gradients(sdpa, tokens)
    assert _relative_error(logits_fast, logits_sdpa, 1.0) < RTOL
    scale = max(g.abs().max().item() for g in grads_sdpa.values())
    for name, grad in grads_sdpa.items():
        error = _relative_error(grads_fast[name], grad, scale)
        assert error < RTOL, f"gradient of {name}: relative error {error:.2e}"


@pytest.mark.parametrize("init", INITS)
@pytest.mark.parametrize("length", CONTEXTS)
def test_forward_and_gradients_match_sdpa_at_every_init(init, length):
    fast, sdpa = _models(init, sigma=0.02)
    _assert_paths_agree(fast, sdpa, _tokens(3, length, seed=length))


@pytest.mark.parametrize("init", INITS)
@pytest.mark.parametrize("length", (1, 7, 100, pytest.param(1024, marks=pytest.mark.heavy)))
def test_forward_and_gradients_match_sdpa_for_random_parameters(init, length):
    # sigma 0.7 makes scores of order several units: far from uniform attention, both key groups heavy somewhere.
    fast, sdpa = _models(init, sigma=0.7, seed=length)
    with torch.no_grad():
        for model in (fast, sdpa):
            for name, param in model.named_parameters():
                param.add_(
                    0.3
                    * torch.randn(param.shape, generator=torch.Generator().manual_seed(len(name)), dtype=param.dtype)
                )
    _assert_paths_agree(fast, sdpa, _tokens(4, length, seed=length + 1))


@pytest.fixture(scope=shared_scope)
def trained_models():
    """Parameters after 60 AdamW steps on the chain (float64, context 128)."""
    fast, sdpa = _models("standard", sigma=0.02, context=128)
    optimizer = torch.optim.AdamW(fast.parameters(), lr=0.02)
    generator = torch.Generator().manual_seed(5)
    for _ in range(60):
        tokens = torch.randint(0, 2, (8, 129), generator=generator)
        optimizer.zero_grad()
        fast.loss(tokens[:, :-1], tokens[:, 1:]).backward()
        optimizer.step()
    sdpa.load_state_dict(fast.state_dict())
    return fast, sdpa


@pytest.mark.heavy
@pytest.mark.parametrize("length", (1, 3, 100, 128))
def test_forward_and_gradients_match_sdpa_for_trained_parameters(trained_models, length):
    fast, sdpa = trained_models
    assert (fast.W_Q - 0).abs().max() > 0.05  # training moved the parameters far from the init
    _assert_paths_agree(fast, sdpa, _tokens(5, length, seed=7))


def test_the_tolerance_catches_a_missing_mask_or_scale():
    """The comparison is sharp enough to see a non-causal or unscaled attention."""
    fast, _ = _models("standard", sigma=0.7, seed=3)
    tokens = _tokens(2, 100, seed=3)[:, :-1]
    x = tokens.unsqueeze(-1).double() * fast.e + fast.p[:100]
    q, k, v = (x.unsqueeze(1) @ W.T for W in (fast.W_Q, fast.W_K, fast.W_V))
    out = binary_token_attention(tokens, fast.e, fast.p, fast.W_Q, fast.W_K, fast.W_V).detach()
    exact = F.scaled_dot_product_attention(q, k, v, is_causal=True).squeeze(1).detach()
    unmasked = F.scaled_dot_product_attention(q, k, v).squeeze(1).detach()
    unscaled = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0).squeeze(1).detach()
    assert _relative_error(out, exact, 1.0) < RTOL
    assert _relative_error(out, unmasked, 1.0) > 1e4 * RTOL
    assert _relative_error(out, unscaled, 1.0) > 1e4 * RTOL


@pytest.mark.parametrize("offset", (-60.0, 60.0))
def test_one_sided_scores_and_empty_key_groups_are_exact(offset):
    """beta = +-60: one key group carries weight exp(-60); rows whose keys all share one symbol stay exact."""
    fast, sdpa = _models("standard", sigma=0.3, seed=1, context=64)
    with torch.no_grad():
        for model in (fast, sdpa):
            model.e.copy_(torch.linspace(-1, 1, 8, dtype=torch.float64))
            # W_K e along every query: beta_n = offset for all rows
            model.W_K.copy_(torch.zeros(8, 8, dtype=torch.float64))
            model.W_Q.copy_(torch.eye(8, dtype=torch.float64))
            model.p[:, 0] = 1.0
            model.e[0] = 0.0
            model.W_K[0] = offset * np.sqrt(8) * model.e / model.e.pow(2).sum()
    tokens = torch.cat(
        (torch.zeros(1, 65, dtype=torch.long), torch.ones(1, 65, dtype=torch.long), _tokens(2, 64, seed=2))
    )
    _assert_paths_agree(fast, sdpa, tokens)


def _fallback_model(context=16):
    return initialise(
        MarkovTransformer(TransformerConfig(d=8, context=context, mlp_ratio=4, attention="fast")),
        "standard",
        0.02,
        torch.Generator().manual_seed(0),
        "input",
    )


def _sdpa_copy(model):
    reference = copy.deepcopy(model)
    reference.config = TransformerConfig(d=8, context=model.config.context, mlp_ratio=4, attention="sdpa")
    return reference


def test_positional_scores_beyond_the_exponent_range_stay_exact():
    """Rows of positional scores spanning far more than float32's exponent range (~87): each row is
    shifted by its maximum, so the fast path stays as accurate as PyTorch's kernel in float32."""
    model = _fallback_model()
    with torch.no_grad():
        model.W_Q.copy_(torch.eye(8))
        model.W_K.copy_(torch.eye(8))
        model.p[:8] *= 1500.0
    tokens = _tokens(2, 16, seed=0)[:, :-1]
    fast = binary_token_attention(tokens, model.e, model.p, model.W_Q, model.W_K, model.W_V)
    assert fast is not None
    exact = _sdpa_copy(model).double()
    x = tokens.unsqueeze(-1).double() * exact.e + exact.p[:16]
    q, k, v = (x.unsqueeze(1) @ W.T for W in (exact.W_Q, exact.W_K, exact.W_V))
    reference = F.scaled_dot_product_attention(q, k, v, is_causal=True).squeeze(1)
    assert _relative_error(fast.double(), reference, 1.0) < 1e-6


def test_a_query_whose_weights_underflow_falls_back_to_the_general_kernel():
    """A symbol-1 query whose keys all carry a factor exp(c_i - max c) below float32's range (here e^-200):
    the fast path declines (None) and the model's output is the general kernel's, exactly; so is the
    attention inside the loss, which asks the path for it without the embeddings."""
    model = _fallback_model()
    with torch.no_grad():
        model.W_Q.copy_(torch.eye(8))
        model.W_K.copy_(torch.eye(8))
        model.e.zero_()
        model.e[0] = 30.0
        model.p[:, 0] = torch.linspace(-10.0, 10.0, 16)  # c_i = e . p_i / sqrt(8) from -106 to 106
    tokens = _tokens(2, 16, seed=0)[:, :-1]
    tokens[0, 0] = 1  # the first query has symbol 1 and only key 0
    assert binary_token_attention(tokens, model.e, model.p, model.W_Q, model.W_K, model.W_V) is None
    assert torch.isfinite(model(tokens)).all()
    assert torch.equal(model(tokens), _sdpa_copy(model)(tokens))
    sdpa_output = sdpa_attention(tokens, embed(model._parameters, tokens), model._parameters)
    for path in ("fast", "sdpa"):  # given no embeddings, a path that reads them computes them
        assert torch.equal(attend(path, tokens, None, model._parameters), sdpa_output)
    targets = _tokens(2, 16, seed=1)[:, :-1]
    torch.testing.assert_close(model.loss(tokens, targets), _sdpa_copy(model).loss(tokens, targets))


@pytest.mark.heavy
def test_training_on_both_paths_gives_the_same_losses():
    settings = {
        **training_settings(),
        "model": {"d": 8, "context": 24, "mlp_ratio": 4},
        "batch_size": 16,
        "chunk": 50,
        "steps": 200,
        "eval_every": 10,
        "checkpoints": [200],
        "chain": {"p": CHAIN.p, "q": CHAIN.q},
        "inits": ["standard"],
        "seeds": [1],
    }
    runs = {
        name: train(run_settings({**settings, "attention": name}), "standard", 1, progress=False)
        for name in ("fast", "sdpa")
    }
    fast, sdpa = runs["fast"].losses, runs["sdpa"].losses
    assert fast.train_loss.iloc[-1] < fast.train_loss.iloc[1] - 0.02  # the run learns
    np.testing.assert_allclose(fast.train_loss.iloc[1:], sdpa.train_loss.iloc[1:], rtol=0, atol=2e-5)
    np.testing.assert_allclose(fast.test_loss.dropna(), sdpa.test_loss.dropna(), rtol=0, atol=2e-5)
    np.testing.assert_allclose(runs["fast"].checkpoints["W_Q"], runs["sdpa"].checkpoints["W_Q"], rtol=0, atol=1e-3)


def test_an_unknown_attention_is_a_config_error_naming_the_allowed_values():
    config = schema_defaults()
    config["local_to_global"]["transformer"]["attention"] = "flash"
    with pytest.raises(ConfigError, match=r"local_to_global\.transformer\.attention.*fast.*sdpa"):
        validate_config(config, "workflow/schemas/config.schema.yaml")
    with pytest.raises(ValueError, match="allowed: fast, sdpa"):
        TransformerConfig(d=8, context=16, mlp_ratio=4, attention="flash")


def test_float32_stays_accurate_for_large_scores():
    """Rows of scores spanning ~30 (exp(-30) ~ 1e-13) and key offsets beta of ~+-10: float32 is as
    accurate as PyTorch's kernel."""
    generator = torch.Generator().manual_seed(4)
    d, length = 8, 256
    e = torch.randn(d, generator=generator, dtype=torch.float64)
    p = torch.randn(length, d, generator=generator, dtype=torch.float64)
    W_Q, W_K, W_V = (torch.randn(d, d, generator=generator, dtype=torch.float64) * 0.55 for _ in range(3))
    tokens = torch.randint(0, 2, (4, length), generator=generator)
    x = tokens.unsqueeze(-1).double() * e + p

    def sdpa(*tensors):
        x_, W_Q_, W_K_, W_V_ = tensors
        q, k, v = (x_.unsqueeze(1) @ W.T for W in (W_Q_, W_K_, W_V_))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).squeeze(1)

    scores = (p @ W_Q.T) @ (p @ W_K.T).T / np.sqrt(d)
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    spread = scores.masked_fill(~causal, -np.inf).max(1).values - scores.masked_fill(~causal, np.inf).min(1).values
    assert spread.max() > 25  # large logits
    exact = sdpa(x, W_Q, W_K, W_V)
    fast = binary_token_attention(tokens, e.float(), p.float(), W_Q.float(), W_K.float(), W_V.float())
    general = sdpa(x.float(), W_Q.float(), W_K.float(), W_V.float())
    assert fast is not None
    scale = exact.abs().max().item()
    fast_error, general_error = ((t.double() - exact).abs().max().item() / scale for t in (fast, general))
    assert fast_error < max(10 * general_error, 1e-5), (fast_error, general_error)


@pytest.mark.parametrize("shift", ("score_bound", "row_maximum"))
def test_the_written_backward_passes_gradcheck(monkeypatch, shift):
    """The hand-written backward against finite differences in float64, for every input (e, p, W_Q, W_K,
    W_V): several row blocks, rows of several group pairs (beta on both sides of -ln 2 for each query
    symbol), key factors spanning many orders of magnitude, and each choice of row shift."""
    monkeypatch.setattr(fast_attention, "BLOCK_ROWS", 4)
    monkeypatch.setattr(fast_attention, "SHIFT_BOUND_LIMIT", math.inf if shift == "score_bound" else -1.0)
    generator = torch.Generator().manual_seed(11)
    length, batch, d = 13, 3, 4

    def draw(*shape, scale=1.0):
        return (scale * torch.randn(*shape, generator=generator, dtype=torch.float64)).requires_grad_()

    inputs = (draw(d, scale=1.5), draw(length, d, scale=1.5), draw(d, d), draw(d, d), draw(d, d))
    tokens = torch.randint(0, 2, (batch, length), generator=generator)
    tokens[:, 0] = torch.tensor([0, 1, 1])  # first positions of both symbols: empty key groups
    with torch.no_grad():
        e, p, W_Q, W_K, _ = inputs
        queries, w, key, kappa = p @ W_Q.T / math.sqrt(d), W_Q @ e / math.sqrt(d), p @ W_K.T, W_K @ e
        beta = torch.stack((queries @ kappa, (queries + w) @ kappa))
        key_offset = key @ w
    pairs = (beta[0] >= -math.log(2)).long() + 2 * (beta[1] >= -math.log(2)).long()
    assert len(set(pairs.tolist())) >= 2  # rows of several group pairs: the rows are sorted
    assert (beta + math.log(2)).abs().min() > 1e-3  # no row on the boundary of the two groups
    assert key_offset.max() - key_offset.min() > 5  # key factors from 1 down to below e^-5

    def attention(*tensors):
        return fast_attention._BinaryTokenAttention.apply(*tensors, tokens, True)

    assert torch.autograd.gradcheck(attention, inputs, eps=1e-6, atol=1e-8)


def test_both_row_shifts_give_the_same_attention(monkeypatch):
    """Shifting rows by the Cauchy-Schwarz score bound or by the row maximum is the same function, also
    for scores of several units (trained-like), in float64 to 1e-12."""
    fast, _ = _models("standard", sigma=0.7, seed=5, context=200)
    tokens = _tokens(3, 200, seed=5)[:, :-1]
    outputs = {}
    for limit in (math.inf, -1.0):
        monkeypatch.setattr(fast_attention, "SHIFT_BOUND_LIMIT", limit)
        outputs[limit] = binary_token_attention(tokens, fast.e, fast.p, fast.W_Q, fast.W_K, fast.W_V).detach()
    assert _relative_error(outputs[math.inf], outputs[-1.0], 1.0) < 1e-12


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_the_fused_score_gradients_equal_the_products_they_replace(dtype, tolerance):
    """The one-pass kernel of a block's backward against the two GEMMs it replaces, for a block of
    rows that starts inside the queries: the block's rows of the queries' gradient written, no other."""
    g = torch.Generator().manual_seed(5)
    keys, rows, d, start = 200, 72, 8, 13
    grad_weights, weights = torch.randn(keys, rows, generator=g, dtype=dtype), torch.rand(keys, rows, dtype=dtype)
    key = torch.randn(keys + 9, d, generator=g, dtype=dtype)
    queries = torch.randn(start + rows + 5, d, generator=g, dtype=dtype)
    grad_key = torch.randn(keys + 9, d, generator=g, dtype=dtype)
    expected_key = grad_key.clone()
    grad_scores = grad_weights * weights
    expected_queries = grad_scores.T @ key[:keys]
    expected_key[:keys] += grad_scores @ queries[start : start + rows]
    grad_queries = torch.full(queries.shape, float("nan"), dtype=dtype)
    attention_kernels.score_gradients(
        grad_weights.numpy(), weights.numpy(), key.numpy(), queries.T.contiguous().numpy(), start,
        grad_queries.numpy(), grad_key.numpy(),
    )  # fmt: skip
    assert torch.allclose(grad_queries[start : start + rows], expected_queries, rtol=tolerance, atol=tolerance)
    assert grad_queries[:start].isnan().all() and grad_queries[start + rows :].isnan().all()
    assert torch.allclose(grad_key, expected_key, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("first", [0, 37])
def test_the_fused_exponential_equals_pytorchs_exp_and_causal_mask(first):
    """The float32 block kernel (CPU) against what it replaces, torch.exp and the causal mask, on scores
    from -100 to 0 (those below -87 give 0, the float range's limit), rows whose positions skip
    (as when several group pairs share the rows): every entry within 2 ulp, the same zeros."""
    g = torch.Generator().manual_seed(3)
    rows = 150  # not a multiple of the vector width: the loops' remainders run too
    positions = first + torch.sort(torch.randperm(2 * rows, generator=g)[:rows]).values
    keys = int(positions[-1]) + 1
    scores = -100 * torch.rand(keys, rows, generator=g) ** 3
    scores[:, ::7] = 0.0
    expected = scores.exp().masked_fill(torch.arange(keys).unsqueeze(1) > positions, 0.0)
    expected[scores < -87] = 0.0
    weights = scores.clone()
    attention_kernels.causal_exp(positions.numpy(), weights.numpy())
    assert torch.equal(weights == 0, expected == 0)
    kept = expected > 0
    ulps = (weights[kept].double() - expected[kept].double()).abs() / torch.finfo(torch.float32).eps
    assert (ulps <= 2 * expected[kept].double()).all(), (ulps / expected[kept].double()).max()
    assert 0 < (expected == 0).float().mean() < 0.9 and kept.sum() > 10 * rows


def test_an_evaluation_without_gradients_keeps_nothing_for_a_backward(monkeypatch):
    """Under torch.no_grad the N x N blocks are not kept (autograd's needs_input_grad still says True
    there); a call that records gradients keeps them."""
    fast, _ = _models("standard", sigma=0.1, seed=2, context=64)
    tokens = torch.randint(0, 2, (3, 64), generator=torch.Generator().manual_seed(0))
    kept = []
    block_products = fast_attention._block_products

    def spy(queries, key, rhs, blocks, keep):
        kept.append(keep)
        return block_products(queries, key, rhs, blocks, keep)

    monkeypatch.setattr(fast_attention, "_block_products", spy)
    with torch.no_grad():
        evaluated = fast(tokens)
    trained = fast(tokens)
    assert kept == [False, True]
    assert torch.equal(evaluated, trained.detach())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_cpu_takes_the_block_kernels_where_they_apply(dtype, monkeypatch):
    """On the CPU the backward's score gradients always run as the one-pass kernel, and the forward's
    exponential does in float32 (the kernel is float32 only); elsewhere PyTorch's operations do both."""
    calls = []
    for name in ("causal_exp", "score_gradients"):
        kernel = getattr(fast_attention, name)
        monkeypatch.setattr(
            fast_attention, name, lambda *arrays, name=name, kernel=kernel: calls.append(name) or kernel(*arrays)
        )
    fast, _ = _models("standard", sigma=0.1, seed=4, context=300)
    fast = fast.to(dtype)
    tokens = _tokens(2, 300, seed=4)
    fast.loss(tokens[:, :-1], tokens[:, 1:]).backward()
    blocks = -(-300 // fast_attention.BLOCK_ROWS)
    assert calls.count("score_gradients") >= blocks
    assert calls.count("causal_exp") == (blocks if dtype == torch.float32 else 0)
