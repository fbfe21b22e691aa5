"""The claims report as text: exact lines, escaping, order of the papers."""
import numpy as np
import pandas as pd

from replication.claims import CLAIM_COLUMNS
from replication.claims_report import claims_markdown


def test_claims_markdown_exact_text():
    claims = pd.DataFrame([
        ["Local to Global", "L2G-1", "Fig. 1", "flows end | where predicted", 0.123456, "all", True, "grid of 9"],
        ["Local to Global", "L2G-2", "Fig. 2", "energy", np.nan, "< 1e-8", False, "no claims table\nreports it"],
        ["Benign overfitting", "BO-fig1", "Fig. 1", "accuracy", 1.0, "= 1", True, "ok"],
    ], columns=CLAIM_COLUMNS)
    assert claims_markdown(claims) == "\n".join([
        "# Claims of both papers, checked by the pipeline",
        "",
        "2 of 3 claims pass; 1 are NOT REPRODUCED. The data is in `results/claims.csv`.",
        "",
        "## Local to Global",
        "",
        "| claim | figure | statement | measured | threshold | result | reason |",
        "|---|---|---|---|---|---|---|",
        "| L2G-1 | Fig. 1 | flows end \\| where predicted | 0.1235 | all | PASS | grid of 9 |",
        "| L2G-2 | Fig. 2 | energy |  | < 1e-8 | **NOT REPRODUCED** | no claims table reports it |",
        "",
        "## Benign overfitting",
        "",
        "| claim | figure | statement | measured | threshold | result | reason |",
        "|---|---|---|---|---|---|---|",
        "| BO-fig1 | Fig. 1 | accuracy | 1 | = 1 | PASS | ok |",
        "",
    ])
