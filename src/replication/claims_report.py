"""The claims report: every claim of every paper's spec, with what the pipeline measured.

The per-area claims tables (``replication.claims`` format) are merged and laid against the
spec's claim lists. A spec claim that no table reports is listed as failing with the reason; a
row that does not hold is listed as failing, never dropped. Verdicts use one vocabulary, the
README's: a checked claim ``holds`` or ``fails``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .claims import CLAIM_COLUMNS, KINDS
from .contract import BEYOND_THE_PAPER, SpecClaim
from .registry import paper_named, papers


def paper_of(name: str) -> str:
    """The registered name of a table's ``paper`` value (tables may spell it as the id or title)."""
    paper = paper_named(name)
    return paper.name if paper else str(name)


def _read_table(table: str | os.PathLike) -> pd.DataFrame:
    """One claims table; every row must declare the spec claim it reports (``Claim.spec``)."""
    frame = pd.read_csv(table, dtype={"claim_id": str, "spec": str})
    undeclared = frame.claim_id[frame.spec.isna()] if "spec" in frame else frame.claim_id
    if len(undeclared):
        raise ValueError(
            f"claims table {table}: rows {', '.join(map(str, undeclared))} declare no spec claim (column 'spec': "
            f"an id of the paper's spec catalogue or {BEYOND_THE_PAPER!r}; replication.claims.Claim.spec)"
        )
    return frame


def spec_claims(reported: pd.DataFrame) -> list[SpecClaim | None]:
    """Per row, the spec claim its ``spec`` declares (None beyond the paper or for an unregistered
    paper); a ``spec`` that is no claim of the row's paper is one error naming the allowed ones."""
    by_name = {paper.name: paper for paper in papers()}
    found = []
    for row in reported.itertuples():
        paper = by_name.get(row.paper)
        try:
            found.append(paper.spec_claim(row.spec) if paper else None)
        except ValueError as error:
            raise ValueError(f"claim {row.claim_id}: {error}") from None
    return found


def _filed_id(claim: SpecClaim, own: str) -> str:
    """A row's id in the report: the spec claim's id, with the row's own id after it where it says more
    than the claim's id or its number ("L2G-1" and "1" are the claim itself; "6d" is "L2G-6 (6d)")."""
    return claim.id if own in (claim.id, claim.number) else f"{claim.id} ({own})"


def _holds(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "pass")
    return bool(value) and not (isinstance(value, float) and np.isnan(value))


