"""Fig. 3 / Fig. 6 ablation: the two-symbol model, the variants' settings, the schedule horizon."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import torch

from replication.papers.local_to_global.transformer.ablation import ablation_table, alignment_table
from replication.papers.local_to_global.transformer.ablation_model import build_two_symbol
from replication.papers.local_to_global.transformer.ablation_variants import variant_settings
from replication.papers.local_to_global.transformer.model import MarkovTransformer, TransformerConfig
from replication.papers.local_to_global.transformer.schedule import schedule_rates
from replication.papers.local_to_global.transformer.settings import AblationSettings, run_settings
from replication.papers.local_to_global.transformer.train import train

RUN = run_settings(
    {
        "model": {"d": 4, "context": 16, "mlp_ratio": 4},
        "batch_size": 4,
        "sigma": 0.02,
        "rank_one_value": "input",
        "attention": "fast",
        "optimizer": {
            "name": "adamw",
            "lr": 1e-3,
            "betas": [0.9, 0.95],
            "momentum": 0.0,
            "weight_decay": 1e-3,
            "no_decay": ["p", "b"],
        },
        "schedule": {
            "name": "onecycle",
            "warmup": 0.02,
            "div_factor": 100.0,
            "final_div_factor": 0.05,
            "horizon": None,
        },
        "device": "cpu",
        "threads": 1,
        "embedding": "scalar",
        "chunk": 5,
        "chain": {"p": 0.2, "q": 0.3},
        "inits": ["standard"],
        "seeds": [1],
        "steps": 20,
        "eval_every": 5,
        "checkpoints": [0, 10, 20],
    }
)
ABLATION = AblationSettings(fig3=(), fig6=(), peak_lr=2e-3, schedule_steps=500)


def test_two_symbol_model_is_the_scalar_model_reparametrised():
    two = build_two_symbol(RUN, torch.Generator().manual_seed(3))
    scalar = MarkovTransformer(TransformerConfig.from_settings(RUN))
    effective = two.effective_parameters()
    with torch.no_grad():
        for name, param in scalar.named_parameters():
            param.copy_(effective[name])
    tokens = torch.randint(0, 2, (3, 16), generator=torch.Generator().manual_seed(0))
    target = torch.randint(0, 2, (3, 16), generator=torch.Generator().manual_seed(1))
    assert torch.allclose(two(tokens), scalar(tokens), atol=1e-6)
    # The 2-way cross-entropy with logits (l0, l1) equals the binary one of l1 - l0.
    logits = torch.stack([torch.zeros(3, 16), two(tokens)], dim=-1)
    two_way = torch.nn.functional.cross_entropy(logits.reshape(-1, 2), target.reshape(-1))
    assert two.loss(tokens, target).item() == pytest.approx(two_way.item(), rel=1e-6)
    assert [n for n, _ in two.named_parameters()] == ["wte", "p", "W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "b"]
    assert tuple(two.wte.shape) == (2, 4) and tuple(two.b.shape) == (2,)
    # e = wte[1] - wte[0] and the head biases are not e's draws: wte rows are N(0, sigma^2) each.
    assert torch.equal(effective["e"], two.wte[1] - two.wte[0])


def test_variants_change_one_setting_each():
    base = variant_settings(RUN, ABLATION, "pipeline", "standard")
    assert base.steps == 20 and base.optimizer == RUN.optimizer and base.schedule.horizon is None
    assert base == dataclasses.replace(RUN, eval_every=20)  # the run itself, stopped at its last checkpoint
    lr = variant_settings(RUN, ABLATION, "peak_lr", "standard")
    assert lr.optimizer.lr == 2e-3 and RUN.optimizer.lr == 1e-3  # the original is not modified
    assert variant_settings(RUN, ABLATION, "schedule_horizon", "standard").schedule.horizon == 500
    two = variant_settings(RUN, ABLATION, "two_symbol_embedding", "standard")
    assert two.embedding == "two_symbol" and two.optimizer.no_decay == ("b", "p", "wte")
    every = variant_settings(RUN, ABLATION, "all_authors", "standard")
    assert every.optimizer.lr == 2e-3 and every.schedule.horizon == 500 and every.embedding == "two_symbol"
    rank_one = variant_settings(RUN, ABLATION, "all_authors", "rank_one")
    assert rank_one.rank_one_value == "output" and rank_one.embedding == "scalar"
    with pytest.raises(ValueError, match="allowed: pipeline, peak_lr"):
        variant_settings(RUN, ABLATION, "bigger", "standard")
    with pytest.raises(ValueError, match="standard"):
        variant_settings(RUN, ABLATION, "two_symbol_embedding", "rank_one")


def test_every_variant_the_settings_allow_is_retrained_once():
    from replication.papers.local_to_global.transformer.ablation_variants import RETRAINED, _retrained_variants
    from replication.variants import resolve

    # The variants Fig. 3 and Fig. 6 run with the default settings (fig3: every one it allows).
    ablation = resolve([])["local_to_global"]["transformer"]["ablation"]
    retrained = _retrained_variants()
    assert retrained == RETRAINED and len(set(retrained)) == len(retrained)
    assert set(retrained) == {*ablation["fig3"], *ablation["fig6"]} and "pipeline" not in retrained
    for variant in retrained:  # each one a run of its own settings
        assert variant_settings(RUN, ABLATION, variant, "rank_one" if variant == "value_output" else "standard")


def test_schedule_horizon_keeps_the_lr_near_its_peak():
    rates = {}
    for horizon in (None, 500):
        settings = dataclasses.replace(RUN, schedule=dataclasses.replace(RUN.schedule, horizon=horizon))
        rates[horizon] = schedule_rates(settings, steps=20)[16]  # after 15 updates
    assert rates[None] < 0.4e-3  # 15 of 20 steps: deep in the cosine decay
    assert rates[500] == pytest.approx(1e-3, rel=0.01)  # 15 of 500: just past the warm-up, at the peak


def test_two_symbol_run_trains_and_its_structure_uses_wte():
    settings = variant_settings(RUN, ABLATION, "two_symbol_embedding", "standard")
    result = train(settings, "standard", 1, progress=False)
    assert "wte" in result.checkpoints and "e" not in result.checkpoints
    assert list(result.checkpoints["step"]) == [0, 10, 20]
    table = alignment_table(result.checkpoints)
    assert set(table.matrix) == {"W_V", "W_1"} and len(table) == 6
    assert table.cos_wv_output_w1_input.between(0, 1).all()
    again = train(settings, "standard", 1, progress=False)
    assert np.array_equal(again.checkpoints["wte"], result.checkpoints["wte"])  # seeded


def test_alignment_table_measures_known_structure():
    e = np.array([1.0, -1.0, 1.0, 1.0])
    u = np.array([0.0, 1.0, 0.0, 0.0])
    w = np.arange(1.0, 17.0)
    checkpoints = {"step": np.array([5]), "e": e[None], "W_V": np.outer(e, u)[None], "W_1": np.outer(w, e)[None]}
    table = ablation_table({"pipeline": checkpoints}).set_index("matrix")
    assert table.loc["W_V", "top_share"] == pytest.approx(1.0)
    assert table.loc["W_V", "cos_e_output"] == pytest.approx(1.0) and table.loc["W_V", "cos_e_input"] == pytest.approx(
        0.5
    )
    assert table.loc["W_1", "cos_e_input"] == pytest.approx(1.0)
    assert table.loc["W_V", "cos_wv_output_w1_input"] == pytest.approx(1.0)


def _rank_one_checkpoints(steps, scale):
    """W_1 = w alpha^T, W_V = alpha v^T (output side along e = alpha) at every step."""
    alpha = np.array([1.0, -1.0, 1.0, 1.0])
    w, v = np.linspace(-1, 1, 16), np.array([0.5, 0.1, -0.3, 0.2])
    count = len(steps)
    return {
        "step": np.array(steps),
        "e": np.tile(scale * alpha, (count, 1)),
        "W_1": np.stack([np.outer(w, alpha)] * count),
        "W_V": np.stack([np.outer(alpha, v)] * count),
    }


def test_ablation_table_stacks_the_variants_with_their_names_first():
    from replication.papers.local_to_global.transformer.ablation import recovering_variants

    table = ablation_table(
        {"pipeline": _rank_one_checkpoints([0, 10], 0.3), "peak_lr": _rank_one_checkpoints([10], 1.0)}
    )
    assert list(table.columns) == [
        "variant", "matrix", "step", "top_share", "cos_e_input", "cos_e_output", "e_flatness", "cos_wv_output_w1_input"
    ]  # fmt: skip
    assert list(table.index) == list(range(6))  # one fresh index over the variants
    assert list(zip(table.variant, table.matrix, table.step)) == [
        ("pipeline", "W_V", 0), ("pipeline", "W_1", 0), ("pipeline", "W_V", 10), ("pipeline", "W_1", 10),
        ("peak_lr", "W_V", 10), ("peak_lr", "W_1", 10),
    ]  # fmt: skip
    wv = table[table.matrix == "W_V"]
    assert np.allclose(wv.cos_e_output, 1.0) and np.allclose(wv.cos_wv_output_w1_input, 1.0)
    # recovered: W_V's output side along e at the step asked, the pipeline's own run left out
    assert recovering_variants(table, 10, 0.9) == ["peak_lr"]
    assert recovering_variants(table, 0, 0.9) == []


def test_recovering_variants_at_the_threshold_and_by_matrix_and_step():
    from replication.papers.local_to_global.transformer.ablation import recovering_variants

    table = pd.DataFrame(
        [
            ("pipeline", "W_V", 200, 0.99),
            ("peak_lr", "W_V", 200, 0.9),  # on the threshold: recovered
            ("schedule_horizon", "W_V", 200, 0.89),
            ("two_symbol_embedding", "W_V", 100, 0.99),  # another step
            ("all_authors", "W_1", 200, 0.99),  # another matrix
            ("all_authors", "W_V", 200, 0.95),
        ],
        columns=["variant", "matrix", "step", "cos_e_output"],
    )
    assert recovering_variants(table, 200, 0.9) == ["peak_lr", "all_authors"]
    assert recovering_variants(table, 100, 0.9) == ["two_symbol_embedding"]


def _authors_forward(model, tokens):
    """The authors' vocabulary-2 GPT written out: x_n = wte[s_n] + p_n, one causal softmax head
    (scale 1/sqrt d) through W_O, the ReLU MLP, and a head tied to wte with a bias per symbol;
    the binary logit is the difference of the two symbols' logits."""
    wte, p = model.wte.detach(), model.p.detach()
    W = {name: getattr(model, name).detach() for name in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")}
    T, d = tokens.shape[-1], wte.shape[1]
    x = wte[tokens] + p[:T]
    q, k, v = x @ W["W_Q"].T, x @ W["W_K"].T, x @ W["W_V"].T
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
    scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1), float("-inf"))
    x = x + torch.softmax(scores, dim=-1) @ v @ W["W_O"].T
    x = x + torch.relu(x @ W["W_1"].T) @ W["W_2"].T
    logits = x @ wte.T + model.b.detach()
    return logits[..., 1] - logits[..., 0]


