"""Low-rank structure of trained weights (Figs. 3 and 6): top singular value share and alignment with e."""

from __future__ import annotations

import numpy as np
import pandas as pd


def top_share(matrix: np.ndarray) -> float:
    """sigma_1^2 / ||M||_F^2: 1 for a rank-one matrix, 1/rank for an isotropic one."""
    singular = np.linalg.svd(matrix, compute_uv=False)
    return float(singular[0] ** 2 / np.sum(singular**2))


def abs_cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(abs(u @ v) / (np.linalg.norm(u) * np.linalg.norm(v)))


def structure_table(checkpoints: dict[str, np.ndarray], matrices=("W_1", "W_V"), steps=None) -> pd.DataFrame:
    """One row per (matrix, checkpoint step): top share and |cos| of the top singular vectors with e.

    ``cos_e_input`` uses the top right singular vector where the input space is R^d (W's row space;
    NaN for W_2, d x 4d); ``cos_e_output`` the top left one where the output space is R^d (NaN for
    W_1, 4d x d).
    """
    rows = []
    for index, step in enumerate(checkpoints["step"]):
        if steps is not None and step not in steps:
            continue
        e = checkpoints["e"][index]
        for name in matrices:
            matrix = checkpoints[name][index]
            left, _, right = np.linalg.svd(matrix)
            rows.append(
                {
                    "matrix": name,
                    "step": int(step),
                    "top_share": top_share(matrix),
                    "cos_e_input": abs_cos(right[0], e) if matrix.shape[1] == e.shape[0] else np.nan,
                    "cos_e_output": abs_cos(left[:, 0], e) if matrix.shape[0] == e.shape[0] else np.nan,
                    # e on the hypercube up to scale: min |e_i| / max |e_i| is 1 there.
                    "e_flatness": float(np.abs(e).min() / np.abs(e).max()),
                }
            )
    return pd.DataFrame(rows)
