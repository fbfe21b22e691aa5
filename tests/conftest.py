"""Shared fixtures: the smoke pipeline, run once per session into a temporary directory."""

from __future__ import annotations

import fnmatch
import inspect
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from replication.snakemake_command import snakemake_command

ROOT = Path(__file__).resolve().parents[1]
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
    """Scope of an expensive shared fixture: one per module, but one per test while mutmut records
    which tests run each function (its "stats" run).

    A module-scoped fixture's calls count only for the first test that asks for it, so without this
    the later tests would never run against a mutant. When a mutant runs, its tests share one
    module-scoped value again: computed once, under the mutant.
    """
    return "function" if os.environ.get("MUTANT_UNDER_TEST") == "stats" else "module"


def _runs_snakemake(item: pytest.Item) -> bool:
    if {"smoke_run", "phase_smoke_run"} & set(getattr(item, "fixturenames", ())):
        return True
    function = getattr(item, "function", None)
    try:
        source = inspect.getsource(function) if function is not None else ""
    except (OSError, TypeError):
        return False
    # Snakemake directly, or through `make figures` (tests/test_crash_recovery.py).
    return any(call in source for call in ("run_snakemake(", "snakemake_command(", "make_figures("))


def mutation_test_files(mutant: str) -> list[str] | None:
    """The test files that a mutant's module runs under mutation testing (scripts/mutation_tests.toml),
    or None (every covering test) for a module that is not listed or outside a mutant run."""
    if "__mutmut_" not in mutant:
        return None  # mutmut's stats and listing runs, or no mutation run at all
    module = re.split(r"\.xǁ|\.x_", mutant, maxsplit=1)[0]
    selection = tomllib.loads((ROOT / "scripts" / "mutation_tests.toml").read_text())["modules"]
    for pattern, files in selection.items():
        if fnmatch.fnmatchcase(module, pattern):
            return files
    return None


def pytest_configure(config):
    # Under mutation testing the first failing test kills the mutant: the rest need not run.
    if "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", ""):
        config.option.maxfail = 1


def pytest_collection_modifyitems(config, items):
    """Tests that run Snakemake are marked ``pipeline`` and get the long time limit; under mutation
    testing, a mutant runs only the tests of the files listed for its module."""
    for item in items:
        if _runs_snakemake(item):
            item.add_marker(pytest.mark.pipeline)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(PIPELINE_TIMEOUT_S))
    files = mutation_test_files(os.environ.get("MUTANT_UNDER_TEST", ""))
    if files is not None:
        kept = [item for item in items if item.path.name in files]
        config.hook.pytest_deselected(items=[item for item in items if item.path.name not in files])
        items[:] = kept


def run_snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run the project's workflow in ``workdir`` (outputs land there, not in the checkout)."""
    result = subprocess.run(
        snakemake_command(workdir, *args), cwd=ROOT, capture_output=True, text=True, timeout=SNAKEMAKE_TIMEOUT_S
    )
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


@pytest.fixture(scope="session")
def phase_smoke_run(tmp_path_factory) -> Path:
    """The phase diagram at smoke settings (figures/phase: a few cells, tens of steps)."""
    workdir = tmp_path_factory.mktemp("phase_smoke")
    run_snakemake(workdir, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "2", "figures/phase")
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
    from replication.papers.local_to_global.transformer.settings import transformer_settings

    paper = validate_config(
        {"local_to_global": {"transformer": section}}, ROOT / "workflow" / "schemas" / "config.schema.yaml"
    )["local_to_global"]
    experiments = paper["transformer"]["experiments"]
    paper["transformer"]["experiments"] = {name: experiments[name] for name in section.get("experiments", experiments)}
    return transformer_settings(paper)


def basin_settings(sampled: dict, **section):
    """Typed ``local_to_global.basins`` settings from ``section``, with the claims' thresholds of the
    paper's config and the sampled endpoint-loss check ``sampled``."""
    from replication.papers.local_to_global.landscape.settings import BasinSettings
    from replication.settings import from_mapping

    thresholds = {"energy_drift": 1e-8, "endpoint_loss": 1e-6, "small_sigma": 0.1, "fraction_high": 0.99}
    claims = {**thresholds, "fraction_low": 0.01, "sampled": sampled}
    return from_mapping(BasinSettings, {**section, "claims": claims})


def bo_model(**changes):
    """The benign-overfitting model settings at their defaults, with ``changes``."""
    import dataclasses

    from replication.papers.benign_overfitting.settings import settings

    return dataclasses.replace(settings(schema_defaults()["benign_overfitting"]).model, **changes)


@pytest.fixture(scope="session")
def resumed_smoke_run(tmp_path_factory):
    """A second smoke run from clean, killed mid-job with SIGKILL and finished by the same command
    (tests/test_crash_recovery.py checks the recovery, tests/test_determinism.py the bytes)."""
    from test_crash_recovery import kill_mid_job_and_resume

    return kill_mid_job_and_resume(tmp_path_factory.mktemp("resumed") / "run")
