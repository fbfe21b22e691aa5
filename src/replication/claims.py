"""The one format of claim tables: each area writes its own, a report merges them."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import pandas as pd

from .io import write_csv

CLAIM_COLUMNS = ["paper", "claim_id", "figure", "statement", "measured", "threshold", "holds", "reason"]


@dataclass(frozen=True)
class Claim:
    paper: str
    claim_id: str
    figure: str
    statement: str
    measured: float
    threshold: str
    holds: bool
    reason: str


def write_claims(claims: list[Claim], path: str | os.PathLike) -> pd.DataFrame:
    frame = pd.DataFrame([asdict(c) for c in claims], columns=CLAIM_COLUMNS)
    frame["holds"] = frame["holds"].astype(bool)
    write_csv(frame, path)
    return frame
