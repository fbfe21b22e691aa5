"""The commands a message suggests for a set of settings and for a named tree
(replication.variants.commands), and the refusals a build meets when its settings are not its
tree's (replication.variants.checks), checked on the smoke settings and on small hand-made records."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from helpers import shared_scope
from replication.errors import ConfigError
from replication.make_command import PAPER_CONFIG, SMOKE_CONFIG
from replication.paths import PROJECT_ROOT
from replication.variants import (
    check_root,
    check_tree,
    resolve,
    settings_command,
    tree_base,
    variant_command,
    variant_settings_file,
)
from replication.variants import commands as commands_module

LR = "local_to_global.transformer.optimizer.lr"
SEEDS = "local_to_global.transformer.experiments.fig3.seeds"


@pytest.fixture(scope=shared_scope)
def smoke() -> dict:
    return resolve([SMOKE_CONFIG])


@pytest.fixture
def base_settings(smoke, monkeypatch):
    """The smoke settings resolved once: the commands resolve their base for every message."""

    def resolved(configfiles, overlay=()):
        assert not overlay and [Path(path) for path in configfiles] == [SMOKE_CONFIG], configfiles
        return copy.deepcopy(smoke)

    monkeypatch.setattr(commands_module, "resolve", resolved)


def changed(config: dict, **values) -> dict:
    """A copy of ``config`` with the transformer's ``lr`` and fig3 ``seeds`` as given, and ``variant``."""
    config = copy.deepcopy(config)
    transformer = config["local_to_global"]["transformer"]
    if "lr" in values:
        transformer["optimizer"]["lr"] = values["lr"]
    if "seeds" in values:
        transformer["experiments"]["fig3"]["seeds"] = values["seeds"]
    if "variant" in values:
        config["variant"] = values["variant"]
    return config


def recorded(tree: Path, name: str, settings: dict | None = None, over: str = "smoke") -> Path:
    """``tree`` with a record (name, base and settings) and nothing else."""
    (tree / "figures").mkdir(parents=True)
    record = {"name": name, "over": over} | ({} if settings is None else {"settings": settings})
    (tree / "figures" / "settings.yaml").write_text(yaml.safe_dump(record))
    return tree


def test_a_config_files_own_settings_are_built_with_that_file_alone(smoke, base_settings):
    assert settings_command(smoke) == "make figures CONFIG=config/smoke.yaml"
    # A key the settings lack is no value to set: only values that differ from the base are SET.
    fewer = copy.deepcopy(smoke)
    del fewer["local_to_global"]["transformer"]["batch_size"]
    assert settings_command(fewer, "phase") == "make phase CONFIG=config/smoke.yaml"


def test_the_paper_settings_are_built_by_the_plain_command():
    assert settings_command(resolve([]), "phase") == "make phase"  # no value differs from the paper's


def test_other_values_are_set_over_the_base_in_the_variant_named_unless_that_name_is_taken(smoke, base_settings):
    config = changed(smoke, lr=0.002, seeds=[4, 5], variant="lr")
    sets = f"SET='{SEEDS}=[4, 5] {LR}=0.002'"  # sorted by key
    derived = "seeds=_4_5_,lr=0.002"
    assert settings_command(config, "phase") == f"make phase CONFIG=config/smoke.yaml VARIANT=lr {sets}"
    assert settings_command(config, taken=["lr"]) == f"make figures CONFIG=config/smoke.yaml {sets}"
    unnamed = changed(smoke, lr=0.002, seeds=[4, 5], variant=None)
    assert settings_command(unnamed, taken=["lr"]) == f"make figures CONFIG=config/smoke.yaml {sets}"
    # Both names taken: the derived name with a suffix, however the taken names are given.
    for taken in (["lr", derived], iter(["lr", derived]), (name for name in ("lr", derived))):
        assert settings_command(config, taken=taken) == (
            f"make figures CONFIG=config/smoke.yaml VARIANT={derived}-2 {sets}"
        )


