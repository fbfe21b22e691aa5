"""The reports of ``make compare`` (replication.diff.report: compare_headline, figure_groups,
compare_markdown, compare_html) on a hand-made comparison: one setting, two claims and six figures
(moved beyond and within the seed spread, within noise, in one tree only, identical)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from helpers import shared_scope
from replication.diff.claim_changes import CHANGED_CLAIM_COLUMNS
from replication.diff.figure_changes import FIGURE_CHANGE_COLUMNS, VERDICT_COLUMNS
from replication.diff.report import compare_headline, compare_html, compare_markdown, figure_groups
from replication.diff.seeds import BEYOND, NO_SEEDS, WITHIN

nan, inf = np.nan, np.inf


def claim(claim_id, statement, seed_noise):
    values = ["L2G", claim_id, statement, 0.91234, True, "2/2", "0.9-0.95", 0.2, False, "0/2", "0.1-0.3"]
    return [*values, "holds -> fails", seed_noise]


def verdict(key, status, worst="", margin=nan, x_envelope=nan, seed_noise=NO_SEEDS, message=""):
    seeds = ("y", 0.05) if seed_noise == BEYOND else ("", nan)
    return [key, status, worst, margin, x_envelope, seed_noise, *seeds, message]


def quantity(key, status, name, deviation, tolerance, margin, envelope=0.0, x_envelope=inf):
    seeds = [NO_SEEDS, "", nan, nan]
    return [key, status, name, deviation, tolerance, margin, envelope, x_envelope, *seeds, f"{key} message"]


VERDICTS = pd.DataFrame(
    [
        verdict("p/same", "identical", message="image and data byte-identical"),
        verdict("p/moved", "moved", "y", 1000.0, inf, BEYOND, "data moved"),
        verdict("p/only", "only in smoke", message="p/only is only in smoke"),
        verdict("p/within", "within noise", "image rms", 0.25, 0.5, message="within"),
        verdict("p/noisy", "moved", "x", 2.0, 4.0, WITHIN, "x moved"),
        verdict("p/same2", "identical", message="image and data byte-identical"),
    ],
    columns=[*VERDICT_COLUMNS, "message"],
)
FIGURES = pd.DataFrame(
    [
        [*quantity("p/moved", "moved", "image rms", 0.0, 1.0, 0.0), 0.0],
        [*quantity("p/moved", "moved", "y", 1.0, 0.001, 1000.0), 0.0],
        [*quantity("p/within", "within noise", "image rms", 1.75, 7.0, 0.25, 3.5, 0.5), 0.0],
        [*quantity("p/noisy", "moved", "x", 0.5, 0.25, 2.0, 0.125, 4.0), 0.0],
        ["p/only", "only in smoke", *[nan] * 10, "p/only is only in smoke", 0.0],
        ["p/same", "identical", *[nan] * 10, "image and data byte-identical", 0.0],
    ],
    columns=[*FIGURE_CHANGE_COLUMNS, "extra"],
).drop(columns="extra")
CONTEXT = {
    "a": SimpleNamespace(label="smoke"),
    "b": SimpleNamespace(label="fig4p"),
    "k": 3.0,
    "envelope_dir": "figures/reference/smoke",
    "settings": pd.DataFrame([{"key": "fig4.p", "a": "0.5", "b": "0.6"}]),
    "claims": pd.DataFrame(
        [claim("L2G-5", "loss | accuracy fall", BEYOND), claim("L2G-6", "grows", WITHIN)], columns=CHANGED_CLAIM_COLUMNS
    ),
    "figures": FIGURES,
    "verdicts": VERDICTS,
    "panels": {
        "p/moved": {"overlay": True, "changed_share": 0.0},
        "p/within": {"overlay": False, "changed_share": 1 / 64},
        "p/noisy": {"overlay": False, "changed_share": 0.5},
    },
}
HEADLINE = (
    "fig4p against smoke: 1 settings differ, 2 claims changed verdict (1 beyond seed spread), "
    "2 of 6 figures moved beyond numerical noise (p/moved, p/noisy), 1 of them beyond seed spread (p/moved)"
)


def test_the_headline_counts_changes_and_those_beyond_seed_spread():
    assert compare_headline("smoke", "fig4p", CONTEXT) == HEADLINE


def test_a_headline_of_nothing_moved_names_no_figures():
    unchanged = {
        "settings": CONTEXT["settings"].iloc[:0],
        "claims": CONTEXT["claims"].iloc[:0],
        "verdicts": VERDICTS[VERDICTS.status == "identical"],
    }
    assert compare_headline("a", "b", unchanged) == (
        "b against a: 0 settings differ, 0 claims changed verdict (0 beyond seed spread), "
        "0 of 2 figures moved beyond numerical noise, 0 of them beyond seed spread"
    )


def test_the_headline_names_every_figure_beyond_seed_spread():
    beyond = {
        "settings": CONTEXT["settings"],
        "claims": CONTEXT["claims"].assign(seed_noise=[BEYOND, BEYOND]),
        "verdicts": VERDICTS.assign(seed_noise=BEYOND),
    }
    assert compare_headline("smoke", "fig4p", beyond) == (
        "fig4p against smoke: 1 settings differ, 2 claims changed verdict (2 beyond seed spread), "
        "2 of 6 figures moved beyond numerical noise (p/moved, p/noisy), 2 of them beyond seed spread "
        "(p/moved, p/noisy)"
    )


def test_figures_are_grouped_by_what_happened_to_them():
    groups = figure_groups(VERDICTS)
    assert {name: list(group.key) for name, group in groups.items()} == {
        "moved": ["p/moved", "p/noisy"],
        "within noise": ["p/within"],
        "identical": ["p/same", "p/same2"],
        "only in one tree": ["p/only"],
    }


MARKDOWN = "\n".join(
    [
        "# fig4p against smoke",
        "",
        f"**{HEADLINE}.** Moved: the rule of `make diff`, |B - A| > 3 x envelope + floors (envelopes of "
        "`figures/reference/smoke`).",
        "",
        "## Settings that differ",
        "",
        "| key    | a   | b   |",
        "|:-------|:----|:----|",
        "| fig4.p | 0.5 | 0.6 |",
        "",
        "## Claims whose verdict changed",
        "",
        (
            "| paper   | claim_id   | statement             | measured_a   | holds_a   | holds_in_a   |"
            " seeds_a   | measured_b   | holds_b   | holds_in_b   | seeds_b   | change         | seed_noise "
            "        |"
        ),
        (
            "|:--------|:-----------|:----------------------|:-------------|:----------|:-------------|:-----"
            "-----|:-------------|:----------|:-------------|:----------|:---------------|:------------------"
            "-|"
        ),
        (
            "| L2G     | L2G-5      | loss \\| accuracy fall | 0.912        | True      | 2/2          |"
            " 0.9-0.95  | 0.2          | False     | 0/2          | 0.1-0.3   | holds -> fails | beyond seed"
            " spread |"
        ),
        (
            "| L2G     | L2G-6      | grows                 | 0.912        | True      | 2/2          |"
            " 0.9-0.95  | 0.2          | False     | 0/2          | 0.1-0.3   | holds -> fails | within seed"
            " spread |"
        ),
        "",
        "## Figures that moved",
        "",
        (
            "`margin`: the largest deviation / its tolerance (above 1: moved); `x_envelope`: that deviation"
            " as a multiple of the figure's numerical-noise envelope. `seed_noise`: *beyond seed spread*"
            " only where each tree's seeds agree and the two trees' seed ranges do not overlap"
            " (`seed_range_a`: A's median range over seeds in `seed_column`), *within seed spread*"
            " otherwise; without per-seed data the spread is unknown."
        ),
        "",
        (
            "| key     | status   | worst   | margin   | x_envelope   | seed_noise         | seed_column   |"
            " seed_range_a   |"
        ),
        (
            "|:--------|:---------|:--------|:---------|:-------------|:-------------------|:--------------|:"
            "---------------|"
        ),
        (
            "| p/moved | moved    | y       | 1e+03    | inf          | beyond seed spread | y             |"
            " 0.05           |"
        ),
        (
            "| p/noisy | moved    | x       | 2        | 4            | within seed spread |               |"
            "                |"
        ),
        "",
        "## Figures that changed within numerical noise",
        "",
        (
            "| key      | status       | worst     | margin   | x_envelope   | seed_noise                   "
            "         | seed_column   | seed_range_a   |"
        ),
        (
            "|:---------|:-------------|:----------|:---------|:-------------|:------------------------------"
            "--------|:--------------|:---------------|"
        ),
        (
            "| p/within | within noise | image rms | 0.25     | 0.5          | no per-seed data: seed spread"
            " unknown |               |                |"
        ),
        "",
        "## Figures in one tree only",
        "",
        "| key    | status        |",
        "|:-------|:--------------|",
        "| p/only | only in smoke |",
        "",
        "## Identical figures",
        "",
        "`p/same`, `p/same2`",
        "",
    ]
)


def test_the_markdown_report():
    assert compare_markdown(CONTEXT) == MARKDOWN


def test_a_markdown_report_of_identical_trees():
    same = {
        **CONTEXT,
        "settings": CONTEXT["settings"].iloc[:0],
        "claims": CONTEXT["claims"].iloc[:0],
        "verdicts": VERDICTS[VERDICTS.status != "moved"].assign(status="within noise"),
    }
    text = compare_markdown(same)
    assert "## Settings that differ\n\n(none)\n\n## Claims whose verdict changed\n\n(none)\n\n" in text
    assert "## Figures that moved\n\n" in text and "\n\n(none)\n\n## Figures that changed within" in text
    assert "## Figures in one tree only" not in text
    assert text.endswith("## Identical figures\n\n(none)\n")


@pytest.fixture(scope=shared_scope)
def page():
    return compare_html(CONTEXT)


def test_the_page_opens_with_the_headline_settings_and_claims(page):
    assert "<title>fig4p against smoke</title>" in page and "<h1>fig4p against smoke</h1>" in page
    assert f"<p><strong>{HEADLINE}.</strong></p>" in page
    assert "3 x the numerical-noise envelope (of <code>figures/reference/smoke</code>)" in page
    assert "<tr><th>key</th><th>smoke</th><th>fig4p</th></tr>\n<tr><td>fig4.p</td><td>0.5</td><td>0.6</td></tr>" in page
    assert "<th>measured (smoke)</th>" in page and "<th>measured (fig4p)</th>" in page
    assert (
        "<tr class='fail'><td>L2G</td><td>L2G-5</td><td>loss | accuracy fall</td><td>0.912</td><td>2/2</td>"
        "<td>0.9-0.95</td><td>0.2</td><td>0/2</td><td>0.1-0.3</td><td>holds -&gt; fails</td>"
        "<td>beyond seed spread</td></tr>"
    ) in page
    assert "<tr class='pass'><td>L2G</td><td>L2G-6</td>" in page


def test_the_page_lists_changed_figures_then_identical_ones(page):
    rows = [line for line in page.splitlines() if line.startswith("<tr class=") and "href='#" in line]
    assert [row.split("href='#")[1].split("'")[0] for row in rows] == ["p/moved", "p/noisy", "p/within", "p/only"]
    assert rows[0].startswith("<tr class='fail'>") and rows[2].startswith("<tr class='pass'>")
    assert "<th>seed range (smoke)</th>" in page
    assert "<p class='same'>p/same, p/same2</p>" in page


def test_each_changed_figure_has_its_panels_and_quantities(page):
    moved = page.split("<h2 id='p/moved'>p/moved: moved</h2>")[1].split("<h2 id=")[0]
    assert "<p>Data: smoke solid, fig4p dashed, on one axes per quantity.</p>" in moved
    assert "<img src='images/p/moved-overlay.png'>" in moved and "<img src='images/p/moved-diff.png'>" in moved
    assert "<p>smoke (left) | fig4p (right), on a common canvas.</p>" in moved
    header = "<tr><th>quantity</th><th>deviation</th><th>tolerance</th><th>margin</th><th>envelope</th>"
    assert header + "<th>x_envelope</th></tr>" in moved
    assert "<tr class='pass'><td>image rms</td><td>0</td><td>1</td><td>0</td><td>0</td><td>inf</td></tr>" in moved
    assert "<tr class='fail'><td>y</td><td>1</td><td>0.001</td><td>1e+03</td><td>0</td><td>inf</td></tr>" in moved
    within = page.split("<h2 id='p/within'>p/within: within noise</h2>")[1].split("<h2 id=")[0]
    assert "overlay" not in within and "grey: 1.6% of the pixels" in within
    assert "<td>image rms</td><td>1.75</td><td>7</td><td>0.25</td><td>3.5</td><td>0.5</td>" in within
    only = page.split("<h2 id='p/only'>p/only: only in smoke</h2>")[1]
    assert only.lstrip().startswith("<p>p/only is only in smoke</p>")
    assert "<h2 id='p/same'>" not in page
