"""Variants, their comparison and sweeps: a tree keeps its settings, a variant reruns only what its
settings change, the comparison uses the diff's rule."""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from helpers import ROOT, run_snakemake, shared_tree
from replication.diff.images import padded
from replication.diff.tree_comparison import compare_trees, envelope_set
from replication.diff.trees import Tree
from replication.errors import ConfigError
from replication.variants import (
    check_tree,
    differences,
    parse_assignments,
    prepare,
    read_record,
    record_of,
    resolve,
    seed_tree,
)

SMOKE = str(ROOT / "config" / "smoke.yaml")
FIG4_P = "local_to_global.transformer.experiments.fig4.chain.p"
LANDSCAPE = ("fig1", "fig2", "fig5", "basins")


def tree_hashes(tree: Path) -> dict[str, str]:
    return {
        str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in ("results", "figures", "logs", "benchmarks")
        for p in sorted((tree / folder).rglob("*"))
        if p.is_file()
    }


def planned_jobs(tree: Path, overlay: Path) -> dict[str, int]:
    """Snakemake's job list of a dry run in ``tree``: ``{rule: jobs}``."""
    result = run_snakemake(tree, "figures/all", "--cores", "1", "-n", "--configfile", SMOKE, str(overlay))
    table = re.search(r"Job stats:\n(.*?)\n\s*total", result.stdout + result.stderr, re.S)
    if table is None:
        return {}
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table.group(1), re.M)}


def diff_settings() -> dict:
    return resolve([])["diff"]


def test_assignments_are_typed_and_nested():
    assert parse_assignments(["a.b=2e-3", "a.c=[1, 2]", "d=smoke"]) == {"a": {"b": 0.002, "c": [1, 2]}, "d": "smoke"}
    with pytest.raises(ConfigError, match="allowed: key.path=value"):
        parse_assignments(["a.b"])


def test_a_tree_refuses_other_settings_in_one_line(tmp_path, monkeypatch):
    from replication import paths

    monkeypatch.setattr(paths, "PROJECT_ROOT", tmp_path.parent)  # the tree lies in the checkout
    config = resolve([SMOKE])
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(config)))
    check_tree(config, tmp_path)  # the same settings: fine
    check_tree({**config, "diff": {"reference_set": "config"}, "variant": "other"}, tmp_path)  # not settings
    check_tree({**config, "new_paper": {"rate": 2.0}}, tmp_path)  # an added section is no conflict
    changed = resolve([SMOKE], parse_assignments([f"{FIG4_P}=0.6"]))
    with pytest.raises(ConfigError) as error:
        check_tree(changed, tmp_path)
    message = str(error.value)
    assert "\n" not in message and f"{FIG4_P} (0.5 -> 0.6)" in message and f"SET='{FIG4_P}=0.6'" in message
    # Named by its place in the checkout, the same on every machine.
    assert message.startswith(f"the tree {tmp_path.name} holds") and str(tmp_path.parent) not in message


def test_messages_name_trees_by_their_place_in_the_checkout(tmp_path, monkeypatch):
    from replication import paths

    monkeypatch.setattr(paths, "PROJECT_ROOT", tmp_path)
    (tmp_path / "variants" / "smoke").mkdir(parents=True)
    assert paths.shown_tree(tmp_path / "variants" / "smoke") == "the tree variants/smoke"
    assert paths.shown_tree(tmp_path) == "the project root"
    assert paths.shown_tree(tmp_path.parent / "elsewhere") == f"the tree {tmp_path.parent / 'elsewhere'}"


@pytest.mark.pipeline
def test_a_build_with_other_settings_stops_before_any_job(tmp_path):
    config = resolve([SMOKE])
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(config)))
    result = run_snakemake(
        tmp_path, "--cores", "1", "-n", "--configfile", SMOKE, "--config", "settings=paper", check=False
    )
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "Invalid config" in line]
    # The paper's settings asked for in a smoke tree: the command that builds them is the paper's own.
    assert result.returncode != 0 and len(lines) == 1 and lines[0].endswith("in a tree of their own: make figures")
    assert not (tmp_path / "results").exists()


