"""diff_figures on tiny hand-made figures (8 x 8 PNGs written with PIL, three-row CSVs), so that every
deviation, tolerance and margin is known by hand: the image RMS on the 0-255 scale is
sqrt(sum of squared channel differences / (8 * 8 * 3)), the data tolerance atol + rtol |ref|."""

import math
import os

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from helpers import shared_scope
from replication.diff import SUMMARY_COLUMNS, diff_figures, reference_keys, verdicts_against_reference
from replication.diff.against_reference import external_matches
from replication.diff.deviation import tolerance_reason
from replication.paths import figure_key

IMAGE_TOLERANCE = 5.0
DATA = {"atol": 1e-3, "rtol": 0.0, "columns": {"x": {"atol": 0.0, "rtol": 1e-2}}}
FRAME = pd.DataFrame({"curve": ["a", "a", "b"], "x": [0.5, 1.0, 2.0], "y": [1.0, 2.0, 4.0]})
WHITE = np.full((8, 8, 3), 255, np.uint8)


def pixels(*changes):
    """The white image with ``(row, col, channel, new value)`` changes."""
    image = WHITE.copy()
    for row, col, channel, value in changes:
        image[row, col, channel] = value
    return image


def rms(*differences):
    return math.sqrt(sum(d**2 for d in differences) / WHITE.size)


def figure(folder, key, image=WHITE, data=FRAME, csv=True):
    folder.joinpath(key).parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(image).save(folder / f"{key}.png")
    if csv:
        data.to_csv(folder / f"{key}.csv", index=False, float_format="%.17g")


def record(name):
    return {"path": f"figures/p/{name}.pdf", "paper": "Paper P", "figure": f"Fig. {name}"}


def shifted(column, row, by):
    data = FRAME.copy()
    data.loc[row, column] += by
    return data


@pytest.fixture(scope=shared_scope)
def diffed(tmp_path_factory):
    """References and regenerations, then their diff. Names say what differs from the reference."""
    root = tmp_path_factory.mktemp("diff")
    ref, made = root / "reference", root / "figures"
    cases = {
        "same": (WHITE, FRAME),
        "data_in": (WHITE, shifted("y", 2, 0.5e-3)),  # half the tolerance of y (atol 1e-3)
        "data_out": (WHITE, shifted("y", 2, -2e-3)),  # twice it
        "x_out": (WHITE, shifted("x", 1, 0.03)),  # x has its own rtol: 0.01 x 1.0
        "image_in": (pixels((1, 2, 0, 225)), FRAME),  # RMS 30 / sqrt(192) = 2.2 <= 5
        "image_out": (pixels((1, 2, 0, 0)), FRAME),  # RMS 255 / sqrt(192) = 18.4 > 5
        "label": (WHITE, FRAME.assign(curve=["a", "b", "b"])),
        "resized": (np.full((8, 9, 3), 255, np.uint8), FRAME),
        "wider": (WHITE, FRAME.assign(z=1.0)),
        "longer": (WHITE, pd.concat([FRAME, FRAME.iloc[:1]], ignore_index=True)),
    }
    for name, (image, data) in cases.items():
        figure(ref / "p", name)
        figure(made / "p", name, image, data)
    figure(ref / "p", "gone")  # no longer registered
    figure(made / "p", "new")  # never blessed
    figure(ref / "p", "no_ref_csv", csv=False)
    figure(made / "p", "no_ref_csv")
    figure(ref / "p", "no_new_csv")
    figure(made / "p", "no_new_csv", csv=False)
    figure(ref / "p", "unmade")  # registered, not produced
    names = [*cases, "new", "no_ref_csv", "no_new_csv", "unmade"]
    external = root / "external"
    figure(external / "p", "same_from_the_paper", pixels((0, 0, 1, 0)), csv=False)
    figure(external / "p", "unmade", csv=False)  # no regenerated image to show it beside
    figure(external / "p", "resized", np.zeros((16, 12, 3), np.uint8), csv=False)  # scaled to our height
    (external / "p" / "same.pdf").write_bytes(b"%PDF")  # not a raster image
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        summary = diff_figures([record(n) for n in names], ref, root / "out", IMAGE_TOLERANCE, DATA, external)
    return root, summary, verdicts_against_reference(summary).set_index("key")


def rows(summary, name):
    return summary[summary.key == f"p/{name}"].set_index("quantity")


