"""What several test modules share (``import helpers``: pytest puts tests/ on the path, pyproject.toml).

Fixtures live in conftest.py; this module holds plain functions and constants: the checkout's
paths, Snakemake in a subprocess, settings built from the schema's defaults (the one place
defaults live), small drawings and a killed-and-resumed `make figures`.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import fcntl
import hashlib
import io
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
# The first test that asks for the smoke pipeline pays for it (a few minutes on 2 busy cores).
PIPELINE_TIMEOUT_S = 1500
SNAKEMAKE_TIMEOUT_S = 1200


def shared_scope(fixture_name: str, config) -> str:
    """Scope of an expensive shared fixture: one per module, but one per test while mutmut records
    which tests run each function (its "stats" run).

    A module-scoped fixture's calls count only for the first test that asks for it, so without this
    the later tests would never run against a mutant. When a mutant runs, its tests share one
    module-scoped value again: computed once, under the mutant.
    """
    return "function" if os.environ.get("MUTANT_UNDER_TEST") == "stats" else "module"


# --- Snakemake -----------------------------------------------------------------------------------


def run_snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run the project's workflow in ``workdir`` (outputs land there, not in the checkout)."""
    from replication.snakemake_command import snakemake_command

    result = subprocess.run(
        snakemake_command(workdir, *args), cwd=ROOT, capture_output=True, text=True, timeout=SNAKEMAKE_TIMEOUT_S
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        )
    return result


def starts_the_pipeline(argv) -> bool:
    """Whether a subprocess command runs this checkout's Snakemake: the venv's snakemake, Python's
    ``-m snakemake`` or a module of the project that starts it (the run lock, variants, sweeps), or
    make in the checkout (`make figures`)."""
    if isinstance(argv, (str, bytes, os.PathLike)):
        argv = [argv]
    words = [os.fsdecode(word) for word in argv]
    if not words:
        return False
    if str(SNAKEMAKE) in words:
        return True
    modules = {words[i + 1] for i in range(len(words) - 1) if words[i] == "-m"}
    if modules & {"snakemake", "replication.pipeline_run", "replication.variants", "replication.sweeps"}:
        return True
    return Path(words[0]).name == "make" and str(ROOT) in words