@pytest.mark.pipeline  # the variants runner starts Snakemake once the file is valid
def test_a_bad_key_in_a_variant_file_fails_before_any_job(tmp_path):
    variant = tmp_path / "typo.yaml"
    variant.write_text("local_to_global: {transformer: {optimiser: {lr: 0.002}}}\n")
    command = [sys.executable, "-m", "replication.variants", "--name", "typo", "--file", str(variant)]
    command += ["--configfile", SMOKE, "--root", str(tmp_path), "--", "figures/all", "--cores", "1"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1
    assert (
        result.stderr.strip().splitlines() == [result.stderr.strip()]
        and "config key 'local_to_global.transformer'" in result.stderr
    )
    assert "optimiser" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "variants").exists()


def test_seeding_prefixes_metadata_for_a_sweep(tmp_path):
    base = tmp_path / "base"
    (base / "results").mkdir(parents=True)
    (base / "results" / "x.csv").write_text("a\n1\n")
    encoded = base64.urlsafe_b64encode(b"results/x.csv").decode()
    (base / ".snakemake" / "metadata").mkdir(parents=True)
    (base / ".snakemake" / "metadata" / encoded).write_text('{"input": ["results/in.csv", "/abs/y"], "log": []}')
    assert seed_tree(base, tmp_path / "variants" / "p1", prefix="p1/") == 1
    assert (tmp_path / "variants" / "p1" / "results" / "x.csv").read_text() == "a\n1\n"
    moved = base64.urlsafe_b64encode(b"p1/results/x.csv").decode()
    record = (tmp_path / "variants" / ".snakemake" / "metadata" / moved).read_text()
    assert '"p1/results/in.csv"' in record and '"/abs/y"' in record


def snakemake_record_path(metadata: Path, record_id: str) -> Path:
    """Where Snakemake 9 keeps the record of ``record_id`` (snakemake/persistence/file.py, on a file
    system whose names take 255 characters): its base64, split into names of 254 characters, each
    but the last a folder marked by ``@``."""
    encoded = base64.urlsafe_b64encode(record_id.encode()).decode()
    names = [encoded[i : i + 254] for i in range(0, len(encoded), 254)]
    return metadata.joinpath(*["@" + name for name in names[:-1]], names[-1])


def test_seeding_reads_and_writes_records_of_long_paths_where_snakemake_keeps_them(tmp_path):
    """Records of paths whose base64 names take two and three file names. The first one's name ends
    in a folder that begins with X (the é), which is base64, not the folders' marker."""
    long_ids = ["results/" + "e" * 183 + "é.csv", "results/" + "/".join(["deep"] * 90) + "/x.csv"]
    base = tmp_path / "base"
    for record_id in long_ids:
        source = snakemake_record_path(base / ".snakemake" / "metadata", record_id)
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text('{"input": ["results/in.csv"], "log": []}')
    parts = [snakemake_record_path(Path(), record_id).parts for record_id in long_ids]
    assert [len(p) for p in parts] == [2, 3] and parts[0][1].startswith("X")
    assert seed_tree(base, tmp_path / "copy") == 0
    assert seed_tree(base, tmp_path / "variants" / "p1", prefix="p1/") == 0
    for record_id in long_ids:
        assert snakemake_record_path(tmp_path / "copy" / ".snakemake" / "metadata", record_id).is_file()
        moved = snakemake_record_path(tmp_path / "variants" / ".snakemake" / "metadata", "p1/" + record_id)
        assert '"p1/results/in.csv"' in moved.read_text()
    for tree in (tmp_path / "copy", tmp_path / "variants"):
        assert sum(path.is_file() for path in (tree / ".snakemake" / "metadata").rglob("*")) == 2


def test_images_of_different_sizes_are_compared_on_a_common_canvas():
    small, large = np.zeros((3, 4, 3), np.uint8), np.zeros((5, 2, 3), np.uint8)
    a, b = padded([small, large])
    assert a.shape == b.shape == (5, 4, 3)
    assert (a[3:] == 255).all() and (b[:, 2:] == 255).all() and (a[:3, :4] == 0).all()


def test_every_reference_set_records_its_settings():
    for folder in sorted((ROOT / "figures" / "reference").iterdir()):
        record = read_record(folder)
        assert record is not None and {"name", "sha256", "settings"} <= set(record), folder
    assert envelope_set(resolve([SMOKE], parse_assignments([f"{FIG4_P}=0.6"]))).name == "smoke"