def test_statuses_and_summary_columns(diffed):
    _, summary, verdicts = diffed
    assert list(summary.columns) == SUMMARY_COLUMNS and summary.passed.dtype == bool
    assert verdicts.status.to_dict() == {
        "p/data_in": "pass",
        "p/data_out": "fail",
        "p/gone": "missing figure",
        "p/image_in": "pass",
        "p/image_out": "fail",
        "p/label": "fail",
        "p/longer": "fail",
        "p/new": "missing reference",
        "p/no_new_csv": "fail",
        "p/no_ref_csv": "fail",
        "p/resized": "fail",
        "p/same": "pass",
        "p/unmade": "missing figure",
        "p/wider": "fail",
        "p/x_out": "fail",
    }
    assert verdicts.passed.to_dict() == {key: status == "pass" for key, status in verdicts.status.items()}
    assert (verdicts.paper == "Paper P").drop("p/gone").all() and verdicts.loc["p/gone", "paper"] == ""
    assert verdicts.loc["p/gone", "figure"] == "" and verdicts.loc["p/same", "figure"] == "Fig. same"


def test_identical_figure(diffed):
    _, summary, verdicts = diffed
    table = rows(summary, "same")
    assert list(table.index) == ["image rms", "curve", "x", "y"]
    assert (table.deviation == 0).all() and (table.margin == 0).all()
    assert table.loc["image rms", "tolerance"] == IMAGE_TOLERANCE
    assert table.loc["image rms", "reason"] == "floor (no envelope measured): 0 x envelope 0 + diff.image_rms 5"
    assert table.loc["y", "tolerance"] == pytest.approx(1e-3)  # atol + 0 x |ref|
    assert verdicts.loc["p/same", "message"] == "image RMS 0 <= 5; data within tolerance"
    assert verdicts.loc["p/same", "margin"] == 0.0 and verdicts.loc["p/same", "worst"] == "image rms"


@pytest.mark.parametrize("name, margin, passed", [("data_in", 0.5, True), ("data_out", 2.0, False)])
def test_data_tolerance_bounds_from_both_sides(diffed, name, margin, passed):
    _, summary, verdicts = diffed
    table = rows(summary, name)
    assert table.loc["y", "deviation"] == pytest.approx(margin * 1e-3, rel=1e-6)
    assert table.loc["y", "tolerance"] == pytest.approx(1e-3, rel=1e-6)
    assert table.loc["y", "margin"] == pytest.approx(margin, rel=1e-6)
    assert table.loc["image rms", "margin"] == 0.0
    assert verdicts.loc[f"p/{name}", "passed"] == passed
    assert verdicts.loc[f"p/{name}", "worst"] == "y"
    assert verdicts.loc[f"p/{name}", "margin"] == pytest.approx(margin, rel=1e-6)


def test_a_columns_own_tolerance(diffed):
    _, summary, verdicts = diffed
    x = rows(summary, "x_out").loc["x"]
    assert x.tolerance == pytest.approx(1e-2) and x.margin == pytest.approx(3.0)  # 0.03 against 0.01 x 1.0
    assert x.reason == "floor (no envelope measured): 0 x envelope 0 + atol 0 + rtol 0.01 |ref|"
    assert "x (1 values" in verdicts.loc["p/x_out", "message"]


@pytest.mark.parametrize("name, deviation, passed", [("image_in", rms(30), True), ("image_out", rms(255), False)])
def test_image_threshold_bounds_from_both_sides(diffed, name, deviation, passed):
    _, summary, verdicts = diffed
    image = rows(summary, name).loc["image rms"]
    assert image.deviation == pytest.approx(deviation, rel=1e-6)
    assert image.tolerance == IMAGE_TOLERANCE
    assert image.margin == pytest.approx(deviation / IMAGE_TOLERANCE, rel=1e-6)
    assert verdicts.loc[f"p/{name}", "passed"] == passed
    assert (rows(summary, name).drop(index="image rms").deviation == 0).all()
    sign = "<=" if passed else ">"
    assert verdicts.loc[f"p/{name}", "message"] == f"image RMS {deviation:.3g} {sign} 5; data within tolerance"


