"""A training job's compute set-up: its torch threads, a C heap that keeps what it frees, and its
numba kernels compiled by one job at a time.

A training step frees and allocates the same few-megabyte buffers every time. glibc's malloc gives
the top of its heap back to the kernel once more than its trim threshold lies free there, so the next
step takes those pages again as fresh page faults, which the kernel zero-fills: at the phase
diagram's settings about a thousand faults and 2 ms of system time per step
(`python -m replication.papers.local_to_global.phase.cost --heap`).
Fixed thresholds keep the freed memory in the heap. Only where memory comes from changes: torch
aligns every buffer to 64 bytes either way, so the numbers are the same
(`tests/core/test_compute.py`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

# mallopt's parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TRIM_THRESHOLD = 1 << 30  # free memory at the top of the heap stays there up to 1 GiB
# Blocks above this still get their own mapping (glibc's largest threshold on 64-bit); below it they
# come from the heap. Setting it also stops glibc from raising it as it goes, which setting only the
# trim threshold would freeze at 128 KiB.
_MMAP_THRESHOLD = 32 << 20


def keep_freed_memory() -> bool:
    """Fix glibc's trim and mmap thresholds so that freed memory is reused, not returned and faulted
    in again; True if the C library took both (glibc), False where it has no such setting."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):  # no C library found, or one without mallopt (macOS)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


def prepare_training_job(threads: int) -> None:
    """What every training job does before its first step: ``threads`` torch threads, freed memory kept."""
    import torch

    torch.set_num_threads(threads)
    keep_freed_memory()


@contextlib.contextmanager
def compiling_alone():
    """Held around the first calls of a run's numba kernels. numba compiles a kernel at its first call
    and caches it beside its source; with that cache empty (a fresh clone, an installed package,
    another CPU's kernels), jobs started together would each compile the same kernels, some 12
    CPU-s apiece. Under this lock (one per package folder, numba cache folder and CPU name) the first
    job compiles them and the others wait, then load what it wrote; with the cache full it is held
    for one step."""
    key = "|".join(
        [str(Path(__file__).parent), os.environ.get("NUMBA_CACHE_DIR", ""), os.environ.get("NUMBA_CPU_NAME", "")]
    )
    path = Path(tempfile.gettempdir()) / f"replication-numba-{hashlib.sha256(key.encode()).hexdigest()[:16]}.lock"
    # Read-only: flock needs no more, and another user's lock file of the same key opens too.
    descriptor = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # which releases the lock
