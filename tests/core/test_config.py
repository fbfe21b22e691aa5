"""Config validation: one clear line naming the key and what is allowed, before any job runs."""

import copy

import pytest
import yaml

from helpers import ROOT, run_snakemake, schema_defaults
from replication.config import apply_settings, validate_config
from replication.errors import ConfigError
from replication.registry import config_schema, papers

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def paper_config():
    """config/config.yaml filled in with the schema's defaults (the file states only what differs)."""
    return schema_defaults(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()))


def with_value(path, value):
    config = paper_config()
    node = config
    *parents, last = path
    for key in parents:
        node = node[key]
    node[last] = value
    return config


def test_shipped_configs_are_valid():
    for name in ("config.yaml", "smoke.yaml"):
        validate_config(yaml.safe_load((ROOT / "config" / name).read_text()), SCHEMA)


def smoke_config():
    """config.yaml with config/smoke.yaml over it, as Snakemake merges them."""
    from snakemake.utils import update_config

    config = paper_config()
    update_config(config, yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text()))
    return config


def holds(config, part) -> bool:
    """Every value of ``part`` (nested) is the one in ``config``."""
    if isinstance(part, dict):
        return isinstance(config, dict) and all(key in config and holds(config[key], part[key]) for key in part)
    return config == part


def test_smoke_settings_come_from_each_paper_package():
    config = apply_settings(smoke_config())
    for paper in papers():
        smoke = yaml.safe_load(paper.smoke_path.read_text())
        assert smoke and holds(config[paper.id], smoke), paper.id
    assert config["local_to_global"]["transformer"]["model"] == {"d": 8, "context": 32, "mlp_ratio": 4}
    assert config["benign_overfitting"]["model"]["n"] == 20 and config["diff"]["reference_set"] == "smoke"
    validate_config(config, SCHEMA)
    # Without settings: smoke, the papers keep their full settings.
    assert apply_settings(paper_config()) == paper_config()


def test_command_line_values_win_over_the_smoke_settings():
    given = {"local_to_global": {"fig1": {"seed": 7}, "transformer": {"model": {"d": 4}}}}
    config = apply_settings(smoke_config(), [given])
    assert config["local_to_global"]["fig1"]["seed"] == 7 and config["local_to_global"]["fig1"]["contour_points"] == 41
    assert config["local_to_global"]["transformer"]["model"] == {"d": 4, "context": 32, "mlp_ratio": 4}


def test_a_measurement_reads_the_settings_the_workflow_reads(tmp_path):
    from replication.measurements import workflow_config

    over = tmp_path / "over.yaml"
    over.write_text("settings: smoke\nlocal_to_global: {transformer: {model: {d: 4}}}\n")
    (tmp_path / "empty.yaml").write_text("# nothing set\n")
    config = workflow_config([str(over), str(tmp_path / "empty.yaml")])
    # The smoke settings, with the file's value over them, validated (schema defaults filled in).
    assert config["local_to_global"]["transformer"]["model"] == {"d": 4, "context": 32, "mlp_ratio": 4}
    assert config["benign_overfitting"]["model"]["n"] == 20
    expected = validate_config(apply_settings(smoke_config(), [yaml.safe_load(over.read_text())]), SCHEMA)
    assert all(config[paper.id] == expected[paper.id] for paper in papers())
    assert workflow_config([]) == validate_config(paper_config(), SCHEMA)


def test_defaults_fill_an_empty_config():
    config = validate_config({}, SCHEMA)
    assert config["local_to_global"]["fig1"]["chains"] == [{"p": 0.1, "q": 0.1}, {"p": 0.9, "q": 0.9}]
    assert config["local_to_global"]["fig1"]["quiver_points"] == 30


