"""A job's heap keeps what it frees: no page faults for reused buffers, and the same numbers."""

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from replication.compute import keep_freed_memory

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the thresholds are glibc's")
# The child processes import the package as installed, never mutmut's mutants, so no mutant can fail
# these; and under mutmut's runner glibc's default heap faulted far less (612 pages a round, 6600 here).
in_child_processes = pytest.mark.skipif(
    bool(os.environ.get("MUTANT_UNDER_TEST")), reason="runs the package in child processes, which mutants never reach"
)

# Rounds of a step's pattern: buffers of 1-3 MiB, 10 MiB in all, allocated, used and all freed.
ROUNDS = """
import resource, sys, torch
from replication.compute import keep_freed_memory
if sys.argv[1] == "kept":
    assert keep_freed_memory()
def one_round():
    buffers = [torch.ones(n << 18) for n in (4, 8, 2, 12, 6, 8)]
    return sum(float(b.sum()) for b in buffers)
one_round(), one_round()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    one_round()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
"""


def page_faults_per_round(mode: str) -> float:
    result = subprocess.run([sys.executable, "-c", ROUNDS, mode], capture_output=True, text=True, check=True)
    return float(result.stdout)


@glibc
def test_glibc_takes_both_thresholds():
    assert keep_freed_memory() is True


@glibc
@in_child_processes
def test_freed_buffers_are_reused_not_faulted_in_again():
    default, kept = page_faults_per_round("default"), page_faults_per_round("kept")
    # glibc's default heap returns the freed 10 MiB and faults them in again (2560 pages a round)
    assert default > 1000, default
    assert kept < 0.05 * default, (kept, default)


TRAINING = textwrap.dedent(
    """
    import sys, torch
    sys.path.insert(0, {tests!r})
    from helpers import small_run_settings
    from replication.compute import keep_freed_memory
    from replication.papers.local_to_global.transformer.settings import run_settings
    from replication.papers.local_to_global.transformer.train import train
    if sys.argv[1] == "kept":
        keep_freed_memory()
    torch.set_num_threads(1)
    run = train(run_settings(dict(small_run_settings(), chain=dict(p=0.5, q=0.8))), "standard", 3, progress=False)
    print(run.losses.to_json(double_precision=15), [float(v.sum()).hex() for v in run.final.values()])
    """
)


def test_training_gives_the_same_numbers_with_freed_memory_kept():
    script = TRAINING.format(tests=str(Path(__file__).resolve().parents[1]))
    runs = [
        subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True, check=True).stdout
        for mode in ("default", "kept")
    ]
    assert runs[0] and runs[0] == runs[1]


class FakeC:
    """A C library whose mallopt answers from a list and records what it was asked (a plain
    object, so that the caller can set argtypes on it as on a ctypes function)."""

    def __init__(self, name, answers):
        self.name, self.calls = name, []
        answers = list(answers)

        class Mallopt:
            def __call__(_, option, value):
                self.calls.append((option, value))
                return answers.pop(0)

        self.mallopt = Mallopt()


@pytest.mark.parametrize("answers, taken", [([1, 1], True), ([1, 0], False), ([0, 1], False)])
def test_both_thresholds_are_asked_for_and_both_must_be_taken(monkeypatch, answers, taken):
    import ctypes
    import ctypes.util

    from replication import compute

    opened = []
    monkeypatch.setattr(ctypes, "CDLL", lambda name: opened.append(FakeC(name, answers)) or opened[-1])
    assert keep_freed_memory() is taken
    assert opened[0].name == ctypes.util.find_library("c")  # the C library, by its file name
    # the mmap threshold first (setting it stops glibc from raising it), then the trim threshold
    assert opened[0].calls[0] == (compute._M_MMAP_THRESHOLD, 32 << 20)
    if answers[0]:
        assert opened[0].calls[1] == (compute._M_TRIM_THRESHOLD, 1 << 30)


def test_a_c_library_without_mallopt_keeps_its_own_heap(monkeypatch):
    import ctypes

    def no_library(name):
        raise OSError(f"{name}: cannot open")

    monkeypatch.setattr(ctypes, "CDLL", no_library)
    assert keep_freed_memory() is False
    monkeypatch.setattr(ctypes, "CDLL", lambda name: object())  # a C library without mallopt (macOS)
    assert keep_freed_memory() is False


def test_a_training_job_sets_its_threads_and_keeps_freed_memory(monkeypatch):
    import torch

    from replication import compute

    kept = []
    monkeypatch.setattr(compute, "keep_freed_memory", lambda: kept.append(True) or True)
    before = torch.get_num_threads()
    try:
        compute.prepare_training_job(1 if before != 1 else 2)
        assert torch.get_num_threads() == (1 if before != 1 else 2)
    finally:
        torch.set_num_threads(before)
    assert kept == [True]


# A kernel that takes numba about half a second to compile: the window in which processes race.
KERNEL = """
import numba
import numpy as np


@numba.njit(cache=True)
def halve(x):
    a = np.arange(10.0)
    return x / 2 + 0.0 * np.sum(np.sin(a) * np.cos(a))
"""
# One process of the test below: a numba kernel with an empty cache, first called under
# compiling_alone once every process has imported it (so that without the lock they would all compile).
FIRST_CALL = """
import contextlib, sys, time
from pathlib import Path
import numba
from replication.compute import compiling_alone
sys.path.insert(0, sys.argv[1])
from tiny_kernel import halve
numba.njit(lambda x: x + 1)(1.0)  # numba's compiler set up before the race: the kernel's compile is what is left
ready, count = Path(sys.argv[2]), int(sys.argv[3])
(ready / sys.argv[4]).touch()
while len(list(ready.iterdir())) < count:
    time.sleep(0.01)
with compiling_alone() if sys.argv[5] == "alone" else contextlib.nullcontext():
    assert halve(3.0) == 1.5
print(sum(halve.stats.cache_misses.values()), sum(halve.stats.cache_hits.values()))
"""


@in_child_processes
@pytest.mark.parametrize("alone", [True, False], ids=["alone", "side-by-side"])
def test_kernels_are_compiled_by_one_process_while_the_others_wait(tmp_path, alone):
    """Three processes call a kernel whose cache is empty at once: under the lock one compiles it and
    the others load what it wrote; without it (the control) two or three compile it."""
    source = tmp_path / "source"
    source.mkdir()
    (source / "tiny_kernel.py").write_text(KERNEL)
    ready = tmp_path / "ready"
    ready.mkdir()
    script = tmp_path / "first_call.py"
    script.write_text(FIRST_CALL)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.Popen(
            [sys.executable, script, source, ready, "3", str(i), "alone" if alone else "together"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    counts = sorted(tuple(map(int, run.communicate(timeout=120)[0].split())) for run in runs)
    assert all(run.returncode == 0 for run in runs)
    if alone:
        assert counts == [(0, 1), (0, 1), (1, 0)]
    else:  # (a process the scheduler held back past the others' compile would load it)
        assert counts.count((1, 0)) >= 2
