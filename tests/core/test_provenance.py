"""figures/provenance.json (replication.provenance): the config's hash, the checkout's state, the
machine and the software, written and read back. Git runs on throw-away repositories in tmp_path."""

import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from replication import provenance
from replication.perturbation import VARIABLE
from replication.provenance import config_hash, cpu_model, git_state, read_provenance, write_provenance


def test_config_hash_is_the_sha256_of_canonical_json():
    # Canonical JSON written out by hand: sorted keys, json's default separators.
    expected = hashlib.sha256(b'{"a": 1, "b": {"c": [1, 2.5], "d": null}}').hexdigest()
    assert config_hash({"b": {"d": None, "c": [1, 2.5]}, "a": 1}) == expected
    assert config_hash({"a": 1, "b": {"c": [1, 2.5], "d": None}}) == expected  # key order does not matter
    assert config_hash({"a": 1, "b": {"c": [1, 2.6], "d": None}}) != expected
    # Values JSON cannot write (paths, dates from YAML) hash as their text.
    assert config_hash({"path": Path("config/smoke.yaml")}) == config_hash({"path": "config/smoke.yaml"})


def git(root, *args):
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=test", "-c", "user.email=test@example.org", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def test_git_state_of_a_checkout(tmp_path):
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q")
    (root / "code.py").write_text("x = 1\n")
    git(root, "add", "code.py")
    git(root, "commit", "-q", "-m", "first")
    commit = git(root, "log", "-1", "--format=%H")
    assert len(commit) == 40
    assert git_state(root) == (commit, "clean")
    (root / "notes.txt").write_text("untracked files do not make the code modified\n")
    assert git_state(root) == (commit, "clean")
    (root / "code.py").write_text("x = 2\n")
    assert git_state(root) == (commit, "modified")
    assert git_state(str(root)) == (commit, "modified")


def test_git_state_without_git_or_a_checkout(tmp_path, monkeypatch):
    assert git_state(tmp_path) == ("unknown", "unknown")  # not a repository: git fails
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no git program at all: OSError
    assert git_state(tmp_path) == ("unknown", "unknown")


def fake_cpuinfo(monkeypatch, tmp_path, text):
    cpuinfo = tmp_path / "cpuinfo"
    if text is not None:
        cpuinfo.write_text(text)
    real_path = provenance.Path
    monkeypatch.setattr(provenance, "Path", lambda *p: cpuinfo if p == ("/proc/cpuinfo",) else real_path(*p))


def test_cpu_model_reads_the_first_model_name(tmp_path, monkeypatch):
    fake_cpuinfo(
        monkeypatch,
        tmp_path,
        "processor\t: 0\nvendor_id\t: Acme\nmodel name\t: Acme Fast CPU: 8 cores @ 3.0GHz \n"
        "\nprocessor\t: 1\nmodel name\t: Second\n",
    )
    assert cpu_model() == "Acme Fast CPU: 8 cores @ 3.0GHz"


@pytest.mark.parametrize("text", [None, "processor\t: 0\nfeatures\t: model name\n"])
def test_cpu_model_falls_back_to_platform(tmp_path, monkeypatch, text):
    """No /proc/cpuinfo (not Linux) or no model name in it (some ARM kernels): the platform's words."""
    fake_cpuinfo(monkeypatch, tmp_path, text)
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    monkeypatch.setattr(platform, "processor", lambda: "arm")
    assert cpu_model() == "arm"
    monkeypatch.setattr(platform, "processor", lambda: "")
    assert cpu_model() == "aarch64"


def test_cpu_model_of_this_machine():
    line = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line), None)
    if line is None:
        pytest.skip("no model name in /proc/cpuinfo")
    assert cpu_model() == line.partition(":")[2].strip() and cpu_model()


def test_collect(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "PACKAGES", ("numpy", "torch", "no-such-package-here"))
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    monkeypatch.delenv(VARIABLE, raising=False)
    monkeypatch.setattr(provenance, "git_state", lambda root: ("abc123", f"state of {Path(root).name}"))
    record = provenance.collect({"seed": 1}, tmp_path)
    assert record == {
        "git_commit": "abc123",
        "git_tree": f"state of {tmp_path.name}",
        "config_sha256": config_hash({"seed": 1}),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "perturbation": "off",
        "version_numpy": np.__version__,
        "version_torch": str(torch.__version__),
        "version_no-such-package-here": "absent",
        "env_OMP_NUM_THREADS": "3",
        "env_MKL_NUM_THREADS": "",
        "env_OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", ""),
        "env_NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS", ""),
    }
    monkeypatch.setenv(VARIABLE, "")
    assert provenance.collect({}, tmp_path)["perturbation"] == "off"
    monkeypatch.setenv(VARIABLE, "2:8")
    assert provenance.collect({}, tmp_path)["perturbation"] == "2:8"


def test_the_record_on_disk(tmp_path):
    path = tmp_path / "figures" / "provenance.json"
    write_provenance({"python": "3.11", "cpu_count": 2, "git_tree": "clean"}, path)
    # Sorted keys, one space of indent, a final newline: the same record gives the same bytes.
    assert path.read_text() == '{\n "cpu_count": 2,\n "git_tree": "clean",\n "python": "3.11"\n}\n'
    assert read_provenance(path) == {"python": "3.11", "cpu_count": 2, "git_tree": "clean"}
    assert read_provenance(str(path)) == json.loads(path.read_text())
    assert read_provenance(tmp_path / "absent.json") == {}  # a reference set blessed before provenance
    assert read_provenance(str(tmp_path / "absent.json")) == {}
