"""Sweeps in this process: the sweep file's checks, the grid of points and their names, the driver
Snakefile, the summary's table, figure and files, and ``main`` with the tree layout and the Snakemake
run stood in for."""

from __future__ import annotations

import json
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml

from replication import pipeline_run, sweeps
from replication.errors import ConfigError
from replication.paths import PROJECT_ROOT

LR = "section.optimizer.lr"
WIDTH = "section.model.width"


def write_sweep(tmp_path, sweep: dict, name: str = "demo.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(sweep, sort_keys=False))
    return path


# --- the sweep file ---------------------------------------------------------------------------


def test_a_sweep_file_is_read_as_written(tmp_path):
    sweep = {
        "configfiles": ["config/smoke.yaml"],
        "settings": {LR: [0.001, 0.002], WIDTH: [8]},
        "claims": ["C-1"],
        "measurements": [{"name": "low", "file": "f.csv", "column": "loss", "stat": stat} for stat in sweeps.STATS],
    }
    assert sweeps.read_sweep("demo", write_sweep(tmp_path, sweep)) == sweep
    assert sweeps.read_sweep("one", write_sweep(tmp_path, {"settings": {LR: [1]}})) == {"settings": {LR: [1]}}


def test_without_a_path_the_sweep_is_read_from_the_projects_sweep_files():
    sweep = sweeps.read_sweep("smoke-lr")
    assert sweep == yaml.safe_load((PROJECT_ROOT / "config" / "sweeps" / "smoke-lr.yaml").read_text())
    assert sweeps.SWEEP_FILES == PROJECT_ROOT / "config" / "sweeps"
    with pytest.raises(ConfigError, match="no such file"):
        sweeps.read_sweep("no-such-sweep")


def test_a_sweep_name_must_be_a_variant_name(tmp_path):
    with pytest.raises(ConfigError, match="variant name 'a b'"):
        sweeps.read_sweep("a b", write_sweep(tmp_path, {"settings": {LR: [1]}}))


def test_an_unknown_key_is_named_with_the_allowed_ones(tmp_path):
    path = write_sweep(tmp_path, {"settings": {LR: [1]}, "zeta": 1, "alpha": 2})
    with pytest.raises(ConfigError) as error:
        sweeps.read_sweep("demo", path)
    assert str(error.value) == "sweep demo: key 'alpha'; allowed: configfiles, settings, claims, measurements"


@pytest.mark.parametrize(
    "settings",
    [None, {}, {LR: [1], WIDTH: [2], "c.d": [3]}, {LR: 0.1}, {LR: []}, {LR: [1], WIDTH: []}, {LR: [1], WIDTH: 2}],
)
def test_one_or_two_settings_each_with_a_list_of_values(tmp_path, settings):
    path = write_sweep(tmp_path, {"settings": settings} if settings is not None else {"claims": ["C-1"]})
    with pytest.raises(ConfigError) as error:
        sweeps.read_sweep("demo", path)
    assert str(error.value) == "sweep demo: 'settings': allowed: one or two keys, each with a list of values"


@pytest.mark.parametrize(
    "measurement",
    [
        {"name": "n", "file": "f.csv", "column": "c"},
        {"name": "n", "file": "f.csv", "column": "c", "stat": "min", "extra": 1},
        {"name": "n", "file": "f.csv", "column": "c", "stat": "sum"},
    ],
)
def test_a_measurement_has_its_four_fields_and_a_known_statistic(tmp_path, measurement):
    path = write_sweep(tmp_path, {"settings": {LR: [1]}, "measurements": [measurement]})
    with pytest.raises(ConfigError) as error:
        sweeps.read_sweep("demo", path)
    assert str(error.value) == (
        f"sweep demo: measurement {measurement}: allowed: name, file, column and stat (mean, median, min, max, last)"
    )


# --- the points and their command lines ---------------------------------------------------------


def test_the_points_are_the_grid_of_the_settings_named_by_their_last_key():
    sweep = {"settings": {LR: [0.001, 0.002], WIDTH: [8, 16]}}
    assert sweeps.points("demo", sweep) == [
        {"name": "demo-lr=0.001,width=8", "values": {LR: 0.001, WIDTH: 8}},
        {"name": "demo-lr=0.001,width=16", "values": {LR: 0.001, WIDTH: 16}},
        {"name": "demo-lr=0.002,width=8", "values": {LR: 0.002, WIDTH: 8}},
        {"name": "demo-lr=0.002,width=16", "values": {LR: 0.002, WIDTH: 16}},
    ]
    assert sweeps.points("one", {"settings": {"window": [15]}}) == [{"name": "one-window=15", "values": {"window": 15}}]


def test_a_point_whose_name_is_no_variant_name_is_an_error():
    with pytest.raises(ConfigError, match="variant name 'demo-mode=a b'"):
        sweeps.points("demo", {"settings": {"x.mode": ["a b"]}})


def test_a_points_values_are_assignments_in_json():
    values = {LR: 0.001, "a.mode": "fast", "a.sizes": [1, 2], "a.on": True, "a.none": None}
    assert sweeps.assignments(values) == [
        f"{LR}=0.001",
        'a.mode="fast"',
        "a.sizes=[1, 2]",
        "a.on=true",
        "a.none=null",
    ]


def test_the_driver_includes_the_workflow_once_per_point_under_its_prefix(tmp_path):
    trees = [("demo-lr=1", tmp_path / "one.json"), ("demo-lr=2", tmp_path / "two.json")]
    snakefile = str(sweeps.SNAKEFILE)
    assert sweeps.SNAKEFILE == PROJECT_ROOT / "workflow" / "Snakefile"
    assert sweeps.driver_text(trees) == "\n".join(
        [
            "# Written by replication.sweeps: the workflow once per point of the sweep, one DAG.",
            "import json",
            "",
            "module point0:",
            f"    snakefile: {snakefile!r}",
            f"    config: json.loads(open({str(tmp_path / 'one.json')!r}).read())",
            "    prefix: 'demo-lr=1'",
            "",
            "use rule * from point0 as point0_*",
            "",
            "module point1:",
            f"    snakefile: {snakefile!r}",
            f"    config: json.loads(open({str(tmp_path / 'two.json')!r}).read())",
            "    prefix: 'demo-lr=2'",
            "",
            "use rule * from point1 as point1_*",
            "",
            "rule sweep:",
            "    default_target: True",
            "    input: ['demo-lr=1/figures/all', 'demo-lr=2/figures/all']",
            "    localrule: True",
            "",
        ]
    )


# --- the summary --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stat", "expected"), [("mean", 3.75), ("median", 3.5), ("min", 1.0), ("max", 7.0), ("last", 3.0)]
)
def test_a_measurement_is_a_statistic_of_the_columns_values_that_are_there(stat, expected):
    frame = pd.DataFrame({"loss": [4.0, np.nan, 7.0, 1.0, 3.0, np.nan], "other": [9.0] * 6})
    value = sweeps._statistic(frame, "loss", stat)
    assert value == expected and type(value) is float


