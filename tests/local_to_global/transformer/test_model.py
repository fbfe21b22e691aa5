"""The single-layer transformer: shapes (Table 1), the three initialisations, causality."""

import numpy as np
import pytest
import torch

from helpers import l2g_transformer
from replication.papers.local_to_global.transformer.model import (
    INITS,
    MarkovTransformer,
    TransformerConfig,
    initialise,
    snapshot,
    stack_snapshots,
)
from replication.papers.local_to_global.transformer.tables import table1, table2, to_latex, to_markdown

D, N = 8, 1024


def _model(init, seed=0, d=D, context=N, sigma=0.02):
    model = MarkovTransformer(TransformerConfig(d=d, context=context, mlp_ratio=4, attention="fast"))
    return initialise(model, init, sigma, torch.Generator().manual_seed(seed), "input")


def _rank(matrix, tol=1e-6):
    singular = torch.linalg.svdvals(matrix)
    return int((singular > tol * singular[0]).sum())


def test_parameter_shapes_and_counts_match_the_spec():
    shapes = {row["parameter"]: row["shape"] for row in _model("standard").parameter_table()}
    assert shapes == {
        "e": (D,),
        "p": (N, D),
        "W_Q": (D, D),
        "W_K": (D, D),
        "W_V": (D, D),
        "W_O": (D, D),
        "W_1": (4 * D, D),
        "W_2": (D, 4 * D),
        "b": (1,),
    }
    table = table1(l2g_transformer({"model": {"d": D, "context": N, "mlp_ratio": 4}}))
    counts = dict(zip(table.parameter, table["count"]))
    assert counts["p_n"] == N * D and counts["W_1"] == counts["W_2"] == 4 * D * D and counts["b"] == 1
    assert counts["total"] == D + N * D + 4 * D * D + 2 * 4 * D * D + 1


def test_standard_init_statistics():
    model = _model("standard", sigma=0.02)
    big = torch.cat(
        [model.p.flatten(), model.W_Q.flatten(), model.W_K.flatten(), model.W_V.flatten(), model.W_1.flatten()]
    )
    out = torch.cat([model.W_O.flatten(), model.W_2.flatten()])
    assert abs(big.std().item() - 0.02) < 0.02 * 0.05
    assert abs(big.mean().item()) < 0.02 * 0.05
    assert abs(out.std().item() - 0.02 / np.sqrt(2)) < 0.02 * 0.15
    assert model.b.item() == 0.0


def test_ours_init_constants_and_standard_attention():
    model = _model("ours")
    assert torch.all(model.e == 0.5) and torch.all(model.p == -0.25)
    assert torch.all(model.W_1 == 1.0) and torch.all(model.W_2 == -1.0) and model.b.item() == 0.0
    for W in (model.W_Q, model.W_K, model.W_V, model.W_O):
        assert 0.005 < W.std().item() < 0.04  # the standard scale, not constant


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_one_init_structure(seed):
    model = _model("rank_one", seed=seed)
    e = model.e.detach()
    scale = e.abs()
    assert torch.allclose(scale, scale[0].expand_as(scale)) and scale[0] > 0  # hypercube up to scale
    alpha = torch.sign(e)
    assert torch.allclose(model.p, (-e / 2).expand_as(model.p))  # p_n = -(e/2) alpha for every n
    for W in (model.W_1, model.W_2, model.W_V):
        assert _rank(W.detach()) == 1
    # W_1 = w alpha^T, W_2 = alpha w^T: W_2 = W_1^T, rows of W_1 along alpha.
    assert torch.allclose(model.W_2, model.W_1.T)
    _, _, right = torch.linalg.svd(model.W_1.detach())
    assert abs(torch.dot(right[0], alpha).abs() / alpha.norm() - 1) < 1e-5
    _, _, right = torch.linalg.svd(model.W_V.detach())  # W_V = v alpha^T: reads inputs along alpha
    assert abs(torch.dot(right[0], alpha).abs() / alpha.norm() - 1) < 1e-5
    assert _rank(model.W_Q.detach()) == D and _rank(model.W_K.detach()) == D  # standard


def test_unknown_init_is_rejected():
    with pytest.raises(ValueError, match="rank_one"):
        _model("zeros")


@pytest.mark.parametrize("init", INITS)
def test_same_seed_same_init(init):
    a, b = _model(init, seed=3), _model(init, seed=3)
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert torch.equal(pa, pb), name


