"""The environment: pyproject.toml's pins, the lock of every version (requirements/lock.txt), what
`make env` installs (exactly the lock), and environment.yml (conda) reading the same lock."""

import importlib.util
import re
import sys
import tomllib

import yaml

from helpers import ROOT

LOCK = ROOT / "requirements" / "lock.txt"


def check_environment():
    spec = importlib.util.spec_from_file_location("check_environment", ROOT / "scripts" / "check_environment.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def declared() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + project["optional-dependencies"]["dev"]


def test_pyproject_pins_what_the_project_imports_and_its_tools():
    runtime = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[=<>~!]", pin)[0] for pin in runtime}
    # Imported by src/ but once missing from the declaration; the tools stay out of the runtime.
    assert {"pillow", "jsonschema", "torch", "snakemake", "pyyaml"} <= names
    assert not names & {"pytest", "ruff", "mutmut", "snakefmt", "hypothesis", "mkdocs", "pip-tools"}
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[\w.]+", pin) for pin in declared()), "exact pins only"
    assert "torch==2.13.0" in runtime


def test_the_lock_pins_every_declared_version_with_hashes():
    tool = check_environment()
    lock = tool.locked(LOCK)
    for pin in declared():
        name, version = pin.split("==")
        # The CPU build of torch carries a local version label.
        assert lock[tool.canonical(name)] in (version, f"{version}+cpu"), pin
    assert len(lock) > len(declared())  # transitive versions too
    text = LOCK.read_text()
    assert text.count("--hash=sha256:") >= len(lock)
    assert re.search(r"^torch==2\.13\.0\+cpu \\\n    --hash=sha256:[0-9a-f]{64}$", text, re.M)


def test_the_running_environment_is_exactly_the_lock():
    """`make test` runs in the environment `make env` installed: the lock, nothing more or less."""
    assert check_environment().main([str(LOCK)]) == 0


def test_every_difference_from_the_lock_is_named():
    tool = check_environment()
    lock = {"numpy": "2.4.6", "pandas": "3.1.1", "torch": "2.13.0+cpu"}
    present = {"numpy": "2.4.6", "pandas": "3.0.0", "replication": "0.1.0", "rich": "14.0.0"}
    assert tool.differences(lock, present) == [
        "pandas: locked 3.1.1, installed 3.0.0",
        "torch: locked 2.13.0+cpu, installed nothing",
        "rich: installed 14.0.0, not in the lock",
    ]
    assert tool.differences(lock, {**lock, "replication": "0.1.0"}) == []
    assert tool.canonical("Typing_Extensions") == "typing-extensions"
    assert tool.locked(LOCK)["typing-extensions"]


def test_environment_yml_installs_the_lock():
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert pip_section == ["-r requirements/lock.txt"]
    assert any(str(d).startswith("python=3.11") for d in environment["dependencies"])
    assert sys.version_info[:2] == (3, 11)