def test_a_column_without_values_measures_nan():
    for stat in sweeps.STATS:
        assert math.isnan(sweeps._statistic(pd.DataFrame({"loss": [np.nan, np.nan]}), "loss", stat))


def lay_out_point(root, name: str, claims: list[tuple[str, float, bool]], losses: list[float]) -> None:
    """A finished point's tree: its claims table and one figure's data."""
    tree = root / "variants" / name
    (tree / "results").mkdir(parents=True)
    (tree / "figures").mkdir()
    pd.DataFrame(claims, columns=["claim_id", "measured", "holds"]).to_csv(tree / "results" / "claims.csv", index=False)
    pd.DataFrame({"step": range(len(losses)), "loss": losses}).to_csv(tree / "figures" / "curve.csv", index=False)


CLAIMS_LOW = [("C-1", 0.5, True), ("C-5 (5a)", 1.5, False), ("C-5 (5b)", 2.5, True), ("C-50", 9.0, True)]
CLAIMS_HIGH = [("C-1", 0.7, False), ("C-5 (5a)", 1.0, True), ("C-5 (5b)", 3.5, False), ("C-50", 9.0, False)]
SWEEP = {
    "settings": {LR: [1, 2]},
    "claims": ["C-5", "C-1"],
    "measurements": [
        {"name": "lowest loss", "file": "figures/curve.csv", "column": "loss", "stat": "min"},
        {"name": "final loss", "file": "figures/curve.csv", "column": "loss", "stat": "last"},
    ],
}