@pytest.mark.pipeline
def test_the_smoke_tree_says_what_it_is(smoke_run):
    record = read_record(smoke_run)
    assert record["name"] == "smoke"
    manifest = pd.read_csv(smoke_run / "figures" / "all", sep="\t")
    assert set(manifest.settings) == {"smoke"} and set(manifest.settings_sha256) == {record["sha256"]}
    assert "Settings: **smoke** (the tiny smoke settings" in (smoke_run / "figures" / "claims.md").read_text()


@pytest.mark.pipeline
def test_the_paper_run_against_itself_moved_nothing(smoke_run, tmp_path):
    tables = compare_trees(Tree("a", smoke_run), Tree("b", smoke_run), tmp_path, diff_settings(), None)
    assert tables["settings"].empty and tables["claims"].empty
    assert set(tables["verdicts"].status) == {"identical"}
    assert (tmp_path / "report.html").exists() and (tmp_path / "report.md").exists()


@pytest.fixture(scope="module")
def fig4_variant(smoke_run, tmp_path_factory):
    """A variant of the smoke settings with another Fig. 4 chain, seeded from the smoke tree."""
    return shared_tree(tmp_path_factory, "fig4_variant", lambda root: build_fig4_variant(smoke_run, root))


def build_fig4_variant(smoke_run, root):
    before = tree_hashes(smoke_run)
    tree, overlay, _ = prepare("fig4p", [SMOKE], [f"{FIG4_P}=0.6"], root, base=smoke_run)
    jobs = planned_jobs(tree, overlay)
    run_snakemake(tree, "figures/all", "--cores", "2", "--configfile", SMOKE, str(overlay))
    return {"tree": tree, "jobs": jobs, "before": before, "root": root}


@pytest.mark.pipeline
def test_a_variant_reruns_only_what_depends_on_its_setting(fig4_variant, smoke_run):
    jobs = fig4_variant["jobs"]
    # The four Fig. 4 training runs (2 inits x 2 seeds) and what reads them; nothing else.
    assert jobs.pop("l2g_transformer") == 4
    assert set(jobs) == {
        "l2g_fig4",
        "l2g_tables",
        "l2g_claims_transformer",
        "claims_report",
        "settings_record",
        "figures_manifest",
    }
    assert tree_hashes(smoke_run) == fig4_variant["before"]  # the base tree is only read
    assert read_record(fig4_variant["tree"])["name"] == "fig4p"


@pytest.mark.pipeline
def test_the_comparison_names_the_setting_and_what_moved(fig4_variant, smoke_run, tmp_path):
    b = Tree("fig4p", fig4_variant["tree"])
    tables = compare_trees(Tree("smoke", smoke_run), b, tmp_path, diff_settings(), envelope_set(b.record()["settings"]))
    assert tables["settings"].to_dict("records") == [{"key": FIG4_P, "a": "0.5", "b": "0.6"}]
    verdicts = tables["verdicts"].set_index("key").status
    assert verdicts["local_to_global/fig4"] == verdicts["local_to_global/fig4_long"] == "moved"
    for key in [f"local_to_global/{name}" for name in LANDSCAPE] + [k for k in verdicts.index if "benign" in k]:
        assert verdicts[key] == "identical", key
    assert any("benign" in key for key in verdicts.index)
    # Claims: exactly those whose verdict differs between the two claims tables.
    a = pd.read_csv(smoke_run / "results/claims.csv", dtype={"claim_id": str}).set_index(["paper", "claim_id"])
    b_claims = pd.read_csv(fig4_variant["tree"] / "results/claims.csv", dtype={"claim_id": str})
    b_claims = b_claims.set_index(["paper", "claim_id"])
    expected = sorted(k[1] for k in a.index if a.loc[k, "holds"] != b_claims.loc[k, "holds"])
    assert sorted(tables["claims"].claim_id) == expected
    page = (tmp_path / "report.html").read_text()
    assert "images/local_to_global/fig4-overlay.png" in page and (tmp_path / "images/local_to_global/fig4.png").exists()


@pytest.mark.pipeline
def test_a_variant_identical_to_its_base_moved_nothing(smoke_run, tmp_path):
    tree, overlay, _ = prepare("same", [SMOKE], [], tmp_path, base=smoke_run)
    jobs = planned_jobs(tree, overlay)
    assert set(jobs) == {"settings_record", "claims_report", "figures_manifest"}  # its name only
    run_snakemake(tree, "figures/all", "--cores", "1", "--configfile", SMOKE, str(overlay))
    tables = compare_trees(Tree("smoke", smoke_run), Tree("same", tree), tmp_path / "cmp", diff_settings(), None)
    assert tables["settings"].empty and tables["claims"].empty
    assert set(tables["verdicts"].status) == {"identical"}


