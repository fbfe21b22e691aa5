"""The claims report: every spec claim listed, reported rows merged, failures never hidden."""

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers import markdown_cells, squeeze_markdown
from replication.claims import CLAIM_COLUMNS, Claim, documentation, not_checkable, over_runs, write_claims
from replication.claims_report import (
    claims_markdown,
    merge_claims,
    summary_line,
)
from replication.contract import BEYOND_THE_PAPER as BEYOND
from replication.papers.benign_overfitting import PAPER as BENIGN
from replication.papers.local_to_global import PAPER as LOCAL
from replication.registry import papers

# The spec's claim lists, by item: Local to Global's section 5 items, Benign overfitting's section 4
# figures (one item each), with the figures an item names and a few words on it.
SPEC_CATALOGUE = Path(__file__).with_name("spec_catalogue.csv")

SPEC_CLAIMS = [claim for paper in papers() for claim in paper.claims]


@pytest.fixture
def tables(tmp_path):
    landscape = write_claims(
        [
            Claim(LOCAL.name, "1", "Fig. 1", "basins agree", 1.0, "== 1", True, "240/240 starts", spec="L2G-1"),
            Claim(LOCAL.name, "2-3d", "Fig. 2", "energy drift 3-D", 3e-6, "< 1e-8", False, "drift 3e-6", spec="L2G-2"),
            Claim(LOCAL.name, "2-2d", "Fig. 1", "energy drift 2-D", 1e-12, "< 1e-8", True, "1e-12", spec="L2G-2"),
        ],
        tmp_path / "landscape.csv",
    )
    benign = write_claims(
        [
            Claim(
                "Benign or Not-Benign Overfitting",
                "eq9_all_cells",
                "Fig. 4",
                "Eq. 9 > 1",
                0.81,
                "1.0",
                False,
                "81% of cells",
                spec="BO-fig4",
            ),
            Claim(BENIGN.name, "accuracy_at_5", "accuracy", "beyond the paper", 1.0, "1.0", True, "all", spec=BEYOND),
        ],
        tmp_path / "benign.csv",
    )
    assert list(landscape.columns) == CLAIM_COLUMNS and len(benign) == 2
    return [tmp_path / "landscape.csv", tmp_path / "benign.csv"]


def test_every_spec_claim_is_listed(tables):
    merged = merge_claims(tables)
    assert list(merged.columns) == CLAIM_COLUMNS
    for claim in SPEC_CLAIMS:
        assert merged.claim_id.str.startswith(claim.id).any(), claim.id
    assert len(merged) == len(SPEC_CLAIMS) + 1 + 1  # a second row for claim 2, one beyond the spec


def test_reported_rows_are_merged_under_their_spec_claim(tables):
    merged = merge_claims(tables).set_index("claim_id")
    assert merged.loc["L2G-1", "holds"] and merged.loc["L2G-1", "measured"] == 1.0
    assert not merged.loc["L2G-2 (2-3d)", "holds"] and merged.loc["L2G-2 (2-3d)", "reason"] == "drift 3e-6"
    assert merged.loc["L2G-2 (2-2d)", "holds"]
    fig4 = merged.loc["BO-fig4 (eq9_all_cells)"]
    assert fig4.paper == BENIGN.name and not fig4.holds and fig4.measured == pytest.approx(0.81)
    assert merged.loc["accuracy_at_5", "statement"] == "beyond the paper"  # no figure number: beyond the spec


def test_unreported_claims_are_not_reproduced_with_reason(tables, tmp_path):
    merged = merge_claims(tables + [tmp_path / "absent.csv"]).set_index("claim_id")
    for claim_id in ("L2G-3", "L2G-4", "L2G-5", "L2G-6", "BO-fig1", "BO-fig2", "BO-fig3", "BO-fig5", "BO-fig6"):
        row = merged.loc[claim_id]
        assert not row.holds and np.isnan(row.measured)
        assert row.reason == f"no claims table reports it (missing: {tmp_path / 'absent.csv'})"


def test_no_tables_lists_every_claim_as_not_reproduced():
    merged = merge_claims([])
    assert len(merged) == len(SPEC_CLAIMS) and not merged.holds.any()
    assert list(merged.paper.unique()) == [LOCAL.name, BENIGN.name]


