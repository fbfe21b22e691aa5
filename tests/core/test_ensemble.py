"""Numerical-noise envelopes (replication.diff.envelopes): the spread of a perturbed member's data and
image against the base run, the envelope file, and the members' Snakemake runs (a fake process
here: the command, the environment and the cost line are checked, nothing is run)."""

import io
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from replication.diff import ensemble
from replication.diff.ensemble import run_ensemble
from replication.diff.envelopes import (
    ENVELOPE_COLUMNS,
    IMAGE_COLUMN,
    column_spread,
    figure_envelope,
    measure_envelope,
    read_envelope,
    write_envelope,
)
from replication.kernels import parse_members
from replication.manifest import manifest_figures


def test_manifest_figures_are_the_pdfs_of_figures_all(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "all").write_text(
        "path\tsha256\tpaper\tfigure\n"
        "figures/a/fig1.pdf\tx\tA\tFig. 1\n"
        "figures/a/table1.md\tx\tA\tTable 1\n"
        "figures/b/fig2.pdf\tx\tB\tFig. 2\n"
        "figures/claims.md\tx\tall\tclaims report\n"
    )
    assert manifest_figures(tmp_path) == ["figures/a/fig1.pdf", "figures/b/fig2.pdf"]
    assert manifest_figures(str(tmp_path)) == ["figures/a/fig1.pdf", "figures/b/fig2.pdf"]


def test_column_spread_by_hand():
    base = pd.DataFrame({"curve": ["a", "b", "c"], "x": [1.0, 100.0, -4.0], "n": [1, 2, 3]})
    member = pd.DataFrame({"curve": ["a", "b", "c"], "x": [1.5, 101.0, -4.0], "n": [1, 2, 3]})
    spread = column_spread(base, member)
    # x: errors 0.5, 1, 0; relative 0.5, 0.01, 0. The largest of each come from different rows.
    assert spread == {"x": (1.0, 0.5), "n": (0.0, 0.0)}  # text columns have no spread
    assert column_spread(member, base)["x"] == (1.0, pytest.approx(0.5 / 1.5))  # relative to the base


def test_column_spread_of_true_false_columns():
    """pandas counts booleans as numbers: a flag that flips moves by 1 (relative: unbounded from False)."""
    base = pd.DataFrame({"fitted": [True, False, True]})
    assert column_spread(base, pd.DataFrame({"fitted": [True, True, False]})) == {"fitted": (1.0, math.inf)}
    assert column_spread(base, base) == {"fitted": (0.0, 0.0)}


@pytest.mark.filterwarnings("error")  # no RuntimeWarning from 0 / 0 or x / 0 in the job's log
def test_column_spread_of_zeros_and_nans():
    base = pd.DataFrame({"zero": [0.0, 0.0], "nan": [np.nan, 2.0], "gone": [1.0, 2.0], "neg": [-2.0, -8.0]})
    member = pd.DataFrame({"zero": [0.0, 1e-9], "nan": [np.nan, 2.0], "gone": [np.nan, 2.0], "neg": [-3.0, -8.0]})
    spread = column_spread(base, member)
    assert spread["zero"] == (1e-9, math.inf)  # moved away from an exact zero: relative change unbounded
    assert spread["nan"] == (0.0, 0.0)  # NaN where the base has NaN: no change
    assert spread["gone"] == (math.inf, math.inf)  # a value that became NaN: unbounded
    assert spread["neg"] == (1.0, 0.5)  # sizes, not signs


@pytest.mark.filterwarnings("error")
def test_column_spread_of_infinities():
    base = pd.DataFrame({"to_inf": [1.0, 2.0], "same_inf": [np.inf, -np.inf], "flip": [np.inf, 0.0]})
    member = pd.DataFrame({"to_inf": [np.inf, 2.0], "same_inf": [np.inf, -np.inf], "flip": [-np.inf, 0.0]})
    spread = column_spread(base, member)
    assert spread["to_inf"] == (math.inf, math.inf)  # unbounded: inf, not the largest float
    assert spread["same_inf"] == (0.0, 0.0)  # equal infinities: no change
    assert spread["flip"] == (math.inf, math.inf)


def test_column_spread_of_no_rows_and_of_text_turned_numeric():
    empty = pd.DataFrame({"x": pd.Series([], dtype=float)})
    assert column_spread(empty, empty) == {"x": (0.0, 0.0)}
    text = pd.DataFrame({"x": ["a", "b"]})
    assert column_spread(text, pd.DataFrame({"x": [1.0, 2.0]})) == {}
    assert column_spread(pd.DataFrame({"x": [1.0, 2.0]}), text) == {}