def merge_claims(tables: list[str | os.PathLike], complete: bool = True) -> pd.DataFrame:
    """One row per reported claim, plus (``complete``) one failing row per spec claim no table
    reports. Without ``complete`` the report is a part (one manifest's tables): only what they report."""
    frames, missing = [], []
    for table in tables:
        if Path(table).exists():
            frames.append(_read_table(table))
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
    filed = spec_claims(reported)
    records = reported.to_dict("records")
    rows = []
    for paper, claim in [(p, c) for p in papers() for c in p.claims]:
        matching = [r for r, c in zip(records, filed) if c is claim and r["paper"] == paper.name]
        for row in matching:
            rows.append({**row, "claim_id": _filed_id(claim, str(row["claim_id"]))})
        if not matching and complete:
            reason = "no claims table reports it"
            if missing:
                reason += f" (missing: {', '.join(missing)})"
            rows.append(
                {
                    "paper": paper.name,
                    "claim_id": claim.id,
                    "spec": claim.id,
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
    # Rows beyond the paper (and of unregistered papers) are kept too: a reported claim is never dropped.
    rows += [r for r, c in zip(records, filed) if c is None]
    merged = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    merged["holds"] = merged["holds"].astype(bool)
    merged["n_runs"] = merged["n_runs"].astype(int)
    order = {paper.name: i for i, paper in enumerate(papers())}
    return merged.sort_values("paper", key=lambda p: p.map(order).fillna(len(order)), kind="stable", ignore_index=True)


def _text(value) -> str:
    if isinstance(value, float):
        return "" if np.isnan(value) else f"{value:.4g}"
    return str(value).replace("\n", " ")


def _escape(value) -> str:
    """A table cell: ``_text`` with its pipes escaped."""
    return _text(value).replace("|", "\\|")


def _held_in(row) -> str:
    """``held/runs`` with the 95% interval of the fraction, for a checked claim over several runs."""
    if row.kind != "checked" or row.n_runs <= 1 or not np.isfinite(row.holds_fraction):
        return ""
    held = f"{round(row.holds_fraction * row.n_runs)}/{row.n_runs}"
    return f"{held} [{row.ci_low:.2f}, {row.ci_high:.2f}]" if np.isfinite(row.ci_low) else held


def verdict(row) -> str:
    """The one vocabulary of reports and README: a checked claim ``holds`` or ``fails``; other rows
    are their kind (``documentation``, ``not checkable``)."""
    if row.kind != "checked":
        return row.kind
    return "holds" if row.holds else "fails"


def expected_at_smoke(claims: pd.DataFrame, paper_claims: pd.DataFrame | None) -> pd.Series:
    """Per row of ``claims`` (a smoke-settings report): whether it is a checked claim that fails here
    and holds in ``paper_claims``, the committed report at the papers' settings. The smoke settings
    train for a few steps on a few starts and cells: such a failure says the smoke run is too small
    to show the claim, not that the code broke."""
    if paper_claims is None or paper_claims.empty:
        return pd.Series(False, index=claims.index)
    held = paper_claims[(paper_claims.kind == "checked") & paper_claims.holds.map(_holds)]
    at_paper = set(zip(held.paper.map(paper_of), held.claim_id.astype(str)))
    failing = (claims.kind == "checked") & ~claims.holds.astype(bool)
    return failing & pd.Series([key in at_paper for key in zip(claims.paper, claims.claim_id)], index=claims.index)


def read_claims(path: str | os.PathLike, source: str = "") -> pd.DataFrame:
    """A claims report's CSV (``results/claims.csv``, a reference set's ``claims.csv``) as
    ``merge_claims`` returns it; ``source`` is how a report that reads it beside another names it
    (a smoke report names the papers' one by it)."""
    frame = pd.read_csv(path, dtype={"claim_id": str})
    frame["holds"] = frame["holds"].map(_holds).astype(bool)
    frame["n_runs"] = frame["n_runs"].fillna(1).astype(int)
    frame.attrs["source"] = source
    return frame


def summary_line(claims: pd.DataFrame, paper_claims: pd.DataFrame | None = None) -> str:
    """Counts checked claims only: documentation and not-checkable rows never count as reproduced.
    With ``paper_claims`` (a smoke report), the failures that hold at the papers' settings are
    counted apart: they are expected at smoke settings."""
    checked = claims[claims.kind == "checked"]
    held = int(checked.holds.sum())
    failed = len(checked) - held
    others = {kind: int((claims.kind == kind).sum()) for kind in KINDS[1:]}
    line = f"{held} of {len(checked)} checked claims hold; {failed} fail."
    if paper_claims is not None and failed:
        expected = int(expected_at_smoke(claims, paper_claims).sum())
        source = paper_claims.attrs.get("source", "")
        line += (
            f" {expected} of the {failed} failures are expected at smoke settings: those claims hold at the "
            f"papers' settings (committed report `{source}`), and the smoke settings train too briefly, "
            f"on too few starts and cells, to show them; the other {failed - expected} do not hold at the "
            "papers' settings either."
        )
    return line + (
        f" Not counted: {others['documentation']} documentation rows (cannot fail by construction) and "
        f"{others['not checkable']} sentences that are not checkable here (reason given)."
    )


def settings_line(settings: dict | None) -> str:
    """Which settings the claims were measured at: the tree's name and the sha256 of its record."""
    if not settings:
        return ""
    kind = {"paper": "the papers' full settings", "smoke": "the tiny smoke settings, not the papers'"}
    what = kind.get(settings["name"]) or f"a variant over {kind[settings.get('over') or 'paper']}"
    return f"Settings: **{settings['name']}** ({what}; sha256 {settings['sha256'][:12]}, in `figures/settings.yaml`)."


def _verdict_cell(row, expected: bool) -> str:
    word = verdict(row)
    if word != "fails":
        return word
    return "**fails**, expected at smoke" if expected else "**fails**"


def _reason_item(row, word: str) -> str:
    """One claim in words: its statement, then what was measured against what, and why."""
    measured, threshold = _text(row.measured), _text(row.threshold)
    measurement = f"measured {measured} against {threshold}" if measured else threshold or "no measurement"
    return (
        f"- **{_text(row.claim_id)}** ({_text(row.figure)}), {word}: {_text(row.statement)} "
        f"*{measurement}* ({_text(row.rule)}): {_text(row.reason)}"
    )


def _verdict_table(group: pd.DataFrame, expected: pd.Series) -> str:
    table = pd.DataFrame(
        {
            "claim": group.claim_id.map(_escape),
            "figure": group.figure.map(_escape),
            "verdict": [_verdict_cell(row, expected[row.Index]) for row in group.itertuples()],
            "measured": group.measured.map(_escape),
            "threshold": group.threshold.map(_escape),
            "holds in": [_held_in(row) for row in group.itertuples()],
        }
    )
    return table.to_markdown(index=False, disable_numparse=True)


def claims_markdown(
    claims: pd.DataFrame,
    settings: dict | None = None,
    title: str = "Claims of the papers, checked by the pipeline",
    data: str | os.PathLike = "results/claims.csv",
    paper_claims: pd.DataFrame | None = None,
    level: int = 1,
) -> str:
    """A report a person reads: per paper a short table, each claim's verdict first (``holds``,
    ``fails``, or its kind), the claims beyond the paper in a table of their own, then each claim's
    statement, measurement and reason in words.
    ``settings`` (name, sha256) says which settings it shows; ``title`` and ``data`` (its CSV) name a
    part of the claims (one manifest's); ``paper_claims``, the committed report at the papers'
    settings, marks the failures expected at smoke settings; ``level`` is the title's heading level."""
    head, sub = "#" * level, "#" * (level + 1)
    expected = expected_at_smoke(claims, paper_claims)
    lines = [
        f"{head} {title}",
        "",
        *([settings_line(settings), ""] if settings else []),
        "**{}.** {}".format(*summary_line(claims, paper_claims).split(". ", 1)),
        "",
        f"The verdict of each claim first; its statement, what was measured and why, under *Statements and "
        f"reasons*. `holds in`: over several runs (seeds, cells), the runs in which the claim holds, with a 95% "
        f"Clopper-Pearson interval of that fraction. The data is in `{data}`.",
        "",
    ]
    for paper, group in claims.groupby("paper", sort=False):
        beyond = group.spec == BEYOND_THE_PAPER
        for heading, rows in ((paper, group[~beyond]), (f"{paper}: {BEYOND_THE_PAPER}", group[beyond])):
            if len(rows):
                lines += [f"{sub} {heading}", "", _verdict_table(rows, expected), ""]
    lines += [f"{sub} Statements and reasons", ""]
    for paper, group in claims.groupby("paper", sort=False):
        items = [_reason_item(row, _verdict_cell(row, expected[row.Index])) for row in group.itertuples()]
        lines += [f"{sub}# {paper}", "", *items, ""]
    return "\n".join(lines)
