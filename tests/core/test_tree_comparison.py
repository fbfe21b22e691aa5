"""``make compare`` on small trees: the settings table, the files and reports written, the envelopes a
comparison takes from the reference set closest to B's settings, the base an unbuilt side is built
over, the report folder by default and the command line's help."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from helpers import ROOT, help_words
from replication.diff import tree_comparison
from replication.diff.envelopes import ENVELOPE_FILE, IMAGE_COLUMN
from replication.diff.tree_comparison import compare_settings, compare_trees, envelope_set, main, side_base
from replication.diff.trees import Tree
from replication.make_command import CONFIG_DIR, PAPER_CONFIG
from replication.variants import resolve

SMOKE_REFERENCE = ROOT / "figures" / "reference" / "smoke"
GREY, DARK = np.full((8, 10, 3), 200, np.uint8), np.full((8, 10, 3), 20, np.uint8)


def diff_settings(envelope_factor: float = 4) -> dict:
    """The project's diff settings (floors, image RMS) with the envelope factor ``k`` given."""
    return {**resolve([])["diff"], "envelope_factor": envelope_factor}


def built_tree(tree: Path, settings: dict, figures: dict, over: str = "paper", claims: pd.DataFrame | None = None):
    """A tree as the pipeline leaves it: its manifest ``figures/all``, a PNG (and CSV, where given) per
    figure, its record ``figures/settings.yaml`` and, given ``claims``, ``results/claims.csv``."""
    rows = []
    for key, (image, data) in figures.items():
        target = tree / "figures" / key
        target.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(target.with_suffix(".png"))
        if data is not None:
            data.to_csv(target.with_suffix(".csv"), index=False)
        rows.append({"path": f"figures/{key}.pdf", "sha256": "", "paper": "p", "figure": key})
    (tree / "figures").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(tree / "figures" / "all", sep="\t", index=False)
    record = {"name": tree.name, "over": over, "sha256": "", "settings": settings}
    (tree / "figures" / "settings.yaml").write_text(yaml.safe_dump(record))
    if claims is not None:
        (tree / "results").mkdir(parents=True, exist_ok=True)
        claims.to_csv(tree / "results" / "claims.csv", index=False)
    return tree


def claims_table(holds: bool) -> pd.DataFrame:
    return pd.DataFrame(
        [{"paper": "p", "claim_id": "P-1", "statement": "it holds", "measured": 0.5, "holds": holds, "n_runs": 1}]
    )


def test_the_settings_table_lists_every_differing_setting_with_both_values(tmp_path):
    a = built_tree(tmp_path / "a", {"train": {"lr": 0.001, "steps": 10}, "only_a": "x"}, {"p/f": (GREY, None)})
    b = built_tree(tmp_path / "b", {"train": {"lr": 0.002, "steps": 10}, "only_b": [1, 2]}, {"p/f": (GREY, None)})
    table = compare_settings(Tree("a", a), Tree("b", b))
    assert table.values.tolist() == [
        ["only_a", "'x'", "None"],
        ["only_b", "None", "[1, 2]"],
        ["train.lr", "0.001", "0.002"],
    ]
    assert list(table.columns) == ["key", "a", "b"]
    same = compare_settings(Tree("a", a), Tree("a again", a))
    assert same.empty and list(same.columns) == ["key", "a", "b"]
    # Records that hold no settings (only a name): nothing to tell apart.
    for tree in (a, b):
        (tree / "figures" / "settings.yaml").write_text(yaml.safe_dump({"name": tree.name}))
    assert compare_settings(Tree("a", a), Tree("b", b)).empty


def test_a_comparison_writes_its_tables_and_both_reports(tmp_path):
    a = built_tree(
        tmp_path / "a",
        {"train": {"lr": 0.001}},
        {"p/same": (GREY, None), "p/moved": (GREY, None), "p/gone": (GREY, None)},
        claims=claims_table(True),
    )
    b = built_tree(
        tmp_path / "b",
        {"train": {"lr": 0.002}},
        {"p/same": (GREY, None), "p/moved": (DARK, None), "p/new": (GREY, None)},
        claims=claims_table(False),
    )
    out = tmp_path / "out"
    tables = compare_trees(Tree("a", a), Tree("b", b), out, diff_settings(4), None)
    assert set(tables) == {"settings", "claims", "figures", "verdicts"}
    verdicts = tables["verdicts"].set_index("key").status.to_dict()
    assert verdicts == {"p/gone": "only in a", "p/moved": "moved", "p/new": "only in b", "p/same": "identical"}
    assert tables["claims"][["claim_id", "change"]].values.tolist() == [["P-1", "holds -> fails"]]
    for name in ("settings", "claims", "figures"):
        written = pd.read_csv(out / f"{name}.csv")
        assert len(written) == len(tables[name]) and list(written.columns) == list(tables[name].columns), name
    assert pd.read_csv(out / "settings.csv").values.tolist() == [["train.lr", 0.001, 0.002]]
    headline = "b against a: 1 settings differ, 1 claims changed verdict (0 beyond seed spread), 1 of 4 figures"
    report = (out / "report.md").read_text()
    assert report.startswith("# b against a\n") and headline in report
    assert "|B - A| > 4 x envelope + floors (envelopes of `none (floors only)`)" in report
    assert "| train.lr | 0.001 | 0.002 |" in report and "P-1" in report and "`p/same`" in report
    page = (out / "report.html").read_text()
    assert headline in page and "none (floors only)" in page and "images/p/moved-diff.png" in page
    assert (out / "images" / "p" / "moved-diff.png").is_file()