def test_changed_labels_sizes_and_shapes_fail(diffed):
    _, summary, verdicts = diffed
    label = rows(summary, "label").loc["curve"]
    assert label.margin == math.inf and label.reason == "labels: equal as text"
    resized = rows(summary, "resized").loc["image rms"]
    assert math.isnan(resized.deviation) and resized.margin == math.inf
    assert "image size 9x8, reference 8x8" in verdicts.loc["p/resized", "message"]
    for name, message in (("wider", "regenerated only ['z']"), ("longer", "4 rows, reference has 3")):
        table = rows(summary, name)
        assert list(table.index) == ["image rms", "data"]
        assert math.isnan(table.loc["data", "deviation"]) and table.loc["data", "margin"] == math.inf
        assert message in table.loc["data", "reason"] and message in verdicts.loc[f"p/{name}", "message"]
        assert verdicts.loc[f"p/{name}", "worst"] == "data"


def test_missing_figures_references_and_data(diffed):
    root, summary, verdicts = diffed
    messages = verdicts.message.to_dict()
    assert messages["p/gone"] == "the reference set has p/gone, the pipeline no longer registers it"
    assert messages["p/unmade"] == "not produced: figures/p/unmade.png"
    assert (
        messages["p/new"]
        == f"no reference {root / 'reference' / 'p' / 'new.png'}: run `make bless` if the figure is new"
    )
    assert messages["p/no_ref_csv"].endswith(f"; data missing: {root / 'reference' / 'p' / 'no_ref_csv.csv'}")
    assert messages["p/no_new_csv"].endswith("; data missing: figures/p/no_new_csv.csv")
    for name in ("gone", "unmade", "new"):
        (row,) = summary[summary.key == f"p/{name}"].itertuples()
        assert row.quantity == "" and row.reason == row.status and not row.passed
        assert math.isnan(row.deviation) and math.isnan(row.tolerance) and math.isnan(row.margin)
        assert math.isnan(verdicts.loc[f"p/{name}", "margin"]) and verdicts.loc[f"p/{name}", "worst"] == ""


def test_outputs_on_disk(diffed):
    root, summary, verdicts = diffed
    out = root / "out"
    saved = pd.read_csv(out / "summary.csv", keep_default_na=False, na_values=[""])
    assert list(saved.columns) == SUMMARY_COLUMNS and len(saved) == len(summary)
    assert saved.key.tolist() == summary.key.tolist()
    assert saved.passed.tolist() == summary.passed.tolist()
    assert np.allclose(saved.margin, summary.margin, equal_nan=True)
    for name in ("same", "image_out"):
        assert (out / "images" / "p" / f"{name}.png").exists() and (out / "images" / "p" / f"{name}-diff.png").exists()
    assert not (out / "images" / "p" / "gone.png").exists()
    html = (out / "report.html").read_text()
    assert f"Reference set: <code>{root / 'reference'}</code>. 15 figures, 3 pass, 12 fail." in html
    assert "0 x the numerical-noise envelope" in html and "Provenance" not in html


def test_external_images_are_shown_beside_ours(diffed):
    root, _, verdicts = diffed
    html = (root / "out" / "report.html").read_text()
    assert "<h2>p/same</h2><p>Regenerated (left) | same_from_the_paper.png</p>" in html
    assert "<img src='images/external/p/same.png'>" in html and "images/external/p/unmade" not in html
    panel = np.asarray(Image.open(root / "out" / "images" / "external" / "p" / "same.png").convert("RGB"))
    assert panel.shape == (8, 8 + 16 + 8, 3)  # ours | 16 px gap | theirs, at our height
    assert verdicts.loc["p/same", "status"] == "pass"  # not compared with the external image
    # Ours is 8 high and 9 wide; theirs, 16 x 12, is scaled to 8 x 6.
    panel = np.asarray(Image.open(root / "out" / "images" / "external" / "p" / "resized.png").convert("RGB"))
    assert panel.shape == (8, 9 + 16 + 6, 3)
    assert (panel[:, 25:] == 0).all() and (panel[:, 9:25] == 255).all()  # theirs (black) after the white gap


