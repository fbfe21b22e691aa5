"""Typed settings as rule params: Snakemake sees every field (so a changed setting reruns the job),
the job's script gets the frozen dataclass back."""

import dataclasses
import pickle

import pytest
import yaml

from helpers import ROOT, shared_scope
from replication.config import validate_config
from replication.papers.benign_overfitting.settings import settings as bo_settings
from replication.papers.local_to_global.landscape.settings import landscape_settings
from replication.papers.local_to_global.transformer.settings import transformer_settings
from replication.settings import RuleParam, rule_param


def _typed_sections(config):
    transformer = transformer_settings(config["local_to_global"])
    landscape = landscape_settings(config["local_to_global"])
    bo = bo_settings(config["benign_overfitting"])
    sections = [transformer, transformer.ablation, transformer.claims, bo, bo.model, bo.grid, bo.fig1, bo.trajectories]
    sections += [getattr(landscape, name) for name in ("fig1", "fig2", "fig5", "basins")]
    sections += [transformer.run(name) for name in transformer.experiments]
    return sections


@pytest.fixture(scope=shared_scope)
def paper_config():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    return validate_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")


def test_every_typed_section_survives_the_trip_through_a_job(paper_config):
    for section in _typed_sections(paper_config):
        param = rule_param(section)
        assert isinstance(param, RuleParam) and isinstance(param, dict)
        back = pickle.loads(pickle.dumps(param))  # how Snakemake hands params to a script
        assert type(back) is type(section) and back == section


def test_a_changed_setting_changes_what_snakemake_compares(paper_config):
    from snakemake.persistence import UNREPRESENTABLE, PersistenceBase

    run = transformer_settings(paper_config["local_to_global"]).run("fig4")
    changed = dataclasses.replace(run, optimizer=dataclasses.replace(run.optimizer, lr=run.optimizer.lr * 1.1))
    serialize = PersistenceBase._serialize_param_builtin  # what the params trigger compares
    assert serialize(None, run) is UNREPRESENTABLE  # a dataclass as it is: ignored by the trigger
    assert serialize(None, rule_param(run)) != serialize(None, rule_param(changed))
    assert serialize(None, rule_param(run)) == serialize(None, rule_param(dataclasses.replace(run)))


def test_plain_values_pass_through():
    assert rule_param({"a": 1}) == {"a": 1} and type(rule_param({"a": 1})) is dict
    assert rule_param([1, 2]) == [1, 2]