@pytest.fixture
def two_points(tmp_path):
    grid = sweeps.points("demo", SWEEP)
    lay_out_point(tmp_path, grid[0]["name"], CLAIMS_LOW, [3.0, 1.0, 2.0])
    lay_out_point(tmp_path, grid[1]["name"], CLAIMS_HIGH, [4.0, 0.5, 0.75])
    return grid


def test_the_summary_has_a_row_per_point_with_its_claims_and_measurements(tmp_path, two_points):
    summary = sweeps.summary_table("demo", SWEEP, two_points, tmp_path)
    assert summary.to_dict("records") == [
        {"point": "demo-lr=1", LR: 1, "C-5 (5a) measured": 1.5, "C-5 (5a) holds": False, "C-5 (5b) measured": 2.5,
         "C-5 (5b) holds": True, "C-1 measured": 0.5, "C-1 holds": True, "lowest loss": 1.0, "final loss": 2.0},
        {"point": "demo-lr=2", LR: 2, "C-5 (5a) measured": 1.0, "C-5 (5a) holds": True, "C-5 (5b) measured": 3.5,
         "C-5 (5b) holds": False, "C-1 measured": 0.7, "C-1 holds": False, "lowest loss": 0.5, "final loss": 0.75},
    ]  # fmt: skip
    assert summary["C-1 holds"].dtype == bool


def test_a_summary_without_claims_or_measurements_has_the_points_only(tmp_path, two_points):
    summary = sweeps.summary_table("demo", {"settings": SWEEP["settings"]}, two_points, tmp_path)
    assert summary.to_dict("records") == [{"point": "demo-lr=1", LR: 1}, {"point": "demo-lr=2", LR: 2}]


def test_claim_ids_are_read_as_text(tmp_path):
    """Claims numbered like numbers ("5", "6") stay the text they are in the sweep file."""
    grid = [{"name": "p", "values": {LR: 1}}]
    lay_out_point(tmp_path, "p", [("5", 1.0, True), ("6", 2.0, False)], [1.0])
    summary = sweeps.summary_table("demo", {"claims": ["6"]}, grid, tmp_path)
    assert summary.to_dict("records") == [{"point": "p", LR: 1, "6 measured": 2.0, "6 holds": False}]


def test_a_claim_not_in_a_points_table_is_an_error_naming_the_table(tmp_path, two_points):
    with pytest.raises(ValueError) as error:
        sweeps.summary_table("demo", {"claims": ["C-5 (5c)"]}, two_points, tmp_path)
    tree = tmp_path / "variants" / "demo-lr=1"
    assert str(error.value) == f"sweep demo: claim 'C-5 (5c)' is not in {tree}/results/claims.csv"
    with pytest.raises(ValueError, match="claim 'C-'"):
        sweeps.summary_table("demo", {"claims": ["C-"]}, two_points, tmp_path)


def panels(fig):
    return {axis.get_title(): axis for axis in fig.axes}


