"""Trees as ``make compare`` reads them (replication.diff.trees) in temporary folders: a built tree
and a reference set (their figures, files, claims and record), the one-line refusals of a tree that
is not built, holds no figures or is a stale paper tree, where each name of ``locate`` points, and the
command that builds each kind of tree."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from replication.diff.trees import REFERENCE_SETS, Tree, build_command, locate
from replication.make_command import SMOKE_CONFIG
from replication.variants import RECORD

REFERENCES = ", ".join(f"reference/{path.name}" for path in sorted(REFERENCE_SETS.iterdir()) if path.is_dir())


def built_tree(root, name="fig4p", manifest=True, record=True):
    """A tree as the pipeline leaves it: the manifest figures/all (tab-separated: its figures' PDFs,
    PNGs and data, its tables and reports) and the record figures/settings.yaml."""
    (root / "figures").mkdir(parents=True)
    if manifest:
        paths = ["figures/p/b.pdf", "figures/p/b.png", "results/claims.csv", "figures/p/a.pdf", "figures/claims.md"]
        frame = pd.DataFrame({"path": paths, "settings": name, "settings_sha256": "0" * 8})
        frame.to_csv(root / "figures" / "all", sep="\t", index=False)
    if record:
        (root / RECORD).write_text(yaml.safe_dump({"name": name, "settings": {"seed": 1}}))
    return root


def reference_set(root, figures=("p/x", "q/y")):
    root.mkdir(parents=True)
    (root / "settings.yaml").write_text(yaml.safe_dump({"name": "smoke", "settings": {"seed": 2}}))
    for key in figures:
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / f"{key}.png").write_bytes(b"png")
    return root


CLAIMS = "paper,claim_id,holds\nP,007,True\n"


def test_a_built_tree_lists_the_pdfs_of_its_manifest(tmp_path):
    tree = Tree("B", built_tree(tmp_path / "b"))
    assert not tree.is_reference and (tree.label, tree.root) == ("B", tmp_path / "b")
    assert tree.keys() == ["p/a", "p/b"]
    assert tree.file("p/a", "png") == tmp_path / "b" / "figures" / "p" / "a.png"
    assert tree.record() == {"name": "fig4p", "settings": {"seed": 1}}
    assert tree.claims() is None
    (tmp_path / "b" / "results").mkdir()
    (tmp_path / "b" / "results" / "claims.csv").write_text(CLAIMS)
    assert tree.claims().to_dict("records") == [{"paper": "P", "claim_id": "007", "holds": True}]


def test_a_reference_set_lists_its_pngs(tmp_path):
    tree = Tree("reference", reference_set(tmp_path / "ref"))
    assert tree.is_reference
    assert tree.keys() == ["p/x", "q/y"]
    assert tree.file("q/y", "csv") == tmp_path / "ref" / "q" / "y.csv"
    assert tree.record() == {"name": "smoke", "settings": {"seed": 2}}
    assert tree.claims() is None
    (tmp_path / "ref" / "claims.csv").write_text(CLAIMS)
    (tmp_path / "ref" / "results").mkdir()
    (tmp_path / "ref" / "results" / "claims.csv").write_text("paper,claim_id,holds\nP,008,False\n")
    assert list(tree.claims().claim_id) == ["007"]


def test_a_reference_set_without_figures_is_refused(tmp_path):
    root = reference_set(tmp_path / "empty", figures=())
    with pytest.raises(FileNotFoundError) as refused:
        Tree("B", root)
    assert str(refused.value) == f"B: the reference set {root} holds no figures; make bless writes it"


@pytest.mark.parametrize(
    "made, missing, config",
    [
        # Its record names its base (the paper's); without one, the other side's base is suggested.
        ({"manifest": False}, "figures/all", ""),
        ({"record": False}, "figures/settings.yaml", "CONFIG=config/smoke.yaml "),
        ({}, "figures/all", "CONFIG=config/smoke.yaml "),
    ],
)
def test_a_tree_that_is_not_built_is_refused_with_its_command(tmp_path, made, missing, config):
    root = built_tree(tmp_path / "b", **made) if made else tmp_path / "b"
    root.mkdir(exist_ok=True)
    with pytest.raises(FileNotFoundError) as refused:
        Tree("B", root, SMOKE_CONFIG)
    assert str(refused.value) == (
        f"B: the tree {root} is not built (no {missing}); build it with: make figures {config}WORKDIR={root}"
    )


@pytest.mark.parametrize("record, shown", [({"name": "smoke"}, "smoke"), ({"settings": {}}, "")])
def test_a_paper_tree_built_with_other_settings_is_stale(tmp_path, record, shown):
    root = built_tree(tmp_path / "b")
    (root / RECORD).write_text(yaml.safe_dump(record))
    with pytest.raises(FileNotFoundError) as refused:
        Tree("paper", root)
    assert str(refused.value) == (
        f"paper: the tree {root} holds the settings '{shown}', not the paper's; "
        "rebuild it with: make clean-paper && make figures"
    )
    assert Tree("other", root).record() == record  # only the paper's tree must hold the paper's settings


def test_the_paper_tree_with_the_papers_settings(tmp_path):
    assert Tree("paper", built_tree(tmp_path / "b", name="paper")).keys() == ["p/a", "p/b"]


def test_locate_paper_references_variants_and_folders(tmp_path, monkeypatch):
    (tmp_path / "variants" / "v1").mkdir(parents=True)
    assert locate("paper", tmp_path) == tmp_path
    assert locate("paper") == locate("paper", ".")
    assert str(locate("paper")) == "."
    assert locate("reference", tmp_path) == REFERENCE_SETS / "config"
    assert locate("reference", tmp_path, "smoke") == REFERENCE_SETS / "smoke"
    assert locate("reference/phase", tmp_path, "smoke") == REFERENCE_SETS / "phase"
    assert locate("reference/a/b", tmp_path) == REFERENCE_SETS / "a" / "b"
    assert locate("v1", tmp_path) == tmp_path / "variants" / "v1"
    assert locate(str(tmp_path / "variants"), tmp_path) == tmp_path / "variants"
    # A folder named relative to the current folder, not under the root's variants/.
    (tmp_path / "elsewhere" / "tree").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert locate("tree", tmp_path) == locate("tree") == Path("tree")


def test_an_unknown_name_lists_the_trees_the_closest_and_its_command(tmp_path, monkeypatch):
    built_tree(tmp_path, name="paper")
    built_tree(tmp_path / "variants" / "fig4p")
    (tmp_path / "variants" / "unbuilt").mkdir()
    with pytest.raises(FileNotFoundError) as refused:
        locate("fig4q", tmp_path, base=SMOKE_CONFIG)
    assert str(refused.value) == (
        f"no tree named 'fig4q': did you mean fig4p? the trees: paper, fig4p, {REFERENCES} (or a folder); "
        "build it with: make figures CONFIG=config/smoke.yaml VARIANT=fig4q SET='key.path=value ...'"
    )
    # A path to a folder that does not exist (relative to the current folder): built there.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as refused:
        locate("elsewhere/tree", tmp_path)
    assert str(refused.value) == (
        f"no tree named 'elsewhere/tree': the trees: paper, fig4p, {REFERENCES} (or a folder); "
        f"build it with: make figures WORKDIR={(tmp_path / 'elsewhere' / 'tree').resolve()}"
    )


def test_the_command_that_builds_each_kind_of_tree(tmp_path):
    assert build_command("paper", tmp_path) == "make figures"
    assert build_command("reference", tmp_path) == build_command("reference/smoke", tmp_path) == "make bless"
    variant = tmp_path / "variants" / "fig4p"
    assert build_command("fig4p", variant, SMOKE_CONFIG) == (
        "make figures CONFIG=config/smoke.yaml VARIANT=fig4p SET='key.path=value ...'"
    )
    # A folder of another name, or one outside variants/: built where it lies, over its recorded base.
    assert build_command("other", variant, SMOKE_CONFIG) == f"make figures CONFIG=config/smoke.yaml WORKDIR={variant}"
    folder = tmp_path / "fig4p"
    assert build_command("fig4p", folder, SMOKE_CONFIG) == f"make figures CONFIG=config/smoke.yaml WORKDIR={folder}"
    built_tree(folder)
    (folder / RECORD).write_text(yaml.safe_dump({"name": "fig4p", "over": "smoke"}))
    assert build_command("fig4p", folder) == f"make figures CONFIG=config/smoke.yaml WORKDIR={folder}"
