"""The committed plateau reference set (figures/reference/plateau, the run of
config/variants/plateau-cells.yaml at the paper's settings): its figures' data agree with its claims
report and its findings, and its settings are the defaults with that variant's changes, as the docs
page describes. A re-blessed set whose figures, claims and findings disagree fails here."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml

from helpers import ROOT, schema_defaults
from replication.claims import cell_holds
from replication.papers.local_to_global.plateau.escape import explanation

REFERENCE = ROOT / "figures" / "reference" / "plateau"


@pytest.fixture(scope="module")
def claims() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "claims.csv").set_index("claim_id")


@pytest.fixture(scope="module")
def curvature() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "local_to_global" / "plateau_curvature.csv")


VARIANT = yaml.safe_load((ROOT / "config" / "variants" / "plateau-cells.yaml").read_text())["local_to_global"]


def test_the_set_is_the_plateau_cells_variant_at_the_defaults():
    settings = yaml.safe_load((REFERENCE / "settings.yaml").read_text())["settings"]["local_to_global"]
    variant = schema_defaults({"local_to_global": VARIANT})["local_to_global"]
    for section in ("plateau", "phase", "transformer"):
        assert settings[section] == variant[section], section


def test_every_heatmap_cell_is_its_claims_verdict(curvature, claims):
    judged = curvature[curvature.direction.isin(["full model", "canonical directions"])]
    assert len(judged) == sum(claims.index.str.match(r"(?:3m|3c) "))
    for row in judged.itertuples():
        claim = claims.loc[f"{'3m' if row.direction == 'full model' else '3c'} (p={row.p:g}, q={row.q:g}) {row.point}"]
        told = row.saddles + row.minima
        assert (claim.kind == "not checkable") == (told == 0) == (not row.resolved)
        assert bool(claim.holds) == row.local_minimum == (told > 0 and cell_holds(row.minima / told))
        if told:
            assert claim.n_runs == told


def test_the_findings_count_the_heatmaps_cells(curvature):
    findings = (REFERENCE / "plateau_findings.md").read_text()
    full = curvature[curvature.direction == "full model"]
    sections = dict(re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", findings, flags=re.M | re.S))
    for point, cells in full.groupby("point"):
        text, n = sections[point], len(cells)
        assert f"a saddle in every seed at {int((cells.saddles == cells.seeds).sum())} of {n} cells" in text
        assert f"a minimum in every seed at {int((cells.minima == cells.seeds).sum())} (" in text
        assert f"unresolved in every seed at {int((cells.saddles + cells.minima == 0).sum())} (" in text


def test_the_escape_claims_and_findings_name_the_same_explanations(claims):
    findings = (REFERENCE / "plateau_findings.md").read_text()
    escape = pd.read_csv(REFERENCE / "local_to_global" / "plateau_escape.csv")
    for (p, q), _ in escape.groupby(["p", "q"]):
        grows, free = (claims.loc[f"{c} (p={p:g}, q={q:g})"] for c in ("5i", "5b"))
        grows, free = (bool(c.holds) if c.kind == "checked" else None for c in (grows, free))
        kind = explanation(grows, free)  # the findings' words from the two claims' verdicts
        assert f"- **({p:g}, {q:g}): {kind}.**" in findings
