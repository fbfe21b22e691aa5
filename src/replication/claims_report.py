"""The claims report: every claim of every paper's spec, with what the pipeline measured.

The per-area claims tables (``replication.claims`` format) are merged and laid against the
spec's claim lists. A spec claim that no table reports is listed as NOT REPRODUCED with the
reason; a row that does not hold is listed as NOT REPRODUCED, never dropped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .claims import CLAIM_COLUMNS, KINDS
from .contract import Paper
from .registry import paper_named, papers


def paper_of(name: str) -> str:
    """The registered name of a table's ``paper`` value (tables may spell it as the id or title)."""
    paper = paper_named(name)
    return paper.name if paper else str(name)


def spec_number(paper: Paper | None, claim_id: str, figure: str) -> str | None:
    """Which spec claim of ``paper`` a table row reports: the first number of the column the paper
    names its claims by (``Paper.claim_key``: the row's claim id or its figure)."""
    if paper is None:
        return None
    match = re.search(r"\d+", str(claim_id if paper.claim_key == "claim_id" else figure))
    return match.group() if match else None


def _holds(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "pass")
    return bool(value) and not (isinstance(value, float) and np.isnan(value))


def merge_claims(tables: list[str | os.PathLike], complete: bool = True) -> pd.DataFrame:
    """One row per reported claim, plus (``complete``) one NOT REPRODUCED row per spec claim no table
    reports. Without ``complete`` the report is a part (one manifest's tables): only what they report."""
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
    by_name = {paper.name: paper for paper in papers()}
    keys = [spec_number(by_name.get(r.paper), r.claim_id, r.figure) for r in reported.itertuples()]
    spec = {(paper.name, claim.number) for paper in papers() for claim in paper.claims}
    rows = []
    for paper, claim in [(p, c) for p in papers() for c in p.claims]:
        matching = [
            r for r, k in zip(reported.to_dict("records"), keys) if (r["paper"], k) == (paper.name, claim.number)
        ]
        for row in matching:
            own = str(row["claim_id"])
            row["claim_id"] = claim.id if own in (claim.number, claim.id) else f"{claim.id} ({own})"
            rows.append(row)
        if not matching and complete:
            reason = "no claims table reports it"
            if missing:
                reason += f" (missing: {', '.join(missing)})"
            rows.append(
                {
                    "paper": paper.name,
                    "claim_id": claim.id,
                    "figure": claim.figure,
                    "statement": claim.statement,
                    "measured": np.nan,
                    "threshold": claim.check,
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
    order = {paper.name: i for i, paper in enumerate(papers())}
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


def settings_line(settings: dict | None) -> str:
    """Which settings the claims were measured at: the tree's name and the sha256 of its record."""
    if not settings:
        return ""
    kind = {"paper": "the papers' full settings", "smoke": "the tiny smoke settings, not the papers'"}
    what = kind.get(settings["name"]) or f"a variant over {kind[settings.get('over') or 'paper']}"
    return f"Settings: **{settings['name']}** ({what}; sha256 {settings['sha256'][:12]}, in `figures/settings.yaml`)."


def claims_markdown(
    claims: pd.DataFrame,
    settings: dict | None = None,
    title: str = "Claims of the papers, checked by the pipeline",
    data: str | os.PathLike = "results/claims.csv",
) -> str:
    """A readable report: per paper, every claim with PASS, NOT REPRODUCED or its kind, and the
    reason; ``settings`` (name, sha256) says which settings it shows; ``title`` and ``data`` (its
    CSV) name a part of the claims (one manifest's)."""
    lines = [
        f"# {title}",
        "",
        *([settings_line(settings), ""] if settings else []),
        summary_line(claims) + f" The data is in `{data}`; `runs` is the number of runs "
        "(seeds, cells) a claim is judged over and `holds in` the fraction of them in which it holds, "
        "with a 95% Clopper-Pearson interval.",
        "",
    ]
    for paper, group in claims.groupby("paper", sort=False):
        table = pd.DataFrame(
            {
                "claim": group.claim_id.map(_escape),
                "figure": group.figure.map(_escape),
                "statement": group.statement.map(_escape),
                "measured": group.measured.map(_escape),
                "threshold": group.threshold.map(_escape),
                "rule": group.rule.map(_escape),
                "runs": group.n_runs.astype(int).map(str),
                "holds in": [_fraction(row) for row in group.itertuples()],
                "result": [_result(row) for row in group.itertuples()],
                "reason": group.reason.map(_escape),
            }
        )
        lines += [f"## {paper}", "", table.to_markdown(index=False, disable_numparse=True), ""]
    return "\n".join(lines)