def test_holds_read_from_text(tmp_path):
    frame = pd.DataFrame(
        [
            [LOCAL.name, "5", "L2G-5", "Fig. 4", "s", 0.004, "<= 0.01", "True", "r"],
            [LOCAL.name, "6", "L2G-6", "Fig. 3", "s", 0.8, ">= 0.9", "false", "r"],
        ],
        columns=CLAIM_COLUMNS[:9],
    )
    frame.to_csv(tmp_path / "t.csv", index=False)
    merged = merge_claims([tmp_path / "t.csv"]).set_index("claim_id")
    assert merged.loc["L2G-5", "holds"] and not merged.loc["L2G-6", "holds"]


def test_markdown_shows_every_row_with_its_verdict(tables):
    merged = merge_claims(tables)
    text = squeeze_markdown(claims_markdown(merged))
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| claim")]
    assert len(rows) == len(merged)
    assert sum("| holds |" in r for r in rows) == merged.holds.sum() == 3
    assert sum("| **fails** |" in r for r in rows) == len(merged) - 3
    assert sum(line.startswith("- **") for line in text.splitlines()) == len(merged)  # every reason, in words
    assert f"3 of {len(merged)} checked claims hold" in text
    assert "## Local to Global" in text and "## Benign overfitting" in text
    piped = [line for line in rows if "|loss" in line.replace("\\|", "|")]
    assert piped and all("\\|loss" in line for line in piped)  # table cells keep their pipes escaped
    assert "||mu||" in text  # the statements, in words, keep them as they are


def test_catalogue_follows_the_spec_lists():
    """Each paper's ``PAPER.claims`` is its spec's list: the same items in the same order, each on
    the figures its spec item names."""
    spec = pd.read_csv(SPEC_CATALOGUE, dtype=str, keep_default_na=False)
    for paper in (LOCAL, BENIGN):
        items = spec[spec.paper == paper.id]
        assert list(items["item"]) == [claim.number for claim in paper.claims], paper.id
        for claim, figures in zip(paper.claims, items["figures"]):
            assert figures in ("", claim.figure), (claim.id, figures)
    assert set(spec.paper) == {paper.id for paper in papers()}


def test_only_checked_claims_count(tmp_path):
    write_claims(
        [
            Claim(LOCAL.name, "1", "Fig. 1", "checked and holds", 1.0, "= 1", True, "r", spec="L2G-1"),
            documentation(LOCAL.name, "3", "Fig. 1", "identity", 0.0, "= 0", True, "r", "a formula", spec="L2G-3"),
            not_checkable(LOCAL.name, "text-1", "Sec. 5", "a sentence", "no data", spec=BEYOND),
        ],
        tmp_path / "t.csv",
    )
    merged = merge_claims([tmp_path / "t.csv"])
    line = summary_line(merged)
    # 1 checked row holds; the spec claims no table reports (L2G-2, 4, ...) are checked and fail.
    checked = merged[merged.kind == "checked"]
    assert line.startswith(f"1 of {len(checked)} checked claims hold")
    assert "1 documentation rows" in line and "1 sentences that are not checkable" in line
    text = squeeze_markdown(claims_markdown(merged))
    assert "| documentation |" in text and "| not checkable |" in text


def test_over_runs_statistics():
    stats = over_runs([True, True, True, False, True])
    assert stats["n_runs"] == 5 and stats["holds_fraction"] == pytest.approx(0.8) and not stats["holds"]
    # Clopper-Pearson 95% for 4/5: [0.2836, 0.9949]
    assert stats["ci_low"] == pytest.approx(0.28358, abs=1e-4) and stats["ci_high"] == pytest.approx(0.99495, abs=1e-4)
    assert over_runs([True] * 5)["holds"] and over_runs([True] * 5)["ci_low"] == pytest.approx(0.025**0.2, abs=1e-9)
    assert over_runs([True, False, True, True], required=0.75)["holds"]


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError, match="kind 'maybe'; allowed: checked, documentation, not checkable"):
        Claim(LOCAL.name, "1", "Fig. 1", "s", 1.0, "t", True, "r", kind="maybe", spec="L2G-1")