def test_the_envelopes_of_the_reference_set_widen_what_counts_as_moved(tmp_path):
    a = built_tree(tmp_path / "a", {}, {"p/curve": (GREY, pd.DataFrame({"x": [0, 1], "loss": [1.0, 2.0]}))})
    b = built_tree(tmp_path / "b", {}, {"p/curve": (GREY, pd.DataFrame({"x": [0, 1], "loss": [1.0, 2.5]}))})
    envelope_dir = tmp_path / "reference"
    envelope_dir.mkdir()
    pd.DataFrame(
        [
            {"key": "p/curve", "column": "loss", "envelope": 0.2, "envelope_rel": 0.1, "members": 2},
            {"key": "p/curve", "column": IMAGE_COLUMN, "envelope": 0.0, "envelope_rel": np.nan, "members": 2},
        ]
    ).to_csv(envelope_dir / ENVELOPE_FILE, index=False)
    trees = Tree("a", a), Tree("b", b)
    # 0.5 apart: beyond the floors alone, within k = 4 times an envelope of 0.2.
    floors_only = compare_trees(*trees, tmp_path / "floors", diff_settings(4), None)
    assert floors_only["verdicts"].status.tolist() == ["moved"]
    enveloped = compare_trees(*trees, tmp_path / "enveloped", diff_settings(4), envelope_dir)
    assert enveloped["verdicts"].status.tolist() == ["within noise"]
    loss = enveloped["figures"].set_index("quantity").loc["loss"]
    assert loss.envelope == 0.2 and loss.x_envelope == pytest.approx(2.5)
    report = (tmp_path / "enveloped" / "report.md").read_text()
    assert f"(envelopes of `{envelope_dir}`)" in report
    # A smaller k: the same change moved.
    assert compare_trees(*trees, tmp_path / "k2", diff_settings(2), envelope_dir)["verdicts"].status.tolist() == [
        "moved"
    ]


def reference_set(sets: Path, name: str, settings: dict | None, envelope: bool) -> None:
    """A reference set in ``sets``: its record (unless ``settings`` is None) and, if ``envelope``, an envelope."""
    folder = sets / name
    folder.mkdir(parents=True)
    if settings is not None:
        (folder / "settings.yaml").write_text(yaml.safe_dump({"name": name, "settings": settings}))
    if envelope:
        (folder / ENVELOPE_FILE).write_text("key,column,envelope,envelope_rel,members\n")


def test_the_envelopes_come_from_the_closest_reference_set_that_has_them(tmp_path, monkeypatch):
    monkeypatch.setattr(tree_comparison, "PROJECT_ROOT", tmp_path)
    sets = tmp_path / "figures" / "reference"
    sets.mkdir(parents=True)
    assert envelope_set({"a": 1, "b": 2}) is None  # no set at all
    reference_set(sets, "closest", {"a": 1, "b": 2}, envelope=False)  # no envelope (the phase diagram's)
    reference_set(sets, "unrecorded", None, envelope=True)  # no record: no settings to compare
    reference_set(sets, "near", {"a": 1, "b": 9}, envelope=True)
    reference_set(sets, "far", {"a": 5, "b": 6}, envelope=True)
    (sets / "stray.csv").write_text("not a set\n")
    assert envelope_set({"a": 1, "b": 2}) == sets / "near"
    assert envelope_set({"a": 5, "b": 6, "c": 0}) == sets / "far"