def test_envelope_widens_image_and_data_tolerances(tmp_path, monkeypatch):
    """envelope.csv: y of p/env moves by 0.01 and its image by RMS 10 under numerical noise. A
    regeneration off by 0.02 in y and RMS 18.4 in the image fails with k = 0 and passes with k = 2
    (tolerances 2 x 0.01 + 1e-3 and 5 + 2 x 10)."""
    ref, made = tmp_path / "reference", tmp_path / "figures"
    figure(ref / "p", "env")
    figure(made / "p", "env", pixels((3, 3, 2, 0)), shifted("y", 0, 0.02))
    figure(ref / "p", "plain")
    figure(made / "p", "plain")
    (ref / "envelope.csv").write_text(
        "key,column,envelope,envelope_rel,members\n"
        "p/env,y,0.01,0.01,2\np/env,<image rms>,10,,2\np/env,x,0,0,2\np/plain,y,0.5,0.1,2\n"
    )
    monkeypatch.chdir(tmp_path)
    results = {
        k: diff_figures([record("env"), record("plain")], ref, tmp_path / f"out{k}", IMAGE_TOLERANCE, DATA, None, k)
        for k in (0, 2)
    }
    strict, widened = (verdicts_against_reference(results[k]).set_index("key").passed for k in (0, 2))
    assert not strict["p/env"] and widened["p/env"] and strict["p/plain"] and widened["p/plain"]
    table = rows(results[2], "env")
    assert table.loc["y", "tolerance"] == pytest.approx(2 * 0.01 + 1e-3)
    assert table.loc["y", "margin"] == pytest.approx(0.02 / 0.021)
    assert table.loc["y", "reason"] == "envelope: 2 x envelope 0.01 + atol 0.001 + rtol 0 |ref|"
    image = table.loc["image rms"]
    assert image.tolerance == pytest.approx(IMAGE_TOLERANCE + 2 * 10)
    assert image.deviation == pytest.approx(rms(255)) and image.margin == pytest.approx(rms(255) / 25)
    assert image.reason == "envelope: 2 x envelope 10 + diff.image_rms 5"
    assert table.loc["x", "reason"] == "floor: 2 x envelope 0 + atol 0 + rtol 0.01 |ref|"  # measured, zero
    assert rows(results[0], "env").loc["image rms", "tolerance"] == IMAGE_TOLERANCE
    plain = rows(results[2], "plain").loc["image rms"]
    assert plain.tolerance == IMAGE_TOLERANCE  # no image envelope: nothing added
    assert plain.reason == "floor (no envelope measured): 2 x envelope 0 + diff.image_rms 5"
    assert rows(results[2], "plain").loc["y", "tolerance"] == pytest.approx(2 * 0.5 + 1e-3)  # its own key only
    assert "2 x the numerical-noise envelope" in (tmp_path / "out2" / "report.html").read_text()


@pytest.mark.parametrize("tolerance", [0.0, 0.5])
def test_small_and_zero_image_tolerances(tmp_path, monkeypatch, tolerance):
    """One channel of one pixel off by 1: RMS 1 / sqrt(192) = 0.072; margin 0.144 against 0.5, and
    unbounded against 0 (where only identical images pass, with margin 0)."""
    ref, made = tmp_path / "reference", tmp_path / "figures"
    for name, image in (("same", WHITE), ("moved", pixels((0, 0, 0, 254)))):
        figure(ref / "p", name)
        figure(made / "p", name, image)
    monkeypatch.chdir(tmp_path)
    summary = diff_figures([record("same"), record("moved")], ref, tmp_path / "out", tolerance, DATA)
    assert rows(summary, "same").loc["image rms", "margin"] == 0.0
    moved = rows(summary, "moved").loc["image rms"]
    assert moved.deviation == pytest.approx(rms(1))
    assert moved.margin == (pytest.approx(rms(1) / tolerance) if tolerance else math.inf)


def test_provenances_side_by_side(tmp_path, monkeypatch):
    ref, made = tmp_path / "reference", tmp_path / "figures"
    figure(ref / "p", "same")
    figure(made / "p", "same")
    (ref / "provenance.json").write_text('{"cpu_model": "there", "python": "3.11"}')
    (tmp_path / "run.json").write_text('{"cpu_model": "here", "python": "3.11", "torch_threads": 2}')
    monkeypatch.chdir(tmp_path)
    diff_figures([record("same")], ref, tmp_path / "out", 1.0, DATA, provenance=tmp_path / "run.json")
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<tr class='fail'><td>cpu_model</td><td>there</td><td>here</td></tr>" in html
    assert "<tr><td>python</td><td>3.11</td><td>3.11</td></tr>" in html
    assert "<tr class='fail'><td>torch_threads</td><td></td><td>2</td></tr>" in html
    diff_figures([record("same")], ref, tmp_path / "out2", 1.0, DATA)
    assert (
        "<tr class='fail'><td>cpu_model</td><td>there</td><td></td></tr>"
        in (tmp_path / "out2" / "report.html").read_text()
    )