def test_an_unreported_claim_is_a_full_row_of_the_spec(tmp_path):
    merged = merge_claims([tmp_path / "a.csv", tmp_path / "b.csv"]).set_index("claim_id")
    claim = LOCAL.claims[2]
    row = merged.loc[claim.id].to_dict()
    for statistic in ("measured", "holds_fraction", "ci_low", "ci_high"):
        assert np.isnan(row.pop(statistic)), statistic
    assert row == {
        "paper": LOCAL.name,
        "spec": claim.id,
        "figure": claim.figure,
        "statement": claim.statement,
        "threshold": claim.check,
        "holds": False,
        "reason": f"no claims table reports it (missing: {tmp_path / 'a.csv'}, {tmp_path / 'b.csv'})",
        "kind": "checked",
        "rule": "no measurement",
        "n_runs": 0,
    }


def test_tables_without_the_statistics_columns_are_single_measurements(tmp_path):
    pd.DataFrame([[LOCAL.name, "1", "L2G-1", "Fig. 1", "s", 1.0, "t", True, "r"]], columns=CLAIM_COLUMNS[:9]).to_csv(
        tmp_path / "t.csv", index=False
    )
    merged = merge_claims([tmp_path / "t.csv"])
    row = merged.set_index("claim_id").loc["L2G-1"]
    assert (row.kind, row.rule, row.n_runs) == ("checked", "single measurement", 1)
    assert merged.n_runs.dtype.kind == "i"  # counts of runs, written as integers to results/claims.csv
    assert merged.set_index("claim_id").n_runs.drop("L2G-1").eq(0).all()  # the spec claims no table reports


def test_unknown_kinds_in_a_table_are_named(tmp_path):
    frame = pd.DataFrame([[LOCAL.name, str(i), "L2G-1", "Fig. 1", "s", 1.0, "t", True, "r"] for i in range(4)],
                         columns=CLAIM_COLUMNS[:9]).assign(kind=["perhaps", "checked", "maybe", "perhaps"])  # fmt: skip
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(ValueError) as error:
        merge_claims([tmp_path / "t.csv"])
    assert str(error.value) == "claims tables: kind 'maybe', 'perhaps'; allowed: checked, documentation, not checkable"


def test_papers_keep_the_order_of_their_rows(tmp_path):
    """Rows are grouped by paper in the registry's order, each paper's rows in the order of the tables
    (a stable sort: 40 rows beyond the spec, interleaved, enough for an unstable sort to reorder)."""
    names = [LOCAL.name, BENIGN.name, "Some other paper"]
    rows = [[names[i % 3], f"extra-{i:02d}", BEYOND, "", "s", float(i), "t", True, "r"] for i in range(40)]
    pd.DataFrame(rows, columns=CLAIM_COLUMNS[:9]).to_csv(tmp_path / "t.csv", index=False)
    merged = merge_claims([tmp_path / "t.csv"])
    extra = merged[merged.claim_id.str.startswith("extra-")]
    for name in names:
        ids = extra[extra.paper == name].claim_id.tolist()
        assert ids == sorted(ids) and len(ids) in (13, 14)
    order = [name for i, name in enumerate(merged.paper) if i == 0 or merged.paper[i - 1] != name]
    assert order == names  # the registry's papers first, then the others


def test_no_claims_at_all_is_an_empty_table(monkeypatch):
    import replication.claims_report as report

    monkeypatch.setattr(report, "papers", lambda: ())
    merged = merge_claims([])
    assert merged.empty and list(merged.columns) == CLAIM_COLUMNS


