"""environment.yml (conda) and pyproject.toml (pip) describe the same environment."""

import re
import tomllib

import yaml

from helpers import ROOT


def test_environment_yml_matches_pyproject():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    conda_pins = [d for d in pip_section if not d.startswith("-e")]
    assert sorted(conda_pins) == sorted(pyproject)
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[\w.]+", pin) for pin in pyproject), "exact pins only"
    assert "torch==2.13.0" in pyproject
    assert any(str(d).startswith("python=3.11") for d in environment["dependencies"])
