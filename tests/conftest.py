"""Shared fixtures (the smoke pipeline, run once per session into a temporary directory) and the
suite's hooks: the time limit of pipeline tests, the guard on their marker, mutation-test selection.
Plain helpers: tests/helpers.py."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from filelock import FileLock

from helpers import (
    PIPELINE_TIMEOUT_S,
    ROOT,
    install_wheel,
    kill_mid_job_and_resume,
    run_snakemake,
    shared_base,
    shared_tree,
    starts_the_pipeline,
)

TESTS = ROOT / "tests"
# Fixtures that run the pipeline: a test that asks for one is a pipeline test.
PIPELINE_FIXTURES = {"smoke_run", "smoke_tree_alone", "resumed_smoke_run", "phase_smoke_run", "plateau_smoke_run"}


def mutation_test_files(mutant: str) -> list[str] | None:
    """The test files (paths under tests/) that a mutant's module runs under mutation testing
    (scripts/mutation_tests.toml), or None (every covering test) for a module that is not listed
    or outside a mutant run."""
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
    # One torch thread per pytest-xdist worker: with a thread per core in every worker, the workers'
    # threads outnumber the cores and wait on each other at every small operation (a test of tiny
    # tensors took 34 s instead of 2). Snakemake's jobs set their own.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)


def longest_first(items: list) -> list:
    """The longest tests first, so that parallel workers finish together: the pipeline end to end
    (marked slow), then every other test that runs Snakemake, then the rest. The slow tests take
    every second place: `make test` gives each worker two tests to start with and then one at a time
    (--maxschedchunk 1), so the first slow tests start at once, one on each worker."""
    slow = [item for item in items if item.get_closest_marker("slow")]
    pipeline = [item for item in items if item.get_closest_marker("pipeline") and item not in slow]
    others = pipeline + [item for item in items if item not in slow and item not in pipeline]
    interleaved = [item for pair in zip(slow, others) for item in pair]
    return interleaved + slow[len(others) :] + others[len(slow) :]


def pytest_collection_modifyitems(config, items):
    """Pipeline tests (marked where they are written) get the long time limit; a test that asks for
    a pipeline fixture without the marker is an error; under mutation testing, a mutant runs only
    the tests of the files listed for its module."""
    unmarked = [
        item.nodeid
        for item in items
        if PIPELINE_FIXTURES & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("pipeline") is None
    ]
    if unmarked:
        raise pytest.UsageError("these tests run the pipeline but are not marked pipeline: " + ", ".join(unmarked))
    for item in items:
        if item.get_closest_marker("pipeline") and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(PIPELINE_TIMEOUT_S))
    items[:] = longest_first(items)
    files = mutation_test_files(os.environ.get("MUTANT_UNDER_TEST", ""))
    if files is not None:
        kept = [item for item in items if item.path.relative_to(TESTS).as_posix() in files]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


class _UnmarkedPipelineRun(subprocess.Popen):
    """subprocess.Popen for a test not marked pipeline: it refuses to start Snakemake."""

    def __init__(self, args, *rest, **kwargs):
        if starts_the_pipeline(args):
            raise AssertionError(
                f"this test runs Snakemake ({args}) but is not marked pipeline: add @pytest.mark.pipeline "
                "(or pytestmark = pytest.mark.pipeline in its module)"
            )
        super().__init__(args, *rest, **kwargs)


@contextlib.contextmanager
def _snakemake_only_if_marked(item):
    """Unless ``item`` is marked pipeline, starting Snakemake in a subprocess fails it (setup and call)."""
    if item.get_closest_marker("pipeline"):
        yield
        return
    original, subprocess.Popen = subprocess.Popen, _UnmarkedPipelineRun
    try:
        yield
    finally:
        subprocess.Popen = original


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _snakemake_only_if_marked(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _snakemake_only_if_marked(item):
        return (yield)


def smoke_target(target: str, seed_from: Path | None = None):
    def build(workdir: Path) -> Path:
        if seed_from is not None:  # its outputs are up to date here too: only the rest is built
            shutil.copytree(seed_from, workdir, dirs_exist_ok=True, symlinks=True)
        run_snakemake(workdir, "--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "2", target)
        return workdir

    return build


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """A complete smoke pipeline (config/smoke.yaml): every figure and results file."""
    return shared_tree(tmp_path_factory, "smoke", smoke_target("figures/all"))


@pytest.fixture(scope="session")
def phase_smoke_run(tmp_path_factory):
    """The phase diagram at smoke settings (figures/phase: a few cells, tens of steps)."""
    return shared_tree(tmp_path_factory, "phase_smoke", smoke_target("figures/phase"))


@pytest.fixture(scope="session")
def plateau_smoke_run(tmp_path_factory, phase_smoke_run):
    """The plateau analysis at smoke settings (figures/plateau), over a copy of the phase smoke tree."""
    return shared_tree(tmp_path_factory, "plateau_smoke", smoke_target("figures/plateau", seed_from=phase_smoke_run))


def build_docs_site(folder: Path) -> Path:
    """``mkdocs build --strict`` (as ``make docs``) into ``folder``."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return folder


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory) -> Path:
    """The documentation built once for the run, shared by the pytest-xdist workers."""
    return shared_tree(tmp_path_factory, "docs_site", build_docs_site)


@pytest.fixture(scope="session")
def installed_package(tmp_path_factory):
    """The wheel of a copy of the checkout, installed into a folder of its own; the copy has no src/."""
    return shared_tree(tmp_path_factory, "installed", install_wheel)


@pytest.fixture(scope="session")
def resumed_smoke_run(tmp_path_factory, installed_package):
    """A second smoke run from clean, by the installed package: `make figures` typed in the copy
    without src/, killed mid-job with SIGKILL and finished by the same command. One build for three
    tests: tests/workflow/test_crash_recovery.py checks the recovery, test_install.py that the
    installed package built the smoke pipeline, test_determinism.py the bytes."""
    return shared_tree(
        tmp_path_factory, "resumed", lambda workdir: kill_mid_job_and_resume(workdir / "run", installed_package)
    )


@pytest.fixture
def smoke_tree_alone(smoke_run, tmp_path_factory):
    """The shared smoke tree held by one test at a time (a file lock across pytest-xdist workers):
    for the tests that run Snakemake inside it, as two Snakemake runs cannot hold one working
    directory's lock at once."""
    with FileLock(str(shared_base(tmp_path_factory) / "smoke.alone.lock")):
        yield smoke_run
