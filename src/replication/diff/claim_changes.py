"""The claims of two trees side by side (``make compare``): those whose verdict differs, with both
measured values and the seeds' spread on each side."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .seeds import claim_seed_columns
from .trees import Tree

CHANGED_CLAIM_COLUMNS = [
    "paper",
    "claim_id",
    "statement",
    "measured_a",
    "holds_a",
    "holds_in_a",
    "seeds_a",
    "measured_b",
    "holds_b",
    "holds_in_b",
    "seeds_b",
    "change",
    "seed_noise",
]


def compare_claims(a: Tree, b: Tree) -> pd.DataFrame:
    """The claims whose verdict differs between A and B, with both measured values."""
    claims_a, claims_b = a.claims(), b.claims()
    if claims_a is None or claims_b is None:
        return pd.DataFrame(columns=CHANGED_CLAIM_COLUMNS)
    keys = ["paper", "claim_id"]
    per_tree = ["measured", "holds", "n_runs", "holds_fraction", "reason"]
    merged = claims_a.reindex(columns=[*keys, "statement", *per_tree]).merge(
        claims_b.reindex(columns=[*keys, *per_tree]), on=keys, how="outer", suffixes=("_a", "_b")
    )
    changed = merged[merged.holds_a.astype(str) != merged.holds_b.astype(str)].copy()
    changed["change"] = [
        f"{_verdict(row.holds_a)} -> {_verdict(row.holds_b)}" for row in changed.itertuples(index=False)
    ]
    seeds = [
        claim_seed_columns(*({field: row[f"{field}_{side}"] for field in per_tree} for side in "ab"))
        for _, row in changed.iterrows()
    ]
    for column in ("holds_in_a", "seeds_a", "holds_in_b", "seeds_b", "seed_noise"):
        changed[column] = [entry[column] for entry in seeds]
    return changed.reindex(columns=CHANGED_CLAIM_COLUMNS).reset_index(drop=True)


def _verdict(holds) -> str:
    if isinstance(holds, float) and np.isnan(holds):
        return "absent"
    return "holds" if str(holds).lower() in ("true", "1") else "fails"