def tracked_copy(destination: Path) -> Path:
    """The checkout's tracked files (what a fresh clone holds), copied to ``destination``; symbolic
    links stay links."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source, target = ROOT / name, destination / name
        if source.is_symlink() or source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    return destination


# --- Markdown ------------------------------------------------------------------------------------


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


# --- Settings from the schema's defaults ---------------------------------------------------------


def schema_defaults(config: Mapping | None = None) -> dict:
    """``config`` (default: empty) validated against the merged schema, every missing key filled
    in with its schema default (the only place defaults live)."""
    from replication.config import validate_config

    return validate_config(copy.deepcopy(dict(config or {})), SCHEMA)


def defaulted_section(*keys: str, given: Mapping | None = None) -> dict:
    """The section at ``keys`` (e.g. ``"local_to_global", "basins"``) of a config that states only
    ``given`` there: validated against the merged schema, the rest its defaults."""
    partial: dict = copy.deepcopy(dict(given or {}))
    for key in reversed(keys):
        partial = {key: partial}
    section = schema_defaults(partial)
    for key in keys:
        section = section[key]
    return section


def merged(base: Mapping, changes: Mapping) -> dict:
    """``base`` with ``changes`` merged in, nested mappings key by key (neither is modified)."""
    result = copy.deepcopy(dict(base))
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merged(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


# Small test runs learn within a hundred steps only with a higher peak rate and a longer warm-up
# than the paper's (its defaults: lr 0.001, warm-up 0.02 of the steps).
SMALL_RUN_TRAINING = {"optimizer": {"lr": 0.01}, "schedule": {"warmup": 0.05}}


def training_settings(changes: Mapping = SMALL_RUN_TRAINING) -> dict:
    """The shared training settings of one Local to Global run (``TrainingSettings``' fields but
    ``model``, ``batch_size`` and ``chunk``, which the test gives),
    from the schema's defaults with ``changes``; the token embedding is the paper's, as in every
    figure run. Spread it first into a run's mapping: the test's own keys follow and win."""
    from replication.papers.local_to_global.transformer.settings import TrainingSettings

    section = defaulted_section("local_to_global", "transformer", given=changes)
    fields = {field.name for field in dataclasses.fields(TrainingSettings)} - {"model", "batch_size", "chunk"}
    return {**{key: value for key, value in section.items() if key in fields}, "embedding": "scalar"}


def small_run_settings() -> dict:
    """One tiny Fig. 4-style training run (d = 8, context 32, 120 steps; the optimiser tests and
    the training tests share it)."""
    return {
        **training_settings(),
        "model": {"d": 8, "context": 32, "mlp_ratio": 4},
        "batch_size": 16,
        "chunk": 16,
        "steps": 120,
        "eval_every": 4,
        "checkpoints": [0, 1, 60, 120, 500],
        "chain": {"p": 0.2, "q": 0.3},
        "inits": ["ours"],
        "seeds": [1],
    }


def transformer_claim_settings():
    """The thresholds of claims 5 and 6 (``local_to_global.transformer.claims``), typed, at their defaults."""
    from replication.papers.local_to_global.transformer.settings import transformer_settings

    return transformer_settings(schema_defaults()["local_to_global"]).claims


def l2g_transformer(section: dict):
    """Typed ``local_to_global.transformer`` settings from a partial section: the schema fills in
    every key not given, and the experiments are the ones given (all three if none are)."""
    from replication.papers.local_to_global.transformer.settings import transformer_settings

    paper = schema_defaults({"local_to_global": {"transformer": section}})["local_to_global"]
    experiments = paper["transformer"]["experiments"]
    paper["transformer"]["experiments"] = {name: experiments[name] for name in section.get("experiments", experiments)}
    return transformer_settings(paper)


def basin_settings(sampled: dict, **section):
    """Typed ``local_to_global.basins`` settings from ``section``, with the claims' thresholds at
    their schema defaults and the sampled endpoint-loss check ``sampled``."""
    from replication.papers.local_to_global.landscape.settings import BasinSettings
    from replication.settings import from_mapping

    claims = {**defaulted_section("local_to_global", "basins")["claims"], "sampled": sampled}
    return from_mapping(BasinSettings, {**section, "claims": claims})


def random_transformer_parameters(scale: float, seed: int, d: int, context: int) -> dict:
    """A small sdpa transformer's parameters (float64 arrays by name), every entry scale x N(0, 1)
    drawn from ``seed``: a random point for checks of the loss's derivatives."""
    import torch

    from replication.papers.local_to_global.transformer.model import MarkovTransformer, TransformerConfig

    model = MarkovTransformer(TransformerConfig(d=d, context=context, mlp_ratio=4, attention="sdpa"))
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(scale * torch.randn(parameter.shape, generator=generator))
    return {name: value.detach().double().numpy() for name, value in model.named_parameters()}


def full_hessian(flat, x, y, attention: str = "binary"):
    """The full Hessian (an array) of the transformer's loss on one batch (x, y) at the point ``flat``
    (plateau.hessian.FlatParameters), by autograd, vectorised over its rows."""
    import torch

    from replication.papers.local_to_global.plateau.hessian import transformer_loss

    loss = lambda theta: transformer_loss(flat.unflatten(theta), x, y, attention)  # noqa: E731
    return torch.autograd.functional.hessian(loss, flat.vector, vectorize=True).numpy()


def bo_model(**changes):
    """The benign-overfitting model settings at their defaults, with ``changes``."""
    from replication.papers.benign_overfitting.settings import settings

    return dataclasses.replace(settings(schema_defaults()["benign_overfitting"]).model, **changes)


def bo_claim_settings():
    """The benign-overfitting claim thresholds at their schema defaults."""
    from replication.papers.benign_overfitting.settings import settings

    return settings(schema_defaults()["benign_overfitting"]).claims


# --- A small figure ------------------------------------------------------------------------------


