"""Kernel families: the code paths a process can choose for the same arithmetic, as another CPU would.

A CPU decides which vector kernels its libraries run: PyTorch's own kernels (softmax, AdamW's
element-wise updates, reductions) dispatch on the widest instruction set the CPU has
(``ATEN_CPU_CAPABILITY`` caps it), MKL chooses its GEMM and LAPACK code by CPU vendor and model
(``MKL_CBWR`` fixes a branch, ``MKL_ENABLE_INSTRUCTIONS`` caps it), NumPy dispatches its ``exp`` and
``log`` loops (``NPY_DISABLE_CPU_FEATURES``), numba compiles for the host (``NUMBA_CPU_NAME``) and
oneDNN caps its ISA (``ONEDNN_MAX_CPU_ISA``). Each rounds differently, and long training runs
amplify that. A *family* is one setting of these variables; an ensemble member of ``make bless``
is a perturbation member (an integer, ``replication.perturbation``) or a family's name, run with
exactly that family's variables (every other kernel variable unset). OpenBLAS's variables are left
as the machine sets them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .perturbation import VARIABLE as PERTURBATION

# NumPy's AVX-512 dispatch targets (numpy >= 2.4 names): disabled, its AVX2 loops run.
_NUMPY_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"

FAMILIES: dict[str, dict[str, str]] = {
    # PyTorch's own kernels for a CPU without AVX-512 (Zen 3, older Xeons) and without any vector unit it knows.
    "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    # MKL's conditional numerical reproducibility branch for any x86-64 CPU: other GEMM kernels.
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    # MKL capped at AVX2 (on Intel CPUs its AVX2 GEMMs; on others MKL may ignore the cap).
    "mkl-avx2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "MKL_CBWR": "AVX2"},
    # NumPy's AVX2 loops instead of its AVX-512 ones.
    "numpy-avx2": {"NPY_DISABLE_CPU_FEATURES": _NUMPY_AVX512},
    # Every library as on an AVX2-only CPU at once (oneDNN and numba included).
    "avx2-machine": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "MKL_CBWR": "AVX2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "NPY_DISABLE_CPU_FEATURES": _NUMPY_AVX512,
        "NUMBA_CPU_NAME": "haswell",
    },
}
# Every variable a family may set: unset in a member's process unless its family sets it.
KERNEL_VARIABLES = tuple(sorted({name for family in FAMILIES.values() for name in family} | {"NUMBA_CPU_FEATURES"}))


@dataclass(frozen=True)
class Member:
    """One ensemble member: a perturbation member (``perturbation`` >= 1, native kernels) or a
    kernel family (``family``, unperturbed)."""

    label: str
    family: str | None = None
    perturbation: int = 0

    @property
    def folder(self) -> str:
        return f"member{self.perturbation}" if self.family is None else f"member-{self.family}"

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: this process's environment) with the kernel and perturbation
        variables replaced by this member's."""
        base = dict(os.environ if base is None else base)
        for name in (*KERNEL_VARIABLES, PERTURBATION):
            base.pop(name, None)
        if self.family is not None:
            base.update(FAMILIES[self.family])
        if self.perturbation:
            base[PERTURBATION] = str(self.perturbation)
        return base


def parse_member(text: str) -> Member:
    """``"3"`` -> perturbation member 3; ``"aten-avx2"`` -> that kernel family. One error naming the
    allowed values otherwise."""
    text = str(text).strip()
    if text.isdigit() and int(text) >= 1:
        return Member(text, perturbation=int(text))
    if text in FAMILIES:
        return Member(text, family=text)
    raise ValueError(
        f"ensemble member {text!r}: allowed are perturbation members (integers >= 1) and the kernel "
        f"families {', '.join(FAMILIES)}"
    )


def parse_members(texts) -> list[Member]:
    """Every member of an ensemble, each once, in the order given."""
    members = [parse_member(text) for text in texts]
    labels = [member.label for member in members]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"ensemble members given twice: {', '.join(repeated)}")
    return members


def describe(member: Member) -> str:
    """``aten-avx2 (ATEN_CPU_CAPABILITY=avx2)`` or ``3 (4 ulps)``: for provenance and reports."""
    if member.family is None:
        from .perturbation import DEFAULT_ULPS

        return f"{member.label} ({DEFAULT_ULPS:g} ulps)"
    return f"{member.label} ({' '.join(f'{k}={v}' for k, v in FAMILIES[member.family].items())})"


def native_kernels() -> dict[str, str]:
    """What this machine's processes run unless told otherwise: torch's capability, MKL's version,
    NumPy's dispatch targets, and every kernel variable as set here (empty when unset)."""
    import numpy as np
    import torch

    record = {"torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}
    record["mkl"] = _mkl_version(torch.__config__.show())
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

        record["numpy_dispatch"] = " ".join(name for name in __cpu_dispatch__ if __cpu_features__.get(name))
    except ImportError:  # another NumPy layout: its version instead
        record["numpy_dispatch"] = f"numpy {np.__version__}"
    record |= {f"env_{name}": os.environ.get(name, "") for name in KERNEL_VARIABLES}
    return record


def _mkl_version(config: str) -> str:
    for line in config.splitlines():
        if "Math Kernel Library" in line:
            return line.strip(" -").replace("Intel(R) oneAPI Math Kernel Library ", "").strip()
    return "none"
