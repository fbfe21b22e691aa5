"""Path arithmetic (replication.paths): the project root of a checkout or an installed package, a
figure's three files and its key, reference sets, and how messages name paths and trees."""

from pathlib import Path

from helpers import ROOT
from replication import paths


def test_the_project_root_is_the_checkout_this_package_lies_in():
    assert paths.project_root() == ROOT
    assert paths.PROJECT_ROOT == ROOT


def installed_at(monkeypatch, site: Path) -> None:
    """Make the module look as if installed under ``site`` (no checkout around it)."""
    monkeypatch.setattr(paths, "__file__", str(site / "replication" / "paths.py"))


def test_an_installed_package_takes_its_root_from_the_environment_or_the_current_folder(tmp_path, monkeypatch):
    site, checkout, elsewhere = tmp_path / "site", tmp_path / "checkout", tmp_path / "elsewhere"
    for folder in (site, checkout, elsewhere):
        folder.mkdir()
    installed_at(monkeypatch, site / "lib")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("REPLICATION_ROOT", str(checkout))
    assert paths.project_root() == checkout
    monkeypatch.delenv("REPLICATION_ROOT")
    assert paths.project_root() == elsewhere
    monkeypatch.setenv("REPLICATION_ROOT", "")
    assert paths.project_root() == elsewhere


def test_a_checkout_is_known_by_its_snakefile(tmp_path, monkeypatch):
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow" / "Snakefile").write_text("")
    installed_at(monkeypatch, tmp_path / "src")
    monkeypatch.setenv("REPLICATION_ROOT", str(ROOT))
    assert paths.project_root() == tmp_path.resolve()


def test_a_figure_has_a_pdf_a_png_and_a_csv_and_a_key_in_its_reference_set():
    assert paths.figure_paths("figures/demo/fig1.pdf") == {
        "pdf": Path("figures/demo/fig1.pdf"),
        "png": Path("figures/demo/fig1.png"),
        "csv": Path("figures/demo/fig1.csv"),
    }
    assert paths.figure_key("figures/demo/fig1.pdf") == "demo/fig1"
    assert paths.figure_key(Path("figures/demo/fig1.png")) == "demo/fig1"
    assert paths.figure_key("elsewhere/demo/fig1.pdf") == "elsewhere/demo/fig1"  # kept whole outside figures/


def test_a_reference_set_lies_under_the_project_root_and_a_manifest_names_its_set(tmp_path):
    settings = {"reference_dir": "references", "reference_set": "config"}
    assert paths.reference_set_dir(settings, str(tmp_path)) == tmp_path / "references" / "config"
    assert paths.manifest_reference_set("all") == "config"
    assert paths.manifest_reference_set("heavy") == "heavy"


def test_messages_name_paths_inside_the_checkout_relative_to_it(tmp_path):
    assert paths.shown_path(ROOT / "config" / "smoke.yaml") == "config/smoke.yaml"
    assert paths.shown_path(ROOT) == "."
    assert paths.shown_path(tmp_path / "x.yaml") == str((tmp_path / "x.yaml").resolve())
    assert paths.shown_tree(ROOT) == "the project root"
    assert paths.shown_tree(ROOT / "variants" / "smoke") == "the tree variants/smoke"
    assert paths.shown_tree(tmp_path) == f"the tree {tmp_path.resolve()}"


def test_files_under_an_unset_folder_are_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stray.txt").write_text("")  # in the current folder: not read for an unset folder
    assert paths.files_under("") == [] and paths.files_under(None) == []
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("")
    (tmp_path / "sub" / "a.txt").write_text("")
    assert paths.files_under("sub") == ["sub/a.txt", "sub/b.txt"]