def draw(pdf, colour="C0", scale=1.0, size=(3, 2)):
    """Two curves through save_figure, as every figure of the project is made."""
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from replication.plotting import apply_style, save_figure

    apply_style()
    x = np.linspace(0, 1, 50)
    data = pd.concat(
        [
            pd.DataFrame({"curve": "a", "x": x, "y": np.sin(3 * x) * scale}),
            pd.DataFrame({"curve": "b", "x": x, "y": np.cos(3 * x)}),
        ],
        ignore_index=True,
    )
    fig, ax = plt.subplots(figsize=size)
    for (name, group), c in zip(data.groupby("curve"), (colour, "C1")):
        ax.plot(group.x, group.y, color=c, lw=2, label=name)
    ax.legend()
    return save_figure(fig, pdf, data)


# --- trees built once per run, shared by the pytest-xdist workers ---------------------------------


def shared_base(tmp_path_factory) -> Path:
    """The folder every pytest-xdist worker of this run sees (the run's own, without workers)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_tree(tmp_path_factory, name: str, build):
    """The tree ``name``, built once for the whole run: under pytest-xdist every worker asks for
    it, the first builds it under a file lock and the others wait and share it (and what ``build``
    returned, pickled beside it)."""
    base = shared_base(tmp_path_factory)
    workdir, done = base / name, base / f"{name}.built"
    with FileLock(str(base / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(workdir, ignore_errors=True)  # a build that failed in another worker
            workdir.mkdir(parents=True)
            done.write_bytes(pickle.dumps(build(workdir)))
    return pickle.loads(done.read_bytes())


# --- `make figures` killed mid-job and resumed ---------------------------------------------------

SMOKE_MAKE = ["CONFIG=config/smoke.yaml", "CORES=2"]


@dataclass(frozen=True)
class InstalledPackage:
    """A plain (not editable) install: the wheel of a copy of the checkout, installed into a folder of
    its own, and that copy without src/, so that only the installed package can be imported there."""

    clone: Path  # the checkout's tracked files but src/
    site: Path  # the folder the wheel was installed into
    wheel: Path

    def environment(self) -> dict[str, str]:
        """The environment of a command typed in the clone: the installed package first on the path."""
        return {**os.environ, "PYTHONPATH": str(self.site)}


def install_wheel(folder: Path) -> InstalledPackage:
    """Build the wheel of a fresh copy of the checkout and install it (no dependencies, nothing
    fetched: the locked setuptools builds it without isolation), all under ``folder``."""
    clone, dist, site = (folder / name for name in ("clone", "dist", "site"))
    tracked_copy(clone)
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", dist, clone], check=True, capture_output=True
    )
    (wheel,) = dist.glob("replication-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", site, wheel], check=True, capture_output=True)
    shutil.rmtree(clone / "src")
    return InstalledPackage(clone, site, wheel)


def make_figures(workdir: Path, installed: InstalledPackage | None = None, **kwargs) -> subprocess.Popen:
    """The README command, with its outputs in ``workdir``: in this checkout, or typed in the
    clone of ``installed``, which runs the installed package."""
    if installed is None:
        command, place = ["make", "--no-print-directory", "-C", str(ROOT), "figures"], {}
    else:
        command, place = make_words("figures"), {"cwd": installed.clone, "env": installed.environment()}
    return subprocess.Popen(
        [*command, *SMOKE_MAKE, f"WORKDIR={workdir}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **place,
        **kwargs,
    )


def incomplete_outputs(workdir: Path) -> set[str]:
    """Outputs Snakemake marked as being written: each marker is the urlsafe base64 of the path,
    cut into folders whose names start with '@' when it is longer than a file name may be."""
    markers = workdir / ".snakemake" / "incomplete"
    names = set()
    for marker in markers.rglob("*") if markers.is_dir() else []:
        if marker.is_file() and marker.name != "migration_underway":
            encoded = "".join(part.removeprefix("@") for part in marker.relative_to(markers).parts)
            names.add(base64.urlsafe_b64decode(encoded).decode())
    return names


def finished_outputs(workdir: Path) -> set[str]:
    """Results written to the end: neither marked incomplete nor the partial file of an atomic write
    (on a busy machine a run may hold only partial files when it is first looked at)."""
    from replication.io import TEMPORARY_GLOB

    done = {
        p.relative_to(workdir).as_posix()
        for p in (workdir / "results").rglob("*")
        if p.is_file() and not p.match(TEMPORARY_GLOB)
    }
    return done - incomplete_outputs(workdir)


def snapshot(workdir: Path) -> dict[str, tuple[int, str]]:
    files = {}
    for folder in ("results", "figures"):
        for path in (workdir / folder).rglob("*"):
            if path.is_file():
                files[path.relative_to(workdir).as_posix()] = (
                    path.stat().st_mtime_ns,
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
    return files


def wait_for_the_killed_run_to_exit(workdir: Path, timeout_s: float = 120) -> None:
    """SIGKILL is not instant: the kernel frees the run lock once every killed process has exited."""
    deadline = time.monotonic() + timeout_s
    with open(workdir / ".snakemake" / "run.flock") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                assert time.monotonic() < deadline, "the killed run still holds its lock"
                time.sleep(0.1)
            else:
                fcntl.flock(lock, fcntl.LOCK_UN)
                return


@dataclass
class ResumedRun:
    """A smoke `make figures` killed mid-job with SIGKILL, then run again with the same command."""

    workdir: Path
    interrupted: set[str]  # outputs being written when the run was killed
    before: dict[str, tuple[int, str]]  # (mtime, sha256) of every file after the kill
    locks_left: bool  # the killed run left Snakemake's lock behind
    returncode: int
    output: str  # of the second run


def kill_mid_job_and_resume(workdir: Path, installed: InstalledPackage | None = None) -> ResumedRun:
    """`make figures` at smoke settings from clean (in the clone of ``installed`` when given), killed
    with SIGKILL once some job has finished, then the same command again."""
    first = make_figures(workdir, installed, start_new_session=True)
    deadline = time.monotonic() + 900
    # Kill once some job has finished and another is being written: a run caught mid-job.
    while time.monotonic() < deadline and first.poll() is None:
        if incomplete_outputs(workdir) and finished_outputs(workdir):
            break
        time.sleep(0.2)
    assert first.poll() is None, "the run ended before it could be killed:\n" + first.stdout.read()[-3000:]
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    first.stdout.close()
    wait_for_the_killed_run_to_exit(workdir)
    interrupted = incomplete_outputs(workdir)
    before = snapshot(workdir)
    locks = workdir / ".snakemake" / "locks"
    locks_left = locks.is_dir() and any(locks.iterdir())
    second = make_figures(workdir, installed)
    output, _ = second.communicate(timeout=1800)
    return ResumedRun(workdir, interrupted, before, locks_left, second.returncode, output)


# --- make typed in a fresh clone -----------------------------------------------------------------

VENV = SNAKEMAKE.parent.parent  # this environment, which `make` in a clone uses as its own


def make_words(*args: str) -> list[str]:
    """`make ARGS` with this environment standing in for the clone's ``.venv`` (taken as built)."""
    return ["make", "--no-print-directory", *args, f"VENV={VENV}", "-o", f"{VENV}/.installed"]


def clone_environment(repo: Path) -> dict[str, str]:
    """The environment of a command typed in ``repo``: its own package first on the path."""
    return {**os.environ, "PYTHONPATH": str(repo / "src")}


def make_in(repo: Path, *args: str, **kwargs) -> subprocess.Popen:
    """`make ARGS` typed in the clone ``repo``; stdout and stderr together, as a terminal shows them."""
    return subprocess.Popen(
        make_words(*args),
        cwd=repo,
        env=clone_environment(repo),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,
    )


def make_recipe(repo: Path, *args: str) -> list[str]:
    """The commands `make ARGS` would run in ``repo`` (make's own dry run, -n), one per line."""
    result = subprocess.run(
        make_words("-n", *args), cwd=repo, env=clone_environment(repo), capture_output=True, text=True, check=True
    )
    return result.stdout.splitlines()


def help_words(parse) -> str:
    """What ``parse(["--help"])`` prints (an argparse command's help), whitespace collapsed to single
    spaces, after checking that it exits with status 0."""
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), pytest.raises(SystemExit) as stop:
        parse(["--help"])
    assert stop.value.code == 0
    return " ".join(shown.getvalue().split())