def test_holds_in_is_shown_only_for_measured_checked_claims(tmp_path):
    write_claims(
        [
            Claim(LOCAL.name, "1", "Fig. 1", "over seeds", 1.0, "t", reason="r", spec="L2G-1",
                  **over_runs([1, 1, 0, 1], 0.75)),
            Claim(LOCAL.name, "2", "Fig. 2", "one run", 1.0, "t", False, "r", spec="L2G-2"),
            Claim(LOCAL.name, "3", "Fig. 3", "identity", 1.0, "t", True, "r", kind="documentation", holds_fraction=1.0,
                  spec="L2G-3"),
        ],
        tmp_path / "t.csv",
    )  # fmt: skip
    text = squeeze_markdown(claims_markdown(merge_claims([tmp_path / "t.csv"])))
    rows = [markdown_cells(line) for line in text.splitlines() if line.startswith("| L2G-")]
    cells = {row[0]: row[5] for row in rows}
    assert cells["L2G-1"] == "3/4 [0.19, 0.99]"  # Clopper-Pearson 95% for 3 of 4
    assert cells["L2G-2"] == ""  # one run: its verdict says it all
    assert cells["L2G-3"] == ""  # documentation: never a fraction of runs
    assert cells["L2G-4"] == ""  # not reported: no runs, no fraction


def test_documentation_and_not_checkable_rows_field_by_field():
    row = documentation(
        LOCAL.name, "3", "Fig. 2", "an identity", 2, "== 0", 1, "exact", "a formula with itself", spec="L2G-3"
    )
    assert asdict(row) == {
        **asdict(row),  # the statistics columns: NaN, checked below
        "paper": LOCAL.name,
        "claim_id": "3",
        "spec": "L2G-3",
        "figure": "Fig. 2",
        "statement": "an identity",
        "measured": 2.0,
        "threshold": "== 0",
        "holds": True,
        "reason": "exact; documentation: a formula with itself",
        "kind": "documentation",
        "rule": "not a test",
        "n_runs": 1,
    }
    assert type(row.measured) is float and type(row.holds) is bool
    assert np.isnan(row.holds_fraction) and np.isnan(row.ci_low) and np.isnan(row.ci_high)  # never a fraction
    row = not_checkable(BENIGN.name, "text-1", "Sec. 5", "a sentence", "no data for it", spec=BEYOND)
    assert (row.paper, row.claim_id, row.figure, row.statement) == (BENIGN.name, "text-1", "Sec. 5", "a sentence")
    assert (row.threshold, row.holds, row.reason, row.kind, row.rule, row.n_runs) == (
        "",
        False,
        "no data for it",
        "not checkable",
        "none",
        0,
    )
    assert np.isnan(row.measured) and np.isnan(row.holds_fraction)


def test_binomial_interval_edges_and_confidence():
    from scipy.stats import beta

    from replication.claims import binomial_interval

    assert all(np.isnan(binomial_interval(0, 0))) and all(np.isnan(binomial_interval(0, -1)))  # no trials
    # Clopper-Pearson: for 1 of 1 the interval is [(alpha/2)^(1/n), 1].
    assert binomial_interval(1, 1) == (pytest.approx(0.025), 1.0)
    # Its bounds are beta quantiles (a second computation): 4 of 5 at 90% and at the default 95%.
    for confidence in (0.90, 0.95):
        alpha = 1 - confidence
        low, high = beta.ppf(alpha / 2, 4, 2), beta.ppf(1 - alpha / 2, 5, 1)
        args = (4, 5, confidence) if confidence != 0.95 else (4, 5)
        assert binomial_interval(*args) == (pytest.approx(low, rel=1e-9), pytest.approx(high, rel=1e-9))


def test_over_runs_of_no_runs_and_of_truth_values():
    none = over_runs([])
    assert none["n_runs"] == 0 and not none["holds"] and none["rule"] == "holds in every run"
    assert np.isnan(none["holds_fraction"]) and np.isnan(none["ci_low"]) and np.isnan(none["ci_high"])
    counted = over_runs([2, 0, 1])  # any non-zero outcome is a run in which it holds
    assert (counted["n_runs"], counted["holds_fraction"]) == (3, pytest.approx(2 / 3))
    assert over_runs([[True, False], [True, True]], required=0.75)["n_runs"] == 4  # cells of a grid, flattened
    assert over_runs([True, False, True, True], required=0.75)["rule"] == "holds in >= 75% of runs"
    assert over_runs([True], required=1.0)["rule"] == "holds in every run"