FIG1 = ("local_to_global", "fig1")
BAD = {
    "p above 1": (FIG1 + ("chains",), [{"p": 1.5, "q": 0.2}], "local_to_global.fig1.chains.0.p", "< 1"),
    "p zero": (FIG1 + ("chains",), [{"p": 0.0, "q": 0.2}], "local_to_global.fig1.chains.0.p", "> 0"),
    "q negative": (FIG1 + ("chains",), [{"p": 0.2, "q": -0.1}], "local_to_global.fig1.chains.0.q", "> 0"),
    "p + q = 1": (
        FIG1 + ("chains",),
        [{"p": 0.1, "q": 0.1}, {"p": 0.25, "q": 0.75}],
        "local_to_global.fig1.chains.1",
        "p + q != 1",
    ),
    "zero grid step": (FIG1 + ("quiver_points",), 0, "local_to_global.fig1.quiver_points", ">= 2"),
    "negative size": (FIG1 + ("extent",), -3.0, "local_to_global.fig1.extent", "> 0"),
    "zero seed": (FIG1 + ("seed",), 0, "local_to_global.fig1.seed", ">= 1"),
    "negative seed": (FIG1 + ("seed",), -4, "local_to_global.fig1.seed", ">= 1"),
    "non-numeric": (FIG1 + ("extent",), "three", "local_to_global.fig1.extent", "number"),
    "empty list": (FIG1 + ("chains",), [], "local_to_global.fig1.chains", "at least 1"),
    "unknown key": (("unknown_section",), {"a": 1}, "<top level>", "keys local_to_global"),
    "unknown nested key": (FIG1 + ("colour",), "red", "local_to_global.fig1", "keys chains"),
    "grid axis backwards": (
        ("benign_overfitting", "grid", "dims"),
        {"start": 500, "stop": 250, "step": 250},
        "benign_overfitting.grid.dims",
        "start <= stop",
    ),
    "a tolerance neither named nor a number": (
        ("local_to_global", "plateau", "hessian", "tolerance"),
        "horizn",
        "local_to_global.plateau.hessian.tolerance",
        "one of 'horizon' or number, > 0",
    ),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_value_names_key_and_allowed(case):
    path, value, key, allowed = BAD[case]
    with pytest.raises(ConfigError) as error:
        validate_config(with_value(path, value), SCHEMA)
    message = str(error.value)
    assert f"'{key}'" in message and allowed in message
    assert "\n" not in message


def test_unknown_init_name_is_rejected():
    """Every enum of the schema (e.g. initialisation names) rejects an unknown name."""
    schema = config_schema(SCHEMA)  # the shared sections and every paper's
    enums = []

    def find(node, path):
        if isinstance(node, dict):
            if "enum" in node:
                enums.append((path, node["enum"]))
            for key, value in node.items():
                find(value, path + (key,))
        elif isinstance(node, list):
            for value in node:
                find(value, path)

    find(schema, ())
    assert any("init" in "/".join(map(str, path)) for path, _ in enums)
    config = copy.deepcopy(paper_config())

    # Find an init-valued leaf in the paper config and replace it with a bogus name.
    def replace(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if "init" in key and isinstance(value, str):
                    node[key] = "glorot"
                    return True
                if "init" in key and isinstance(value, list) and value and isinstance(value[0], str):
                    node[key] = ["glorot"]
                    return True
                if replace(value):
                    return True
        elif isinstance(node, list):
            return any(replace(value) for value in node)
        return False

    assert replace(config), "an init name in config.yaml"
    with pytest.raises(ConfigError, match="glorot.*allowed: one of"):
        validate_config(config, SCHEMA)


@pytest.mark.pipeline
def test_command_line_override_is_validated_before_any_job(tmp_path):
    # -n: should validation ever let the value through, the test fails without running the pipeline
    result = run_snakemake(
        tmp_path, "--cores", "1", "-n", "--config", "local_to_global={fig1: {chains: [{p: 0.4, q: 0.6}]}}", check=False
    )
    assert result.returncode != 0
    output = result.stdout + result.stderr
    lines = [line for line in output.splitlines() if "Invalid config" in line]
    assert lines == [
        "Invalid config: config key 'local_to_global.fig1.chains.0': p + q = 1 (p=0.4, q=0.6) is excluded "
        "by the theory; allowed: p, q in (0, 1) with p + q != 1"
    ]
    assert "Traceback" not in output
    assert not (tmp_path / "results").exists()


@pytest.mark.pipeline
def test_command_line_override_over_the_smoke_settings_is_validated_before_any_job(tmp_path):
    # The smoke settings set valid fig1 chains: the error shows that the command line's value won.
    smoke = str(ROOT / "config" / "smoke.yaml")
    override = "local_to_global={fig1: {chains: [{p: 0.4, q: 0.6}]}}"
    result = run_snakemake(tmp_path, "--cores", "1", "-n", "--configfile", smoke, "--config", override, check=False)
    assert result.returncode != 0
    assert "Invalid config: config key 'local_to_global.fig1.chains.0': p + q = 1" in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.pipeline
def test_command_line_override_reaches_the_rules(tmp_path):
    result = run_snakemake(
        tmp_path, "--cores", "1", "-n", "--printshellcmds", "--config", "local_to_global={fig1: {extent: 2.5, seed: 7}}"
    )
    assert "Invalid config" not in result.stdout + result.stderr


def test_a_warm_up_of_exactly_one_step_is_rejected():
    """0.05 x 20 steps: torch's one-cycle schedule would divide by zero at the first step."""
    config = with_value(["local_to_global", "transformer", "schedule", "warmup"], 0.05)
    config["local_to_global"]["transformer"]["experiments"]["fig3"]["steps"] = 20
    with pytest.raises(ConfigError, match=r"schedule\.warmup.*exactly one step.*allowed: warmup x steps != 1"):
        validate_config(config, SCHEMA)
    config["local_to_global"]["transformer"]["experiments"]["fig3"]["steps"] = 40
    validate_config(config, SCHEMA)


def test_the_paper_config_restates_no_schema_default():
    """config/config.yaml states only what differs from the schemas (the one source of defaults)."""

    def restated(given, defaults, path=()):
        if isinstance(given, dict):
            for key, value in given.items():
                yield from restated(value, defaults.get(key, {}) if isinstance(defaults, dict) else {}, path + (key,))
        elif given == defaults:
            yield ".".join(map(str, path))

    given = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert isinstance(given, dict)
    assert list(restated(given, schema_defaults())) == []
    assert list(restated({"diff": {"image_rms": 1.0, "envelope_factor": 3}}, schema_defaults())) == ["diff.image_rms"]