def test_a_tree_is_over_the_base_its_record_names(tmp_path):
    assert tree_base(tmp_path) == PAPER_CONFIG  # no record: the default
    assert tree_base(tmp_path, SMOKE_CONFIG) == SMOKE_CONFIG
    assert tree_base(recorded(tmp_path / "s", "s", over="smoke"), PAPER_CONFIG) == SMOKE_CONFIG
    assert tree_base(recorded(tmp_path / "p", "p", over="paper"), SMOKE_CONFIG) == PAPER_CONFIG
    (tmp_path / "old" / "figures").mkdir(parents=True)
    (tmp_path / "old" / "figures" / "settings.yaml").write_text("name: old\n")  # a record before 'over'
    assert tree_base(tmp_path / "old", SMOKE_CONFIG) == PAPER_CONFIG


def test_a_named_tree_is_built_by_its_variant_its_config_file_or_its_folder(tmp_path, monkeypatch):
    variants = tmp_path / "variants"
    smoke_placeholder = "SET='key.path=value ...'"
    # A variant file: the variant, over its tree's base where it has a tree, else over the config given.
    assert variant_command("fig4-chain", tmp_path) == "make figures VARIANT=fig4-chain"
    expected = "make phase CONFIG=config/smoke.yaml VARIANT=fig4-chain"
    assert variant_command("fig4-chain", tmp_path, SMOKE_CONFIG, "phase") == expected
    recorded(variants / "fig4-chain", "fig4-chain", over="smoke")
    assert (
        variant_command("fig4-chain", tmp_path, PAPER_CONFIG)
        == "make figures CONFIG=config/smoke.yaml VARIANT=fig4-chain"
    )
    # A tree that keeps its variant.yaml: the variant again.
    recorded(variants / "lr2x", "lr2x", over="smoke")
    (variants / "lr2x" / "variant.yaml").write_text("variant: lr2x\n")
    assert variant_command("lr2x", tmp_path) == "make figures CONFIG=config/smoke.yaml VARIANT=lr2x"
    # The tree of a config file: that file, in this tree.
    assert variant_command("smoke", tmp_path) == f"make figures CONFIG=config/smoke.yaml WORKDIR={variants / 'smoke'}"
    # A tree built with WORKDIR= and no variant: its base, in that tree.
    recorded(variants / "old", "old", over="smoke")
    assert (
        variant_command("old", tmp_path, goal="phase")
        == f"make phase CONFIG=config/smoke.yaml WORKDIR={variants / 'old'}"
    )
    # Nothing holds the settings (config/config.yaml is the paper's, no variant's): SET to fill in.
    assert variant_command("config", tmp_path) == f"make figures VARIANT=config {smoke_placeholder}"
    assert variant_command("new", tmp_path, SMOKE_CONFIG, "phase") == (
        f"make phase CONFIG=config/smoke.yaml VARIANT=new {smoke_placeholder}"
    )
    monkeypatch.chdir(tmp_path)  # by default the root is the current folder
    assert variant_command("old") == f"make figures CONFIG=config/smoke.yaml WORKDIR={variants / 'old'}"


def test_a_tree_without_a_record_of_settings_accepts_any_build(tmp_path):
    check_tree({"model": {"lr": 0.1}}, tmp_path)
    recorded(tmp_path, "old")  # a record from before records held the settings
    check_tree({"model": {"lr": 0.1}}, tmp_path)


def test_a_tree_accepts_its_own_settings_and_settings_it_never_had(tmp_path):
    recorded(tmp_path, "lr", {"model": {"lr": 0.1, "depth": 2}})
    check_tree({"model": {"lr": 0.1, "depth": 2}, "variant": "other", "diff": {"k": 3}}, tmp_path)
    check_tree({"model": {"lr": 0.1, "depth": 2, "width": 8}, "new_paper": {"rate": 2}}, tmp_path)