def test_the_summary_figure_draws_each_column_against_the_first_setting():
    summary = pd.DataFrame(
        {"point": ["a", "b", "c"], LR: [0.1, 0.2, 0.3], "C-1 holds": [True, False, True], "loss": [3.0, "x", 1.0]}
    )
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        fig = sweeps.draw_summary("demo", summary, [LR])
        title_size = fig.axes[0].title.get_fontsize()
    try:
        assert title_size == 10  # the project's style
        assert list(panels(fig)) == ["C-1 holds", "loss"]
        assert tuple(fig.get_size_inches()) == pytest.approx((7.2, 3.0))
        assert fig._suptitle.get_text() == "sweep demo" and fig._suptitle.get_fontsize() == 10
        holds, loss = panels(fig)["C-1 holds"], panels(fig)["loss"]
        for axis in (holds, loss):
            assert axis.get_xlabel() == "lr"
            assert axis.get_legend() is None
            (line,) = axis.get_lines()
            assert list(line.get_xdata()) == [0.1, 0.2, 0.3]
            assert (line.get_marker(), line.get_linestyle()) == ("o", "-")
        assert list(holds.get_lines()[0].get_ydata()) == [1, 0, 1]
        assert [label.get_text() for label in holds.get_yticklabels()] == ["fails", "holds"]
        assert list(holds.get_yticks()) == [0, 1]
        assert "fails" not in [label.get_text() for label in loss.get_yticklabels()]
        y = loss.get_lines()[0].get_ydata()
        assert y[0] == 3.0 and math.isnan(y[1]) and y[2] == 1.0  # what is no number is left out
    finally:
        matplotlib.pyplot.close(fig)


def test_with_two_settings_each_value_of_the_second_is_a_line():
    summary = pd.DataFrame(
        {"point": list("abcd"), LR: [1, 2, 1, 2], WIDTH: [8, 8, 16, 16], "loss": [4.0, 3.0, 2.0, 1.0]}
    )
    fig = sweeps.draw_summary("grid", summary, [LR, WIDTH])
    try:
        (axis,) = fig.axes
        assert axis.get_title() == "loss" and axis.get_xlabel() == "lr"
        assert [(list(line.get_xdata()), list(line.get_ydata())) for line in axis.get_lines()] == [
            ([1, 2], [4.0, 3.0]),
            ([1, 2], [2.0, 1.0]),
        ]
        assert [text.get_text() for text in axis.get_legend().get_texts()] == ["width=8", "width=16"]
        assert tuple(fig.get_size_inches()) == pytest.approx((3.6, 3.0))
    finally:
        matplotlib.pyplot.close(fig)


def test_a_summary_of_the_points_only_is_one_empty_panel():
    fig = sweeps.draw_summary("bare", pd.DataFrame({"point": ["a"], LR: [1]}), [LR])
    try:
        (axis,) = fig.axes
        assert axis.get_lines() == [] and tuple(fig.get_size_inches()) == pytest.approx((3.6, 3.0))
    finally:
        matplotlib.pyplot.close(fig)


def test_summarize_writes_the_table_the_figure_and_the_page(tmp_path, two_points, monkeypatch):
    out = tmp_path / "sweeps" / "demo"
    sweep = {**SWEEP, "claims": ["C-1"], "measurements": SWEEP["measurements"][:1]}
    drawn, draw = [], sweeps.draw_summary
    monkeypatch.setattr(sweeps, "draw_summary", lambda *args: drawn.append(draw(*args)) or drawn[-1])
    open_before = matplotlib.pyplot.get_fignums()  # other tests in this process may leave figures open
    summary = sweeps.summarize("demo", sweep, two_points, tmp_path, out)
    (fig,) = drawn
    assert fig._suptitle.get_text() == "sweep demo" and [axis.get_xlabel() for axis in fig.axes] == ["lr"] * 3
    assert summary.equals(sweeps.summary_table("demo", sweep, two_points, tmp_path))
    assert pd.read_csv(out / "summary.csv").equals(summary)
    # Three panels at 3.6 x 3 inches, 120 dots per inch.
    assert matplotlib.image.imread(out / "summary.png").shape[:2] == (360, 1296)
    assert (out / "summary.md").read_text() == (
        "# Sweep demo\n\n"
        "| point     | section.optimizer.lr   | C-1 measured   | C-1 holds   | lowest loss   |\n"
        "|:----------|:-----------------------|:---------------|:------------|:--------------|\n"
        "| demo-lr=1 | 1                      | 0.5            | True        | 1.0           |\n"
        "| demo-lr=2 | 2                      | 0.7            | False       | 0.5           |\n"
        "\n![summary](summary.png)\n"
    )
    assert matplotlib.pyplot.get_fignums() == open_before  # the figure is closed once saved