def test_forward_is_causal_and_matches_an_explicit_computation():
    model = _model("standard", context=16, seed=4)
    with torch.no_grad():
        model.b.fill_(0.3)  # a trained-like output bias (it starts at 0)
    tokens = torch.randint(0, 2, (3, 16), generator=torch.Generator().manual_seed(0))
    logits = model(tokens)
    assert logits.shape == (3, 16)
    changed = tokens.clone()
    changed[:, 10:] = 1 - changed[:, 10:]
    assert torch.allclose(model(changed)[:, :10], logits[:, :10], atol=1e-6)  # no look-ahead
    # The same model written out by hand.
    with torch.no_grad():
        x = tokens[..., None].float() * model.e + model.p[:16]
        q, k, v = x @ model.W_Q.T, x @ model.W_K.T, x @ model.W_V.T
        scores = (q @ k.transpose(1, 2)) / np.sqrt(model.e.numel())
        scores = scores.masked_fill(~torch.ones(16, 16, dtype=torch.bool).tril(), float("-inf"))
        x = x + (scores.softmax(-1) @ v) @ model.W_O.T
        x = x + torch.relu(x @ model.W_1.T) @ model.W_2.T
        expected = x @ model.e + model.b
    assert torch.allclose(logits, expected, atol=1e-6)


def test_tables_render_markdown_and_booktabs():
    settings = {
        "model": {"d": D, "context": N, "mlp_ratio": 4},
        "batch_size": 16,
        "sigma": 0.02,
        "device": "cpu",
        "optimizer": {
            "name": "adamw",
            "lr": 0.002,
            "betas": [0.9, 0.95],
            "momentum": 0.0,
            "weight_decay": 0.001,
            "no_decay": ["p", "b"],
        },
        "schedule": {"name": "onecycle", "warmup": 0.02, "div_factor": 100.0, "final_div_factor": 0.05},
        "experiments": {
            "fig4": {
                "chain": {"p": 0.5, "q": 0.8},
                "inits": ["standard", "ours"],
                "seeds": [1, 2, 3],
                "steps": 2000,
                "eval_every": 1,
            }
        },
    }
    settings = l2g_transformer(settings)
    settings2 = table2(settings)
    values = dict(zip(settings2.setting, settings2.value))
    assert values["batch size B"] == "16" and values["fig4: seeds"] == "1, 2, 3" and values["optimiser"] == "adamw"
    markdown = to_markdown(table1(settings))
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.splitlines()]
    assert rows[0] == ["parameter", "shape", "count"] and ["p_n", "1024 x 8", "8192"] in rows
    latex = to_latex(settings2, "Settings.", "tab:x")
    assert all(rule in latex for rule in ("\\toprule", "\\midrule", "\\bottomrule")) and "p\\_n" in latex


@pytest.mark.parametrize("side, rank_after_step", [("input", 1), ("output", 2)])
def test_gradient_steps_keep_rank_one_value_only_with_alpha_on_the_input_side(side, rank_after_step):
    """Inputs x_n e + p_n lie along alpha, so dL/dW_V = sum delta x^T has row space alpha."""
    from replication.papers.local_to_global.data import BatchStream
    from replication.papers.local_to_global.markov import MarkovChain

    model = initialise(
        MarkovTransformer(TransformerConfig(d=D, context=64, mlp_ratio=4, attention="fast")),
        "rank_one",
        0.02,
        torch.Generator().manual_seed(3),
        side,
    )
    x, y = next(BatchStream(MarkovChain(0.2, 0.3), 8, 64, seed=1, chunk=1))
    model.loss(x, y).backward()
    with torch.no_grad():
        stepped = model.W_V - 0.5 * model.W_V.grad
    assert _rank(model.W_V.detach()) == 1
    assert _rank(stepped, tol=1e-5) == rank_after_step


def test_the_configured_attention_path_is_the_one_that_runs(monkeypatch):
    """`attention: fast` runs the binary-token kernel (its result is the model's attention), `sdpa` never calls it."""
    from replication.papers.local_to_global.transformer import attention as attention_module

    original, calls = attention_module.binary_token_attention, []

    def counted(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(attention_module, "binary_token_attention", counted)
    tokens = torch.randint(0, 2, (2, 16), generator=torch.Generator().manual_seed(1))
    fast = _model("standard", context=16, seed=2)
    assert fast.config.attention == "fast"
    x = tokens.unsqueeze(-1).float() * fast.e + fast.p[:16]
    assert torch.equal(fast.attend(tokens, x), original(tokens, fast.e, fast.p, fast.W_Q, fast.W_K, fast.W_V))
    assert len(calls) == 1
    sdpa = MarkovTransformer(TransformerConfig(d=8, context=16, mlp_ratio=4, attention="sdpa"))
    sdpa.load_state_dict(fast.state_dict())
    sdpa(tokens)
    assert len(calls) == 1
    # the general paths attend over the embeddings they are given, whatever they are
    other = torch.randn(2, 16, 8, generator=torch.Generator().manual_seed(3))
    expected = attention_module.explicit_attention(tokens, other, sdpa.W_Q, sdpa.W_K, sdpa.W_V)
    torch.testing.assert_close(sdpa.attend(tokens, other), expected)


def test_stacked_snapshots_of_a_single_checkpoint():
    model = _model("standard", context=16, seed=3)
    stacked = stack_snapshots([snapshot(model)])
    assert set(stacked) == {name for name, _ in model.named_parameters()}
    assert stacked["W_Q"].shape == (1, 8, 8) and np.array_equal(stacked["W_Q"][0], model.W_Q.detach().numpy())
