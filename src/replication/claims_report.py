"""The claims report: every claim of both papers' specs, with what the pipeline measured.

The per-area claims tables (``replication.claims`` format) are merged and laid against the
spec's claim lists. A spec claim that no table reports is listed as NOT REPRODUCED with the
reason; a row that does not hold is listed as NOT REPRODUCED, never dropped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .claims import CLAIM_COLUMNS, KINDS

LOCAL_TO_GLOBAL = "Local to Global"
BENIGN_OVERFITTING = "Benign overfitting"


@dataclass(frozen=True)
class SpecClaim:
    paper: str
    number: str  # how tables name it: the spec item (Local to Global) or the figure (Benign overfitting)
    figure: str
    statement: str
    threshold: str

    @property
    def claim_id(self) -> str:
        return _PREFIX[self.paper] + self.number


_PREFIX = {LOCAL_TO_GLOBAL: "L2G-", BENIGN_OVERFITTING: "BO-fig"}


# Local to Global: spec section 5, items 1-6. Benign overfitting: the expected results of spec
# section 4, one claim per figure.
SPEC_CLAIMS = [
    SpecClaim(
        LOCAL_TO_GLOBAL,
        "1",
        "Fig. 1",
        "Gradient-flow endpoints match the basin predicted by Thms 2/8 on a grid of starts.",
        "agreement on every start",
    ),
    SpecClaim(
        LOCAL_TO_GLOBAL,
        "2",
        "Figs. 1, 2",
        "Energy is constant along the gradient flow (2-D and 3-D).",
        "relative drift < 1e-8",
    ),
    SpecClaim(
        LOCAL_TO_GLOBAL,
        "3",
        "Figs. 1, 2",
        "Endpoint losses: H(pi) at local minima, the entropy rate at global minima.",
        "endpoint loss equals H(pi) / entropy rate",
    ),
    SpecClaim(
        LOCAL_TO_GLOBAL,
        "4",
        "Figs. 2, 5",
        "From N(0, sigma^2 I) with small sigma: p+q>1 ends in the local-minimum basin with "
        "probability ~1, p+q<1 with probability ~0.",
        "sigma <= 0.1: fraction 1.000 (p+q>1), 0.000 (p+q<1)",
    ),
    SpecClaim(
        LOCAL_TO_GLOBAL,
        "5",
        "Fig. 4",
        "Standard init's test loss stays within 0.01 of H(pi) over iterations 200..600; "
        "ours is within 0.01 of the entropy rate by iteration 600.",
        "|loss - reference| <= 0.01",
    ),
    SpecClaim(
        LOCAL_TO_GLOBAL,
        "6",
        "Figs. 3, 6",
        "W_1 and W_V become rank one: top-singular-value share at the last checkpoint (Fig. 3), "
        "and at every checkpoint from the rank-one init (Fig. 6).",
        ">= 0.9 (Fig. 3), >= 0.99 (Fig. 6)",
    ),
    SpecClaim(
        BENIGN_OVERFITTING,
        "1",
        "Fig. 1",
        "Hard token selection with p = mu_+ + mu_- + c noise: train/test accuracy 1.0/1.0 for "
        "c = 0.06 (benign), 1.0/~0.58 for c = 1 (harmful), 0.8/1.0 for c = 0.001 (not overfitting).",
        "1.0/1.0; 1.0/0.53-0.70; 0.8/1.0",
    ),
    SpecClaim(
        BENIGN_OVERFITTING,
        "2",
        "Fig. 2",
        "During training clean samples' relevant-token probability r goes to 1 and noisy "
        "samples' to 0, so S = r(1 - r) rises then falls.",
        "final r: clean near 1, noisy near 0",
    ),
    SpecClaim(
        BENIGN_OVERFITTING,
        "3",
        "Fig. 3",
        "Softmax dynamics over 10000 steps: (a) d=2000, ||mu||=20 benign; (b) d=4500, ||mu||=5 "
        "harmful, a noisy sample ends on an irrelevant token; (c) d=1000, ||mu||=80 not "
        "overfitting, a fitted noisy sample ends on token 2, a not-fitted one on token 0.",
        "final argmax tokens as stated",
    ),
    SpecClaim(
        BENIGN_OVERFITTING,
        "4",
        "Fig. 4",
        "The Eq. 9 ratio (condition 1 of Thm 4.2) exceeds 1 in every cell of the d x ||mu|| grid.",
        "> 1 in all cells",
    ),
    SpecClaim(
        BENIGN_OVERFITTING,
        "5",
        "Fig. 5",
        "Final train loss 0.41-0.54 and test loss 0.40-0.64; test loss high (~0.62-0.645) at "
        "||mu|| = 5, low (<= 0.43) for ||mu|| >= 40 and d >= 750.",
        "ranges as stated",
    ),
    SpecClaim(
        BENIGN_OVERFITTING,
        "6",
        "Fig. 6",
        "The Eq. 10 class-balance ratio stays within ~0.5..2.5 in every cell.",
        "0.5 <= ratio <= 2.5",
    ),
]


def paper_of(name: str) -> str:
    """The canonical paper name of a table's ``paper`` value (tables may spell it differently)."""
    lowered = str(name).lower()
    if "local" in lowered:
        return LOCAL_TO_GLOBAL
    if "benign" in lowered:
        return BENIGN_OVERFITTING
    return str(name)