def test_summarize_stops_at_a_claim_a_point_lacks_and_writes_nothing(tmp_path, two_points):
    with pytest.raises(ValueError, match="^sweep demo: claim 'C-9' is not in "):
        sweeps.summarize("demo", {**SWEEP, "claims": ["C-9"]}, two_points, tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- main ---------------------------------------------------------------------------------------


class Build:
    """Stands in for laying out each point's tree and for the one Snakemake run over all of them."""

    def __init__(self, root, code: int = 0, bad_point: str | None = None):
        self.root, self.code, self.bad_point = root, code, bad_point
        self.prepared, self.runs = [], []

    def prepare(self, name, configfiles, assignments, root, prefix, base=None):
        if name == self.bad_point:
            raise ConfigError(f"{assignments[0]}: not a setting")
        self.prepared.append((name, configfiles, assignments, root, prefix, base))
        tree = root / "variants" / name
        tree.mkdir(parents=True, exist_ok=True)
        return tree, tree / "overlay.yaml", {"values": assignments, "name": name}  # keys out of order

    def run_pipeline(self, argv):
        self.runs.append(argv)
        for index, (name, *_) in enumerate(self.prepared):
            lay_out_point(self.root, name, [("C-1", index / 2, index == 0)], [5.0, 2.0 + index])
        return self.code


@pytest.fixture
def build(tmp_path, monkeypatch):
    build = Build(tmp_path)
    monkeypatch.setattr(sweeps, "prepare", build.prepare)
    monkeypatch.setattr(pipeline_run, "main", build.run_pipeline)
    return build


def sweep_file(tmp_path):
    return write_sweep(
        tmp_path,
        {
            "configfiles": ["config/smoke.yaml"],
            "settings": {LR: [1, 2]},
            "claims": ["C-1"],
            "measurements": [{"name": "final loss", "file": "figures/curve.csv", "column": "loss", "stat": "last"}],
        },
        "demo-sweep.yaml",
    )


def test_main_builds_every_point_in_one_run_and_summarizes_them(tmp_path, build, capsys):
    argv = ["demo", "--file", str(sweep_file(tmp_path)), "--root", str(tmp_path), "--base", "reference/smoke"]
    assert sweeps.main([*argv, "--configfile", "extra.yaml", "--", "--cores", "2"]) == 0
    smoke = str(PROJECT_ROOT / "config" / "smoke.yaml")
    assert build.prepared == [
        ("demo-lr=1", [smoke, "extra.yaml"], [f"{LR}=1"], tmp_path, "demo-lr=1/", "reference/smoke"),
        ("demo-lr=2", [smoke, "extra.yaml"], [f"{LR}=2"], tmp_path, "demo-lr=2/", "reference/smoke"),
    ]
    variants = tmp_path / "variants"
    for name in ("demo-lr=1", "demo-lr=2"):  # the resolved config each point's module reads
        config = (variants / name / "config.json").read_text()
        assert config == json.dumps({"name": name, "values": [f"{LR}={name[-1]}"]}, sort_keys=True)
    driver = variants / "demo.sweep.smk"
    trees = [(name, (variants / name / "config.json").resolve()) for name in ("demo-lr=1", "demo-lr=2")]
    assert driver.read_text() == sweeps.driver_text(trees)
    assert build.runs == [["--directory", str(variants), "--snakefile", str(driver.resolve()), "--", "--cores", "2"]]
    out = tmp_path / "sweeps" / "demo"
    summary = sweeps.summary_table(
        "demo",
        sweeps.read_sweep("demo", sweep_file(tmp_path)),
        sweeps.points("demo", {"settings": {LR: [1, 2]}}),
        tmp_path,
    )
    assert pd.read_csv(out / "summary.csv").to_dict("records") == [
        {"point": "demo-lr=1", LR: 1, "C-1 measured": 0.0, "C-1 holds": True, "final loss": 2.0},
        {"point": "demo-lr=2", LR: 2, "C-1 measured": 0.5, "C-1 holds": False, "final loss": 3.0},
    ]
    assert (out / "summary.png").is_file() and (out / "summary.md").read_text().startswith("# Sweep demo\n\n")
    assert capsys.readouterr().out == (
        summary.to_string(index=False) + "\n"
        f"sweep demo: 2 points; summary in {out}/summary.csv, summary.png, summary.md\n"
    )


def test_main_under_make_names_the_command_that_resumes(tmp_path, build):
    argv = ["demo", "--file", str(sweep_file(tmp_path)), "--root", str(tmp_path), "--make-goal", "sweep"]
    assert sweeps.main([*argv, "--", "--cores", "3"]) == 0
    assert build.runs[0][4:9] == ["--make-goal", "sweep", "--resume-command", "make sweep SWEEP=demo CORES=3", "--"]
    assert [prepared[-1] for prepared in build.prepared] == [None, None]  # no --base: the closest tree


def test_a_dry_run_lays_out_the_points_and_summarizes_nothing(tmp_path, build, capsys):
    argv = ["demo", "--file", str(sweep_file(tmp_path)), "--root", str(tmp_path), "--dry-run"]
    assert sweeps.main(argv) == 0
    assert build.runs[0][-2:] == ["--", "--dry-run"]
    assert len(build.prepared) == 2 and not (tmp_path / "sweeps").exists()
    assert capsys.readouterr().out == ""


def test_a_failed_run_is_its_exit_code_and_no_summary(tmp_path, build, capsys):
    build.code = 3
    argv = ["demo", "--file", str(sweep_file(tmp_path)), "--root", str(tmp_path)]
    assert sweeps.main(argv) == 3
    assert not (tmp_path / "sweeps").exists() and capsys.readouterr().out == ""


def test_a_bad_sweep_or_point_is_one_line_and_nothing_runs(tmp_path, build, capsys):
    bad = write_sweep(tmp_path, {"settings": {LR: []}})
    assert sweeps.main(["demo", "--file", str(bad), "--root", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        "Invalid config: sweep demo: 'settings': allowed: one or two keys, each with a list of values\n"
    )
    build.bad_point = "demo-lr=2"
    assert sweeps.main(["demo", "--file", str(sweep_file(tmp_path)), "--root", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"Invalid config: {LR}=2: not a setting\n"
    assert build.runs == [] and not (tmp_path / "variants" / "demo.sweep.smk").exists()


def test_the_help_names_the_sweep_file_and_every_option(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # no line wrapped
    with pytest.raises(SystemExit) as stop:
        sweeps.main(["--help"])
    assert stop.value.code == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    for line in (
        "name config/sweeps/<name>.yaml",
        "under the points (after the sweep's own)",
        "--file FILE the sweep file (default: config/sweeps/<name>.yaml)",
        "--base BASE the tree to seed new points from (default: the closest one)",
        "--root ROOT the project's tree; points go to <root>/variants",
        "--dry-run lay out the points and print Snakemake's job list",
    ):
        assert line in lines
