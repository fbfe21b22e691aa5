"""Tables 1 and 2, every row, for both optimisers and both schedules."""

import re

import pandas as pd

from helpers import l2g_transformer
from replication.papers.local_to_global.transformer.tables import table1, table2, to_latex, to_markdown

SECTION = {
    "model": {"d": 4, "context": 16, "mlp_ratio": 4},
    "batch_size": 8,
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
            "seeds": [1, 2],
            "steps": 2000,
            "eval_every": 1,
        },
        "fig6": {"chain": {"p": 0.2, "q": 0.3}, "inits": ["rank_one"], "seeds": [3], "steps": 200, "eval_every": 5},
    },
}
SETTINGS = l2g_transformer(SECTION)


def test_table1_every_parameter_and_the_total():
    table = table1(SETTINGS)
    assert table.to_dict("records") == [
        {"parameter": "e", "shape": "4", "count": 4},
        {"parameter": "p_n", "shape": "16 x 4", "count": 64},
        {"parameter": "W_Q", "shape": "4 x 4", "count": 16},
        {"parameter": "W_K", "shape": "4 x 4", "count": 16},
        {"parameter": "W_V", "shape": "4 x 4", "count": 16},
        {"parameter": "W_O", "shape": "4 x 4", "count": 16},
        {"parameter": "W_1", "shape": "16 x 4", "count": 64},
        {"parameter": "W_2", "shape": "4 x 16", "count": 64},
        {"parameter": "b", "shape": "1", "count": 1},
        {"parameter": "total", "shape": "", "count": 261},
    ]


def test_table2_every_setting():
    assert list(map(tuple, table2(SETTINGS).to_numpy())) == [
        ("embedding dimension d", "4"),
        ("context length N", "16"),
        ("MLP hidden units", "16"),
        ("layers / heads", "1 / 1"),
        ("batch size B", "8"),
        ("optimiser", "adamw"),
        ("learning rate (peak)", "0.002"),
        ("betas", "0.9, 0.95"),
        ("weight decay", "0.001 (none on p_n, b)"),
        ("schedule", "one-cycle cosine, warm-up 0.02 of the run, lr/100 -> lr -> lr/5"),
        ("standard init std sigma", "0.02"),
        ("device", "cpu"),
        ("fig4: chain (p, q)", "(0.5, 0.8)"),
        ("fig4: initialisations", "standard, ours"),
        ("fig4: seeds", "1, 2"),
        ("fig4: iterations", "2000"),
        ("fig4: test loss every", "1 step(s), fresh batch"),
        ("fig6: chain (p, q)", "(0.2, 0.3)"),
        ("fig6: initialisations", "rank_one"),
        ("fig6: seeds", "3"),
        ("fig6: iterations", "200"),
        ("fig6: test loss every", "5 step(s), fresh batch"),
    ]


def test_table2_sgd_constant_and_no_exemptions():
    settings = l2g_transformer(
        {
            **SECTION,
            "optimizer": {**SECTION["optimizer"], "name": "sgd", "momentum": 0.9, "no_decay": []},
            "schedule": {**SECTION["schedule"], "name": "constant"},
        }
    )
    values = dict(map(tuple, table2(settings).to_numpy()))
    assert values["optimiser"] == "sgd" and values["momentum"] == "0.9" and "betas" not in values
    assert values["weight decay"] == "0.001 (none on -)" and values["schedule"] == "constant"


def test_markdown_and_latex_rendering():
    frame = pd.DataFrame({"a_b": ["x_1", "y"], "c": [1, 2]})
    lines = to_markdown(frame).splitlines()
    assert [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[:1] + lines[2:]] == [
        ["a_b", "c"],
        ["x_1", "1"],
        ["y", "2"],
    ]
    assert re.fullmatch(r"\|:?-+:?\|:?-+:?\|", lines[1])
    latex = to_latex(frame, "Cap.", "tab:t")
    assert "\\caption{Cap.}" in latex and "\\label{tab:t}" in latex and "\\begin{table}[h]" in latex
    assert "\\begin{tabular}{ll}" in latex and "a\\_b & c \\\\" in latex and "x\\_1 & 1 \\\\" in latex
    assert latex.index("\\toprule") < latex.index("\\midrule") < latex.index("\\bottomrule")


def test_markdown_cells_are_written_as_given_not_reparsed_as_numbers():
    frame = pd.DataFrame({"setting": ["learning rate", "weight decay", "seeds"], "value": ["0.0010", "1e-3", "007"]})
    lines = to_markdown(frame).splitlines()
    assert lines[0].split("|")[1:-1] == [" setting       ", " value   "]
    assert lines[1] == "|:--------------|:--------|"  # text columns, left-aligned
    assert [line.split("|")[2].strip() for line in lines[2:]] == ["0.0010", "1e-3", "007"]