def spec_number(paper: str, claim_id: str, figure: str) -> str | None:
    """Which spec claim a table row reports: the first number of its claim id (Local to Global,
    numbered by spec section 5) or of its figure (Benign overfitting, one claim per figure)."""
    match = re.search(r"\d+", str(claim_id if paper == LOCAL_TO_GLOBAL else figure))
    return match.group() if match else None


def _holds(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "pass")
    return bool(value) and not (isinstance(value, float) and np.isnan(value))


def merge_claims(tables: list[str | os.PathLike]) -> pd.DataFrame:
    """One row per reported claim, plus one NOT REPRODUCED row per spec claim no table reports."""
    frames, missing = [], []
    for table in tables:
        if Path(table).exists():
            frames.append(pd.read_csv(table, dtype={"claim_id": str}))
        else:
            missing.append(str(table))
    reported = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CLAIM_COLUMNS)
    reported = reported.reindex(columns=CLAIM_COLUMNS)
    # Tables without the statistics columns report one checked measurement per row.
    reported["kind"] = reported["kind"].astype(object).fillna("checked")
    reported["rule"] = reported["rule"].astype(object).fillna("single measurement")
    reported["n_runs"] = reported["n_runs"].fillna(1)
    unknown = sorted(set(reported["kind"]) - set(KINDS))
    if unknown:
        raise ValueError(f"claims tables: kind {', '.join(map(repr, unknown))}; allowed: {', '.join(KINDS)}")
    reported["paper"] = reported["paper"].map(paper_of)
    reported["holds"] = reported["holds"].map(_holds).astype(bool)
    keys = [spec_number(r.paper, r.claim_id, r.figure) for r in reported.itertuples()]
    spec = {(c.paper, c.number): c for c in SPEC_CLAIMS}
    rows = []
    for claim in SPEC_CLAIMS:
        matching = [
            r for r, k in zip(reported.to_dict("records"), keys) if (r["paper"], k) == (claim.paper, claim.number)
        ]
        for row in matching:
            own = str(row["claim_id"])
            row["claim_id"] = claim.claim_id if own in (claim.number, claim.claim_id) else f"{claim.claim_id} ({own})"
            rows.append(row)
        if not matching:
            reason = "no claims table reports it"
            if missing:
                reason += f" (missing: {', '.join(missing)})"
            rows.append(
                {
                    "paper": claim.paper,
                    "claim_id": claim.claim_id,
                    "figure": claim.figure,
                    "statement": claim.statement,
                    "measured": np.nan,
                    "threshold": claim.threshold,
                    "holds": False,
                    "reason": reason,
                    "kind": "checked",
                    "rule": "no measurement",
                    "n_runs": 0,
                    "holds_fraction": np.nan,
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                }
            )
    # Rows beyond the spec's lists are kept too: a reported claim is never dropped.
    rows += [r for r, k in zip(reported.to_dict("records"), keys) if (r["paper"], k) not in spec]
    merged = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    merged["holds"] = merged["holds"].astype(bool)
    merged["n_runs"] = merged["n_runs"].astype(int)
    order = {paper: i for i, paper in enumerate(_PREFIX)}
    return merged.sort_values("paper", key=lambda p: p.map(order).fillna(len(order)), kind="stable", ignore_index=True)


def _escape(value) -> str:
    if isinstance(value, float):
        return "" if np.isnan(value) else f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _fraction(row) -> str:
    if row.kind != "checked" or not np.isfinite(row.holds_fraction):
        return ""
    if np.isfinite(row.ci_low):
        return f"{row.holds_fraction:.2f} [{row.ci_low:.2f}, {row.ci_high:.2f}]"
    return f"{row.holds_fraction:.2f}"


def _result(row) -> str:
    if row.kind == "checked":
        return "PASS" if row.holds else "**NOT REPRODUCED**"
    return row.kind


def summary_line(claims: pd.DataFrame) -> str:
    """Counts checked claims only: documentation and not-checkable rows never count as reproduced."""
    checked = claims[claims.kind == "checked"]
    passed = int(checked.holds.sum())
    others = {kind: int((claims.kind == kind).sum()) for kind in KINDS[1:]}
    return (
        f"{passed} of {len(checked)} checked claims pass; {len(checked) - passed} are NOT REPRODUCED. "
        f"Not counted: {others['documentation']} documentation rows (cannot fail by construction) and "
        f"{others['not checkable']} sentences that are not checkable here (reason given)."
    )


def claims_markdown(claims: pd.DataFrame) -> str:
    """A readable report: per paper, every claim with PASS, NOT REPRODUCED or its kind, and the reason."""
    lines = [
        "# Claims of both papers, checked by the pipeline",
        "",
        summary_line(claims) + " The data is in `results/claims.csv`; `runs` is the number of runs "
        "(seeds, cells) a claim is judged over and `holds in` the fraction of them in which it holds, "
        "with a 95% Clopper-Pearson interval.",
        "",
    ]
    for paper, group in claims.groupby("paper", sort=False):
        lines += [
            f"## {paper}",
            "",
            "| claim | figure | statement | measured | threshold | rule | runs | holds in | result | reason |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in group.itertuples():
            cells = [
                _escape(c)
                for c in (
                    row.claim_id,
                    row.figure,
                    row.statement,
                    row.measured,
                    row.threshold,
                    row.rule,
                    int(row.n_runs),
                )
            ]
            lines.append("| " + " | ".join(cells + [_fraction(row), _result(row), _escape(row.reason)]) + " |")
        lines.append("")
    return "\n".join(lines)