def test_keys_and_reference_keys(tmp_path):
    assert figure_key("figures/p/fig1.pdf") == "p/fig1"
    assert figure_key("figures/p/sub/fig1.png") == "p/sub/fig1"
    assert figure_key("elsewhere/p/fig1.pdf") == "elsewhere/p/fig1"  # not under figures/: kept whole
    assert reference_keys(tmp_path / "absent") == []
    for name in ("b/two.png", "a/one.png", "a/one.csv", "c/three.csv"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    assert reference_keys(tmp_path) == ["a/one", "b/two"]
    assert reference_keys(str(tmp_path)) == ["a/one", "b/two"]


def test_external_matching(tmp_path):
    names = ("My-Paper/fig4_eq9.png", "My-Paper/fig4.JPG", "My-Paper/fig41.png", "My-Paper/fig4.pdf",
             "other/fig4.png", "My-Paper/fig4 (copy).jpeg", "My-Paper/fig4.jpeg")  # fmt: skip
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    found = [p.relative_to(tmp_path).as_posix() for p in external_matches("my_paper/fig4", tmp_path)]
    assert found == ["My-Paper/fig4 (copy).jpeg", "My-Paper/fig4.JPG", "My-Paper/fig4.jpeg", "My-Paper/fig4_eq9.png"]
    assert external_matches("my_paper/fig4", str(tmp_path)) == [tmp_path / name for name in found]


def test_report_cells_and_quantity_rows():
    from replication.diff.report import cell, report_html

    assert (cell(0.000123456), cell(1234.5), cell(float("nan")), cell(3), cell("a < b")) == (
        "0.000123",
        "1.23e+03",
        "",
        "3",
        "a < b",
    )
    base = {"key": "p/a", "paper": "P & Q", "figure": "Fig. <1>", "status": "fail", "passed": False, "message": "m"}
    summary = pd.DataFrame(
        [
            {**base, "quantity": "at the bound", "deviation": 1.0, "tolerance": 1.0, "margin": 1.0, "reason": "r1"},
            {**base, "quantity": "above", "deviation": 1.5, "tolerance": 1.0, "margin": 1.5, "reason": "r2"},
        ]
    )
    other = {**base, "key": "p/b", "status": "missing figure", "quantity": "", "deviation": float("nan")}
    summary = pd.concat([summary, pd.DataFrame([{**other, "tolerance": float("nan"), "margin": float("nan"),
                                                 "reason": "missing figure"}])], ignore_index=True)  # fmt: skip
    html = report_html(summary, verdicts_against_reference(summary), {"p/a": None}, [], "refs", 1.5, ({}, {}))
    assert "2 figures, 0 pass, 2 fail" in html and "1.5 x the numerical-noise envelope" in html
    assert "<tr class='pass'><td>at the bound</td><td>1</td><td>1</td><td>1</td><td>r1</td></tr>" in html
    assert "<tr class='fail'><td>above</td><td>1.5</td><td>1</td><td>1.5</td><td>r2</td></tr>" in html
    assert "<p>P &amp; Q Fig. &lt;1&gt;. m</p>" in html
    assert "<img src='images/p/a.png'>" in html and "images/p/b.png" not in html  # quantities only when compared
    assert "<td>missing figure</td><td></td><td></td><td>m</td>" in html  # no margin, no worst quantity


def test_verdicts_against_reference_of_any_summary():
    """One row per key in key order, whatever the summary's order; an empty summary has the columns."""
    base = {"paper": "P", "figure": "F", "status": "fail", "passed": False, "message": "m", "tolerance": 1.0}
    summary = pd.DataFrame(
        [
            {**base, "key": "p/b", "quantity": "image rms", "deviation": 0.5, "margin": 0.5, "reason": "r"},
            {**base, "key": "p/a", "quantity": "y", "deviation": 3.0, "margin": 3.0, "reason": "r"},
            {**base, "key": "p/b", "quantity": "y", "deviation": 2.0, "margin": 2.0, "reason": "r"},
        ]
    )
    verdicts = verdicts_against_reference(summary)
    assert verdicts.key.tolist() == ["p/a", "p/b"]
    assert verdicts.set_index("key").worst.to_dict() == {"p/a": "y", "p/b": "y"}
    assert verdicts.set_index("key").margin.to_dict() == {"p/a": 3.0, "p/b": 2.0}
    empty = verdicts_against_reference(summary.iloc[:0])
    assert empty.empty and list(empty.columns) == [
        "key", "paper", "figure", "status", "passed", "margin", "worst", "message",
    ]  # fmt: skip


def test_a_tie_between_envelope_and_floor_is_named_the_floor():
    assert tolerance_reason(2.0, 0.25, 0.5, "floor text", True) == "floor: 2 x envelope 0.25 + floor text"
    assert tolerance_reason(2.0, 0.5, 0.5, "floor text", True).startswith("envelope: ")
    assert tolerance_reason(2.0, 0.5, 0.5, "floor text", False).startswith("floor (no envelope measured): ")


def test_a_diff_of_nothing_but_missing_figures_has_numeric_columns(tmp_path, monkeypatch):
    ref = tmp_path / "reference"
    figure(ref / "p", "gone")
    monkeypatch.chdir(tmp_path)
    summary = diff_figures([record("unmade")], ref, tmp_path / "out", 1.0, DATA)
    assert summary.status.tolist() == ["missing figure", "missing figure"]
    for column in ("deviation", "tolerance", "margin"):
        assert summary[column].dtype == float and summary[column].isna().all(), column
    assert "2 figures, 0 pass, 2 fail" in (tmp_path / "out" / "report.html").read_text()


def test_make_diff_prints_its_verdict_after_the_run(tmp_path, capsys):
    """One line naming the figures that differ and by how much; printed after the run only when the
    check wrote it during the run, or the run succeeded (the check is then up to date)."""
    from replication.diff.verdict import VERDICT_FILE, main, verdict_line

    verdicts = pd.DataFrame(
        {
            "key": ["p/a", "p/b", "p/c"],
            "status": ["pass", "fail", "missing figure"],
            "passed": [True, False, False],
            "margin": [0.5, 3.25, np.nan],
            "worst": ["image rms", "loss", ""],
        }
    )
    line = verdict_line(verdicts, "figures/reference/smoke", "figures/diff/report.html")
    assert line == (
        "make diff: 2 of 3 figures differ from figures/reference/smoke: p/b (fail, loss at 3.25 x tolerance), "
        "p/c (missing figure); report: figures/diff/report.html"
    )
    passing = verdict_line(verdicts[verdicts.passed], "figures/reference/smoke", "r.html")
    assert passing == "make diff: all 1 figures within tolerance of figures/reference/smoke; report: r.html"
    (tmp_path / VERDICT_FILE).write_text(line + "\n")
    written = (tmp_path / VERDICT_FILE).stat().st_mtime
    assert main([str(tmp_path), "--since", str(written - 1), "--status", "2"]) == 2  # the check failed in this run
    assert (
        main([str(tmp_path), "--since", str(written + 60), "--status", "0"]) == 0
    )  # nothing to redo: the last verdict stands
    assert capsys.readouterr().out == f"{line}\n{line}\n"
    assert main([str(tmp_path), "--since", str(written + 60), "--status", "1"]) == 1  # the run stopped before its check
    assert main([str(tmp_path / "never"), "--since", "0", "--status", "1"]) == 1
    stopped = "make diff: no verdict: the run stopped before the comparison (its error is above)\n"
    assert capsys.readouterr().out == stopped * 2


def test_a_verdict_written_the_moment_the_run_started_is_this_runs(tmp_path, capsys):
    """On a file system whose times have whole seconds, a check that wrote its verdict in the second
    the run started (``--since`` a whole second) leaves it stamped at exactly that time."""
    from replication.diff.verdict import VERDICT_FILE, print_verdict

    (tmp_path / VERDICT_FILE).write_text("make diff: 1 of 1 figures differ\n")
    os.utime(tmp_path / VERDICT_FILE, (1_700_000_000, 1_700_000_000))
    assert print_verdict(tmp_path, 1_700_000_000.0, 2) == 2
    assert print_verdict(tmp_path, 1_700_000_001.0, 2) == 2  # written before the run: a stale verdict
    stopped = "make diff: no verdict: the run stopped before the comparison (its error is above)"
    assert capsys.readouterr().out.splitlines() == ["make diff: 1 of 1 figures differ", stopped]
