"""Typed settings from validated config sections (replication.settings): nested dataclasses,
tuples and dicts of them, and the errors that name the missing and unknown keys."""

import dataclasses
import pickle
from collections.abc import Mapping

import pytest

from replication.settings import RuleParam, from_mapping, rule_param


@dataclasses.dataclass(frozen=True)
class Chain:
    p: float
    q: float


@dataclasses.dataclass(frozen=True)
class Run:
    name: str
    chain: Chain
    chains: tuple[Chain, ...]
    seeds: tuple[int, ...]
    named: dict[str, Chain]
    by_key: Mapping[str, Chain]
    horizon: float | None
    steps: int


SECTION = {
    "name": "fig4",
    "chain": {"p": 0.2, "q": 0.3},
    "chains": [{"p": 0.1, "q": 0.4}, {"p": 0.6, "q": 0.7}],
    "seeds": [1, 2],
    "named": {"slow": {"p": 0.05, "q": 0.05}},
    "by_key": {"fast": {"p": 0.9, "q": 0.8}},
    "horizon": None,
    "steps": 10,
}


def test_nested_sections_become_dataclasses():
    run = from_mapping(Run, SECTION)
    assert run == Run(
        name="fig4",
        chain=Chain(0.2, 0.3),
        chains=(Chain(0.1, 0.4), Chain(0.6, 0.7)),
        seeds=(1, 2),
        named={"slow": Chain(0.05, 0.05)},
        by_key={"fast": Chain(0.9, 0.8)},
        horizon=None,
        steps=10,
    )
    assert type(run.chains) is tuple and type(run.seeds) is tuple and type(run.named) is dict
    assert from_mapping(Run, {**SECTION, "horizon": 2.5}).horizon == 2.5


def test_missing_and_unknown_keys_are_named():
    with pytest.raises(ValueError) as error:
        from_mapping(Chain, {"p": 0.2})
    assert str(error.value) == "Chain: missing q; fields: p, q"
    with pytest.raises(ValueError) as error:
        from_mapping(Chain, {"p": 0.2, "q": 0.3, "r": 1, "a": 2})
    assert str(error.value) == "Chain: unknown a, r; fields: p, q"
    with pytest.raises(ValueError) as error:
        from_mapping(Chain, {"r": 1})
    assert str(error.value) == "Chain: missing p, q; unknown r; fields: p, q"
    with pytest.raises(ValueError, match=r"^Chain: missing q; fields: p, q$"):  # in a nested section too
        from_mapping(Run, {**SECTION, "chains": [{"p": 0.1, "q": 0.4}, {"p": 0.6}]})


def test_only_dataclasses():
    with pytest.raises(TypeError, match=r"^<class 'dict'> is not a dataclass$"):
        from_mapping(dict, {})


def test_rule_param_is_the_fields_and_pickles_back_to_the_dataclass():
    run = from_mapping(Run, SECTION)
    param = rule_param(run)
    assert type(param) is RuleParam and param.settings_type is Run
    assert dict(param) == dataclasses.asdict(run) and param["chain"] == {"p": 0.2, "q": 0.3}
    back = pickle.loads(pickle.dumps(param))
    assert type(back) is Run and back == run
    assert rule_param(Run) is Run  # the class itself is no settings value
    assert rule_param(3) == 3 and rule_param(None) is None
