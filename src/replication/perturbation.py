"""Numerical-noise perturbation: the last bits of initial parameters and inputs, for ensembles.

Another CPU, BLAS or thread count changes float results in their last bits, and long runs
amplify that. ``make bless`` measures how far each figure's data moves under such noise alone by
rerunning the pipeline with ``REPLICATION_PERTURBATION=<member>[:<ulps>]`` set: every value a paper
passes through a hook (e.g. trained parameters at the start and after every optimizer step, as
another machine rounds every step differently; starting points; sampled data) is multiplied by
``1 + ulps * eps * u`` with ``u ~ U(-1, 1)`` drawn from a stream seeded by (member, name), ``eps``
the machine epsilon of the array's dtype. Unset (the default), every hook returns its input
unchanged, so ordinary runs are byte-identical with or without this module.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np

VARIABLE = "REPLICATION_PERTURBATION"
DEFAULT_ULPS = 4.0


@dataclass(frozen=True)
class Perturbation:
    member: int
    ulps: float = DEFAULT_ULPS

    def generator(self, name: str) -> np.random.Generator:
        return np.random.default_rng([self.member, zlib.crc32(name.encode())])


def parse(text: str | None) -> Perturbation | None:
    """``"3"`` or ``"3:8"`` -> member 3 (8 ulps); empty, ``"0"`` or None -> no perturbation."""
    if text is None or text.strip() in ("", "0"):
        return None
    member, _, ulps = text.strip().partition(":")
    try:
        result = Perturbation(int(member), float(ulps) if ulps else DEFAULT_ULPS)
    except ValueError:
        result = None
    if result is None or result.member < 0 or not (0 < result.ulps <= 2**20):
        raise ValueError(
            f"Invalid environment variable {VARIABLE}={text!r}; allowed: <member>[:<ulps>] with "
            f"member an integer >= 0 (0 = off) and 0 < ulps <= 2^20, e.g. {VARIABLE}=2 or 2:8"
        )
    return result if result.member else None  # member 0 is the unperturbed run, whatever its ulps


def active() -> Perturbation | None:
    """The perturbation of this process, from the environment (None: off)."""
    return parse(os.environ.get(VARIABLE))


def perturb(values: np.ndarray, name: str) -> np.ndarray:
    """``values`` with each element moved by a few ulps (a new array); ``values`` itself when off."""
    setting = active()
    if setting is None:
        return values
    values = np.asarray(values)
    eps = np.finfo(values.dtype).eps
    u = setting.generator(name).uniform(-1.0, 1.0, size=values.shape)
    return (values * (1.0 + setting.ulps * eps * u)).astype(values.dtype)


def perturb_module(module, name: str) -> None:
    """Every floating parameter of a torch module moved by a few ulps of its dtype, in place."""
    setting = active()
    if setting is None:
        return
    import torch

    with torch.no_grad():
        for pname, param in module.named_parameters():
            if param.is_floating_point():
                moved = perturb(param.detach().cpu().numpy(), f"{name}/{pname}")
                param.copy_(torch.from_numpy(moved))