@pytest.mark.pipeline
def test_a_two_point_sweep_builds_both_points_and_its_summary(smoke_run, tmp_path):
    sweep = tmp_path / "window.yaml"
    sweep.write_text(
        yaml.safe_dump(
            {
                "configfiles": ["config/smoke.yaml"],
                "settings": {"local_to_global.transformer.fig4.window": [15, 25]},
                "claims": ["L2G-5"],
                "measurements": [
                    {"name": "rows", "file": "figures/local_to_global/fig4.csv", "column": "step", "stat": "max"}
                ],
            }
        )
    )
    command = [sys.executable, "-m", "replication.sweeps", "window", "--file", str(sweep), "--base", str(smoke_run)]
    command += ["--root", str(tmp_path), "--", "--cores", "2"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # One Snakemake run built both points: one log of the driver, two trees.
    assert len(list((tmp_path / "variants" / ".snakemake" / "log").glob("*.snakemake.log"))) == 1
    for name in ("window-window=15", "window-window=25"):
        assert read_record(tmp_path / "variants" / name)["name"] == name
        assert (tmp_path / "variants" / name / "figures" / "all").exists()
    summary = pd.read_csv(tmp_path / "sweeps" / "window" / "summary.csv")
    assert list(summary["local_to_global.transformer.fig4.window"]) == [15, 25]
    assert list(summary["rows"]) == [15, 25]  # Fig. 4 is drawn up to its window
    assert (tmp_path / "sweeps" / "window" / "summary.png").stat().st_size > 0
    assert differences({"a": {"b": 1}}, {"a": {"b": 2}, "c": 3}) == [("a.b", 1, 2), ("c", None, 3)]


def test_make_compare_exits_0_when_it_compared_and_2_when_it_could_not(tmp_path, capsys):
    from replication.diff.tree_comparison import main

    assert main(["reference/smoke", "reference/smoke", "--out", str(tmp_path / "same"), "--root", str(tmp_path)]) == 0
    assert "0 settings differ, 0 claims changed verdict (0 beyond seed spread), 0 of" in capsys.readouterr().out
    figures = pd.read_csv(tmp_path / "same" / "figures.csv")
    assert set(figures.status) == {"identical"} and len(figures) == len(
        list((ROOT / "figures/reference/smoke").rglob("*.png"))
    )
    assert main(["paper", "no-such-variant", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("Cannot compare: no tree named 'no-such-variant'")


def tree_from_reference(reference: Path, tree: Path) -> Path:
    """A built tree holding a reference set's figures: its manifest, record and claims table."""
    rows = []
    for png in sorted(reference.rglob("*.png")):
        key = png.relative_to(reference).with_suffix("").as_posix()
        for suffix in (".png", ".csv"):
            if png.with_suffix(suffix).exists():
                target = tree / "figures" / f"{key}{suffix}"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(png.with_suffix(suffix).read_bytes())
        rows.append({"path": f"figures/{key}.pdf", "sha256": "", "paper": "", "figure": key})
    pd.DataFrame(rows).to_csv(tree / "figures" / "all", sep="\t", index=False)
    (tree / "figures" / "settings.yaml").write_text((reference / "settings.yaml").read_text())
    (tree / "results").mkdir(parents=True, exist_ok=True)
    (tree / "results" / "claims.csv").write_text((reference / "claims.csv").read_text())
    return tree


def test_an_unbuilt_tree_is_refused_in_one_line_naming_its_build(tmp_path, capsys):
    from replication.diff.tree_comparison import main

    # A checkout where the paper tree was never built: images elsewhere (an environment's) are not its figures.
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    icon = ROOT / "figures/reference/smoke/local_to_global/fig1.png"
    (tmp_path / ".venv" / "lib" / "icon.png").write_bytes(icon.read_bytes())
    (tmp_path / "variants" / "half").mkdir(parents=True)
    # A tree that records nothing is built over the other side's base (the smoke settings here).
    new_variant = "make figures CONFIG=config/smoke.yaml VARIANT={} SET='key.path=value ...'"
    for a, b, command in (
        ("paper", "reference/smoke", "make figures"),
        ("reference/smoke", "half", new_variant.format("half")),
        ("reference/smoke", "never", new_variant.format("never")),
        ("paper", "never", "make figures VARIANT=never SET='key.path=value ...'"),
        ("never", "reference/config", "make figures VARIANT=never SET='key.path=value ...'"),
        ("reference/smoke", "fig4-chain", "make figures CONFIG=config/smoke.yaml VARIANT=fig4-chain"),
    ):
        assert main([a, b, "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("Cannot compare: ") and err.rstrip().endswith(command)
    assert not (tmp_path / "out").exists()
    # Built, but without its settings record: refused too (its settings would read as None).
    tree = tree_from_reference(ROOT / "figures/reference/smoke", tmp_path / "variants" / "built")
    (tree / "figures" / "settings.yaml").unlink()
    assert main(["reference/smoke", "built", "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no figures/settings.yaml" in capsys.readouterr().err


def test_a_built_tree_is_compared_by_its_manifest(tmp_path, capsys):
    from replication.diff.tree_comparison import main

    tree = tree_from_reference(ROOT / "figures/reference/smoke", tmp_path / "variants" / "built")
    (tree / "stray.png").write_bytes(b"not a figure")  # outside the manifest: not compared
    manifest = pd.read_csv(tree / "figures" / "all", sep="\t")
    assert main(["reference/smoke", "built", "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    assert f"0 claims changed verdict (0 beyond seed spread), 0 of {len(manifest)} figures" in capsys.readouterr().out
    figures = pd.read_csv(tmp_path / "out" / "figures.csv")
    assert set(figures.status) == {"identical"} and len(figures) == len(manifest)


def test_the_figure_diff_refuses_a_reference_set_without_figures(tmp_path):
    from replication.diff import diff_figures

    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError) as error:
        diff_figures([], tmp_path / "empty", tmp_path / "out", 1.0, {})
    assert "\n" not in str(error.value) and "make bless" in str(error.value)
    assert not (tmp_path / "out").exists()


def test_a_variant_cut_short_keeps_its_finished_work(tmp_path, capsys):
    base = tmp_path / "variants" / "smoke"
    (base / "figures").mkdir(parents=True)
    (base / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(resolve([SMOKE]))))
    (base / "results").mkdir()
    (base / "results" / "run.csv").write_text("base\n")
    tree, _, config = prepare("p6", [SMOKE], [f"{FIG4_P}=0.6"], root=tmp_path)
    assert "seeded from" in capsys.readouterr().out
    assert read_record(tree) == yaml.safe_load(yaml.safe_dump(record_of(config)))  # recorded before any job
    check_tree(config, tree)  # the build that follows accepts it
    (tree / "results" / "run.csv").write_text("finished in the variant\n")  # a job done, then Ctrl-C
    prepare("p6", [SMOKE], [f"{FIG4_P}=0.6"], root=tmp_path)
    assert "seeded" not in capsys.readouterr().out
    assert (tree / "results" / "run.csv").read_text() == "finished in the variant\n"


def test_the_project_root_holds_the_paper_settings_only(tmp_path):
    from replication.paths import PROJECT_ROOT
    from replication.variants import check_root

    paper = resolve([])
    check_root(paper, PROJECT_ROOT, paper)
    check_root(resolve([SMOKE]), tmp_path, paper)  # any other folder: any settings
    lr = parse_assignments(["local_to_global.transformer.optimizer.lr=0.002"])
    for config, command in (
        (resolve([SMOKE]), "make figures CONFIG=config/smoke.yaml (or: snakemake figures/all --directory"),
        (resolve([], {**lr, "variant": "lr2x"}), "make figures VARIANT=lr2x SET='local_to_global.transformer"),
        (resolve([], lr), "make figures SET='local_to_global.transformer.optimizer.lr=0.002'"),
        (resolve([SMOKE], lr), "make figures CONFIG=config/smoke.yaml SET='local_to_global.transformer"),
    ):
        with pytest.raises(ConfigError) as error:
            check_root(config, PROJECT_ROOT, paper)
        assert "\n" not in str(error.value) and command in str(error.value)


@pytest.mark.pipeline
def test_the_smoke_settings_are_refused_in_the_project_root():
    record = ROOT / "figures" / "settings.yaml"
    before = record.read_bytes() if record.exists() else None
    result = run_snakemake(ROOT, "figures/all", "-n", "--cores", "1", "--configfile", SMOKE, check=False)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "Invalid config" in line]
    assert result.returncode != 0 and len(lines) == 1, result.stdout + result.stderr
    assert "make figures CONFIG=config/smoke.yaml" in lines[0] and "--directory variants/smoke" in lines[0]
    assert (record.read_bytes() if record.exists() else None) == before


def test_set_splits_on_spaces_outside_brackets_and_quotes():
    from replication.variants import split_assignments

    text = "a.b=[1, 2, 3] c.d=2e-3  e={x: 1, y: [2, 3]} f='two words'"
    parts = split_assignments(text)
    assert parts == ["a.b=[1, 2, 3]", "c.d=2e-3", "e={x: 1, y: [2, 3]}", "f='two words'"]
    expected = {"a": {"b": [1, 2, 3]}, "c": {"d": 0.002}, "e": {"x": 1, "y": [2, 3]}, "f": "two words"}
    assert parse_assignments(parts) == expected
    for bad in ("a=[1, 2", "a=[1}", "a='x"):
        with pytest.raises(ConfigError) as error:
            split_assignments(bad)
        assert "\n" not in str(error.value) and "key.path=value" in str(error.value)
    with pytest.raises(ConfigError) as error:
        parse_assignments(["a.b=[1, 2"])
    assert "\n" not in str(error.value) and "not YAML" in str(error.value)


def test_the_root_mismatch_offers_the_command_that_restores_it(monkeypatch, tmp_path):
    from replication.variants import checks

    record = record_of(resolve([SMOKE]))  # a root built at smoke settings before the root refused them
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "settings.yaml").write_text(yaml.safe_dump(record))
    paper = resolve([])
    monkeypatch.setattr(checks, "PROJECT_ROOT", tmp_path)  # this folder stands for the project root
    with pytest.raises(ConfigError) as error:
        check_tree(paper, tmp_path)
    assert "\n" not in str(error.value) and str(error.value).endswith("make clean-paper && make figures")


@pytest.mark.pipeline  # make figures in the checkout, with a stand-in for the environment's python
def test_make_passes_set_with_list_values_intact(tmp_path):
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    text = "local_to_global.fig1.seeds=[1, 2, 3] local_to_global.transformer.optimizer.lr=2e-3"
    result = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", "figures", "VARIANT=t", f"SET={text}", f"BIN={tmp_path}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    argv = result.stdout.splitlines()
    assert result.returncode == 0, result.stderr
    assert argv[argv.index("--sets") + 1] == text


def test_a_verdict_change_inside_one_sides_seed_range_is_within_seed_spread():
    from replication.diff.seeds import BEYOND, UNKNOWN, WITHIN, claim_seed_columns, seed_values

    a = {"n_runs": 2, "holds_fraction": 0.5, "reason": "per seed 0.722, 0.942; at iteration 30: 0.934, 0.966"}
    b = {"n_runs": 2, "holds_fraction": 1.0, "reason": "per seed 0.959, 0.97"}
    assert seed_values(a["reason"]) == [0.722, 0.942] and seed_values("per seed (smoothed) 0.0262, 0.0259") == [
        0.0262,
        0.0259,
    ]
    columns = claim_seed_columns(a, b)
    assert columns == {
        "holds_in_a": "1/2",
        "seeds_a": "0.722-0.942",
        "holds_in_b": "2/2",
        "seeds_b": "0.959-0.97",
        "seed_noise": WITHIN,
    }
    agreed = {"n_runs": 2, "holds_fraction": 0.0, "reason": "per seed 0.70, 0.72"}
    assert claim_seed_columns(agreed, b)["seed_noise"] == BEYOND
    overlapping = {"n_runs": 2, "holds_fraction": 0.0, "reason": "per seed 0.70, 0.96"}
    assert claim_seed_columns(overlapping, b)["seed_noise"] == WITHIN
    assert claim_seed_columns({**agreed, "n_runs": 1}, b)["seed_noise"] == UNKNOWN
    # Ranges that share one end value overlap, from either side.
    touching = {"n_runs": 2, "holds_fraction": 0.0, "reason": "per seed 0.70, 0.959"}
    assert claim_seed_columns(touching, b)["seed_noise"] == WITHIN
    assert claim_seed_columns({**b, "holds_fraction": 0.0}, {**touching, "holds_fraction": 1.0})["seed_noise"] == WITHIN


def test_make_compare_shows_the_seed_spread_of_claims_and_figures(tmp_path, capsys):
    from replication.diff.seeds import BEYOND, NO_SEEDS, WITHIN
    from replication.diff.tree_comparison import main

    reference = ROOT / "figures/reference/smoke"
    tree_from_reference(reference, tmp_path / "variants" / "a")
    b = tree_from_reference(reference, tmp_path / "variants" / "b")
    claims = pd.read_csv(b / "results" / "claims.csv", dtype={"claim_id": str})
    six_c = claims.claim_id == "L2G-6 (6c)"
    claims.loc[six_c, ["measured", "holds", "holds_fraction", "reason"]] = [0.959, True, 1.0, "per seed 0.959, 0.97"]
    claims.to_csv(b / "results" / "claims.csv", index=False)
    # fig4: the seeds' curves swapped (moved, within the seeds' spread); fig4_long: every loss 1 higher.
    fig4 = pd.read_csv(b / "figures/local_to_global/fig4.csv")
    fig4["seed"] = fig4.seed.map(dict(zip(sorted(fig4.seed.unique()), sorted(fig4.seed.unique())[::-1])))
    fig4.sort_values(["init", "seed", "step"]).to_csv(b / "figures/local_to_global/fig4.csv", index=False)
    long = pd.read_csv(b / "figures/local_to_global/fig4_long.csv")
    long[["train_loss", "test_loss", "test_loss_smoothed"]] += 1.0
    long.to_csv(b / "figures/local_to_global/fig4_long.csv", index=False)
    # fig1 (a landscape, no seeds): a block of its image blacked out.
    fig1 = np.asarray(Image.open(b / "figures/local_to_global/fig1.png").convert("RGB")).copy()
    fig1[100:160, 100:220] = 0
    Image.fromarray(fig1).save(b / "figures/local_to_global/fig1.png")
    assert main(["a", "b", "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    line = capsys.readouterr().out
    assert "1 claims changed verdict (0 beyond seed spread)" in line
    assert "1 of them beyond seed spread (local_to_global/fig4_long)" in line
    changed = pd.read_csv(tmp_path / "out" / "claims.csv")
    assert changed[["claim_id", "holds_in_a", "seeds_a", "seed_noise"]].values.tolist() == [
        ["L2G-6 (6c)", "1/2", "0.722-0.942", WITHIN]
    ]
    verdicts = pd.read_csv(tmp_path / "out" / "figures.csv").groupby("key").first()
    assert verdicts.loc["local_to_global/fig4", "status"] == "moved"
    assert verdicts.loc["local_to_global/fig4", "seed_noise"] == WITHIN
    assert verdicts.loc["local_to_global/fig4_long", "seed_noise"] == BEYOND
    assert verdicts.loc["local_to_global/fig1", "seed_noise"] == NO_SEEDS  # every moved figure says it
    assert set(verdicts[verdicts.status == "moved"].index) == {
        f"local_to_global/{k}" for k in ("fig1", "fig4", "fig4_long")
    }
    # The report opens with the terminal's line; identical figures are listed apart from the moved ones.
    report = (tmp_path / "out" / "report.md").read_text()
    assert report.split("\n")[2].startswith(f"**{line.split('; report:')[0]}.**")
    moved_table, identical = report.split("## Figures that moved")[1], report.split("## Identical figures")[1]
    assert "local_to_global/fig4_long" in moved_table.split("##")[0]
    assert "local_to_global/fig2" not in moved_table.split("##")[0] and "`local_to_global/fig2`" in identical
    assert "local_to_global/fig4" not in identical
    # The difference a person reads: A | B, and B faded with what differs in red, around the block only.
    difference = np.asarray(Image.open(tmp_path / "out/images/local_to_global/fig1-diff.png").convert("RGB"))
    red = (difference[..., 0] > 200) & (difference[..., 1] < 60) & (difference[..., 2] < 60)
    rows, columns = np.nonzero(red)
    assert red.sum() > 60 * 120 * 0.5 and rows.min() >= 95 and rows.max() <= 165 and columns.max() <= 225
    page = (tmp_path / "out" / "report.html").read_text()
    assert "images/local_to_global/fig1-diff.png" in page and "% of the pixels" in page


def test_paper_names_the_paper_settings_only(tmp_path, capsys):
    from replication.diff.tree_comparison import main

    tree_from_reference(ROOT / "figures/reference/smoke", tmp_path)  # a root built at smoke settings
    assert main(["paper", "reference/smoke", "--root", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds the settings 'smoke'" in err and "make clean-paper && make figures" in err
