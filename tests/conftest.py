"""Shared fixtures: the smoke pipeline, run once per session into a temporary directory."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
# The first test that asks for the smoke pipeline pays for it (a few minutes on 2 busy cores).
PIPELINE_TIMEOUT_S = 1500
SNAKEMAKE_TIMEOUT_S = 1200
# The transformer's optimiser, schedule and init for small training runs in tests (AdamW, one cycle).
TRAINING_SETTINGS = {
    "sigma": 0.02,
    "optimizer": {
        "name": "adamw",
        "lr": 0.01,
        "betas": [0.9, 0.95],
        "momentum": 0.0,
        "weight_decay": 0.001,
        "no_decay": ["p", "b"],
    },
    "schedule": {"name": "onecycle", "warmup": 0.05, "div_factor": 100.0, "final_div_factor": 0.05, "horizon": None},
    "device": "cpu",
    "threads": 1,
    "attention": "fast",
    "rank_one_value": "input",
    "embedding": "scalar",
}


def shared_scope(fixture_name: str, config) -> str:
    """Scope of an expensive shared fixture: one per module, but one per test under mutation testing.

    mutmut records which tests run each function; a module-scoped fixture's calls count only for
    the first test that asks for it, so the later tests would never run against a mutant.
    """
    return "function" if os.environ.get("MUTANT_UNDER_TEST") else "module"


def _runs_snakemake(item: pytest.Item) -> bool:
    if "smoke_run" in getattr(item, "fixturenames", ()):
        return True
    function = getattr(item, "function", None)
    try:
        source = inspect.getsource(function) if function is not None else ""
        # run_snakemake() or a direct call of the Snakemake executable
        return "run_snakemake(" in source or "str(SNAKEMAKE)" in source
    except (OSError, TypeError):
        return False


def pytest_collection_modifyitems(items):
    """Tests that run Snakemake are marked ``pipeline`` and get the long time limit."""
    for item in items:
        if _runs_snakemake(item):
            item.add_marker(pytest.mark.pipeline)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(PIPELINE_TIMEOUT_S))


def run_snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run the project's workflow in ``workdir`` (outputs land there, not in the checkout)."""
    command = [str(SNAKEMAKE), "--snakefile", str(ROOT / "workflow" / "Snakefile"), "--directory", str(workdir), *args]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=SNAKEMAKE_TIMEOUT_S)
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        )
    return result


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """A complete smoke pipeline (config/smoke.yaml): every figure and results file."""
    workdir = tmp_path_factory.mktemp("smoke")
    run_snakemake(workdir, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "2", "figures/all")
    return workdir


def markdown_cells(line: str) -> list[str]:
    """The cells of one row of a Markdown pipe table (escaped pipes stay in their cell)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def squeeze_markdown(text: str) -> str:
    """Pipe tables without their alignment padding: ``| a | b |`` rows and a ``|---|---|`` rule."""
    lines = []
    for line in text.splitlines():
        if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
            line = "|" + "---|" * len(markdown_cells(line))
        elif line.startswith("|"):
            line = "| " + " | ".join(markdown_cells(line)) + " |"
        lines.append(line)
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def schema_defaults() -> dict:
    """The config every key of which is its schema default (the only place defaults live)."""
    from replication.config import validate_config

    return validate_config({}, ROOT / "workflow" / "schemas" / "config.schema.yaml")


def l2g_transformer(section: dict):
    """Typed ``local_to_global.transformer`` settings from a partial section: the schema fills in
    every key not given, and the experiments are the ones given (all three if none are)."""
    from replication.config import validate_config
    from replication.papers.local_to_global.settings import transformer_settings

    paper = validate_config(
        {"local_to_global": {"transformer": section}}, ROOT / "workflow" / "schemas" / "config.schema.yaml"
    )["local_to_global"]
    experiments = paper["transformer"]["experiments"]
    paper["transformer"]["experiments"] = {name: experiments[name] for name in section.get("experiments", experiments)}
    return transformer_settings(paper)


def bo_model(**changes):
    """The benign-overfitting model settings at their defaults, with ``changes``."""
    import dataclasses

    from replication.papers.benign_overfitting.settings import settings

    return dataclasses.replace(settings(schema_defaults()["benign_overfitting"]).model, **changes)