def test_column_spread_refuses_a_changed_shape():
    base = pd.DataFrame({"x": [1.0, 2.0], "y": [0.0, 0.0]})
    with pytest.raises(ValueError) as error:
        column_spread(base, base.iloc[:1])
    assert str(error.value) == (
        "a perturbed member changed the shape of the data: columns ['x', 'y'], 1 rows; base ['x', 'y'], 2 rows"
    )
    with pytest.raises(ValueError, match=r"columns \['y', 'x'\], 2 rows; base \['x', 'y'\], 2 rows"):
        column_spread(base, base[["y", "x"]])
    with pytest.raises(ValueError, match=r"columns \['x'\], 2 rows"):
        column_spread(base, base[["x"]])


def write_figure(folder: Path, key: str, data: pd.DataFrame) -> None:
    csv = folder / "figures" / f"{key}.csv"
    csv.parent.mkdir(parents=True, exist_ok=True)
    data.to_csv(csv, index=False, float_format="%.17g")
    (folder / "figures" / f"{key}.png").write_text(f"image of {folder.name}")  # read by the fake RMS


def test_measure_envelope(tmp_path, monkeypatch):
    """Three figures, two members. m1 moves y of fig1 by 0.1 and its image by RMS 2; m2 moves y by
    0.3 (relative 0.3 / 2) and x by 1e-3, and its image by RMS 1. fig2 only m1 made; fig3 none."""
    base, m1, m2 = tmp_path / "base", tmp_path / "m1", tmp_path / "m2"
    (base / "figures").mkdir(parents=True)
    (base / "figures" / "all").write_text(
        "path\tsha256\tpaper\tfigure\n"
        "figures/p/fig3.pdf\tx\tP\t3\nfigures/p/fig1.pdf\tx\tP\t1\nfigures/p/fig2.pdf\tx\tP\t2\nfigures/p/t.md\tx\tP\tt\n"
    )
    fig1 = pd.DataFrame({"curve": ["a", "a"], "x": [1.0, 2.0], "y": [1.0, 2.0]})
    write_figure(base, "p/fig1", fig1)
    write_figure(m1, "p/fig1", fig1.assign(y=[1.1, 2.0]))
    write_figure(m2, "p/fig1", fig1.assign(x=[1.0, 2.001], y=[1.0, 2.3]))
    fig2 = pd.DataFrame({"v": [5.0]})
    write_figure(base, "p/fig2", fig2)
    write_figure(m1, "p/fig2", fig2)
    write_figure(base, "p/fig3", fig2)
    rms = {("m1", "fig1"): 2.0, ("m2", "fig1"): 1.0, ("m1", "fig2"): 0.0}
    seen = []

    def fake_rms(actual, expected):
        seen.append((Path(actual), Path(expected)))
        assert Path(expected).read_text() == "image of base"
        return rms[(Path(actual).parents[2].name, Path(actual).stem)]  # <member>/figures/p/<figure>.png

    frame = measure_envelope(base, [m1, str(m2)], fake_rms)
    assert list(frame.columns) == ENVELOPE_COLUMNS
    rows = {(r.key, r.column): (r.envelope, r.envelope_rel, r.members) for r in frame.itertuples()}
    assert set(rows) == {
        ("p/fig1", "x"),
        ("p/fig1", "y"),
        ("p/fig1", IMAGE_COLUMN),
        ("p/fig2", "v"),
        ("p/fig2", IMAGE_COLUMN),
    }
    assert rows[("p/fig1", "y")] == (pytest.approx(0.3), pytest.approx(0.15), 2)
    assert rows[("p/fig1", "x")] == (pytest.approx(1e-3), pytest.approx(5e-4), 2)
    envelope, relative, members = rows[("p/fig1", IMAGE_COLUMN)]
    assert (envelope, members) == (2.0, 2) and math.isnan(relative)  # no relative RMS
    assert rows[("p/fig2", "v")] == (0.0, 0.0, 1)
    assert rows[("p/fig2", IMAGE_COLUMN)][::2] == (0.0, 1)
    assert sorted(seen) == sorted(
        (folder / "figures" / f"p/{name}.png", base / "figures" / f"p/{name}.png")
        for folder, name in ((m1, "fig1"), (m2, "fig1"), (m1, "fig2"))
    )
    # The members' order does not matter: the largest of each, whichever member moved it most.
    reversed_order = measure_envelope(base, [m2, m1], fake_rms)
    pd.testing.assert_frame_equal(
        reversed_order.sort_values(["key", "column"], ignore_index=True),
        frame.sort_values(["key", "column"], ignore_index=True),
    )
    assert measure_envelope(base, [], fake_rms).empty
    assert list(measure_envelope(base, [], fake_rms).columns) == ENVELOPE_COLUMNS


