"""What made a set of figures: code, config, software and machine (``figures/provenance.json``).

Float results of long training runs depend on the CPU's vector kernels and the thread counts, so a
report that compares figures from two machines shows these side by side. No time stamps: the
same code, config and machine give the same file.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .perturbation import VARIABLE

PACKAGES = ("torch", "numpy", "scipy", "pandas", "matplotlib", "numba", "snakemake")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")


def config_hash(config: dict) -> str:
    """sha256 of the config as canonical JSON (sorted keys): equal configs, equal hashes."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def git_state(root: str | os.PathLike) -> tuple[str, str]:
    """(commit, "clean" / "modified" / "unknown") of the checkout at ``root``."""

    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        dirty = git("status", "--porcelain", "--untracked-files=no").strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown", "unknown"
    return commit, "modified" if dirty else "clean"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def collect(config: dict, project_root: str | os.PathLike) -> dict:
    """Flat ``{field: value}`` record of this process's code, config, software and machine."""
    import torch

    commit, tree = git_state(project_root)
    record = {
        "git_commit": commit,
        "git_tree": tree,
        "config_sha256": config_hash(config),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "perturbation": os.environ.get(VARIABLE, "") or "off",
    }
    for name in PACKAGES:
        try:
            record[f"version_{name}"] = metadata.version(name)
        except metadata.PackageNotFoundError:
            record[f"version_{name}"] = "absent"
    for name in THREAD_VARIABLES:
        record[f"env_{name}"] = os.environ.get(name, "")
    return record


def write_provenance(record: dict, path: str | os.PathLike) -> None:
    from .io import write_text

    write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", path)


def read_provenance(path: str | os.PathLike) -> dict:
    """The record at ``path``; empty when there is none (references blessed before provenance)."""
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else {}


if __name__ == "__main__":  # print this machine's record
    print(json.dumps(collect({}, Path(__file__).resolve().parents[2]), indent=1, sort_keys=True), file=sys.stdout)
