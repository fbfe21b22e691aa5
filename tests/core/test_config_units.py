"""The pieces of config validation: words for what a schema allows, scalars from text."""

import pytest

from replication import config, paths
from replication.errors import ConfigError


def test_allowed_describes_every_kind_of_bound():
    assert config._allowed({"enum": ["a", 2]}) == "one of 'a', 2"
    assert config._allowed({"type": "number", "exclusiveMinimum": 0, "maximum": 1}) == "number, > 0 and <= 1"
    assert (
        config._allowed({"type": ["integer", "null"], "minimum": 2, "exclusiveMaximum": 9})
        == "integer or null, >= 2 and < 9"
    )
    assert config._allowed({"type": "array", "minItems": 1}) == "array, at least 1 item(s)"
    assert (
        config._allowed({"type": "object", "additionalProperties": False, "properties": {"a": {}, "b": {}}})
        == "object, keys a, b"
    )
    assert config._allowed({"type": "object", "additionalProperties": True, "properties": {"a": {}}}) == "object"
    assert config._allowed({}) == "see workflow/schemas/config.schema.yaml"


def test_text_scalars_become_numbers_and_booleans():
    given = {"a": "3", "b": ["0.5", "1e-3", "x"], "c": {"d": "True", "e": "false", "f": "no"}, "g": 4}
    assert config._coerce_scalars(given) == {
        "a": 3,
        "b": [0.5, 1e-3, "x"],
        "c": {"d": True, "e": False, "f": "no"},
        "g": 4,
    }
    assert isinstance(config._coerce_scalars("3"), int) and isinstance(config._coerce_scalars("3.0"), float)


def test_figure_and_reference_paths(tmp_path):
    assert paths.figure_paths("figures/a/fig1.pdf") == {
        "pdf": paths.Path("figures/a/fig1.pdf"),
        "png": paths.Path("figures/a/fig1.png"),
        "csv": paths.Path("figures/a/fig1.csv"),
    }
    assert paths.reference_set_dir(
        {"reference_dir": "figures/reference", "reference_set": "smoke"}, "/root"
    ) == paths.Path("/root/figures/reference/smoke")
    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / "b" / "c" / "z.txt").write_text("1")
    (tmp_path / "a.txt").write_text("1")
    assert paths.files_under(tmp_path) == [str(tmp_path / "a.txt"), str(tmp_path / "b" / "c" / "z.txt")]
    assert paths.files_under(None) == [] and paths.files_under("") == []


def test_a_schema_snakemake_cannot_read_is_a_config_error_with_its_message(tmp_path):
    """Not every WorkflowError of Snakemake's validate is a wrong value: an unreadable schema gives
    Snakemake's own message, as a ConfigError without the traceback of the error behind it."""
    schema = tmp_path / "broken.schema.json"
    schema.write_text("{ not: [valid\n")
    with pytest.raises(ConfigError) as error:
        config._validate_against({"a": 1}, schema)
    assert str(error.value).startswith("Schema file is not valid JSON or YAML.")
    assert error.value.__cause__ is None and error.value.__suppress_context__
