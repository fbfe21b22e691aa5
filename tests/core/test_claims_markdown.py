"""The claims report as text: exact lines, escaping, order of the papers."""

import numpy as np
import pandas as pd

from helpers import squeeze_markdown
from replication.claims import CLAIM_COLUMNS
from replication.claims_report import claims_markdown
from replication.contract import BEYOND_THE_PAPER


def test_claims_markdown_exact_text():
    nan = np.nan
    claims = pd.DataFrame(
        [
            [
                "Local to Global",
                "L2G-1",
                "L2G-1",
                "Fig. 1",
                "flows end | where predicted",
                0.123456,
                "all",
                True,
                "grid of 9",
                "checked",
                "single measurement",
                1,
                1.0,
                nan,
                nan,
            ],
            [
                "Local to Global",
                "L2G-2",
                "L2G-2",
                "Fig. 2",
                "energy",
                nan,
                "< 1e-8",
                False,
                "no claims table\nreports it",
                "checked",
                "single measurement",
                1,
                0.0,
                nan,
                nan,
            ],
            [
                "Local to Global",
                "L2G-3",
                "L2G-3",
                "Fig. 2",
                "identity",
                0.0,
                "= 0",
                True,
                "by construction",
                "documentation",
                "not a test",
                1,
                nan,
                nan,
                nan,
            ],
            [
                "Benign overfitting",
                "BO-fig1",
                "BO-fig1",
                "Fig. 1",
                "accuracy",
                1.0,
                "= 1",
                True,
                "ok",
                "checked",
                "per seed; holds in every run",
                5,
                0.8,
                0.2836,
                0.9949,
            ],
        ],
        columns=CLAIM_COLUMNS,
    )
    header = [
        "| claim | figure | verdict | measured | threshold | holds in |",
        "|---|---|---|---|---|---|",
    ]
    assert squeeze_markdown(claims_markdown(claims)) == "\n".join(
        [
            "# Claims of the papers, checked by the pipeline",
            "",
            "**2 of 3 checked claims hold; 1 fail.** Not counted: 1 documentation rows (cannot fail by "
            "construction) and 0 sentences that are not checkable here (reason given).",
            "",
            "The verdict of each claim first; its statement, what was measured and why, under *Statements and "
            "reasons*. `holds in`: over several runs (seeds, cells), the runs in which the claim holds, with a 95% "
            "Clopper-Pearson interval of that fraction. The data is in `results/claims.csv`.",
            "",
            "## Local to Global",
            "",
            *header,
            "| L2G-1 | Fig. 1 | holds | 0.1235 | all |  |",
            "| L2G-2 | Fig. 2 | **fails** |  | < 1e-8 |  |",
            "| L2G-3 | Fig. 2 | documentation | 0 | = 0 |  |",
            "",
            "## Benign overfitting",
            "",
            *header,
            "| BO-fig1 | Fig. 1 | holds | 1 | = 1 | 4/5 [0.28, 0.99] |",
            "",
            "## Statements and reasons",
            "",
            "### Local to Global",
            "",
            "- **L2G-1** (Fig. 1), holds: flows end | where predicted *measured 0.1235 against all* "
            "(single measurement): grid of 9",
            "- **L2G-2** (Fig. 2), **fails**: energy *< 1e-8* (single measurement): no claims table reports it",
            "- **L2G-3** (Fig. 2), documentation: identity *measured 0 against = 0* (not a test): by construction",
            "",
            "### Benign overfitting",
            "",
            "- **BO-fig1** (Fig. 1), holds: accuracy *measured 1 against = 1* (per seed; holds in every run): ok",
            "",
        ]
    )


def test_smoke_report_says_which_failures_are_expected():
    """A failure that holds in the committed report at the papers' settings is expected at smoke
    settings, one that fails there too is not; the headline counts both."""
    nan = np.nan
    row = [
        "Local to Global",
        "L2G-5 (5a)",
        "L2G-5",
        "Fig. 4",
        "s",
        0.5,
        "t",
        False,
        "r",
        "checked",
        "rule",
        2,
        0.0,
        0.0,
    ]
    row.append(0.84)
    smoke = pd.DataFrame(
        [row, [*row[:1], "L2G-5 (5c)", *row[2:]], [*row[:1], "L2G-1", "L2G-1", *row[3:7], True, *row[8:]]],
        columns=CLAIM_COLUMNS,
    )
    paper = smoke.assign(holds=["True", "False", "True"], measured=nan)
    paper.attrs["source"] = "figures/reference/config/claims.csv"
    text = squeeze_markdown(claims_markdown(smoke, paper_claims=paper))
    assert "**1 of 3 checked claims hold; 2 fail.** 1 of the 2 failures are expected at smoke settings" in text
    assert "(committed report `figures/reference/config/claims.csv`)" in text
    assert "the other 1 do not hold at the papers' settings either" in text
    assert "| L2G-5 (5a) | Fig. 4 | **fails**, expected at smoke |" in text
    assert "| L2G-5 (5c) | Fig. 4 | **fails** |" in text
    assert "expected at smoke" not in claims_markdown(smoke)  # without the papers' report: no claim is excused


def test_holds_and_paper_names_read_from_any_table():
    from replication.claims_report import _holds, paper_of

    for text in ("True", " true ", "1", "YES", "pass", "Pass"):
        assert _holds(text), text
    for value in ("False", "0", "no", "fail", "", float("nan"), 0.0, 0, None):
        assert not _holds(value), value
    assert _holds(1.0) and _holds(True) and _holds(2)
    assert (
        paper_of("Local to Global") == "Local to Global"
        and paper_of("LOCAL-to-global (2406.03072)") == "Local to Global"
    )
    assert paper_of("Benign or Not-Benign Overfitting") == "Benign overfitting"
    assert paper_of("Other paper") == "Other paper" and paper_of(3) == "3"


def test_merged_rows_keep_text_ids_and_a_fresh_index(tmp_path):
    from replication.claims_report import merge_claims

    first = pd.DataFrame(
        [["Local to Global", "05", BEYOND_THE_PAPER, "Fig. 4", "s", 0.1, "t", "yes", "r"]], columns=CLAIM_COLUMNS[:9]
    )
    second = pd.DataFrame(
        [
            ["Local to Global", "1", "L2G-1", "Fig. 1", "s", 1.0, "t", "pass", "r"],
            ["Local to Global", "beyond", BEYOND_THE_PAPER, "Fig. 9", "s", 2.0, "t", "no", "r"],
        ],
        columns=CLAIM_COLUMNS[:9],
    )
    first.to_csv(tmp_path / "a.csv", index=False)
    second.to_csv(tmp_path / "b.csv", index=False)
    merged = merge_claims([tmp_path / "a.csv", tmp_path / "b.csv"])
    assert list(merged.index) == list(range(len(merged))) and list(merged.columns) == CLAIM_COLUMNS
    ids = list(merged.claim_id)
    # "05" is read as text (an id, never a number), and kept beyond the paper, as its row declares, as is
    by_id = merged.set_index("claim_id")
    assert "05" in ids and "beyond" in ids and by_id.loc["L2G-5", "reason"] == "no claims table reports it"
    assert by_id.loc["L2G-1", "holds"] and by_id.loc["05", "holds"] and not by_id.loc["beyond", "holds"]
    assert merged.holds.dtype == bool and merged.holds.sum() == 2