@pytest.mark.parametrize("changes, more", [(3, ""), (4, " and 1 more"), (6, " and 3 more")])
def test_a_refusal_names_the_first_three_changed_values_and_counts_the_rest(tmp_path, base_settings, changes, more):
    recorded(tmp_path, "lr", {"model": {key: index for index, key in enumerate("abcdef")}})
    wanted = {key: index + (10 if index < changes else 0) for index, key in enumerate("abcdef")}
    with pytest.raises(ConfigError) as error:
        check_tree({"settings": "smoke", "variant": "lr", "model": wanted}, tmp_path)
    # Every value of the section the smoke settings lack is SET, changed or not.
    sets = " ".join(f"model.{key}={value}" for key, value in wanted.items())
    assert str(error.value) == (
        f"the tree {tmp_path} holds the settings 'lr' and these differ in "
        f"model.a (0 -> 10), model.b (1 -> 11), model.c (2 -> 12){more}; "
        f"build them in a tree of their own: make figures CONFIG=config/smoke.yaml SET='{sets}'"
    )


def test_the_refusal_suggests_the_goal_that_was_asked_for(tmp_path, base_settings):
    recorded(tmp_path, "lr", {"model": {"lr": 0.1}})
    with pytest.raises(ConfigError, match=r"build them in a tree of their own: make phase CONFIG=config/smoke\.yaml "):
        check_tree({"settings": "smoke", "model": {"lr": 0.2}}, tmp_path, "phase")


def test_a_variant_named_alone_takes_its_trees_settings_over_the_same_base_only(tmp_path, monkeypatch):
    recorded(tmp_path / "variants" / "workdir", "workdir", over="smoke")  # built with WORKDIR=, no variant.yaml
    assert variant_settings_file("workdir", [], tmp_path, SMOKE_CONFIG) is None
    (tmp_path / "variants" / "workdir" / "variant.yaml").write_text("variant: workdir\n")
    monkeypatch.chdir(tmp_path)  # by default the root is the current folder
    assert variant_settings_file("workdir", [], config=SMOKE_CONFIG) == Path("variants/workdir/variant.yaml")
    with pytest.raises(ConfigError) as error:
        variant_settings_file("workdir", [], config=PAPER_CONFIG, goal="phase")
    assert str(error.value) == (
        "variant 'workdir': its tree variants/workdir holds settings over smoke.yaml, not over config.yaml; "
        "build it with: make phase CONFIG=config/smoke.yaml VARIANT=workdir"
    )


def test_the_root_takes_the_paper_settings_as_given_or_as_resolved():
    check_root({"model": {"lr": 0.1}}, PROJECT_ROOT, paper={"model": {"lr": 0.1}, "variant": None})
    check_root(resolve([]), PROJECT_ROOT)  # the paper's settings resolved from config/config.yaml


def test_the_root_refuses_other_settings_and_counts_the_values_that_differ(base_settings):
    paper = {"model": {"lr": 0.1, "depth": 2}}
    with pytest.raises(ConfigError) as error:
        check_root({"settings": "smoke", "model": {"lr": 0.2, "depth": 3, "width": 8}}, PROJECT_ROOT, paper, "phase")
    assert str(error.value) == (
        "the project root is the tree of the paper's settings, not of the settings 'smoke' (2 keys differ); "
        "build them in their own tree: make phase CONFIG=config/smoke.yaml "
        "SET='model.depth=3 model.lr=0.2 model.width=8'"
    )
    # The same values under a variant's name: no value differs, the name does.
    with pytest.raises(ConfigError) as error:
        check_root({"settings": "smoke", "variant": "lr", **paper}, PROJECT_ROOT, paper)
    assert str(error.value) == (
        "the project root is the tree of the paper's settings, not of the settings 'lr'; build them in their own "
        "tree: make figures CONFIG=config/smoke.yaml VARIANT=lr SET='model.depth=2 model.lr=0.1'"
    )
    # A config file's own settings (the smoke learning rate): its make command, or Snakemake in its tree.
    smoke_values = {"local_to_global": {"transformer": {"optimizer": {"lr": 0.001}}}}
    with pytest.raises(ConfigError) as error:
        check_root({"settings": "smoke", **smoke_values}, PROJECT_ROOT, paper, "phase")
    assert str(error.value).endswith(
        "build them in their own tree: make phase CONFIG=config/smoke.yaml "
        "(or: snakemake figures/all --directory variants/smoke --configfile config/smoke.yaml)"
    )
