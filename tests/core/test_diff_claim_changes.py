"""compare_claims (``make compare``'s claims table) on two hand-made claims tables: which claims are
listed (those whose verdict differs, one-sided ones included), both sides' values, the verdict change
in words and the seed columns beside it."""

import numpy as np
import pandas as pd
import pytest

from helpers import shared_scope
from replication.diff.claim_changes import CHANGED_CLAIM_COLUMNS, _verdict, compare_claims
from replication.diff.seeds import BEYOND, UNKNOWN, WITHIN


class ClaimsOf:
    """A tree as compare_claims reads it: its claims table, or None where it has none."""

    def __init__(self, frame):
        self.frame = frame

    def claims(self):
        return self.frame


def claim(claim_id, holds, measured, n_runs=2, fraction=None, reason="", paper="P"):
    fraction = (1.0 if holds else 0.0) if fraction is None else fraction
    return {
        "paper": paper,
        "claim_id": claim_id,
        "statement": f"statement of {claim_id}",
        "measured": measured,
        "holds": holds,
        "reason": reason,
        "kind": "checked",
        "n_runs": n_runs,
        "holds_fraction": fraction,
    }


A = pd.DataFrame(
    [
        claim("1", True, 0.9, reason="per seed 0.91, 0.95"),
        claim("2", True, 0.8),
        claim("3", False, 0.1, n_runs=1),
        claim("4", True, 0.7, fraction=0.5),
        claim("only-a", True, 0.6),
        claim("1", True, 0.5, paper="Q"),
    ]
)
B = pd.DataFrame(
    [
        claim("1", False, 0.2, reason="per seed 0.1, 0.3"),
        claim("2", True, 0.81),
        claim("3", True, 0.4, n_runs=1),
        claim("4", False, 0.65),
        claim("only-b", False, 0.3),
        claim("1", True, 0.55, paper="Q"),
    ]
)


@pytest.fixture(scope=shared_scope)
def changed():
    return compare_claims(ClaimsOf(A), ClaimsOf(B)).set_index(["paper", "claim_id"])


def test_only_claims_whose_verdict_differs_are_listed(changed):
    assert sorted(changed.index) == [("P", "1"), ("P", "3"), ("P", "4"), ("P", "only-a"), ("P", "only-b")]


def test_the_table_has_its_columns_in_order_and_a_plain_index():
    table = compare_claims(ClaimsOf(A), ClaimsOf(B))
    assert list(table.columns) == CHANGED_CLAIM_COLUMNS
    assert list(table.index) == list(range(5))


def test_both_sides_values_and_the_change_in_words(changed):
    row = changed.loc[("P", "1")]
    assert row.statement == "statement of 1"
    assert (row.measured_a, row.measured_b) == (0.9, 0.2)
    assert (bool(row.holds_a), bool(row.holds_b)) == (True, False)
    assert row.change == "holds -> fails"
    assert changed.loc[("P", "3"), "change"] == "fails -> holds"


def test_a_claim_in_one_tree_only_is_absent_on_the_other_side(changed):
    only_a, only_b = changed.loc[("P", "only-a")], changed.loc[("P", "only-b")]
    assert only_a.change == "holds -> absent" and np.isnan(only_a.measured_b)
    assert only_b.change == "absent -> fails" and only_b.measured_b == 0.3
    assert only_b.statement != only_b.statement  # the statement is A's: NaN where A lacks the claim


def test_seed_columns_of_each_changed_claim(changed):
    row = changed.loc[("P", "1")]
    assert (row.holds_in_a, row.holds_in_b) == ("2/2", "0/2")
    assert (row.seeds_a, row.seeds_b) == ("0.91-0.95", "0.1-0.3")
    assert row.seed_noise == BEYOND  # every seed agrees on each side and the ranges are disjoint
    assert changed.loc[("P", "3"), "seed_noise"] == UNKNOWN  # one run a side
    assert changed.loc[("P", "4"), "seed_noise"] == WITHIN  # A's seeds already disagree
    assert changed.loc[("P", "4"), "holds_in_a"] == "1/2"


def test_a_claims_table_without_seed_columns_still_compares():
    """An older claims table (no n_runs, holds_fraction, reason) against a current one."""
    old = A[["paper", "claim_id", "statement", "measured", "holds"]]
    table = compare_claims(ClaimsOf(old), ClaimsOf(B)).set_index(["paper", "claim_id"])
    row = table.loc[("P", "1")]
    assert (row.change, row.holds_in_a, row.holds_in_b, row.seed_noise) == ("holds -> fails", "", "0/2", UNKNOWN)
    assert (row.seeds_a, row.seeds_b) == ("", "0.1-0.3")


@pytest.mark.parametrize("sides", [(None, B), (A, None), (None, None)])
def test_a_tree_without_claims_changes_none(sides):
    table = compare_claims(*(ClaimsOf(side) for side in sides))
    assert table.empty and list(table.columns) == CHANGED_CLAIM_COLUMNS


@pytest.mark.parametrize(
    "holds, verdict",
    [(True, "holds"), ("True", "holds"), ("true", "holds"), (1, "holds"), ("1", "holds")]
    + [(False, "fails"), ("False", "fails"), (0, "fails"), (np.nan, "absent")],
)
def test_verdicts_in_words(holds, verdict):
    assert _verdict(holds) == verdict
