"""Tables 1 and 2 (parameters; training settings), generated from the model and the config."""

from __future__ import annotations

import pandas as pd

from .model import MarkovTransformer, TransformerConfig
from .settings import TransformerSettings

# Paper notation of each parameter (Table 1).
SYMBOLS = {
    "e": "e",
    "p": "p_n",
    "W_Q": "W_Q",
    "W_K": "W_K",
    "W_V": "W_V",
    "W_O": "W_O",
    "W_1": "W_1",
    "W_2": "W_2",
    "b": "b",
}


def table1(settings: TransformerSettings) -> pd.DataFrame:
    """Every parameter with its shape and count, and the total."""
    model = MarkovTransformer(TransformerConfig.from_settings(settings))
    rows = [
        {"parameter": SYMBOLS[row["parameter"]], "shape": " x ".join(map(str, row["shape"])), "count": row["count"]}
        for row in model.parameter_table()
    ]
    rows.append({"parameter": "total", "shape": "", "count": sum(r["count"] for r in rows)})
    return pd.DataFrame(rows)


def table2(settings: TransformerSettings) -> pd.DataFrame:
    """The settings every run used, then each experiment's chain, initialisations, seeds and horizon."""
    model, opt, schedule = settings.model, settings.optimizer, settings.schedule
    rows = [
        ("embedding dimension d", model.d),
        ("context length N", model.context),
        ("MLP hidden units", model.mlp_ratio * model.d),
        ("layers / heads", "1 / 1"),
        ("batch size B", settings.batch_size),
        ("optimiser", opt.name),
        ("learning rate (peak)", opt.lr),
    ]
    if opt.name == "adamw":
        rows.append(("betas", ", ".join(map(str, opt.betas))))
    else:
        rows.append(("momentum", opt.momentum))
    rows += [
        ("weight decay", f"{opt.weight_decay} (none on {', '.join(SYMBOLS[n] for n in opt.no_decay) or '-'})"),
        (
            "schedule",
            "constant"
            if schedule.name == "constant"
            else f"one-cycle cosine, warm-up {schedule.warmup:g} of the run, "
            f"lr/{schedule.div_factor:g} -> lr -> lr/{schedule.div_factor * schedule.final_div_factor:g}",
        ),
        ("standard init std sigma", settings.sigma),
        ("device", settings.device),
    ]
    for name, experiment in settings.experiments.items():
        chain = experiment.chain
        rows += [
            (f"{name}: chain (p, q)", f"({chain.p:g}, {chain.q:g})"),
            (f"{name}: initialisations", ", ".join(experiment.inits)),
            (f"{name}: seeds", ", ".join(map(str, experiment.seeds))),
            (f"{name}: iterations", experiment.steps),
            (f"{name}: test loss every", f"{experiment.eval_every} step(s), fresh batch"),
        ]
    return pd.DataFrame(rows, columns=["setting", "value"]).astype({"value": str})


def to_markdown(frame: pd.DataFrame) -> str:
    """A pipe table (tabulate); cells as written, not re-parsed as numbers."""
    return frame.astype(str).to_markdown(index=False, disable_numparse=True) + "\n"


def to_latex(frame: pd.DataFrame, caption: str, label: str) -> str:
    """A booktabs table (toprule / midrule / bottomrule)."""
    escaped = frame.astype(str).map(lambda s: s.replace("_", r"\_"))
    escaped.columns = [c.replace("_", r"\_") for c in escaped.columns]
    return escaped.style.hide(axis="index").to_latex(
        hrules=True, caption=caption, label=label, position="h", column_format="l" * len(frame.columns)
    )