def test_an_unbuilt_side_is_built_over_its_own_config_file_else_the_papers(tmp_path):
    assert side_base("smoke", tmp_path) == CONFIG_DIR / "smoke.yaml"  # config/smoke.yaml builds variants/smoke
    assert side_base("never-built", tmp_path) == PAPER_CONFIG
    built_tree(tmp_path / "variants" / "over-smoke", {}, {"p/f": (GREY, None)}, over="smoke")
    built_tree(tmp_path / "variants" / "over-paper", {}, {"p/f": (GREY, None)}, over="paper")
    assert side_base("over-smoke", tmp_path) == CONFIG_DIR / "smoke.yaml"
    assert side_base("over-paper", tmp_path) == PAPER_CONFIG


def test_the_report_folder_is_named_for_both_sides_under_the_root_by_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the root: here
    built_tree(tmp_path / "variants" / "one", {"x": 1}, {"p/f": (GREY, None)})
    built_tree(tmp_path / "variants" / "two", {"x": 2}, {"p/f": (DARK, None)})
    built_tree(tmp_path / "trees" / "three", {"x": 3}, {"p/f": (GREY, None)})
    assert main(["one", "two"]) == 0
    line = capsys.readouterr().out
    assert line.startswith("two against one: 1 settings differ, 0 claims changed verdict")
    assert line.rstrip().endswith("; report: compare/one-vs-two/report.html")
    assert (tmp_path / "compare" / "one-vs-two" / "report.html").is_file()
    assert pd.read_csv(tmp_path / "compare" / "one-vs-two" / "settings.csv").values.tolist() == [["x", 1, 2]]
    assert main(["trees/three", "one"]) == 0  # folders: their slashes kept out of the report's name
    assert capsys.readouterr().out.rstrip().endswith("; report: compare/trees_three-vs-one/report.html")
    assert (tmp_path / "compare" / "trees_three-vs-one" / "report.md").is_file()
    assert main(["one", "trees/three"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("; report: compare/one-vs-trees_three/report.html")


def test_reference_is_the_set_closest_to_the_other_sides_settings(tmp_path, capsys):
    # B at the smoke settings, holding one of the smoke set's figures as it was blessed.
    smoke = yaml.safe_load((SMOKE_REFERENCE / "settings.yaml").read_text())["settings"]
    key = "local_to_global/fig1"
    figure = np.asarray(Image.open(SMOKE_REFERENCE / f"{key}.png").convert("RGB"))
    tree = built_tree(tmp_path / "variants" / "b", smoke, {key: (figure, None)}, over="smoke")
    (tree / "figures" / f"{key}.png").write_bytes((SMOKE_REFERENCE / f"{key}.png").read_bytes())
    (tree / "figures" / f"{key}.csv").write_bytes((SMOKE_REFERENCE / f"{key}.csv").read_bytes())
    assert main(["reference", "b", "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    line = capsys.readouterr().out
    assert line.startswith("b against reference: 0 settings differ")
    verdicts = pd.read_csv(tmp_path / "out" / "figures.csv").set_index("key").status
    assert verdicts[key] == "identical" and set(verdicts.drop(key)) == {"only in reference"}
    assert "(envelopes of `figures/reference/smoke`)" in (tmp_path / "out" / "report.md").read_text()


def test_without_a_reference_set_with_envelopes_reference_is_the_papers_floors_only(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tree_comparison, "PROJECT_ROOT", tmp_path)  # a checkout before any set was blessed
    built_tree(tmp_path / "variants" / "b", {"x": 1}, {"p/f": (GREY, None)})
    assert main(["reference", "b", "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.startswith("b against reference: ")
    figures = pd.read_csv(tmp_path / "out" / "figures.csv").set_index("key").status
    paper_set = ROOT / "figures" / "reference" / "config"
    assert set(figures.index) == {"p/f"} | {
        p.relative_to(paper_set).with_suffix("").as_posix() for p in paper_set.rglob("*.png")
    }
    assert "(envelopes of `none (floors only)`)" in (tmp_path / "out" / "report.md").read_text()


def test_the_help_names_the_command_and_its_arguments():
    shown = help_words(main)
    assert shown.startswith("usage: python -m replication.diff.tree_comparison [-h] [--out OUT] [--root ROOT] a b")
    assert "Two trees side by side" in shown
    for text in (
        "a paper, reference, reference/<set>, a variant or a folder",
        "b the same kinds",
        "--out OUT report folder (default: compare/<a>-vs-<b>)",
        "--root ROOT the project's tree (default: here)",
    ):
        assert text in shown, text


def test_an_unbuilt_a_is_offered_the_build_over_bs_settings(tmp_path, capsys):
    (tmp_path / "variants" / "half").mkdir(parents=True)  # started, never built
    for a in ("half", "never"):
        assert main([a, "reference/smoke", "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.rstrip()
        assert err.endswith(f"make figures CONFIG=config/smoke.yaml VARIANT={a} SET='key.path=value ...'"), err