def test_two_symbol_model_computes_the_authors_two_way_head():
    two = build_two_symbol(RUN, torch.Generator().manual_seed(5))
    with torch.no_grad():  # a head bias and an embedding far from the init, so every term counts
        two.b.copy_(torch.tensor([0.3, -0.4]))
        two.wte.add_(torch.tensor([[0.5, -0.2, 0.1, 0.3], [-0.1, 0.4, 0.2, -0.6]]))
        two.p.add_(0.2)
    tokens = torch.randint(0, 2, (3, 16), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert torch.allclose(two(tokens), _authors_forward(two, tokens), atol=1e-5)


def test_effective_checkpoints_and_the_alignment_table_of_chosen_steps():
    from replication.papers.local_to_global.transformer.ablation import effective_checkpoints

    wte = np.array([[[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]], [[0.0, 0.0, 0.0], [3.0, -2.0, 1.0]]])
    effective = effective_checkpoints({"step": np.array([0, 10]), "wte": wte})
    assert np.array_equal(effective["e"], np.array([[0.5, 2.0, -1.0], [3.0, -2.0, 1.0]]))  # wte[1] - wte[0]
    own = {"step": np.array([0]), "wte": wte[:1], "e": np.array([[9.0, 9.0, 9.0]])}
    assert effective_checkpoints(own) is own  # a run with its own e is left alone
    scalar = {"step": np.array([0]), "e": np.ones((1, 3))}
    assert effective_checkpoints(scalar) is scalar

    checkpoints = _rank_one_checkpoints([0, 10, 20], 0.5)
    table = alignment_table(checkpoints, steps=[10])
    assert list(zip(table.matrix, table.step)) == [("W_V", 10), ("W_1", 10)]
    assert np.allclose(table.cos_wv_output_w1_input, 1.0)
    empty = alignment_table(checkpoints, steps=[5])
    assert empty.empty and empty.cos_wv_output_w1_input.dtype == np.float64


def test_the_value_output_variant_and_its_error_messages():
    value = variant_settings(RUN, ABLATION, "value_output", "rank_one")
    assert value.rank_one_value == "output" and value == dataclasses.replace(
        RUN, steps=20, eval_every=20, rank_one_value="output"
    )
    # other variants of the rank-one run keep alpha on W_V's input side
    assert variant_settings(RUN, ABLATION, "peak_lr", "rank_one").rank_one_value == "input"
    with pytest.raises(ValueError, match=r"^the two-symbol embedding is defined for the standard \(GPT-2\) init only$"):
        variant_settings(RUN, ABLATION, "two_symbol_embedding", "rank_one")