def test_measure_envelope_keeps_the_largest_image_rms_of_any_member(tmp_path, monkeypatch):
    base, members = tmp_path / "base", [tmp_path / f"m{i}" for i in range(3)]
    (base / "figures").mkdir(parents=True)
    (base / "figures" / "all").write_text("path\tsha256\tpaper\tfigure\nfigures/p/f.pdf\tx\tP\t1\n")
    for folder in (base, *members):
        write_figure(folder, "p/f", pd.DataFrame({"v": [1.0]}))
    rms = iter([0.5, 3.0, 1.5])
    frame = measure_envelope(base, members, lambda actual, expected: next(rms)).set_index("column")
    assert frame.loc[IMAGE_COLUMN, "envelope"] == 3.0 and frame.loc["v", "envelope"] == 0.0


def test_read_envelope(tmp_path):
    assert read_envelope(tmp_path) == {}
    (tmp_path / "envelope.csv").write_text(
        "key,column,envelope,envelope_rel,members\np/fig1,y,0.25,0.125,2\np/fig1,<image rms>,3,,2\n"
    )
    assert read_envelope(str(tmp_path)) == {("p/fig1", "y"): 0.25, ("p/fig1", IMAGE_COLUMN): 3.0}


def test_an_envelope_written_is_read_back_per_figure(tmp_path):
    frame = pd.DataFrame(
        [
            {"key": "p/fig1", "column": "y", "envelope": 0.25, "envelope_rel": 0.125, "members": 2},
            {"key": "p/fig1", "column": IMAGE_COLUMN, "envelope": 3.0, "envelope_rel": np.nan, "members": 2},
            {"key": "p/fig2", "column": "y", "envelope": 1e-12, "envelope_rel": 1e-13, "members": 1},
        ],
        columns=ENVELOPE_COLUMNS,
    )
    path = write_envelope(frame, tmp_path / "set")
    assert path == tmp_path / "set" / "envelope.csv"
    assert path.read_text().splitlines()[0] == "key,column,envelope,envelope_rel,members"
    read = read_envelope(tmp_path / "set")
    assert read == {("p/fig1", "y"): 0.25, ("p/fig1", IMAGE_COLUMN): 3.0, ("p/fig2", "y"): 1e-12}
    assert figure_envelope(read, "p/fig1") == {"y": 0.25, IMAGE_COLUMN: 3.0}
    assert figure_envelope(read, "p/fig2") == {"y": 1e-12}
    assert figure_envelope(read, "p/fig") == {}


def test_children_cpu_is_user_plus_system(monkeypatch):
    times = SimpleNamespace(user=100.0, system=50.0, children_user=1.5, children_system=0.25, elapsed=9.0)
    monkeypatch.setattr(ensemble.os, "times", lambda: times)
    assert ensemble._children_cpu() == 1.75


def test_progress_lines_are_out_before_snakemake_starts_and_after_it_ends(tmp_path, monkeypatch):
    """In a log (a pipe: Python buffers whole blocks) the members' lines go out as they are printed:
    a member's first line is in the log before its Snakemake writes there, its cost line before the
    next member starts or run_ensemble returns (bless then runs for minutes)."""
    log = io.BytesIO()
    stdout = io.TextIOWrapper(log, encoding="utf-8", write_through=False)  # block-buffered, like a pipe
    monkeypatch.setattr(sys, "stdout", stdout)
    seen = []

    def snakemake(command, check, env):
        seen.append(log.getvalue().decode())  # what the log holds when Snakemake starts
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(ensemble.subprocess, "run", snakemake)
    run_ensemble(parse_members(["1", "2"]), tmp_path / "c.yaml", tmp_path, ["figures/all"])
    written = log.getvalue().decode()
    monkeypatch.undo()
    assert len(seen[0].splitlines()) == 1 and seen[0].startswith("ensemble member 1")
    assert seen[0].rstrip().endswith(f"figures/all in {tmp_path / 'member1'}")
    assert len(seen[1].splitlines()) == 3 and seen[1].splitlines()[1].startswith("ensemble member 1: ")
    assert " s wall, " in seen[1].splitlines()[1]
    assert len(written.splitlines()) == 4 and " s wall, " in written.splitlines()[3]
