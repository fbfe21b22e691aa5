"""A tree's record of its settings, how two sets of settings differ and which tree is closest
(replication.variants.records), and the settings and names given on the command line
(replication.variants.assignments): plain functions, checked on small hand-made settings."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path

import pytest
import yaml

from replication.errors import ConfigError
from replication.variants import (
    assignments_of,
    check_name,
    closest_tree,
    derived_name,
    differences,
    flatten,
    parse_assignments,
    read_record,
    record_of,
    record_text,
    settings_name,
    settings_sha256,
    split_assignments,
    tree_settings,
    trees,
)


def recorded(tree: Path, settings: dict, name: str = "x") -> Path:
    """``tree`` with a record of ``settings`` in ``figures/settings.yaml``."""
    (tree / "figures").mkdir(parents=True)
    (tree / "figures" / "settings.yaml").write_text(yaml.safe_dump({"name": name, "settings": settings}))
    return tree


def test_the_settings_leave_out_how_a_tree_is_compared_and_named_and_are_plain_values():
    config = {"a": OrderedDict(b=Path("data/x.csv"), c=[1, 2]), "diff": {"k": 10}, "settings": "smoke", "variant": "v"}
    settings = tree_settings(config)
    assert settings == {"a": {"b": "data/x.csv", "c": [1, 2]}}
    assert type(settings["a"]) is dict


def test_a_tree_is_named_by_its_variant_else_its_settings_file_else_paper():
    assert settings_name({"variant": "lr", "settings": "smoke"}) == "lr"
    assert settings_name({"settings": "smoke"}) == "smoke"
    assert settings_name({"variant": None, "settings": None}) == "paper"
    assert settings_name({}) == "paper"


def test_the_settings_hash_ignores_key_order_and_reads_paths_as_text():
    expected = hashlib.sha256(json.dumps({"a": 2, "b": "p/q"}, sort_keys=True).encode()).hexdigest()
    assert settings_sha256({"b": Path("p/q"), "a": 2}) == expected
    assert settings_sha256({"a": 2, "b": "p/q"}) == expected
    assert settings_sha256({"a": 3, "b": "p/q"}) != expected


def test_a_record_names_the_tree_its_base_its_hash_and_its_settings():
    config = {"variant": "lr", "settings": "smoke", "diff": {"k": 10}, "model": {"lr": 0.002}}
    assert record_of(config) == {
        "name": "lr",
        "over": "smoke",
        "sha256": settings_sha256({"model": {"lr": 0.002}}),
        "settings": {"model": {"lr": 0.002}},
    }
    assert record_of({"model": {"lr": 0.1}})["over"] == "paper"
    assert list(record_of(config)) == ["name", "over", "sha256", "settings"]


def test_the_record_file_says_what_it_holds_in_the_records_order_and_wraps_long_lists():
    record = {"name": "lr", "over": "paper", "sha256": "0" * 64, "settings": {"seeds": list(range(1000, 1036))}}
    text = record_text(record)
    lines = text.splitlines()
    assert lines[:2] == [
        "# The settings this tree's figures were made with: the validated config, schema defaults filled in",
        "# (replication.variants). A build with other settings goes to a variant: docs/explore.md.",
    ]
    assert lines[2:5] == ["name: lr", "over: paper", f"sha256: '{'0' * 64}'"]
    assert lines[6].startswith("  seeds: [1000, 1001, ")  # lists in flow style
    # Lines break at 110 columns: the number crossing it is the last on its line.
    assert [len(line) for line in lines[6:]] == [111, 111, 9]
    assert yaml.safe_load(text) == record


def test_a_record_is_read_from_a_working_tree_or_a_reference_set(tmp_path):
    assert read_record(tmp_path) is None
    (tmp_path / "settings.yaml").write_text("name: smoke\n")  # a reference set keeps it at its top
    assert read_record(tmp_path) == {"name": "smoke"}
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "settings.yaml").write_text("name: lr\n")  # a working tree's comes first
    assert read_record(str(tmp_path)) == {"name": "lr"}


def test_flatten_names_every_leaf_by_its_path_and_keeps_lists_and_empty_mappings_whole():
    nested = {"a": {"b": 1, "c": {"d": [1, 2]}, "e": {}}, 3: "x"}
    assert flatten(nested) == {"a.b": 1, "a.c.d": [1, 2], "a.e": {}, "3": "x"}
    assert flatten({"a": 1}, "top") == {"top.a": 1}
    assert flatten(5) == {"": 5}
    assert flatten({}) == {"": {}}


def test_differences_are_sorted_by_key_with_none_where_a_side_lacks_the_key():
    a = {"model": {"lr": 0.1, "depth": 2}, "old": 1, "same": [1]}
    b = {"model": {"lr": 0.2, "depth": 2}, "new": 3, "same": [1]}
    assert differences(a, b) == [("model.lr", 0.1, 0.2), ("new", None, 3), ("old", 1, None)]
    assert differences(a, a) == []


def test_assignments_write_each_new_value_as_set_reads_it_back():
    changes = [
        ("a.lr", 0.1, 0.002),
        ("a.seeds", [1], [1, 2, 3]),
        ("a.init", "x", "standard"),
        ("a.title", None, "two words"),
        ("a.map", None, {"p": {"q": 1}}),
        ("a.off", 1, None),
        ("a.flag", False, True),
    ]
    words = assignments_of(changes)
    assert words == [
        "a.lr=0.002",
        "a.seeds=[1, 2, 3]",
        "a.init=standard",
        'a.title="two words"',
        "a.map={p: {q: 1}}",
        "a.off=null",
        "a.flag=true",
    ]
    assert parse_assignments(split_assignments(" ".join(words))) == {
        "a": {key.split(".")[1]: new for key, _, new in changes}
    }
    # However long a value, it stays one word of SET (a line break would end the make command).
    (long,) = assignments_of([("a.names", None, [f"{index:0150d}" for index in range(480)])])
    assert len(long) > 72000 and "\n" not in long


def test_the_trees_are_the_root_and_each_variant_folder_with_a_record(tmp_path, monkeypatch):
    assert trees(tmp_path) == {}
    recorded(tmp_path / "variants" / "b", {})
    recorded(tmp_path / "variants" / "a", {})
    (tmp_path / "variants" / "unbuilt").mkdir()
    (tmp_path / "variants" / "notes.txt").write_text("")
    assert trees(tmp_path) == {"a": tmp_path / "variants" / "a", "b": tmp_path / "variants" / "b"}
    recorded(tmp_path, {})
    found = trees(tmp_path)
    assert list(found) == ["paper", "a", "b"] and found["paper"] == tmp_path
    monkeypatch.chdir(tmp_path)  # by default the root is the current folder
    assert trees() == {"paper": Path("."), "a": Path("variants/a"), "b": Path("variants/b")}


def test_the_closest_tree_differs_in_the_fewest_keys_and_ties_go_to_the_first_name(tmp_path):
    wanted = {"a": 1, "b": 2, "c": 3}
    near = recorded(tmp_path / "near", {"a": 1, "b": 2, "c": 0})
    far = recorded(tmp_path / "far", {"a": 0, "b": 0, "c": 3})
    tie = recorded(tmp_path / "tie", {"a": 1, "b": 0, "c": 3})
    assert closest_tree(wanted, {"far": far, "near": near}) == near
    assert closest_tree(wanted, {"tie": tie, "near": near}) == near
    assert closest_tree(wanted, {}) is None


def test_set_keeps_brackets_braces_and_quotes_whole_and_splits_on_other_spaces():
    text = "  a=[1, [2, 3]]  b={p: 'x y', q: [1]}\tc='u v' d=\"w x\" e=XYZ  "
    assert split_assignments(text) == ["a=[1, [2, 3]]", "b={p: 'x y', q: [1]}", "c='u v'", 'd="w x"', "e=XYZ"]
    assert split_assignments('a="it\'s" b=\'say "hi"\'') == ['a="it\'s"', "b='say \"hi\"'"]
    assert split_assignments("") == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("a=[1, 2} b=1", "settings 'a=[1, 2} b=1': unmatched '}'; allowed: key.path=value ..., e.g. a=[1, 2]"),
        ("a=1]", "settings 'a=1]': unmatched ']'; allowed"),
        ("a=[1, [2, {b: 2", "settings 'a=[1, [2, {b: 2': unclosed '}'; allowed: key.path=value ..."),
        ("a=[1, 2", "settings 'a=[1, 2': unclosed ']'; allowed"),
        ("a='x y", 'settings "a=\'x y": unclosed "\'"; allowed'),
    ],
)
def test_an_unmatched_bracket_or_quote_in_set_is_refused_by_name(text, message):
    with pytest.raises(ConfigError) as error:
        split_assignments(text)
    assert str(error.value).startswith(message)


def test_assignments_are_read_as_yaml_into_nested_settings():
    words = [" a.b.lr =2e-3", "a.b.Depth=1E5", "a.b.x=-1.5e+2", "a.list=[1, 2]", "a.map={p: q}", "c=b=d", "d=x y"]
    assert parse_assignments(words) == {
        "a": {"b": {"lr": 0.002, "Depth": 100000.0, "x": -150.0}, "list": [1, 2], "map": {"p": "q"}},
        "c": "b=d",
        "d": "x y",
    }
    assert parse_assignments(["Seeds=1e"]) == {"Seeds": "1e"}  # not a number: stays text


@pytest.mark.parametrize("word", ["a.b", "1a=2", "a..b=1", "a-b=1", "=1", "a.=1"])
def test_an_assignment_without_a_key_path_is_refused(word):
    with pytest.raises(ConfigError) as error:
        parse_assignments(["ok=1", word])
    assert str(error.value) == f"setting {word!r}: allowed: key.path=value, e.g. section.key=3"


def test_a_value_that_is_not_yaml_is_refused_with_the_parsers_reason():
    with pytest.raises(ConfigError) as error:
        parse_assignments(["a=[1, 2"])
    assert str(error.value) == (
        "setting 'a=[1, 2': the value is not YAML (expected ',' or ']', but got '<stream end>'); allowed: a number, "
        "a word, a list [1, 2] or a mapping {a: 1}"
    )
    assert error.value.__cause__ is None and error.value.__suppress_context__
    with pytest.raises(ConfigError, match=r"the value is not YAML \(ReaderError\); allowed: a number"):
        parse_assignments(["a=\x07"])  # a character YAML does not read: an error without a 'problem'


def test_a_variant_is_named_after_the_last_key_part_and_value_of_each_setting():
    words = ["a.b.lr=0.002", " x.Seeds = [1, 2]", "Mode=Fast+Wide", "e=-1.5e-3"]
    assert derived_name(words) == "lr=0.002,Seeds=_1_2_,Mode=Fast+Wide,e=-1.5e-3"
    assert derived_name(["a.path=x=y"]) == "path=x_y"
    assert derived_name([]) == "paper"


def test_a_variant_name_is_letters_digits_and_a_few_marks_never_paper_or_reference():
    for name in ("lr2x", "A", "9", "lr=0.002,seeds=_1_", "a+b-c.d"):
        assert check_name(name) == name
    for name in ("paper", "reference", "-lr", "_x", "a b", "a/b", ""):
        with pytest.raises(ConfigError) as error:
            check_name(name)
        assert str(error.value) == (
            f"variant name {name!r}: allowed: letters, digits and _ . = , + - (not 'paper' or 'reference')"
        )