def test_a_partial_report_has_only_its_tables_rows(tables):
    """A manifest's own report (e.g. figures/phase): no failing rows for spec claims it does not address."""
    merged = merge_claims(tables, complete=False)
    assert "no claims table reports it" not in set(merged.reason)
    assert len(merged) == len(merge_claims(tables)) - (len(SPEC_CLAIMS) - 3)  # L2G-1, L2G-2 and BO-fig4 reported
    assert set(merged.claim_id) == {"L2G-1", "L2G-2 (2-2d)", "L2G-2 (2-3d)", "BO-fig4 (eq9_all_cells)", "accuracy_at_5"}
    text = claims_markdown(merged, title="Claims checked by figures/phase", data="results/phase_claims.csv")
    assert text.startswith("# Claims checked by figures/phase\n") and "`results/phase_claims.csv`" in text


def test_a_row_is_filed_under_the_spec_claim_it_declares_never_one_read_from_its_id(tmp_path):
    """The declared ``spec`` decides: an id or figure whose first number names another claim
    ("3m ...", "5x", "Fig. 4") is filed where its row says, and beyond the paper when it says so."""
    write_claims(
        [
            Claim(LOCAL.name, "3m (p=0.5, q=0.6) iteration 300", "Curvature", "s", 1.0, "t", True, "r", spec=BEYOND),
            Claim(LOCAL.name, "5x", "Fig. 4", "s", 1.0, "t", True, "r", spec="L2G-3"),
            Claim(BENIGN.name, "eq10", "Fig. 4", "s", 1.0, "t", False, "r", spec="BO-fig6"),
        ],
        tmp_path / "t.csv",
    )
    merged = merge_claims([tmp_path / "t.csv"]).set_index("claim_id")
    beyond = merged.loc["3m (p=0.5, q=0.6) iteration 300"]
    assert beyond.spec == BEYOND and beyond.holds
    assert merged.loc["L2G-3 (5x)", "spec"] == "L2G-3" and merged.loc["L2G-3 (5x)", "holds"]
    assert merged.loc["L2G-5", "reason"] == "no claims table reports it"  # "5x" does not report it
    assert merged.loc["BO-fig6 (eq10)", "spec"] == "BO-fig6"
    assert merged.loc["BO-fig4", "reason"] == "no claims table reports it"  # nor does its figure
    text = claims_markdown(merged.reset_index())
    assert f"## {LOCAL.name}: {BEYOND}" in text and f"## {BENIGN.name}: {BEYOND}" not in text
    beyond_table = text.split(f"## {LOCAL.name}: {BEYOND}")[1].split("##")[0]
    assert "3m (p=0.5, q=0.6) iteration 300" in beyond_table and "L2G-3" not in beyond_table


def test_a_claim_declares_its_spec_claim():
    with pytest.raises(TypeError, match="spec"):
        Claim(LOCAL.name, "1", "Fig. 1", "s", 1.0, "t", True, "r")


def test_a_table_without_the_spec_column_is_one_error(tmp_path):
    columns = [c for c in CLAIM_COLUMNS[:9] if c != "spec"]
    pd.DataFrame([[LOCAL.name, "1", "Fig. 1", "s", 1.0, "t", True, "r"]], columns=columns).to_csv(
        tmp_path / "t.csv", index=False
    )
    with pytest.raises(ValueError, match=r"t.csv: rows 1 declare no spec claim \(column 'spec'"):
        merge_claims([tmp_path / "t.csv"])
    pd.DataFrame([[LOCAL.name, "1", None, "Fig. 1", "s", 1.0, "t", True, "r"]], columns=CLAIM_COLUMNS[:9]).to_csv(
        tmp_path / "t.csv", index=False
    )
    with pytest.raises(ValueError, match="rows 1 declare no spec claim"):
        merge_claims([tmp_path / "t.csv"])


def test_an_unknown_spec_id_is_one_error_naming_the_allowed(tmp_path):
    write_claims([Claim(LOCAL.name, "7a", "Fig. 7", "s", 1.0, "t", True, "r", spec="L2G-7")], tmp_path / "t.csv")
    allowed = ", ".join([*(claim.id for claim in LOCAL.claims), repr(BEYOND)])
    with pytest.raises(ValueError) as error:
        merge_claims([tmp_path / "t.csv"])
    assert str(error.value) == f"claim 7a: {LOCAL.name}: spec 'L2G-7' is no claim of its spec; allowed: {allowed}"
