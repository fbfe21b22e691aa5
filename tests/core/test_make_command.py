"""The make command lines the project prints (replication.make_command): each variable appears only
where it differs from the Makefile's default, in a fixed order, quoted as one shell word; the tree a
config file builds in, the settings a resolved config lies over, and a goal's target and back."""

import shlex
import sys

from replication.make_command import (
    PAPER_CONFIG,
    SMOKE_CONFIG,
    base_config,
    default_workdir,
    goal_of,
    make_command,
    option_value,
    python_command,
    quoted,
    target_of,
)
from replication.paths import PROJECT_ROOT, shown_path


def test_the_paper_settings_build_in_the_root_and_any_other_file_in_its_variant_tree(tmp_path):
    assert default_workdir(PAPER_CONFIG) == PROJECT_ROOT
    assert default_workdir(str(PAPER_CONFIG)) == PROJECT_ROOT
    assert default_workdir(SMOKE_CONFIG) == PROJECT_ROOT / "variants" / "smoke"
    assert default_workdir(tmp_path / "wide.yaml") == PROJECT_ROOT / "variants" / "wide"


def test_a_resolved_config_lies_over_the_smoke_or_the_paper_settings():
    assert base_config({"settings": "smoke"}) == SMOKE_CONFIG
    assert base_config({"settings": "paper"}) == PAPER_CONFIG
    assert base_config({}) == PAPER_CONFIG


def test_a_goal_leads_back_to_its_target():
    assert target_of("build MANIFEST=heavy") == "figures/heavy"
    assert target_of("diff") == "figures/diff/passed"
    assert target_of("figures") == "figures/all"
    assert goal_of(["--cores", "2", "figures/diff/passed"]) == "diff"
    assert goal_of(["figures"]) == "figures"  # a bare word is no manifest target


def test_an_options_value_follows_it_or_its_equals_sign():
    assert option_value(["--cores", "2", "--cores", "3"], "--cores") == "2"  # the first one given
    assert option_value(["-n", "--cores", "4"], "--cores") == "4"
    assert option_value(["--set=a=b", "x"], "--set") == "a=b"
    assert option_value(["--set", "--cores"], "--cores") is None


def test_a_value_is_one_shell_word_in_single_quotes():
    assert quoted("a.b=1 c=2") == "'a.b=1 c=2'"
    assert quoted("a.b=1") == "'a.b=1'"  # quoted even where the shell would not need it
    assert quoted("it's") == shlex.quote("it's")
    assert shlex.split(quoted("it's here")) == ["it's here"]


def test_the_default_run_is_plain_make_figures():
    assert make_command() == "make figures"
    assert make_command("diff", PAPER_CONFIG, sets="  ", cores="all", workdir=PROJECT_ROOT) == "make diff"
    assert make_command(config=SMOKE_CONFIG, workdir=PROJECT_ROOT / "variants" / "smoke") == (
        "make figures CONFIG=config/smoke.yaml"
    )


def test_every_variable_that_differs_from_its_default_appears_in_order(tmp_path):
    command = make_command(
        "build MANIFEST=heavy",
        SMOKE_CONFIG,
        variant="wide",
        sets=" a.b=1 c=2 ",
        cores="4",
        workdir=tmp_path,
        SWEEP="x y",
        NAME="plain",
    )
    assert command == (
        "make build MANIFEST=heavy CONFIG=config/smoke.yaml VARIANT=wide SET='a.b=1 c=2' "
        f"SWEEP='x y' NAME=plain CORES=4 WORKDIR={tmp_path.resolve()}"
    )
    assert shlex.split(command)[5:7] == ["SET=a.b=1 c=2", "SWEEP=x y"]


def test_a_python_command_is_typed_with_this_environments_interpreter():
    command = python_command("replication.demo", ["--name", "a b"])
    assert command == f"{shlex.quote(shown_path(sys.executable))} -m replication.demo --name 'a b'"
