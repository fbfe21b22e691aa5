"""What a variant with no settings, a stale tree and a mismatch say, and that the commands they
suggest rebuild the settings asked for over the same base (replication.variants.commands).
tests/workflow/test_suggested_commands.py runs each suggestion's dry run."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml

from helpers import ROOT
from replication.errors import ConfigError
from replication.make_command import PAPER_CONFIG, SMOKE_CONFIG, make_command
from replication.variants import (
    check_tree,
    parse_assignments,
    prepare,
    record_of,
    resolve,
    settings_command,
    split_assignments,
    tree_settings,
    variant_settings_file,
)
from replication.variants.cli import main as variants_main

SMOKE = str(SMOKE_CONFIG)
LR = "local_to_global.transformer.optimizer.lr"


def built_tree(root, name, config, overlay=None):
    """``root/variants/name`` as a build leaves it before any job: its record (and its variant.yaml)."""
    tree = root / "variants" / name
    (tree / "figures").mkdir(parents=True)
    (tree / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(config)))
    if overlay is not None:
        (tree / "variant.yaml").write_text(yaml.safe_dump({**overlay, "variant": name}))
    return tree


def files_under(root):
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


def test_a_misspelt_variant_stops_in_one_line_naming_the_variants_there(tmp_path, capsys):
    built_tree(tmp_path, "smoke", resolve([SMOKE]))
    lr = parse_assignments([f"{LR}=0.002"])
    built_tree(tmp_path, "lr2x", resolve([SMOKE], {**lr, "variant": "lr2x"}), overlay=lr)
    before = files_under(tmp_path)
    argv = ["--name", "fig4-chian", "--configfile", SMOKE, "--root", str(tmp_path), "--make-goal", "figures"]
    assert variants_main([*argv, "--", "figures/all", "--cores", "1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Invalid config: variant 'fig4-chian' has no settings: ")
    assert "did you mean fig4-chain: make figures CONFIG=config/smoke.yaml VARIANT=fig4-chain;" in err
    assert (
        "the variants: fig4-chain, plateau, plateau-batches, plateau-cells (config/variants/), lr2x, smoke "
        "(built in variants/)" in err
    )
    assert err.rstrip().endswith("make figures CONFIG=config/smoke.yaml VARIANT=fig4-chian SET='key.path=value ...'")
    assert files_under(tmp_path) == before  # nothing laid out, nothing seeded
    # The goal that was asked for is the one suggested.
    with pytest.raises(ConfigError, match=r"make plateau VARIANT=plateaux SET="):
        variant_settings_file("plateaux", [], tmp_path, PAPER_CONFIG, "plateau")


def test_the_variants_listed_are_the_files_then_the_other_trees_built(tmp_path, monkeypatch):
    from replication.variants import commands
    from replication.variants.commands import known_variants

    (tmp_path / "figures").mkdir()  # the root's own record: the paper's tree, not a variant
    (tmp_path / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(resolve([]))))
    built_tree(tmp_path, "fig4-chain", resolve([SMOKE]))  # built from its file: listed once, as a file
    built_tree(tmp_path, "lr2x", resolve([SMOKE]))
    files, built = known_variants(tmp_path)
    assert "fig4-chain" in files and built == ["lr2x"]
    monkeypatch.chdir(tmp_path)  # the root: the current folder
    assert known_variants() == (files, built)
    # No variant file and no tree: the listing says so; a name close to none gets no guess.
    monkeypatch.setattr(commands, "VARIANT_FILES", tmp_path / "no-files")
    message = commands.unknown_variant("zzz", tmp_path / "empty", PAPER_CONFIG, "phase")
    assert message == (
        "variant 'zzz' has no settings: no config/variants/zzz.yaml, no SET and no tree variants/zzz; "
        "the variants: none (config/variants/); a new variant takes them from SET: "
        "make phase VARIANT=zzz SET='key.path=value ...'"
    )


def test_a_variant_takes_its_settings_from_its_file_its_set_or_its_tree(tmp_path):
    lr = parse_assignments([f"{LR}=0.002"])
    tree = built_tree(tmp_path, "lr2x", resolve([SMOKE], {**lr, "variant": "lr2x"}), overlay=lr)
    assert variant_settings_file("fig4-chain", [], tmp_path, SMOKE_CONFIG) is None  # its file: prepare reads it
    assert variant_settings_file("typo", [f"{LR}=0.003"], tmp_path, SMOKE_CONFIG) is None  # SET
    assert variant_settings_file(None, [f"{LR}=0.003"], tmp_path, SMOKE_CONFIG) is None
    overlay = variant_settings_file("lr2x", [], tmp_path, SMOKE_CONFIG)
    assert overlay == tree / "variant.yaml"
    # Built again from its tree's settings: the same settings, so its record accepts the build.
    _, _, config = prepare("lr2x", [SMOKE], [], tmp_path, variant_file=overlay)
    check_tree(config, tree)
    assert config["local_to_global"]["transformer"]["optimizer"]["lr"] == 0.002
    # Over another base than its tree's: one line with the command that builds it.
    with pytest.raises(ConfigError) as error:
        variant_settings_file("lr2x", [], tmp_path, PAPER_CONFIG)
    message = str(error.value)
    assert "\n" not in message and message.endswith("build it with: make figures CONFIG=config/smoke.yaml VARIANT=lr2x")


def suggested_set(command: str) -> list[str]:
    words = dict(word.split("=", 1) for word in shlex.split(command)[2:])
    return split_assignments(words.get("SET", ""))


@pytest.mark.parametrize(
    "configfiles, overlay",
    [
        ([SMOKE], {"local_to_global": {"phase": {"inits": ["standard"]}, "transformer": {"optimizer": {"lr": 2e-5}}}}),
        ([], {"benign_overfitting": {"grid": {"seeds": [1, 2, 3]}}, "variant": "seeds3"}),
        ([SMOKE], {**yaml.safe_load((ROOT / "config/variants/fig4-chain.yaml").read_text()), "variant": "fig4-chain"}),
    ],
)
def test_the_suggested_set_builds_the_same_settings_over_the_same_base(configfiles, overlay):
    config = resolve(configfiles, overlay)
    command = settings_command(config)
    base = [SMOKE] if config.get("settings") == "smoke" else []
    assert ("CONFIG=config/smoke.yaml" in command) == bool(base)
    rebuilt = resolve(base, parse_assignments(suggested_set(command)))
    assert tree_settings(rebuilt) == tree_settings(config)
    if config.get("variant"):
        assert f"VARIANT={config['variant']}" in command


def test_a_mismatch_names_the_base_and_a_stale_tree_its_fresh_build(tmp_path):
    smoke = resolve([SMOKE])
    (tmp_path / "figures").mkdir()
    # A smoke tree, asked for another learning rate: a variant over the smoke settings.
    (tmp_path / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(smoke)))
    with pytest.raises(ConfigError) as error:
        check_tree(resolve([SMOKE], parse_assignments([f"{LR}=0.002"])), tmp_path, goal="phase")
    assert str(error.value).endswith(f"in a tree of their own: make phase CONFIG=config/smoke.yaml SET='{LR}=0.002'")
    # A smoke tree made before a smoke value changed: only a fresh build of it holds the settings.
    older = resolve([SMOKE], parse_assignments([f"{LR}=0.005"]))
    (tmp_path / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of(older)))
    with pytest.raises(ConfigError) as error:
        check_tree(smoke, tmp_path)
    fresh = make_command("figures", SMOKE_CONFIG, workdir=tmp_path)
    assert fresh == f"make figures CONFIG=config/smoke.yaml WORKDIR={tmp_path}"
    assert str(error.value).endswith(f"rebuild it from scratch: rm -r {tmp_path} && {fresh}")
    # A variant's tree asked for its own name with other values: a tree of another name.
    named = resolve([SMOKE], {**parse_assignments([f"{LR}=0.003"]), "variant": "lr"})
    (tmp_path / "figures" / "settings.yaml").write_text(yaml.safe_dump(record_of({**older, "variant": "lr"})))
    with pytest.raises(ConfigError) as error:
        check_tree(named, tmp_path)
    assert re.search(r"make figures CONFIG=config/smoke.yaml SET='[^']*lr=0.003'$", str(error.value))
